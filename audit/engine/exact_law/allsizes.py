"""The exact loss over every dataset of any size on a public grid: branch and bound over boxes of count vectors.

On a public grid, a learner's release law depends on the dataset only through its *count vector*
``c``: the number of records in each cell (grid point x class). An add/remove pair is ``(c, c + e_i)``
for a cell ``i``, and its loss is ``max_r |Delta_r(c, i)|`` with
``Delta_r(c, i) = ln P(r | c) - ln P(r | c + e_i)``. A :class:`CountLaw` gives, for a *box* of count
vectors ``lo <= c <= hi`` (each ``hi_j`` possibly ``inf``) and a cell ``i``, an interval
``[L_r, U_r]`` containing ``Delta_r(c, i)`` for every ``c`` of the box and every release ``r``; on a
one-point box the interval is the exact value up to floating-point slack.

:func:`certify_all_sizes` covers the whole orthant ``N^m`` (every dataset of any size) by one box
``[0, inf]^m`` per cell ``i``, and refines:

* a box's *upper bound* is ``max_r max(|L_r|, |U_r|)``, valid for every pair of the box;
* its *lower bound* is the exact loss of its corner pair ``(lo, lo + e_i)`` (a pair that exists); a law may
  also name pairs found by analysis (:attr:`CountLaw.witnesses`), evaluated first: a lower end only;
* the box of largest upper bound is split (a finite range in halves; an infinite one ``[a, inf]`` into
  ``[a, 2a + 1]`` and ``[2a + 2, inf]``, so the counts reached grow geometrically) until that bound is
  within ``tol`` of the best pair found, or the box or time budget runs out (then the gap is stated).

The boxes always partition ``N^m`` (no box is dropped; with a size cap, only boxes holding no pair within
it), so the largest upper bound left is an upper bound of the loss of *every* pair of *any* size: the certificate
"for every dataset of any size on this grid, the loss is at most U; a pair of N records attains L".
Why the per-box intervals hold for unbounded counts is the law's business (its docstring: for each
factor of the law, a monotonicity argument whose extreme values at ``hi = inf`` are the factor's
limits); the engine only relies on the interval being valid on the whole box.

Where the supremum is approached only as counts grow without bound, the corner pairs' losses rise
towards it and the upper bound of the boxes ``[a, inf]`` stays at the limit: the result reports
``U - L`` and the law can state the limit (:attr:`CountLaw.limits`). Substitution pairs
``(c + e_i, c + e_j)`` are covered the same way (:meth:`CountLaw.pair_delta`).
"""
from __future__ import annotations

import heapq
import itertools
import math
import time
from dataclasses import dataclass

__all__ = ["CountLaw", "AllSizesResult", "AllSizesDomain", "certify_all_sizes", "point_loss", "split_box",
           "split_at", "pf2_delta", "pf2_step", "INF", "UPPER_METHODS"]

INF = math.inf
#: a bound within this of the claim certifies it (the intervals' floating-point slack is about 1e-12 per factor)
SLACK = 1e-9
#: how an all-sizes upper end is obtained (:class:`AllSizesDomain`)
UPPER_METHODS = ("law", "proof")


