"""Differential-privacy mechanisms with their exact output laws.

Each mechanism is a small object in the style of ``scipy.stats``: it samples
(``sample(data, rng)``, vectorised ``batch(data, n, rng)``) and it exposes the
law it samples from (``logpmf`` for discrete outputs, ``logpdf`` for continuous
ones), so the privacy loss on two inputs can be computed exactly
(:func:`audit.exact.privacy_loss`) instead of estimated.

Every mechanism also states its privacy as a map from input distance to output
loss (``privacy_map(d_in)``), the way OpenDP does: the claim sits beside the
sampler that has to keep it.

The mechanism contract of the auditor (``m(data, rng)`` returning one output,
optionally ``m.batch(data, n, rng)``) is met by every class here, so each can be
audited directly.

References
----------
Dwork, McSherry, Nissim, Smith (2006), the Laplace mechanism; here on a public
lattice with exact integer noise (Mironov 2012 on why; Canonne, Kamath, Steinke 2020
for the sampler, :mod:`reference.discrete_noise`).
Ghosh, Roughgarden, Sundararajan (2009), the two-sided geometric mechanism.
McSherry, Talwar (2007), the exponential mechanism.
McKenna, Sheldon (2020), permute-and-flip; Ding et al. (2021) show it equals
report-noisy-max with exponential noise, which :meth:`PermuteAndFlip.batch` uses.
Warner (1965), randomized response.
Consul, Williamson, 003_9d9c0c8370f39611.txt section 3.1, the private median
over a bounded interval (Theorem 3's form), here on a public grid.
"""
from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

from .discrete_noise import DiscreteLaplaceLaw
from .grid import DEFAULT_GRID, check_grid, grid_cuts, grid_index, grid_searchsorted, grid_value, selection_delta
from ._validation import (
    check_generator,
    check_nonempty,
    check_positive_finite,
)

__all__ = [
    "Mechanism",
    "Laplace",
    "TwoSidedGeometric",
    "ExponentialMechanism",
    "PermuteAndFlip",
    "RandomizedResponse",
    "BitRandomizedResponse",
    "IntervalExponential",
    "JointExp",
]


class Mechanism:
    """Base class: the auditor's mechanism contract plus an exact law.

    Subclasses define ``sample``, ``batch``, ``log_law`` (``logpmf`` or
    ``logpdf``), ``critical_outputs`` and ``privacy_map``.
    """

    #: ``"discrete"`` when ``log_law`` is a log-pmf, ``"continuous"`` for a log-density.
    kind = "discrete"
    epsilon: float

    def __call__(self, data, rng):
        return self.sample(data, rng)

    def sample(self, data, rng):  # pragma: no cover - abstract
        raise NotImplementedError

    def batch(self, data, n: int, rng):
        """``n`` independent outputs; the default loops over :meth:`sample`."""
        check_generator(rng)
        return [self.sample(data, rng) for _ in range(int(n))]

    def log_law(self, output, data) -> float:  # pragma: no cover - abstract
        raise NotImplementedError

    def critical_outputs(self, d0, d1) -> list:
        """Outputs at which ``|log_law(o, d0) - log_law(o, d1)|`` attains its supremum.

        Used by :func:`audit.exact.privacy_loss`. Each subclass proves, in its
        docstring, why its finite set suffices.
        """
        raise NotImplementedError  # pragma: no cover

    def privacy_map(self, d_in: float) -> float:  # pragma: no cover - abstract
        """The epsilon this mechanism guarantees for inputs at distance ``d_in``."""
        raise NotImplementedError

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in self._params().items())
        return f"{type(self).__name__}({params})"

    def _params(self) -> dict[str, Any]:
        return {"epsilon": self.epsilon}


def _log_normalise(log_w: np.ndarray) -> np.ndarray:
    """``log_w - logsumexp(log_w)`` by the max shift (scipy's logsumexp costs ~0.1 ms on tiny inputs)."""
    top = np.max(log_w)
    return log_w - (top + np.log(np.sum(np.exp(log_w - top))))


def _draw_index(p: np.ndarray, n: int, rng) -> np.ndarray:
    """``n`` indices drawn with probabilities ``p`` by inverting the CDF (the law of ``rng.choice(p=p)``).

    The probabilities are floating point and the uniform has 53 bits: the law released differs
    from ``p`` by at most ``m (4 ln m + 16) 2**-53`` in total variation for ``m`` positive
    entries, which makes an epsilon-DP selection (epsilon, delta)-DP with the ``delta`` of
    :func:`reference.grid.selection_delta` (charged by the learners).
    """
    cdf = np.cumsum(p)
    idx = np.searchsorted(cdf, rng.random(n) * cdf[-1], side="right")
    return np.minimum(idx, p.size - 1)


