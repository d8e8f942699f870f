"""The law of a PrivaTree node's choice on one numerical feature of three bins, without enumerating its histogram.

At an internal node, Algorithm 1 of PrivaTree (Vos et al., lines 11-12) draws the feature's noisy histogram
``H[b, k] = max(c[b, k] + Z, 0)`` (Eq. 4; ``Z`` two-sided geometric, independent per cell) and keeps the boundary of
least Gini among those whose noisy sides hold at least one record, the first boundary on ties; with none, the node is
a leaf. With three bins and two classes the histogram has six cells, and summing over it directly costs
``(Hmax + 1)^6`` states (about ``6e11`` at the report's node epsilon 1/3, where ``Hmax = 90``):
:func:`audit.privatree.node_law.feature_law` refuses to enumerate it. This module sums the same law in ``O(Hmax^4 log Hmax)``.

The reduction
-------------
Write ``x``, ``y``, ``z`` for the noisy (class 0, class 1) counts of bins 0, 1 and 2, ``|w| = w0 + w1`` and
``q(w) = w0 w1 / |w|``. A side ``w`` of ``n = |w|`` records has ``n - (w0^2 + w1^2) / n = 2 q(w)``, so with the
node's total ``N`` (the same for both boundaries)::

    N gini_0 / 2 = q(x) + q(y + z),      N gini_1 / 2 = q(x + y) + q(z),

and ``gini_0 <= gini_1`` if and only if ``A_y(x) <= A_y(z)`` with ``A_y(w) = q(w) - q(w + y)``: for a fixed middle bin
``y`` the comparison separates into one number of ``x`` against the same number of ``z``, and ``x``, ``z`` are
independent. So, for each ``y``, ``P(boundary 0 | y) = sum_v P(A_y(x) = v) P(A_y(z) > v)`` plus the ties, by sorting
the values of ``A_y`` over the grid of ``w`` once. Both boundaries pass the filter exactly when ``|x| >= 1`` and
``|z| >= 1``; otherwise the choice is read off the filter alone (boundary 0 iff ``|x| >= 1`` and ``|y| >= 1``,
boundary 1 iff ``|z| >= 1`` and ``|y| >= 1``, else none).

Agreement with the learner's exact comparison
----------------------------------------------
The learner compares Gini values exactly (:mod:`reference.ties`) and keeps boundary 0 on a tie (the first minimum),
so boundary 0 is kept exactly when ``A_y(x) <= A_y(z)``. ``A_y(w)`` is a ratio of integers, keyed by
``float(numerator / denominator)``: a correctly rounded division of exactly represented integers, equal for equal
ratios. Two different values differ by at least ``1 / (D_x D_z)`` with ``D_w = |w| (|w| + |y|)``, which
:func:`choice_law` checks is far above the spacing of doubles of their size (``check_separation``), so different
ratios get different keys in the same order.

Truncation
----------
Each noisy cell is summed up to ``Hmax`` with tail ``P(H > Hmax) <= TAIL`` (as in :mod:`audit.privatree.node_law`,
which keeps the truncated mass and puts it into the width of every interval it touches). With ``drop > 0`` each bin's
least likely noisy pairs are left out too, from the least up while their mass stays within ``drop`` (the joint mass
of a bin decays with the distance from its counts, so about half of the square grid carries less than the cells'
own tails): every probability returned is then the mass of its event among the pairs kept, at most the true one
and at least it minus the mass left out (reported as ``"dropped"``, at most ``3 drop``, a union over the bins).
:mod:`audit.privatree.node_law` does so at a tail coarser than its default, with ``drop`` the tail, and adds the
dropped mass to the truncated mass.

Ties
----
A run of equal values of ``A_y`` counts once: for each ``x`` the mass of ``z`` at or above it is the total less the
mass strictly before its run, carried along the run by a running maximum of the cumulated masses at the runs'
starts (non-decreasing), so no position is gathered and any sort (not a stable one) will do.

Cost: ``(Hmax_y0 + 1)(Hmax_y1 + 1)`` sorts of ``(Hmax + 1)^2`` values; at node epsilon 1/3 with the cells' tail 1e-9
(``Hmax`` about 65) about 4,300 sorts of 4,300 values, 1.5 s, or about 0.6 s with ``drop = 1e-9`` (about 2,500 of
each); memory ``O(Hmax^2)``.
"""
from __future__ import annotations