class CountLaw:
    """A release law as a function of the count vector (module docstring).

    Subclasses set ``cells`` (names of the ``m`` cells), ``releases`` (every release of positive
    probability) and implement :meth:`delta`. ``limits`` (optional) maps a relation to ``(value, note)``: the
    supremum of the loss, approached only as counts grow without bound, when the law can state it in closed
    form (``note`` says why); it is reported beside the search's bound, never used by it. ``witnesses`` (optional):
    pairs ``(c, move)`` (count vector and :meth:`pair_delta`'s move) that :func:`certify_all_sizes` evaluates
    before the search, wherever they lie: a pair found by analysis far out in the orthant, whose exact loss can
    only raise the lower end (the boxes still partition the orthant, so the upper end is unchanged).
    """

    cells: tuple = ()
    releases: tuple = ()
    limits: dict = {}
    witnesses: tuple = ()
    #: the relations whose pairs :meth:`delta` can bound (a law whose entries are maxima over releases, not
    #: single releases, covers add/remove only: a substitution's difference of two maxima is not bounded by them)
    relations: tuple = ("add-remove", "substitute")

    def delta(self, lo: tuple, hi: tuple, i: int) -> dict:
        """``{release: (L, U)}`` with ``L <= ln P(r | c) - ln P(r | c + e_i) <= U`` for every count vector
        ``lo <= c <= hi`` (module docstring)."""
        raise NotImplementedError

    def pair_delta(self, lo: tuple, hi: tuple, move: tuple) -> dict:
        """``{entry: (L, U)}`` for the pair of ``move`` on the box: ``move = (i,)`` is the add/remove pair
        ``(c, c + e_i)``; ``move = (i, j)`` the substitution ``(c + e_i, c + e_j)``, whose log-ratio
        ``ln P(r | c + e_i) - ln P(r | c + e_j) = Delta_r(c, j) - Delta_r(c, i)`` lies in ``[L_j - U_i, U_j - L_i]``.
        A law may override it with entries that are not single releases (each entry's true value must be a
        signed log-ratio of some release, or the loss itself, so that ``max(L, -U)`` stays below the loss)."""
        if len(move) == 1:
            return self.delta(lo, hi, move[0])
        di, dj = self.delta(lo, hi, move[0]), self.delta(lo, hi, move[1])
        return {r: (dj[r][0] - di[r][1], dj[r][1] - di[r][0]) for r in di}


def _move_delta(law: CountLaw, lo, hi, move: tuple) -> dict:
    return law.pair_delta(lo, hi, move)


def _box_upper(law: CountLaw, lo, hi, move) -> float:
    fast = getattr(law, "box_upper", None)  # a law may compute the same maximum faster (vectorised)
    if fast is not None:
        return fast(lo, hi, move)
    return max((max(abs(a), abs(b)) for a, b in _move_delta(law, lo, hi, move).values()), default=0.0)


def point_loss(law: CountLaw, c: tuple, move) -> tuple[float, float, object]:
    """``(lower, upper, release)`` of the exact loss of the pair of ``move`` at the count vector ``c``
    (:meth:`CountLaw.pair_delta`; an integer ``move`` is the add/remove cell): the true loss lies in ``[lower, upper]``
    (the law's one-point intervals)."""
    move = (move,) if isinstance(move, int) else tuple(move)
    entries = _move_delta(law, c, c, move)
    if not entries:
        return 0.0, 0.0, None
    # the true log-ratio is in [a, b]: its absolute value is at least max(a, -b) and at most max(|a|, |b|)
    lo_best = max(0.0, max(max(a, -b) for a, b in entries.values()))
    hi_best = max(max(abs(a), abs(b)) for a, b in entries.values())
    # the release named: the first in repr order among those of the largest upper end
    arg = min((r for r, (a, b) in entries.items() if max(abs(a), abs(b)) == hi_best), key=repr)
    return lo_best, hi_best, arg


def split_box(lo: tuple, hi: tuple) -> list[tuple[tuple, tuple]]:
    """Two boxes partitioning the box ``[lo, hi]`` (integer counts): its widest coordinate (an infinite one
    first, the smallest ``lo`` among them) cut in halves, or ``[a, inf]`` cut into ``[a, 2a + 1]`` and
    ``[2a + 2, inf]``. A one-point box cannot be split (``[]``)."""
    inf = [j for j in range(len(lo)) if hi[j] == INF]
    if inf:
        j = min(inf, key=lambda k: (lo[k], k))
    else:
        j = max(range(len(lo)), key=lambda k: (hi[k] - lo[k], -k))
        if hi[j] == lo[j]:
            return []
    return split_at(lo, hi, j)


def split_at(lo: tuple, hi: tuple, j: int) -> list[tuple[tuple, tuple]]:
    """The two boxes of :func:`split_box`'s cut, made on coordinate ``j`` (which must hold two counts or more)."""
    mid = 2 * lo[j] + 1 if hi[j] == INF else (lo[j] + hi[j]) // 2
    a_hi = hi[:j] + (mid,) + hi[j + 1:]
    b_lo = lo[:j] + (mid + 1,) + lo[j + 1:]
    return [(lo, a_hi), (b_lo, hi)]