def _check_n(n) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    return int(n)


# --------------------------------------------------------------------------- Laplace
#: the default grid is 2**-GRID_BITS times the power of two at or below min(sensitivity, sensitivity / epsilon)
GRID_BITS = 10
#: |value / grid| must stay below this many grid units (int64 arithmetic with room for the noise)
_MAX_UNITS = 2.0 ** 60


def default_grid(epsilon: float, sensitivity: float) -> float:
    """The default public grid: a power of two about ``2**-GRID_BITS`` of the smaller of the
    sensitivity and the noise scale ``sensitivity / epsilon``, so rounding to it costs at most
    about ``2**-GRID_BITS`` of epsilon (it is charged: see :class:`Laplace`)."""
    return math.ldexp(1.0, math.floor(math.log2(min(sensitivity, sensitivity / epsilon))) - GRID_BITS)


def check_lattice_step(grid) -> float:
    """A grid must be a positive power of two (so ``value / grid`` is exact in floating point)."""
    if isinstance(grid, bool) or not isinstance(grid, (int, float, np.integer, np.floating)):
        raise ValueError(f"grid must be a positive power of two, got {grid!r}")
    g = float(grid)
    if not (math.isfinite(g) and g > 0 and math.frexp(g)[0] == 0.5):
        raise ValueError(f"grid must be a positive power of two, got {grid!r}")
    return g


def round_to_grid(value, grid: float) -> np.ndarray:
    """``round(value / grid)`` half up, exactly, as int64.

    ``value / grid`` is exact (``grid`` a power of two), and ``y - floor(y)`` is exact for a double, so
    the result is the exact nearest integer with ties up. It is monotone and commutes with integer
    shifts, so inputs ``d`` apart land at most ``ceil(d / grid)`` grid units apart.
    """
    y = np.asarray(value, dtype=float) / grid
    if not np.all(np.isfinite(y)) or np.any(np.abs(y) >= _MAX_UNITS):
        raise ValueError(f"data must be finite with |data / grid| < 2**60, got {value!r} with grid {grid!r}")
    f = np.floor(y)
    return f.astype(np.int64) + (y - f >= 0.5)


