"""Additive noise on a public lattice: the Laplace mechanism (exact discrete Laplace noise) and the
two-sided geometric mechanism."""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from reference.mechanisms.base import (
    Mechanism,
    check_n,
    check_lattice_step,
    default_grid,
    round_to_grid,
)
from reference.mechanisms.discrete_noise import DiscreteLaplaceLaw
from reference.validation import check_generator, check_positive_finite
from reference.validation import shown

__all__ = ['Laplace', 'TwoSidedGeometric']


class Laplace(Mechanism):
    """Lattice Laplace mechanism: ``grid * (round(value / grid) + DLap(b))`` per coordinate.

    Every output lies on the public lattice ``grid * Z`` and the noise is the discrete Laplace law
    (two-sided geometric), sampled exactly in integers (:mod:`reference.mechanisms.discrete_noise`), never a float
    Laplace draw added to a raw float (which leaks through the attainable outputs, Mironov 2012).

    Rounding is charged: values at L1 distance ``sensitivity`` in ``m`` coordinates land at most
    ``ceil(sensitivity / grid) + m - 1`` grid units apart (each coordinate rounds to within half a unit,
    and a scalar exactly by ``ceil``: :func:`round_to_grid`), so the noise scale in grid units is
    ``b = (ceil(sensitivity / grid) + m - 1) / epsilon``, rounded up to a rational ``t / s`` with a
    power-of-two ``s`` (relative change at most ``2**-30``). The law actually sampled is therefore at
    most ``epsilon``-DP; ``privacy_map`` reports its exact loss.

    Privacy map: scalar inputs at distance ``d_in`` give loss ``ceil(d_in / grid) * s / t``, which is at most
    ``epsilon`` for ``d_in <= sensitivity``.

    Parameters
    ----------
    epsilon : float
        Privacy parameter, positive and finite.
    sensitivity : float, default 1.0
        L1 sensitivity of the query the mechanism is applied to.
    grid : float, optional
        The public output lattice spacing, a positive power of two; defaults to :func:`default_grid`
        (``2**-10`` of the smaller of the sensitivity and the noise scale, rounded down to a power of two).

    Attributes
    ----------
    scale : float
        The noise scale in value units, ``grid * ceil(sensitivity / grid) / epsilon`` (scalar case).

    References
    ----------
    Mironov (2012), "On significance of the least significant bits for differential privacy", CCS.
    Canonne, Kamath, Steinke (2020), Algorithms 1 and 2 (exact discrete Laplace sampling).
    Ghosh, Roughgarden, Sundararajan (2009), the geometric mechanism.
    """

    kind = "discrete"

    def __init__(self, epsilon: float, sensitivity: float = 1.0, grid: float | None = None):
        self.epsilon = check_positive_finite("epsilon", epsilon)
        self.sensitivity = check_positive_finite("sensitivity", sensitivity)
        self.grid = default_grid(self.epsilon, self.sensitivity) if grid is None else check_lattice_step(grid)
        #: sensitivity of a scalar in grid units after rounding
        self.grid_sensitivity = math.ceil(Fraction(self.sensitivity) / Fraction(self.grid))
        self._units = Fraction(self.grid_sensitivity) / Fraction(self.epsilon)  # scalar scale in grid units
        self._laws: dict = {}

    @property
    def scale(self) -> float:
        return float(self._units * Fraction(self.grid))

    @scale.setter
    def scale(self, value):  # used by the audit's scaled-noise mutants
        self._units = Fraction(check_positive_finite("scale", value)) / Fraction(self.grid)
        self._laws = {}

    def _params(self):
        return {"epsilon": self.epsilon, "sensitivity": self.sensitivity, "grid": self.grid}

    def law(self, m: int = 1) -> DiscreteLaplaceLaw:
        """The integer noise law for ``m`` coordinates (scale ``b * (ceil(sens/grid) + m - 1) / ceil(sens/grid)``)."""
        law = self._laws.get(m)
        if law is None:
            units = self._units * Fraction(self.grid_sensitivity + m - 1, self.grid_sensitivity)
            law = self._laws[m] = DiscreteLaplaceLaw(units)
        return law

    def sample(self, data, rng):
        check_generator(rng)
        centre = round_to_grid(data, self.grid)
        out = (centre + self.law(max(centre.size, 1)).sample(centre.shape, rng)) * self.grid
        return float(out) if out.ndim == 0 else out

    def batch(self, data, n, rng):
        check_generator(rng)
        n = check_n(n)
        centre = round_to_grid(data, self.grid)
        return (centre + self.law(max(centre.size, 1)).sample((n,) + centre.shape, rng)) * self.grid

    def sample_each(self, values, rng) -> np.ndarray:
        """One scalar release per entry of ``values`` (each entry its own scalar mechanism call, sensitivity
        ``sensitivity`` each): ``grid * (round(values / grid) + DLap)`` elementwise, with the scalar law."""
        check_generator(rng)
        centre = round_to_grid(values, self.grid)
        return (centre + self.law(1).sample(centre.shape, rng)) * self.grid

    def llr_units(self, x, c0, c1) -> np.ndarray:
        """``ln P(x | c0) - ln P(x | c1)`` elementwise for scalar releases ``x`` and integer centres ``c0, c1``."""
        k = np.asarray(x, dtype=float) / self.grid
        return (np.abs(k - c1) - np.abs(k - c0)) * self.law(1).rate

    def logpmf(self, x, data) -> float:
        """``ln P(x | data)`` on the lattice; ``-inf`` off it."""
        y = np.asarray(x, dtype=float) / self.grid
        centre = round_to_grid(data, self.grid)
        if y.shape != centre.shape or not np.all(np.isfinite(y)) or not np.all(y == np.floor(y)):
            return -math.inf
        return float(np.sum(self.law(max(centre.size, 1)).logpmf(y - centre)))

    log_law = logpmf

    def critical_outputs(self, d0, d1):
        """The log-ratio is separable and, per coordinate, piecewise linear in the lattice index with kinks
        at the two rounded centres and constant outside them: its extremes are at the centres."""
        return [round_to_grid(d, self.grid) * self.grid for d in (d0, d1)]

    def privacy_map(self, d_in, m: int = 1):
        """Loss for inputs at L1 distance ``d_in`` in ``m`` coordinates (at most ``ceil(d_in/grid) + m - 1``
        grid units apart)."""
        units = math.ceil(Fraction(float(d_in)) / Fraction(self.grid)) + m - 1 if d_in > 0 else 0
        return self.law(m).loss(units)