@dataclass
class AllSizesResult:
    """The all-sizes certificate of one law (module docstring).

    ``upper``: the loss of every pair of any size is at most this; ``lower``: the pair ``worst`` (count
    vectors ``c`` and ``c + e_i``) has loss at least this; ``gap = upper - lower``. ``boxes``: boxes
    bounded; ``seconds``: wall time; ``complete``: the search met ``tol`` (else a budget ran out and
    ``gap`` is what is proved); ``max_records``: the size cap (``None``: every size)."""

    upper: float
    lower: float
    worst: dict
    boxes: int
    seconds: float
    complete: bool
    tol: float
    max_records: int | None = None
    limit: float | None = None
    limit_note: str = ""
    relation: str = "add-remove"
    #: wall time of the curve's capped searches (:meth:`AllSizesDomain.run`), beside ``seconds``
    curve_seconds: float = 0.0

    @property
    def gap(self) -> float:
        return self.upper - self.lower

    @property
    def seconds_per_box(self) -> float:
        return self.seconds / max(self.boxes, 1)

    def to_json(self) -> dict:
        return {"upper": self.upper, "lower": self.lower, "gap": self.gap, "worst": self.worst,
                "boxes": self.boxes, "seconds": self.seconds, "seconds_per_box": self.seconds_per_box,
                "complete": self.complete, "tol": self.tol, "max_records": self.max_records,
                "limit": self.limit, "limit_note": self.limit_note, "relation": self.relation}


def certify_all_sizes(law: CountLaw, *, relation: str = "add-remove", tol: float = 1e-6, max_boxes: int = 200_000,
                      max_seconds: float = 300.0, max_records: int | None = None,
                      split: str = "widest") -> AllSizesResult:
    """Branch and bound of the loss over every pair ``(c, c + e_i)`` of count vectors (module docstring).

    Parameters
    ----------
    law : CountLaw
    relation : {"add-remove", "substitute"}
        Pairs ``(c, c + e_i)``, or ``(c + e_i, c + e_j)`` for cells ``i < j`` (:meth:`CountLaw.pair_delta`).
    tol : float
        Stop when the largest upper bound left is within ``tol`` of the best pair found.
    max_boxes, max_seconds : budgets; when one runs out the result is ``complete=False`` with its gap.
    max_records : int or None
        Only pairs whose larger dataset has at most this many records (``None``: every size). Used to hold
        the search against the listed-dataset certificates on small sizes.
    split : {"widest", "best"}
        Which coordinate a box is cut on: ``"widest"`` (:func:`split_box`: an infinite one first), or ``"best"``:
        every coordinate holding two counts or more is tried (:func:`split_at`) and the cut whose larger child
        bound is smallest is kept (ties: the ``"widest"`` order). Either way the two children partition the box,
        so the certificate's argument is the same; ``"best"`` costs up to ``2 m`` box bounds per cut and closes
        laws whose bound is loose on a finite coordinate while an infinite one is still open (PrivaTree at
        depth 3).
    """
    if relation not in law.relations:
        raise ValueError(f"relation must be one of {law.relations} for this law, got {relation!r}")
    if not tol > 0:
        raise ValueError(f"tol must be positive, got {tol!r}")
    if max_records is not None and (int(max_records) != max_records or max_records < 1):
        raise ValueError(f"max_records must be a positive integer or None, got {max_records!r}")
    if split not in ("widest", "best"):
        raise ValueError(f"split must be 'widest' or 'best', got {split!r}")
    start = time.perf_counter()
    m = len(law.cells)
    top = INF if max_records is None else max_records - 1
    heap, counter, boxes = [], itertools.count(), 0
    best = {"lower": -1.0}

    def fits(lo) -> bool:
        return max_records is None or sum(lo) + 1 <= max_records

    def consider(lo, hi, move, bound=None):
        nonlocal boxes
        if not fits(lo):
            return  # no pair of the box within the size cap
        boxes += 1
        low, up, r = point_loss(law, lo, move)
        if low > best["lower"]:
            best.update(lower=low, upper=up, release=r, c=lo, move=move)
        bound = _box_upper(law, lo, hi, move) if bound is None else bound
        heapq.heappush(heap, (-bound, next(counter), lo, hi, move))

    def capped(parts):
        """The parts within the size cap (the larger dataset holds ``sum(c) + 1 <= max_records`` records)."""
        out = []
        for blo, bhi in parts:
            if max_records is not None:
                bhi = tuple(min(h, max_records - 1 - (sum(blo) - l)) for l, h in zip(blo, bhi))
                if any(h < l for l, h in zip(blo, bhi)) or not fits(blo):
                    continue
            out.append((blo, bhi))
        return out

    def cut(lo, hi, move):
        """``[(lo, hi, bound or None)]``: the children of the box (module docstring; ``split``)."""
        if split == "widest":
            return [(a, b, None) for a, b in capped(split_box(lo, hi))]
        order = sorted((j for j in range(m) if hi[j] > lo[j]), key=lambda k: (hi[k] != INF, lo[k] if hi[k] == INF
                                                                                else -(hi[k] - lo[k]), k))
        chosen = None
        for j in order:
            parts = [(a, b, _box_upper(law, a, b, move)) for a, b in capped(split_at(lo, hi, j))]
            worst = max((p[2] for p in parts), default=-INF)
            if chosen is None or worst < chosen[0]:
                chosen = (worst, parts)
        return [] if chosen is None else chosen[1]

    moves = [(i,) for i in range(m)] if relation == "add-remove" else list(itertools.combinations(range(m), 2))
    for c, move in law.witnesses:  # the law's known pairs (CountLaw.witnesses): a lower end only
        c, move = tuple(c), tuple(move)
        if len(move) != (1 if relation == "add-remove" else 2) or not fits(c):
            continue
        low, up, r = point_loss(law, c, move)
        if low > best["lower"]:
            best.update(lower=low, upper=up, release=r, c=c, move=move)
    for move in moves:
        consider((0,) * m, (top,) * m, move)
    complete, stuck = False, 0.0  # stuck: the largest bound of a one-point box (it cannot be refined)
    while heap:
        ub = -heap[0][0]
        if ub <= best["lower"] + tol:
            complete = stuck <= best["lower"] + tol
            break
        if boxes >= max_boxes or time.perf_counter() - start > max_seconds:
            break
        _, _, lo, hi, move = heapq.heappop(heap)
        if lo == hi:
            stuck = max(stuck, ub)
            continue
        for blo, bhi, bound in cut(lo, hi, move):
            consider(blo, bhi, move, bound)
    # every pair of the orthant (within the size cap) lies in a box of the heap or in a one-point box
    upper = max(-heap[0][0] if heap else 0.0, stuck, best["lower"])
    c, move = best["c"], best["move"]
    c0 = c if len(move) == 1 else tuple(v + (j == move[0]) for j, v in enumerate(c))
    c1 = tuple(v + (j == move[-1]) for j, v in enumerate(c))
    worst = {"c0": list(c0), "c1": list(c1), "records": sum(c1), "cells": [law.cells[j] for j in move],
             "release": repr(best["release"]), "lower": best["lower"], "upper": best["upper"]}
    limit, note = law.limits.get(relation, (None, ""))
    return AllSizesResult(upper, best["lower"], worst, boxes, time.perf_counter() - start, complete, tol,
                          max_records, limit, note, relation)