import numpy as np

__all__ = ["choice_law", "check_separation", "MIN_SEPARATION"]

#: the least ratio of the comparisons' separation to ``60 h u`` (``u`` the unit roundoff) :func:`choice_law` accepts
MIN_SEPARATION = 10.0


def check_separation(hmax_cells: int) -> float:
    """Ratio of the least gap between two different values of ``A_y`` to ``60 h u``, for noisy counts of at most
    ``h = hmax_cells`` per cell (module docstring); :func:`choice_law` requires it above :data:`MIN_SEPARATION`.

    A side holds at most ``2 h`` records and the middle bin ``|y| <= 2 h``, so ``D_w <= 2 h * 4 h`` and two different
    values of ``A_y`` (of ``N gini / 2``) differ by at least ``1 / (8 h^2)^2``, counted twice here as for ``N gini``.
    ``|A_y| <= 2 h``, so the spacing of doubles of its size is at most ``4 h u``, well below ``60 h u``: at a ratio
    above one, different ratios get different keys, in their order.
    """
    h = float(max(hmax_cells, 1))
    gap = 2.0 / (8.0 * h * h) ** 2
    err = 10.0 * (6.0 * h) * (np.finfo(float).eps / 2.0)
    return gap / err


def choice_law(pmfs: list, drop: float = 0.0) -> dict:
    """``{0: P, 1: P, None: P}``: the node's choice on the truncated grid (the caller keeps the truncated mass).

    Parameters
    ----------
    pmfs : list of six 1-D arrays
        ``pmfs[2 b + k][h] = P(H[b, k] = h)`` for ``h = 0..Hmax`` (bin ``b``, class ``k``), already truncated.
    drop : float
        Mass each bin's least likely noisy pairs may lose (module docstring, "Truncation"): ``0`` keeps the whole
        grid; otherwise the result holds the key ``"dropped"``, the mass of the states left out (at most
        ``3 drop``), which the caller adds to the truncated mass.

    Returns
    -------
    dict
    """
    if not drop >= 0.0:
        raise ValueError(f"drop must be a non-negative mass, got {drop!r}")
    # each bin's joint (class 0, class 1) mass on its grid
    px, py, pz = (np.outer(pmfs[2 * b], pmfs[2 * b + 1]) for b in range(3))
    dropped = 0.0
    if drop > 0.0:
        (px, dx), (py, dy), (pz, dz) = (_drop_least(p, drop) for p in (px, py, pz))
        dropped = dx + dy + dz
    # one grid for x and z (they may differ in extent: pad to the larger)
    G0 = max(px.shape[0], pz.shape[0])
    G1 = max(px.shape[1], pz.shape[1])
    px = np.pad(px, ((0, G0 - px.shape[0]), (0, G1 - px.shape[1])))
    pz = np.pad(pz, ((0, G0 - pz.shape[0]), (0, G1 - pz.shape[1])))
    hmax = max(G0, G1, *py.shape) - 1
    ratio = check_separation(hmax)
    if ratio < MIN_SEPARATION:
        raise ValueError(f"three-bin law: noisy counts up to {hmax} leave a separation ratio of {ratio:.3g} "
                         f"(< {MIN_SEPARATION:g}) "
                         "between the comparisons and the doubles' spacing; use a larger node epsilon")
    w0, w1 = np.meshgrid(np.arange(G0, dtype=float), np.arange(G1, dtype=float), indexing="ij")
    w0, w1, mx, mz = w0.ravel(), w1.ravel(), px.ravel(), pz.ravel()
    s = w0 + w1
    # both boundaries pass the filter only when |x| >= 1 and |z| >= 1; a state of no mass under x and z adds nothing
    live = (s >= 1) & ((mx > 0) | (mz > 0))
    w0, w1, s, mx, mz = w0[live], w1[live], s[live], mx[live], mz[live]
    Mx, Mz = float(mx.sum()), float(mz.sum())  # P(|x| >= 1), P(|z| >= 1) on the grid
    x_empty = float(px[0, 0])
    z_empty = float(pz[0, 0])
    both = Mx * Mz
    ya, yb = np.nonzero(py)
    my = py[ya, yb]
    some = (ya + yb) > 0
    # y empty: both sides of both boundaries are the same, every comparison ties -> boundary 0
    p0 = float(my[~some].sum()) * both
    p1 = 0.0
    ya, yb, my = ya[some].astype(float), yb[some].astype(float), my[some]
    for lo in range(0, ya.size, _CHUNK):
        a, b, m = ya[lo:lo + _CHUNK, None], yb[lo:lo + _CHUNK, None], my[lo:lo + _CHUNK]
        zero = _boundary_zero_mass(w0, w1, s, mx, mz, Mz, a, b)
        p0 += float(np.dot(m, zero))
        p1 += float(np.dot(m, both - zero))
    # the filter alone decides the rest
    Py_some = float(py.sum()) - float(py[0, 0])
    p0 += (Mx * z_empty) * Py_some
    p1 += (x_empty * Mz) * Py_some
    none = x_empty * z_empty * float(py.sum()) + (Mx * z_empty + x_empty * Mz) * float(py[0, 0])
    out = {0: p0, 1: p1, None: none}
    if drop > 0.0:
        out["dropped"] = dropped
    return out


