"""The private medians and selections of DiPriMe, vectorised over rows (one row per tree node).

Each function takes, for ``U`` nodes at once, the values of one attribute
``values`` (U, n), which of them are the node's records ``member`` (U, n),
the node's public range ``lo``, ``hi`` (U,) and the mechanism's epsilon, and
returns one threshold per node, drawn from the law of the scalar mechanism it
names (tested against that mechanism's exact law in
``tests/test_diprime_batch.py``). :mod:`reference.diprime.batch` grows forests
with them.

References
----------
Consul and Williamson 2021 section 3.1 (the Lebesgue
median), Consul and Williamson 2020 Algorithm 3, lines 42-47 (the index median);
spec/diprime.md A1 and A6. McKenna and Sheldon (2020), permute-and-flip; Ding
et al. (2021), its report-noisy-max form.
"""
from __future__ import annotations

import numpy as np

from reference.diprime.grower import FLIP_GRID
from reference.mechanisms.grid import DEFAULT_GRID, effective_grid, grid_searchsorted, grid_value

__all__ = ["median_lebesgue", "median_index_v000", "median_authors_flip", "median_flip_grid", "noisy_max"]


def _masked_sort(values: np.ndarray, member: np.ndarray) -> np.ndarray:
    """Each row's member values sorted first, ``+inf`` after them."""
    return np.sort(np.where(member, values, np.inf), axis=1)


def _gaps(values, member, count, lo, hi):
    """Gap edges of :class:`reference.mechanisms.IntervalExponential` for every row:
    ``I_0 = [lo, x_(1))``, ``I_i = [x_(i), x_(i+1))``, ``I_N = [x_(N), hi]``;
    ``(left, right, i, valid)`` of shape (U, n + 1), ``valid`` marking ``i <= N``."""
    s = _masked_sort(values, member)
    U, n = s.shape
    i = np.arange(n + 1)
    left = np.concatenate((lo[:, None], s), axis=1)
    right = np.concatenate((s, np.full((U, 1), np.inf)), axis=1)
    right = np.where(i[None, :] < count[:, None], right, hi[:, None])
    valid = i[None, :] <= count[:, None]
    left = np.where(valid, left, lo[:, None])
    return left, right, i, valid


def _draw_from_log_weights(log_w: np.ndarray, rng) -> np.ndarray:
    """One index per row with probabilities ``∝ exp(log_w)`` (each row has a finite entry),
    by inverting the cumulative law as ``reference.mechanisms.draw_index`` does."""
    w = np.exp(log_w - log_w.max(axis=1, keepdims=True))
    cum = np.cumsum(w, axis=1)
    u = rng.random(cum.shape[0]) * cum[:, -1]
    idx = np.count_nonzero(cum <= u[:, None], axis=1)
    return np.minimum(idx, cum.shape[1] - 1)


def noisy_max(z: np.ndarray, rng, noise: str) -> np.ndarray:
    """``argmax(z + noise)`` per row, ``-inf`` entries excluded: Gumbel noise gives the
    exponential mechanism with weights ``exp(z)``; exponential noise gives permute-and-flip
    with flip probabilities ``exp(z - max z)`` (Ding et al. 2021)."""
    g = rng.gumbel(size=z.shape) if noise == "gumbel" else rng.exponential(size=z.shape)
    return np.argmax(z + g, axis=1)


def median_lebesgue(values, member, lo, hi, eps, rng, grid: int = DEFAULT_GRID) -> np.ndarray:
    """V003 section 3.1 on the public grid ``t_j = lo + (hi - lo) j / M``
    (:class:`reference.mechanisms.IntervalExponential`), one threshold per row: the grid points
    of rank ``i`` (``i`` values ``<= t_j``) form gap ``G_i``, chosen with probability
    ``∝ |G_i| exp(-(eps/2)|2i - N|)``; the grid point is then uniform in it (exact integers).
    ``M`` is ``effective_grid(grid, lo, hi)`` per row, as in the reference learner."""
    grid = effective_grid(grid, lo, hi)[:, None]
    lo, hi = lo[:, None], hi[:, None]
    count = member.sum(axis=1)
    s = _masked_sort(values, member)  # +inf after the members: their grid count is M + 1
    U, n = s.shape
    b = grid_searchsorted(s, lo, hi, grid, "left")
    edges = np.concatenate((np.zeros((U, 1), dtype=np.int64), b, grid + 1), axis=1)
    size = np.diff(edges, axis=1)  # zero for the ranks above N
    d = np.abs(2 * np.arange(n + 1) - count[:, None])
    d = d - np.min(np.where(size > 0, d, n + 1), axis=1, keepdims=True)  # score differences (reference.mechanisms.grid)
    with np.errstate(divide="ignore"):
        log_w = np.log(size.astype(np.float64)) - d * (0.5 * eps)
    k = _draw_from_log_weights(log_w, rng)
    r = np.arange(U)
    j = edges[r, k] + rng.integers(0, size[r, k])
    return grid_value(j, lo[:, 0], hi[:, 0], grid[:, 0])


