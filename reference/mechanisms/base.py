"""The mechanism base class (the auditor's contract plus an exact law) and the public lattice helpers."""
from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

from reference.validation import check_generator
from reference.validation import shown

__all__ = ['Mechanism', 'GRID_BITS', 'MAX_UNITS', 'default_grid', 'check_lattice_step', 'round_to_grid', 'record_units',
           'span_up', 'check_n', 'draw_index', 'log_normalise']


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


def log_normalise(log_w: np.ndarray) -> np.ndarray:
    """``log_w - logsumexp(log_w)`` by the max shift (scipy's logsumexp costs ~0.1 ms on tiny inputs)."""
    top = np.max(log_w)
    return log_w - (top + np.log(np.sum(np.exp(log_w - top))))


def draw_index(p: np.ndarray, n: int, rng) -> np.ndarray:
    """``n`` indices drawn with probabilities ``p`` by inverting the CDF (the law of ``rng.choice(p=p)``).

    The probabilities are floating point and the uniform has 53 bits: the law released differs
    from ``p`` by at most ``m (4 ln m + 16) 2**-53`` in total variation for ``m`` positive
    entries, which makes an epsilon-DP selection (epsilon, delta)-DP with the ``delta`` of
    :func:`reference.mechanisms.grid.selection_delta` (charged by the learners).
    """
    cdf = np.cumsum(p)
    idx = np.searchsorted(cdf, rng.random(n) * cdf[-1], side="right")
    return np.minimum(idx, p.size - 1)


def check_n(n) -> int:
    """``n``, the draws asked of ``batch``, as an int (a ``ValueError`` naming it unless a positive integer)."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be a positive integer, got {shown(n)}")
    return int(n)


# --------------------------------------------------------------------------- Laplace
#: the default grid is 2**-GRID_BITS times the power of two at or below min(sensitivity, sensitivity / epsilon)
GRID_BITS = 10
#: |value / grid| must stay below this many grid units (int64 arithmetic with room for the noise)
MAX_UNITS = 2.0 ** 60


def default_grid(epsilon: float, sensitivity: float) -> float:
    """The default public grid: a power of two about ``2**-GRID_BITS`` of the smaller of the
    sensitivity and the noise scale ``sensitivity / epsilon``, so rounding to it costs at most
    about ``2**-GRID_BITS`` of epsilon (it is charged: see :class:`Laplace`)."""
    return math.ldexp(1.0, math.floor(math.log2(min(sensitivity, sensitivity / epsilon))) - GRID_BITS)


def check_lattice_step(grid) -> float:
    """A grid must be a positive power of two (so ``value / grid`` is exact in floating point)."""
    if isinstance(grid, bool) or not isinstance(grid, (int, float, np.integer, np.floating)):
        raise ValueError(f"grid must be a positive power of two, got {shown(grid)}")
    g = float(grid)
    if not (math.isfinite(g) and g > 0 and math.frexp(g)[0] == 0.5):
        raise ValueError(f"grid must be a positive power of two, got {shown(grid)}")
    return g


def span_up(low: float, high: float) -> float:
    """The smallest double at least the exact ``high - low``: a sensitivity that never falls one grid unit
    short through the rounding of the subtraction (issue 26 finding 4)."""
    d = float(high) - float(low)
    if Fraction(d) < Fraction(float(high)) - Fraction(float(low)):
        d = math.nextafter(d, math.inf)
    return d


def record_units(values, grid: float, bound: int) -> np.ndarray:
    """Each record's value in whole grid units, ``round(value / grid)`` clamped to ``[-bound, bound]``, as
    int64: a per-record function, so the exact integer sum of neighbouring datasets moves by at most
    ``bound`` units whatever the floating-point sums would have done (issue 26 finding 4). Sum them with
    integers (``int(units.sum())``, or an integer matrix product) before the lattice mechanism."""
    return np.clip(round_to_grid(values, grid), -int(bound), int(bound))


def round_to_grid(value, grid: float) -> np.ndarray:
    """``round(value / grid)`` half up, exactly, as int64.

    ``value / grid`` is exact (``grid`` a power of two), and ``y - floor(y)`` is exact for a double, so
    the result is the exact nearest integer with ties up. It is monotone and commutes with integer
    shifts, so inputs ``d`` apart land at most ``ceil(d / grid)`` grid units apart.
    """
    y = np.asarray(value, dtype=float) / grid
    if not np.all(np.isfinite(y)) or np.any(np.abs(y) >= MAX_UNITS):
        raise ValueError(f"data must be finite with |data / grid| < 2**60, got {shown(value)} with grid {shown(grid)}")
    f = np.floor(y)
    return f.astype(np.int64) + (y - f >= 0.5)