# --------------------------------------------------------------------------- geometric
class TwoSidedGeometric(Mechanism):
    """Two-sided geometric mechanism on integers: ``P(k) ∝ alpha^|k - value|``.

    The scale ``sensitivity / epsilon`` is rounded up to a rational ``t / s`` (power-of-two ``s``,
    relative change at most ``2**-30``) and ``alpha = exp(-s / t) >= exp(-epsilon / sensitivity)``: the
    law sampled is at most ``epsilon``-DP. Sampling is exact in the integers with no tail truncation
    (:func:`reference.mechanisms.discrete_noise.discrete_laplace`, Canonne, Kamath and Steinke 2020, Algorithm 2).

    Privacy map: integer inputs at L1 distance ``d_in`` give loss ``d_in * s / t``.

    Parameters
    ----------
    epsilon : float
    sensitivity : float, default 1.0

    References
    ----------
    Ghosh, Roughgarden, Sundararajan (2009); Canonne, Kamath, Steinke (2020).
    """

    def __init__(self, epsilon: float, sensitivity: float = 1.0):
        self.epsilon = check_positive_finite("epsilon", epsilon)
        self.sensitivity = check_positive_finite("sensitivity", sensitivity)
        self.noise_law = DiscreteLaplaceLaw(Fraction(self.sensitivity) / Fraction(self.epsilon))
        self.alpha = math.exp(-self.noise_law.rate)

    def _params(self):
        return {"epsilon": self.epsilon, "sensitivity": self.sensitivity}

    def _noise(self, shape, rng):
        return self.noise_law.sample(shape, rng)

    @staticmethod
    def _as_int(data) -> np.ndarray:
        value = np.asarray(data)
        if not np.issubdtype(value.dtype, np.integer):
            if not np.all(np.equal(np.mod(value, 1), 0)):
                raise ValueError(f"data must be integer-valued for the geometric mechanism, got {shown(data)}")
            value = value.astype(np.int64)
        return value

    def sample(self, data, rng):
        check_generator(rng)
        value = self._as_int(data)
        out = value + self._noise(value.shape, rng)
        return int(out) if out.ndim == 0 else out

    def batch(self, data, n, rng):
        check_generator(rng)
        n = check_n(n)
        value = self._as_int(data)
        return value + self._noise((n,) + value.shape, rng)

    def logpmf(self, k, data) -> float:
        k = np.asarray(k)
        value = self._as_int(data)
        if not np.all(np.equal(np.mod(k, 1), 0)):
            return -math.inf
        return float(np.sum(self.noise_law.logpmf(k - value)))

    log_law = logpmf

    def critical_outputs(self, d0, d1):
        """As for Laplace: the log-ratio is extreme at ``k = d0`` and ``k = d1``."""
        return [self._as_int(d0), self._as_int(d1)]

    def privacy_map(self, d_in):
        return self.noise_law.loss(d_in)
