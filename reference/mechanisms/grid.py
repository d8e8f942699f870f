"""The public grid on which private medians, thresholds and bin edges are released.

A value drawn uniformly inside a data-defined interval, ``lo + U * width``,
lies on a floating-point lattice fixed by the interval's ends: a neighbouring
dataset moves the ends and so the set of attainable outputs (Mironov 2012).
The selections here therefore release only points of a *public* grid on the
public bounds ``(low, high)``:

    ``t_j = low + (high - low) * j / M``, ``j = 0, ..., M``,

a deterministic function of ``j`` computed the same way everywhere
(:func:`grid_value`); ``M`` (``grid``) is a documented parameter with default
:data:`DEFAULT_GRID` ``= 2**16``. Counting grid points on one side of a data
value (:func:`grid_searchsorted`) is exact: an estimate from the division is
corrected against the grid expression itself.

Residual delta of an inverse-CDF draw (:func:`selection_delta`)
-----------------------------------------------------------------
A selection over ``m`` outcomes whose weights ``w_i = exp(a_i)``
(``a_i <= 0`` after the shift by the largest) are computed in double
precision and drawn by inverting their cumulative sum with a 53-bit uniform
(``reference.mechanisms.draw_index``) releases a law ``P~`` that differs from
the ideal ``P``. With ``u = 2**-53`` and the exponents formed as differences
(score differences times the rate, logs of public-size counts bounded by
``L``, the log of the normaliser bounded by ``ln m``): the exponent ``a_i``
carries an absolute error of at most ``(4 (L + ln m) + 2 |a_i| + 4) u`` and
``exp`` adds one ulp, so ``sum_i |w~_i - w_i| <= m (4 (L + ln m) + 6 + 2/e) u``
(using ``|a| e^a <= 1/e``); the running sums add at most ``m u`` of the total;
the uniform is a multiple of ``u`` and its product with the total is rounded
once, so each of the ``m`` cells moves by at most ``4 u`` after normalisation.
Hence ``TV(P~, P) <= m (4 (L + ln m) + 16) u =: t`` and, for every event ``S``
and neighbours ``D, D'`` of an ``epsilon``-DP ``P``,
``P~(S | D) <= P(S | D) + t <= e^epsilon P~(S | D') + (1 + e^epsilon) t``: the
call is ``(epsilon, (1 + e^epsilon) t)``-DP. Outcomes of zero weight are exact
zeros and add no error, so ``m`` is the number of outcomes that can have
positive weight, a public number (``M + 1`` grid points at most). For
``M = 2**16`` and ``epsilon = 1`` this is about ``2.8e-9``.

References
----------
Mironov (2012), "On significance of the least significant bits for
differential privacy". Higham (2002), "Accuracy and Stability of Numerical
Algorithms", section 4.2 (error of recursive summation).
"""
from __future__ import annotations

import math
import operator

import numpy as np

from reference.validation import shown

__all__ = ["DEFAULT_GRID", "check_grid", "effective_grid", "grid_value", "grid_searchsorted", "grid_cuts", "grid_index",
           "selection_delta"]

#: default number of grid steps ``M`` (``M + 1`` points, both bounds included)
DEFAULT_GRID = 2 ** 16

_U = 2.0 ** -53


def check_grid(grid, bounds=None) -> int:
    """Validate the grid size ``M`` (an integer >= 1); with ``bounds`` also that the grid points
    are strictly increasing in double precision (step well above the spacing of the bounds)."""
    if isinstance(grid, bool) or not isinstance(grid, (int, np.integer)) or not 1 <= grid <= 2 ** 40:
        raise ValueError(f"grid must be an integer in [1, 2**40], got {shown(grid)}")
    grid = int(grid)
    if bounds is not None:
        low, high = bounds
        if low < high and grid > 1 and (high - low) / grid <= 8.0 * math.ulp(max(abs(low), abs(high))):
            raise ValueError(f"grid={grid} is too fine for bounds {shown(bounds)}: its points would not be distinct "
                             "double-precision numbers")
    return grid