def median_index_v000(values, member, lo, hi, eps, rng) -> np.ndarray:
    """V000 Algorithm 3, lines 42-47 (FLAWED, not DP): gap ``I_j`` of positive length with
    probability ``∝ exp(-(eps/2)|N - 2j|)``, then ``r`` uniform in it
    (:class:`reference.diprime.mechanisms.IndexMedianV000`)."""
    count = member.sum(axis=1)
    left, right, i, valid = _gaps(values, member, count, lo, hi)
    log_w = np.where(valid & (right > left), -0.5 * eps * np.abs(2 * i - count[:, None]), -np.inf)
    k = _draw_from_log_weights(log_w, rng)[:, None]
    a, b = np.take_along_axis(left, k, 1)[:, 0], np.take_along_axis(right, k, 1)[:, 0]
    return a + (b - a) * rng.random(a.shape)


def median_authors_flip(values, member, lo, hi, eps, rng) -> np.ndarray:
    """The authors' DiPriMeFlip median (FLAWED, spec A6, 2.4 (iv)): permute-and-flip over the
    gaps of positive length with score ``2 ln|I_i| - |2i - N|`` and sensitivity 1, then ``r``
    uniform in the gap (:class:`reference.diprime.mechanisms.AuthorsFlipMedian`)."""
    count = member.sum(axis=1)
    left, right, i, valid = _gaps(values, member, count, lo, hi)
    width = right - left
    ok = valid & (width > 0)
    with np.errstate(divide="ignore"):
        u = 2.0 * np.log(np.where(ok, width, 1.0)) - np.abs(2 * i - count[:, None])
    k = noisy_max(np.where(ok, 0.5 * eps * u, -np.inf), rng, "exponential")[:, None]
    a, b = np.take_along_axis(left, k, 1)[:, 0], np.take_along_axis(right, k, 1)[:, 0]
    return a + (b - a) * rng.random(a.shape)


def median_flip_grid(values, member, lo, hi, eps, rng) -> np.ndarray:
    """Strict DiPriMeFlip median (spec A6): permute-and-flip over the ``FLIP_GRID`` public
    thresholds ``lo + (hi - lo) k / (G + 1)`` with score ``-|2 #{x < r} - N|``, sensitivity 1
    (:meth:`reference.diprime.grower.TreeGrower.candidate`).

    Permute-and-flip is report-noisy-max with Exp(1) noise on ``(eps/2) q`` (Ding et al. 2021).
    The grid points with ``b`` values below them form one run of ``g_b`` points with one score,
    so the noisy max is taken over these ``N + 1`` groups, each with the maximum of ``g_b``
    Exp(1) draws (``-log(1 - V^(1/g_b))``, ``V`` uniform), and the point is then uniform within
    the winning group: the same law, with ``N + 1`` draws instead of ``G``.
    """
    G = FLIP_GRID
    count = member.sum(axis=1)
    s = _masked_sort(values, member)
    U, n = s.shape
    lo_c, span = lo[:, None], (hi - lo)[:, None]
    # c = #{grid points <= x} for every sorted value: estimated, then corrected by one step against the
    # exact grid expression (the estimate's rounding error is far below one cell: off by at most one)
    member_sorted = np.isfinite(s)
    x = np.where(member_sorted, s, lo_c)
    c = np.clip(np.floor((x - lo_c) / span * (G + 1)), 0, G)
    c = c + ((c < G) & (lo_c + span * (c + 1) / (G + 1) <= x)) - ((c > 0) & (lo_c + span * c / (G + 1) > x))
    # grid indices k (0-based) with b values below grid point k + 1 are edges[b] <= k < edges[b + 1]
    edges = np.concatenate((np.zeros((U, 1)), np.where(member_sorted, c, G), np.full((U, 1), float(G))), axis=1)
    size = np.diff(edges, axis=1)
    with np.errstate(divide="ignore"):
        top = -np.log(-np.expm1(np.log(rng.random((U, n + 1))) / size))
    z = np.where(size > 0, top - 0.5 * eps * np.abs(2 * np.arange(n + 1) - count[:, None]), -np.inf)
    best = np.argmax(z, axis=1)
    rows = np.arange(U)
    k = np.minimum(edges[rows, best] + np.floor(rng.random(U) * size[rows, best]), edges[rows, best + 1] - 1)
    return lo + (hi - lo) * (k + 1) / (G + 1)