# ------------------------------------------------------------------ a shared factor: two-class permute-and-flip
def pf2_step(epsilon: float, d: float) -> float:
    """``D(d) = ln g(d + 1) - ln g(d)`` for the two-class monotone permute-and-flip (sensitivity 1):
    ``g(d) = P(label k)`` when ``d = n_k - n_other``, ``g(d) = 1 - e^(-epsilon d) / 2`` for ``d >= 0`` and
    ``e^(epsilon d) / 2`` for ``d <= 0`` (section IV-C of PrivaTree; :class:`reference.mechanisms.PermuteAndFlip`
    with ``monotonic=True``: a candidate is kept with probability ``exp(epsilon (u - u_max))``, the two orders
    equally likely). ``D(d) = epsilon`` for ``d <= -1``; for ``d >= 0``, ``D(d) = h(e^(-epsilon d) / 2)`` with
    ``h(x) = ln(1 - e^(-epsilon) x) - ln(1 - x)``, increasing in ``x`` (``h' = 1/(1 - x) - e^-eps/(1 - e^-eps x)
    > 0``), so ``D`` is non-increasing in ``d`` (``D(-1) = epsilon >= D(0) = ln(2 - e^-eps)``) with ``D(inf) = 0``.
    ``d = +-inf`` gives the limits."""
    if d <= -1:
        return epsilon
    if d == INF:
        return 0.0
    x = 0.5 * math.exp(-epsilon * d)
    return math.log1p(-math.exp(-epsilon) * x) - math.log1p(-x)


