"""The private median over a bounded interval, on a public grid (Consul and Williamson 2021 section 3.1)."""
from __future__ import annotations

import math

import numpy as np

from reference.mechanisms.base import Mechanism, check_n, draw_index
from reference.mechanisms.grid import (
    DEFAULT_GRID,
    check_grid,
    grid_cuts,
    grid_index,
    grid_searchsorted,
    grid_value,
    selection_delta,
)
from reference.validation import check_generator, check_positive_finite
from reference.validation import shown

__all__ = ['IntervalExponential']


class BoundedMedian(Mechanism):
    """Shared parts of the private medians over public ``bounds``: parameters, data check, privacy map."""

    def __init__(self, epsilon: float, bounds=(0.0, 1.0), sensitivity: float = 1.0, *, strict: bool = True):
        self.epsilon = check_positive_finite("epsilon", epsilon)
        self.sensitivity = check_positive_finite("sensitivity", sensitivity)
        try:
            low, high = (float(b) for b in bounds)
        except (TypeError, ValueError):
            raise ValueError(f"bounds must be a pair (low, high), got {shown(bounds)}") from None
        if not (math.isfinite(low) and math.isfinite(high) and (low < high if strict else low <= high)):
            raise ValueError(f"bounds must be finite with low {'<' if strict else '<='} high, got {shown(bounds)}")
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


class IntervalExponential(BoundedMedian):
    """Private median on a bounded interval, released on a public grid: the
    exponential mechanism of Consul and Williamson 2021 (V003), section 3.1 (and the
    proof of its Theorem 3), with the Lebesgue base measure replaced by the
    counting measure of the public grid ``t_j = low + (high - low) j / M``,
    ``j = 0..M`` (:mod:`reference.mechanisms.grid`).

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
    released (Mironov 2012).

    Privacy map: datasets differing in ``d_in`` added or removed values give
    loss ``epsilon * d_in / sensitivity``. The gap is drawn from floating-point
    probabilities by inverting their CDF, which adds a residual
    ``delta = residual_delta`` (:func:`reference.mechanisms.grid.selection_delta` with
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
        points would not be distinct doubles (:func:`reference.mechanisms.grid.effective_grid` coarsens
        it by a public rule).

    References
    ----------
    Consul and Williamson 2021 (V003), section 3.1, Theorem 3.
    McSherry, Talwar (2007), the exponential mechanism. Mironov (2012).
    """

    kind = "discrete"

    def __init__(self, epsilon: float, bounds=(0.0, 1.0), sensitivity: float = 1.0, grid: int = DEFAULT_GRID):
        BoundedMedian.__init__(self, epsilon, bounds, sensitivity, strict=False)
        self.grid = check_grid(grid, self.bounds)

    def _params(self):
        return {"epsilon": self.epsilon, "bounds": self.bounds, "sensitivity": self.sensitivity, "grid": self.grid}

    @property
    def residual_delta(self) -> float:
        """The floating-point residual delta of one draw (:func:`reference.mechanisms.grid.selection_delta`)."""
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
        ref = min((d[i], i) for i in range(n + 1) if count[i] > 0)[1]  # exact differences (reference.mechanisms.grid)
        rate, c_ref, d_ref = self.epsilon / (2.0 * self.sensitivity), math.log(count[ref]), d[ref]
        log_w = [(math.log(c) - c_ref) - (di - d_ref) * rate if c > 0 else -math.inf for c, di in zip(count, d)]
        top = max(log_w)
        norm = top + math.log(math.fsum(math.exp(v - top) for v in log_w))
        return np.array(cuts[:-1]), np.array(count), np.array([v - norm for v in log_w])

    def sample(self, data, rng):
        check_generator(rng)
        start, count, log_p = self.gaps(data)
        i = int(draw_index(np.exp(log_p), 1, rng)[0])
        j = int(start[i]) + int(rng.integers(0, count[i]))
        return self.bounds[0] + (self.bounds[1] - self.bounds[0]) * (j / self.grid)  # grid_value, in Python floats

    def batch(self, data, n, rng):
        check_generator(rng)
        n = check_n(n)
        start, count, log_p = self.gaps(data)
        idx = draw_index(np.exp(log_p), n, rng)
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
