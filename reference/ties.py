"""Exact ties: comparisons of scores computed from counts, decided in rational arithmetic.

A learner that keeps the candidate of least weighted Gini (PrivaTree, Vos et al. 2023, Algorithm 1 lines 11-12;
the CART baseline) states a tie rule, "the first minimum wins". In double precision two candidates of
mathematically equal Gini (mirror images: sides ``(a, b) | (c, d)`` against ``(c, d) | (a, b)``) can round
apart, and the rule then silently fails. Here every such decision is exact:

* :func:`weighted_gini` is the weighted Gini of two sides as an exact ratio of the integer counts
  (:class:`Ratio`): ``1 - (S_L n_R + S_R n_L) / (N n_L n_R)`` with ``S`` a side's sum of squared class counts;
* :func:`first_minimum` screens candidates by their floating-point scores and decides, exactly, among those
  within :data:`TIE_WINDOW` of the least: the floating-point Gini of counts below :data:`EXACT_COUNT` is within
  ``8 u`` (``u`` the unit roundoff, about ``1.1e-16``) of the exact value, so the exact least is always among
  them and the result is the exact first minimum;
* :func:`share_order` orders bins by class-1 share ``n_1 / n`` exactly (equal shares keep the bins' order).

For the batched paths, :func:`resolve_rows` applies the same screen to many rows at once and decides only the
rows with a near tie in Python.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

__all__ = ["TIE_WINDOW", "EXACT_COUNT", "Ratio", "weighted_gini", "first_minimum", "share_order", "resolve_rows",
           "exact_shares_safe"]

#: scores closer than this to the least are compared exactly (the float error of a Gini is below 1e-15)
TIE_WINDOW = 1e-9
#: counts below this keep every square and every sum of squares exact in double precision (2^26)
EXACT_COUNT = 1 << 26


class Ratio:
    """An exact ratio ``num / den`` of Python integers (``den > 0``), compared by cross-multiplication (no
    reduction: cheaper than :class:`fractions.Fraction` where only the order matters)."""

    __slots__ = ("num", "den")

    def __init__(self, num: int, den: int):
        self.num, self.den = num, den

    def __lt__(self, other: "Ratio") -> bool:
        return self.num * other.den < other.num * self.den

    def __eq__(self, other) -> bool:
        if isinstance(other, Ratio):
            return self.num * other.den == other.num * self.den
        if isinstance(other, (int, Fraction)):
            return Fraction(self.num, self.den) == other
        return NotImplemented

    def __hash__(self):
        return hash(Fraction(self.num, self.den))

    def __repr__(self):
        return f"Ratio({self.num}, {self.den})"


def weighted_gini(left, right) -> Ratio:
    """The weighted Gini of a split with class counts ``left`` and ``right`` (non-negative integers, each
    side non-empty), exactly: ``(n_L gini_L + n_R gini_R) / N`` as a :class:`Ratio`."""
    L = [int(v) for v in np.asarray(left).tolist()]
    R = [int(v) for v in np.asarray(right).tolist()]
    nL, nR = sum(L), sum(R)
    if nL <= 0 or nR <= 0:
        raise ValueError(f"weighted_gini needs two non-empty sides, got totals {nL} and {nR}")
    SL = sum(v * v for v in L)
    SR = sum(v * v for v in R)
    den = (nL + nR) * nL * nR
    return Ratio(den - SL * nR - SR * nL, den)


def first_minimum(values, exact) -> int:
    """Index of the first exact minimum of the scores ``values`` (floats; ``inf`` for excluded candidates):
    the candidates within :data:`TIE_WINDOW` of the least float are compared by ``exact(i)``, in index order,
    and the first of least exact value wins. Every float must lie within ``TIE_WINDOW / 2`` of its exact value.
    All ``inf``: index 0 (as ``np.argmin``)."""
    v = np.asarray(values, dtype=float)
    lo = v.min()
    if not np.isfinite(lo):
        return int(np.argmin(v))
    near = np.flatnonzero(v <= lo + TIE_WINDOW)
    if near.size == 1:
        return int(near[0])
    best = int(near[0])
    best_value = exact(best)
    for i in near[1:].tolist():
        e = exact(i)
        if e < best_value:
            best, best_value = i, e
    return best


def share_order(H) -> np.ndarray:
    """Bins ordered by their class-1 share ``H[b, 1] / (H[b, 0] + H[b, 1])`` (one half for an empty bin),
    exactly; equal shares keep the bins' order (a stable sort)."""
    H = np.asarray(H)
    keys = [Fraction(int(h1), int(h0) + int(h1)) if int(h0) + int(h1) else Fraction(1, 2) for h0, h1 in H[:, :2]]
    return np.array(sorted(range(len(keys)), key=keys.__getitem__), dtype=np.int64)


def exact_shares_safe(totals) -> bool:
    """Whether floating-point shares ``n_1 / n`` of these bin totals order exactly as the rationals do: two
    different shares of totals below ``2^26`` differ by more than ``2^-52``, the spacing of doubles below 1, so
    their correctly rounded quotients are different and in order; equal shares give equal quotients."""
    t = np.asarray(totals)
    return t.size == 0 or float(t.max()) < EXACT_COUNT


def resolve_rows(scores: np.ndarray, exact) -> np.ndarray:
    """The first exact minimum of every row of ``scores`` (floats, ``inf`` excluded): ``np.argmin`` where a row
    has one candidate within :data:`TIE_WINDOW` of its least, else :func:`first_minimum` with
    ``exact(row, i)``."""
    s = np.argmin(scores, axis=1)
    lo = scores[np.arange(scores.shape[0]), s]
    near = np.count_nonzero(scores <= (lo + TIE_WINDOW)[:, None], axis=1)
    for r in np.flatnonzero(np.isfinite(lo) & (near > 1)).tolist():
        s[r] = first_minimum(scores[r], lambda i, r=r: exact(r, i))
    return s