class Laplace(Mechanism):
    """Lattice Laplace mechanism: ``grid * (round(value / grid) + DLap(b))`` per coordinate.

    Every output lies on the public lattice ``grid * Z`` and the noise is the discrete Laplace law
    (two-sided geometric), sampled exactly in integers (:mod:`reference.discrete_noise`), never a float
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
        n = _check_n(n)
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
    (:func:`reference.discrete_noise.discrete_laplace`, Canonne, Kamath and Steinke 2020, Algorithm 2).

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
                raise ValueError(f"data must be integer-valued for the geometric mechanism, got {data!r}")
            value = value.astype(np.int64)
        return value

    def sample(self, data, rng):
        check_generator(rng)
        value = self._as_int(data)
        out = value + self._noise(value.shape, rng)
        return int(out) if out.ndim == 0 else out

    def batch(self, data, n, rng):
        check_generator(rng)
        n = _check_n(n)
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


# --------------------------------------------------------------------------- selection
class _Selection(Mechanism):
    """Shared parts of the mechanisms that select an index from a utility vector."""

    def __init__(self, epsilon: float, sensitivity: float = 1.0, monotonic: bool = False):
        self.epsilon = check_positive_finite("epsilon", epsilon)
        self.sensitivity = check_positive_finite("sensitivity", sensitivity)
        if not isinstance(monotonic, (bool, np.bool_)):
            raise TypeError(f"monotonic must be a bool, got {monotonic!r}")
        self.monotonic = bool(monotonic)

    def _params(self):
        return {"epsilon": self.epsilon, "sensitivity": self.sensitivity, "monotonic": self.monotonic}

    @property
    def rate(self) -> float:
        """Coefficient of the utility in the exponent: epsilon/(2 Delta), or epsilon/Delta when monotonic."""
        return self.epsilon / (self.sensitivity * (1.0 if self.monotonic else 2.0))

    @staticmethod
    def utilities(data) -> np.ndarray:
        return check_nonempty("utilities", data)

    def pmf(self, data) -> np.ndarray:
        """Probability of each index."""
        return np.exp(self.logpmf_all(data))

    def logpmf(self, k, data) -> float:
        u = self.utilities(data)
        if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)) or not 0 <= k < u.size:
            return -math.inf
        key = u.tobytes()
        cached = getattr(self, "_law_cache", None)
        if cached is None or cached[0] != key:  # exact audits ask for every index of one input in turn
            cached = self._law_cache = (key, self.logpmf_all(u))
        return float(cached[1][int(k)])

    log_law = logpmf

    def critical_outputs(self, d0, d1):
        """Finite support: every index."""
        return list(range(self.utilities(d0).size))

    def privacy_map(self, d_in):
        """Utility vectors at L-infinity distance ``d_in`` give loss ``epsilon * d_in / sensitivity``
        (for the monotonic option, when all utilities move in the same direction)."""
        return float(d_in) * self.epsilon / self.sensitivity


class ExponentialMechanism(_Selection):
    """Exponential mechanism over a finite candidate set.

    Index ``i`` is returned with probability proportional to
    ``exp(epsilon * u_i / (2 * sensitivity))``; with ``monotonic=True`` (for
    utilities that all move in the same direction between neighbours) the
    factor 1/2 is dropped (McSherry and Talwar 2007, Theorem 6).
    """

    def logpmf_all(self, data) -> np.ndarray:
        u = self.utilities(data)
        return _log_normalise(self.rate * (u - u.max()))  # differences first (reference.grid, residual delta)

    def residual_delta(self, m: int) -> float:
        """Residual delta of one draw over ``m`` candidates (:func:`reference.grid.selection_delta`):
        the probabilities are floating point and drawn by inverting their CDF (:func:`_draw_index`)."""
        return selection_delta(m, self.epsilon)

    def sample(self, data, rng):
        check_generator(rng)
        return int(_draw_index(self.pmf(data), 1, rng)[0])

    def batch(self, data, n, rng):
        check_generator(rng)
        n = _check_n(n)
        p = self.pmf(data)
        return _draw_index(p, n, rng)


class PermuteAndFlip(_Selection):
    """Permute-and-flip (McKenna and Sheldon 2020, Algorithm 1).

    Candidates are visited in a uniformly random order; candidate ``r`` is
    returned with probability ``exp(rate * (u_r - max(u)))``, so the first
    maximiser always stops the loop. ``rate`` is ``epsilon/(2 Delta)``, or
    ``epsilon/Delta`` with ``monotonic=True``.

    Its law (``pmf``) is exact: with ``p_i`` the flip probabilities,
    ``P(r) = p_r * sum_k k!(m-1-k)!/m! * e_k({1 - p_i, i != r})``, where ``e_k``
    is the k-th elementary symmetric polynomial (the candidates before ``r`` in
    the permutation form a uniformly random subset of each size).
    """

    def _flip_probabilities(self, u):
        return np.exp(self.rate * (u - u.max()))

    def logpmf_all(self, data) -> np.ndarray:
        u = self.utilities(data)
        m = u.size
        p = self._flip_probabilities(u)
        # weight of a set of k candidates placed before r in a random permutation
        k = np.arange(m)
        log_w = np.array([math.lgamma(i + 1) + math.lgamma(m - i) - math.lgamma(m + 1) for i in k])
        # row r holds e_0..e_{m-1} of {1 - p_i : i != r}, by the usual recurrence
        e = np.zeros((m, m))
        e[:, 0] = 1.0
        for i, q in enumerate(1.0 - p):
            update = q * e[:, :-1]
            update[i] = 0.0  # candidate i is not among the others of row i
            e[:, 1:] += update
        with np.errstate(divide="ignore"):
            return np.log(p) + np.log(e @ np.exp(log_w))

    def sample(self, data, rng):
        """The published algorithm, step by step: the reference definition."""
        check_generator(rng)
        u = self.utilities(data)
        p = self._flip_probabilities(u)
        for r in rng.permutation(u.size):
            if rng.random() < p[r]:
                return int(r)
        raise AssertionError("unreachable: the maximiser has flip probability 1")  # pragma: no cover

    def batch(self, data, n, rng):
        """Report-noisy-max with exponential noise of scale ``1/rate``, which has
        the same law as permute-and-flip (Ding et al. 2021); tested against
        :meth:`pmf` and :meth:`sample`."""
        check_generator(rng)
        n = _check_n(n)
        u = self.utilities(data)
        noisy = self.rate * u + rng.exponential(1.0, size=(n, u.size))
        return np.argmax(noisy, axis=1)


# --------------------------------------------------------------------------- randomized response
class RandomizedResponse(Mechanism):
    """k-ary randomized response: keep the true value ``v`` in ``{0, ..., k-1}``
    with probability ``e^eps / (e^eps + k - 1)``, otherwise report one of the
    other ``k - 1`` values uniformly.

    Privacy map: ``d_in`` = 0 if the two inputs are equal, 1 otherwise; loss ``epsilon * d_in``.
    """

    def __init__(self, epsilon: float, k: int = 2):
        self.epsilon = check_positive_finite("epsilon", epsilon)
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 2:
            raise ValueError(f"k must be an integer >= 2, got {k!r}")
        self.k = int(k)
        self.p_keep = math.exp(self.epsilon) / (math.exp(self.epsilon) + self.k - 1)

    def _params(self):
        return {"epsilon": self.epsilon, "k": self.k}

    def _value(self, data) -> int:
        if isinstance(data, (bool, np.bool_)) or not isinstance(data, (int, np.integer)) or not 0 <= data < self.k:
            raise ValueError(f"data must be an integer in [0, {self.k - 1}], got {data!r}")
        return int(data)

    def sample(self, data, rng):
        return int(self.batch(data, 1, rng)[0])

    def batch(self, data, n, rng):
        check_generator(rng)
        n = _check_n(n)
        v = self._value(data)
        keep = rng.random(n) < self.p_keep
        other = rng.integers(0, self.k - 1, size=n)
        other = other + (other >= v)  # uniform over the k - 1 values other than v
        return np.where(keep, v, other)

    def pmf(self, data) -> np.ndarray:
        v = self._value(data)
        p = np.full(self.k, (1.0 - self.p_keep) / (self.k - 1))
        p[v] = self.p_keep
        return p

    def logpmf(self, k, data) -> float:
        if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)) or not 0 <= k < self.k:
            return -math.inf
        return float(math.log(self.pmf(data)[int(k)]))

    log_law = logpmf

    def critical_outputs(self, d0, d1):
        return list(range(self.k))

    def privacy_map(self, d_in):
        return self.epsilon * min(float(d_in), 1.0)


class BitRandomizedResponse(Mechanism):
    """Randomized response applied to each bit of a 0/1 vector independently.

    Each bit is kept with probability ``e^(eps/s) / (1 + e^(eps/s))`` where
    ``s = sensitivity`` is the largest number of bits in which two neighbouring
    inputs differ (``s = 2`` for one-hot vectors, as in the leaf-indicator
    randomiser of LPDT, 002_5a21b2792a729c80.txt mechanism (4)).
    Outputs are tuples of 0/1 ints (discrete).

    Privacy map: inputs at Hamming distance ``d_in`` give loss ``d_in * epsilon / sensitivity``.
    """

    def __init__(self, epsilon: float, sensitivity: int = 1):
        self.epsilon = check_positive_finite("epsilon", epsilon)
        self.sensitivity = check_positive_finite("sensitivity", sensitivity)
        self.eps_bit = self.epsilon / self.sensitivity
        self.p_flip = 1.0 / (1.0 + math.exp(self.eps_bit))

    def _params(self):
        return {"epsilon": self.epsilon, "sensitivity": self.sensitivity}

    @staticmethod
    def _bits(data) -> np.ndarray:
        bits = np.asarray(data)
        if bits.ndim != 1 or bits.size == 0 or not np.all((bits == 0) | (bits == 1)):
            raise ValueError(f"data must be a non-empty 1-D vector of 0/1 values, got {data!r}")
        return bits.astype(np.int8)

    def sample(self, data, rng):
        return tuple(int(b) for b in self.batch(data, 1, rng)[0])

    def batch(self, data, n, rng):
        check_generator(rng)
        n = _check_n(n)
        bits = self._bits(data)
        flips = rng.random((n, bits.size)) < self.p_flip
        return np.bitwise_xor(bits[None, :], flips.astype(np.int8))

    def logpmf(self, output, data) -> float:
        bits = self._bits(data)
        out = np.asarray(output)
        if out.shape != bits.shape or not np.all((out == 0) | (out == 1)):
            return -math.inf
        n_flip = int(np.sum(out != bits))
        return n_flip * math.log(self.p_flip) + (bits.size - n_flip) * math.log1p(-self.p_flip)

    log_law = logpmf

    def critical_outputs(self, d0, d1):
        """The log-ratio is a sum over the differing bits only; it is largest at
        the output ``d0`` and smallest at ``d1``."""
        return [tuple(int(b) for b in self._bits(d0)), tuple(int(b) for b in self._bits(d1))]

    def privacy_map(self, d_in):
        return float(d_in) * self.eps_bit


# --------------------------------------------------------------------------- private median
class _BoundedMedian(Mechanism):
    """Shared parts of the private medians over public ``bounds``: parameters, data check, privacy map."""

    def __init__(self, epsilon: float, bounds=(0.0, 1.0), sensitivity: float = 1.0, *, strict: bool = True):
        self.epsilon = check_positive_finite("epsilon", epsilon)
        self.sensitivity = check_positive_finite("sensitivity", sensitivity)
        try:
            low, high = (float(b) for b in bounds)
        except (TypeError, ValueError):
            raise ValueError(f"bounds must be a pair (low, high), got {bounds!r}") from None
        if not (math.isfinite(low) and math.isfinite(high) and (low < high if strict else low <= high)):
            raise ValueError(f"bounds must be finite with low {'<' if strict else '<='} high, got {bounds!r}")
        self.bounds = (low, high)

    def _params(self):
        return {"epsilon": self.epsilon, "bounds": self.bounds, "sensitivity": self.sensitivity}

    def _values(self, data) -> np.ndarray:
        x = np.sort(np.asarray(data, dtype=float).ravel())
        if x.size and (x[0] < self.bounds[0] or x[-1] > self.bounds[1] or not np.all(np.isfinite(x))):
            raise ValueError(f"data must lie within bounds {self.bounds}, got values in [{x[0]}, {x[-1]}]")
        return x

    def privacy_map(self, d_in):
        """Datasets differing in ``d_in`` added or removed values: loss ``epsilon * d_in / sensitivity``."""
        return float(d_in) * self.epsilon / self.sensitivity


class IntervalExponential(_BoundedMedian):
    """Private median on a bounded interval, released on a public grid: the
    exponential mechanism of 003_9d9c0c8370f39611.txt, section 3.1 (and the
    proof of its Theorem 3), with the Lebesgue base measure replaced by the
    counting measure of the public grid ``t_j = low + (high - low) j / M``,
    ``j = 0..M`` (:mod:`reference.grid`).

    With the node's values sorted, ``x_(1) <= ... <= x_(N)`` inside public
    ``bounds = (low, high)``, the rank of a grid point is the number of values
    ``<= t_j``; the grid points of rank ``i`` form the gap ``G_i`` (the grid
    points of ``[x_(i), x_(i+1))``) and their utility is ``q_i = -|2i - N|``
    (sensitivity 1 under adding or removing a value). The output is the grid
    point ``t_j`` with probability ``∝ exp(epsilon q_{rank(j)} / (2 sensitivity))``,
    exactly the exponential mechanism over the ``M + 1`` public grid points:
    a gap is chosen with probability ``∝ |G_i| exp(epsilon q_i / (2 sensitivity))``
    (``|G_i|`` its number of grid points), then a grid point uniformly inside it
    with exact integers (``rng.integers``). The attainable outputs are the same
    public grid for every dataset; no float lattice of the data's gaps is
    released (Mironov 2012; issue 17 finding 2).

    Privacy map: datasets differing in ``d_in`` added or removed values give
    loss ``epsilon * d_in / sensitivity``. The gap is drawn from floating-point
    probabilities by inverting their CDF, which adds a residual
    ``delta = residual_delta`` (:func:`reference.grid.selection_delta` with
    ``m = M + 1`` outcomes, about 2.8e-9 at ``M = 2**16``, ``epsilon = 1``);
    learners charge it in their ledger.

    Parameters
    ----------
    epsilon : float
    bounds : (float, float)
        Public range of the attribute; values outside it are an error. ``low == high`` is
        allowed (every grid point is ``low``: the only output).
    sensitivity : float, default 1.0
    grid : int, default 2**16
        Number of grid steps ``M`` (``M + 1`` points, both bounds included); an error when the
        points would not be distinct doubles (:func:`reference.grid.effective_grid` coarsens
        it by a public rule).

    References
    ----------
    Consul, Williamson, 003_9d9c0c8370f39611.txt section 3.1, Theorem 3.
    McSherry, Talwar (2007), the exponential mechanism. Mironov (2012).
    """

    kind = "discrete"

    def __init__(self, epsilon: float, bounds=(0.0, 1.0), sensitivity: float = 1.0, grid: int = DEFAULT_GRID):
        _BoundedMedian.__init__(self, epsilon, bounds, sensitivity, strict=False)
        self.grid = check_grid(grid, self.bounds)

    def _params(self):
        return {"epsilon": self.epsilon, "bounds": self.bounds, "sensitivity": self.sensitivity, "grid": self.grid}

    @property
    def residual_delta(self) -> float:
        """The floating-point residual delta of one draw (:func:`reference.grid.selection_delta`)."""
        return selection_delta(self.grid + 1, self.epsilon, math.log(self.grid + 1))

    def points(self, j):
        """The grid point(s) ``t_j``."""
        return grid_value(j, self.bounds[0], self.bounds[1], self.grid)

    def _scores(self, i: np.ndarray, n: int) -> np.ndarray:
        """``|2i - N|``, the (negated) utility of rank ``i`` in units of the rate."""
        return np.abs(2 * i - n)

    def gaps(self, data):
        """``(start, count, log_p)`` per rank ``i = 0..N``: the gap's grid indices are
        ``start <= j < start + count`` and ``log_p`` its log-probability (in Python floats: the
        nodes of a tree hold few values)."""
        x = self._values(data).tolist()
        n, low, high, M = len(x), self.bounds[0], self.bounds[1], self.grid
        cuts = [0] + grid_cuts(x, low, high, M, "left") + [M + 1]
        count = [cuts[i + 1] - cuts[i] for i in range(n + 1)]
        d = self._scores(np.arange(n + 1), n).tolist()
        ref = min((d[i], i) for i in range(n + 1) if count[i] > 0)[1]  # exact differences (reference.grid)
        rate, c_ref, d_ref = self.epsilon / (2.0 * self.sensitivity), math.log(count[ref]), d[ref]
        log_w = [(math.log(c) - c_ref) - (di - d_ref) * rate if c > 0 else -math.inf for c, di in zip(count, d)]
        top = max(log_w)
        norm = top + math.log(math.fsum(math.exp(v - top) for v in log_w))
        return np.array(cuts[:-1]), np.array(count), np.array([v - norm for v in log_w])

    def sample(self, data, rng):
        check_generator(rng)
        start, count, log_p = self.gaps(data)
        i = int(_draw_index(np.exp(log_p), 1, rng)[0])
        j = int(start[i]) + int(rng.integers(0, count[i]))
        return self.bounds[0] + (self.bounds[1] - self.bounds[0]) * (j / self.grid)  # grid_value, in Python floats

    def batch(self, data, n, rng):
        check_generator(rng)
        n = _check_n(n)
        start, count, log_p = self.gaps(data)
        idx = _draw_index(np.exp(log_p), n, rng)
        return self.points(start[idx] + rng.integers(0, count[idx]))

    def logpmf(self, r, data) -> float:
        j = grid_index(r, self.bounds[0], self.bounds[1], self.grid)
        if j < 0:
            return -math.inf
        start, count, log_p = self.gaps(data)
        i = int(np.searchsorted(start, j, side="right")) - 1  # the last gap starting at or before j: never empty
        return float(log_p[i] - math.log(count[i]))

    log_law = logpmf

    def cdf(self, r, data) -> np.ndarray:
        """``P(output <= r)``: exact, a step function on the grid."""
        start, count, log_p = self.gaps(data)
        p = np.exp(log_p)
        k = grid_searchsorted(np.asarray(r, dtype=float), self.bounds[0], self.bounds[1], self.grid, "right")
        inside = np.clip(k[..., None] - start, 0, count)
        return np.sum(p * inside / np.maximum(count, 1), axis=-1)

    def critical_outputs(self, d0, d1):
        """The log-ratio depends on a grid point only through its two ranks (under ``d0`` and
        ``d1``), which are constant between consecutive grid boundaries of the two datasets:
        one grid point per piece carries every value of the log-ratio."""
        low, high = self.bounds
        b = [grid_searchsorted(self._values(d), low, high, self.grid, "left") for d in (d0, d1)]
        cuts = np.unique(np.concatenate(([0], b[0], b[1])))
        cuts = cuts[cuts <= self.grid]
        return [float(v) for v in self.points(cuts)]


# JointExp (Gillenwater et al. 2021), the private quantiles of PrivaTree, lives in its own module for its size.
from .jointexp import JointExp  # noqa: E402