def pf2_delta(epsilon: float, d_lo: float, d_hi: float, same_class: bool) -> tuple[float, float]:
    """Interval of ``ln g(d) - ln g(d')`` over ``d_lo <= d <= d_hi``, where ``d' = d + 1`` when the added record
    has the leaf's label (``same_class``: the value is ``-D(d)``) and ``d' = d - 1`` otherwise (``D(d - 1)``);
    valid because ``D`` is non-increasing (:func:`pf2_step`)."""
    if same_class:
        return -pf2_step(epsilon, d_lo), -pf2_step(epsilon, d_hi)
    return pf2_step(epsilon, d_hi - 1), pf2_step(epsilon, d_lo - 1)


# ------------------------------------------------------------------ what a target declares
@dataclass
class AllSizesDomain:
    """A learner configuration to certify over every dataset of any size (``python -m audit certify``).

    ``law(params)`` builds its :class:`CountLaw`; ``epsilon_claimed`` is the ledger's claim; ``sizes`` the
    largest dataset sizes at which the exact loss is also reported size by size (the loss against the number of
    records); ``listed`` names the listed-dataset domain of the same learner, if any, whose maximum the search
    capped at its size must reproduce (tests hold them together).

    ``upper_method`` says how the upper end ``U`` is obtained: ``"law"`` when it is the largest bound of the law
    over the boxes (each box's interval computed from the release law itself, :class:`CountLaw`), ``"proof"``
    when the law's boxes carry a paper's privacy bound instead (the search then supplies only the lower end);
    ``upper_note`` says why, for ``"proof"``. ``split``: how boxes are cut, ``max_boxes`` the search's box budget
    (:func:`certify_all_sizes`; a budget in boxes, not seconds, keeps an entry that cannot close the same on every
    run)."""

    name: str
    description: str
    law: object  # params -> CountLaw
    params: dict
    relation: str
    epsilon_claimed: float
    tol: float = 1e-9
    sizes: int = 40
    note: str = ""
    max_seconds: float = 300.0
    expected: str = "certified"
    upper_method: str = "law"
    upper_note: str = ""
    split: str = "widest"
    max_boxes: int = 200_000
    #: the run reports recompute the entry (:mod:`audit.results.exact_by_size`); ``False``: they read it from the committed
    #: certificate instead (an entry whose listed-law points take too long for a run)
    in_run: bool = True

    def __post_init__(self):
        if self.upper_method not in UPPER_METHODS:
            raise ValueError(f"upper_method must be one of {UPPER_METHODS}, got {self.upper_method!r}")
        if self.upper_method == "proof" and not self.upper_note:
            raise ValueError(f"upper_method='proof' needs an upper_note saying which bound is quoted ({self.name!r})")

    def run(self, sizes=None) -> tuple[AllSizesResult, list]:
        """The all-sizes result and ``[(N, lower, upper)]``: the exact loss over the pairs whose larger dataset
        holds at most ``N`` records, for ``N = 1..sizes`` (or for each ``N`` of ``sizes`` when given: a shorter
        curve, as the run reports show it)."""
        law = self.law(self.params)
        res = certify_all_sizes(law, relation=self.relation, tol=self.tol, max_seconds=self.max_seconds,
                                split=self.split, max_boxes=self.max_boxes)
        curve = []
        start = time.perf_counter()  # N = 1 under substitution too: two datasets of one record each
        for n in (range(1, self.sizes + 1) if sizes is None else list(sizes)):
            r = certify_all_sizes(law, relation=self.relation, tol=self.tol, max_records=n,
                                  max_seconds=self.max_seconds, split=self.split, max_boxes=self.max_boxes)
            curve.append((n, r.lower, r.upper))
        res.curve_seconds = time.perf_counter() - start
        return res, curve

    def verdict(self, res: AllSizesResult) -> str:
        """``certified`` when the bound is at most the claim up to :data:`SLACK` (the floating-point slack of the
        intervals: a learner whose supremum *is* its claim, approached but not attained, is certified), ``gap``
        when the pair found exceeds it, ``inconclusive`` otherwise."""
        if res.upper <= self.epsilon_claimed + SLACK:
            return "certified"
        if res.lower > self.epsilon_claimed:
            return "gap"
        return "inconclusive"