def _drop_least(p: np.ndarray, drop: float) -> tuple[np.ndarray, float]:
    """``(p with its least entries set to 0, their mass)``: the entries are left out from the least up while their
    summed mass stays at most ``drop`` (the sum is taken in the order of the entries, from the least, and an
    entry is dropped only when that running sum, inflated by ``1e-9`` relative for the rounding of a sum of
    positive terms, is still within ``drop``)."""
    flat = p.ravel()
    order = np.argsort(flat, kind="stable")
    run = np.cumsum(flat[order]) * (1.0 + 1e-9)
    k = int(np.searchsorted(run, drop, side="right"))
    if k == 0:
        return p, 0.0
    out = flat.copy()
    out[order[:k]] = 0.0
    return out.reshape(p.shape), float(run[k - 1])


#: middle-bin values handled together (rows of the arrays of one chunk)
_CHUNK = 128


def _boundary_zero_mass(w0, w1, s, mx, mz, Mz, a, b) -> np.ndarray:
    """For each middle bin ``y = (a, b)`` of a chunk (columns ``a``, ``b``), the mass of the pairs ``(x, z)`` (both
    non-empty) on which the learner keeps boundary 0: ``A_y(x) <= A_y(z)`` (an exact tie is boundary 0, the
    first minimum).

    Each row is sorted once (any order within a run of equal values will do: only the mass of ``z`` strictly below
    a run and the mass of ``x`` in it enter); a run of ties is handled by the mass of ``z`` before the run's first
    position, carried along the run by a running maximum (the cumulated mass is non-decreasing), with no gather."""
    Y = a + b
    # A_y(w) = q(w) - q(w + y) = [w0 w1 (s + Y) - (w0 + a)(w1 + b) s] / [s (s + Y)], exact integers over exact integers
    A = (w0 * w1 * (s + Y) - (w0 + a) * (w1 + b) * s) / (s * (s + Y))
    order = np.argsort(A, axis=1)
    As = np.take_along_axis(A, order, axis=1)
    mxs, mzs = mx[order], mz[order]
    # the mass of z strictly before each position, kept only where a run of equal values starts
    before = np.cumsum(mzs, axis=1)
    before[:, 1:] = before[:, :-1]
    before[:, 0] = 0.0
    before[:, 1:][As[:, 1:] == As[:, :-1]] = 0.0
    np.maximum.accumulate(before, axis=1, out=before)  # each position: the mass before its run
    return Mz * mxs.sum(axis=1) - (mxs * before).sum(axis=1)  # P(A_y(z) >= A_y(x)) summed over x