def effective_grid(grid: int, low, high):
    """The largest ``M' = grid / 2**k >= 1`` whose grid on ``(low, high)`` has distinct points
    (vectorised over ``low``, ``high``): a function of public values only, used where a learner's
    node ranges shrink (a threshold at a range's end leaves a child range of width zero, for which
    ``M' = 1`` and every grid point is ``low``)."""
    if np.ndim(low) == 0 and np.ndim(high) == 0:  # the scalar case, without array overhead
        low, high, g = float(low), float(high), int(grid)
        tiny = 8.0 * math.ulp(max(abs(low), abs(high)))
        while g > 1 and (high - low) / g <= tiny:
            g //= 2
        return g
    low = np.asarray(low, dtype=np.float64)
    high = np.asarray(high, dtype=np.float64)
    shape = np.broadcast(low, high).shape
    if low.size and np.min(high - low) / grid > 8.0 * math.ulp(float(np.max(np.maximum(np.abs(low), np.abs(high))))):
        return np.full(shape, int(grid), dtype=np.int64)  # every range takes the full grid
    tiny = 8.0 * np.spacing(np.maximum(np.abs(low), np.abs(high)))
    g = np.full(shape, int(grid), dtype=np.int64)
    for _ in range(64):
        coarser = (g > 1) & ((high - low) / g <= tiny)
        if not coarser.any():
            break
        g = np.where(coarser, g // 2, g)
    return int(g) if g.ndim == 0 else g


def grid_value(j, low, high, grid: int):
    """The grid point ``t_j = low + (high - low) * j / M`` (vectorised over ``j``, ``low``, ``high``)."""
    return low + (high - low) * (np.asarray(j, dtype=np.float64) / grid)


def grid_searchsorted(v, low, high, grid, side: str = "left") -> np.ndarray:
    """``np.searchsorted(t, v, side)`` for the grid ``t_0..t_M`` without building it:
    ``#{j : t_j < v}`` (``side="left"``) or ``#{j : t_j <= v}`` (``"right"``), exactly.

    ``v``, ``low``, ``high`` and ``grid`` broadcast together; ``+inf`` gives ``M + 1``, ``-inf`` 0;
    on a range of width zero every grid point is ``low``. ``v`` must not hold NaN.
    """
    if np.ndim(low) == 0 and np.ndim(high) == 0 and np.ndim(grid) == 0 and np.size(v) <= 64:
        arr = np.asarray(v, dtype=np.float64)
        cuts = grid_cuts(arr.ravel().tolist(), float(low), float(high), int(grid), side)
        return np.array(cuts, dtype=np.int64).reshape(arr.shape)
    v = np.asarray(v, dtype=np.float64)
    low = np.asarray(low, dtype=np.float64)
    span = np.asarray(high, dtype=np.float64) - low
    cmp = np.less if side == "left" else np.less_equal
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        est = np.floor((v - low) / span * grid)
    # k: the last j with t_j on the left of v (-1 when none), estimated, then corrected step by step
    # against the grid expression itself (the estimate is off by at most one step)
    k = np.clip(est, -1, grid)
    if not np.all(span > 0):
        k = np.where(span > 0, k, np.where(cmp(low, v), grid, -1))
    for _ in range(64):
        up = (k < grid) & cmp(low + span * ((k + 1) / grid), v)
        down = (k >= 0) & ~cmp(low + span * (k / grid), v)
        if not (up.any() or down.any()):
            break
        k = k + up - down
    return (k + 1).astype(np.int64)


def grid_cuts(values, low: float, high: float, grid: int, side: str) -> list:
    """:func:`grid_searchsorted` for a few values and scalar bounds, in Python floats and ints (the
    same operations as :func:`grid_value`, so the same doubles); returns a list."""
    cmp = operator.lt if side == "left" else operator.le
    span = high - low
    out = []
    for x in values:
        if not span > 0:
            k = grid if cmp(low, x) else -1
        elif x != x:
            k = -1
        elif math.isinf(x):
            k = grid if x > 0 else -1
        else:
            k = min(max(math.floor((x - low) / span * grid), -1), grid)
            while k < grid and cmp(low + span * ((k + 1) / grid), x):
                k += 1
            while k >= 0 and not cmp(low + span * (k / grid), x):
                k -= 1
        out.append(k + 1)
    return out


def grid_index(r, low, high, grid: int) -> int:
    """The ``j`` with ``t_j == r`` exactly, or ``-1`` when ``r`` is not a grid point."""
    r = float(r)
    if not low <= r <= high:
        return -1
    j = int(grid_searchsorted(r, low, high, grid, side="left"))
    return j if j <= grid and float(grid_value(j, low, high, grid)) == r else -1


def selection_delta(m: int, epsilon: float, log_range: float = 0.0) -> float:
    """Residual delta of one inverse-CDF draw over at most ``m`` positive-weight outcomes.

    Parameters
    ----------
    m : int
        Public bound on the number of outcomes with positive weight.
    epsilon : float
        The epsilon of the ideal (real-arithmetic) selection.
    log_range : float, default 0
        Bound ``L`` on the magnitude of the logs of counts summed into a log-weight
        (``log(M + 1)`` for grid-point counts; 0 when there are none).

    Returns
    -------
    float
        ``(1 + e^epsilon) * m * (4 (L + ln m) + 16) * 2**-53`` (module docstring); the
        ``e^epsilon`` factor is needed (a cell rounded to zero under one input may carry
        ``e^epsilon`` times the error under the other), so for epsilon above about 25 the bound is
        vacuous and is returned as the largest double below 1.
    """
    m = max(int(m), 1)
    t = m * (4.0 * (log_range + math.log(m)) + 16.0) * _U
    return min((1.0 + math.exp(min(epsilon, 700.0))) * t, 1.0 - _U)
