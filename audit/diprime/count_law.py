"""The strict DiPriMeFlip classifier at depth 1 as a function of the count vector, on boxes of counts (all sizes).

One tree, one feature whose records take two public values ``x_a < x_b``, two classes, strict accounting
(``variant="flip"``, ``max_depth=1``, :mod:`audit.diprime.exact_law` for the law on listed datasets). A
dataset enters only through its four counts ``c[p, k]`` (value ``p`` in ``(a, b)``, class ``k``; cell
``2 p + k``), so :func:`audit.engine.exact_law.allsizes.certify_all_sizes` bounds the loss over every dataset of any
size on this grid (add/remove pairs).

The law (V003 Algorithm 1, FINDSPLIT; spec A6)
---------------------------------------------
The root's median is permute-and-flip (budget ``eps_s``, sensitivity 1, not monotone: a candidate is kept
with probability ``exp(eps_s (u - u_max) / 2)``) over the range's ``FLIP_GRID`` public thresholds with
utility ``-|2 #{x < g} - N|``. A threshold below ``x_a`` or above ``x_b`` has utility ``-N``, one between
them ``-|n_a - n_b|``: the ``T`` middle thresholds share the top utility and the ``B`` outer ones are kept
with probability ``p = exp(-eps_s m)``, ``m = min(n_a, n_b)``. So the node's law depends on ``m`` alone,
and adding a record moves ``m`` by one (a record at the value with fewer records) or not at all. Each leaf
releases ``n / sum(n)`` of its clamped two-sided geometric noisy counts (rate ``eps_l``).

Why the intervals hold (every count in ``[lo, hi]``, ``hi`` possibly infinite)
-----------------------------------------------------------------------------
A release is a threshold and two leaf values; the added record lands in one leaf. Entries of
:meth:`DiPriMeFlipCountLaw.delta` are, per threshold group (below, between, above), the largest signed
log-ratio over the group's releases in each direction: ``up = Delta_node + max_v ln(P_c(v) / P_c+e(v))``
and ``down = -Delta_node + max_v ln(P_c+e(v) / P_c(v))``; the loss is the largest entry, and the engine's
bounds stay valid for such entries (each is attained by some release).

* The leaf, ``up``: exactly ``eps_l``. The value ``v = (1, 0)`` (class 1 added) is released iff the added
  class's clamped noisy count is 0 and the other's is at least 1, of probability
  ``a^c / (1 + a) * P(other >= 1)``, so the ratio is ``1/a = e^eps_l``; a value rounding to ``(1, 0)`` from
  a positive count needs the other count above ``2e6`` times it, of probability below ``a^(2e6 - c)``:
  at counts below ``1e6`` that changes the ratio by less than ``1e-300``, and above, the point's lower end is
  taken as 0. Every count vector's ratio is within ``e^eps_l`` (the noise's law), so ``eps_l`` is also
  the upper end.
* The leaf, ``down``: in ``[0, eps_l]`` (the two laws sum to 1, so some value has ratio at least 1).
* The node: ``Delta(m) = ln P_m(g) - ln P_m+1(g)`` for the ``m -> m + 1`` move (0 when ``m`` does not move).
  For ``m`` in a finite window of the box the exact value is computed at every ``m`` (at most
  :data:`WINDOW` values, none where ``exp(-eps_s m)`` would underflow); beyond, from ``M`` on, with
  ``p = exp(-eps_s M)``: an outer threshold's probability is ``s Q(1 - s)``,
  ``Q`` a polynomial with non-negative coefficients in the number ``J <= B - 1`` of outer thresholds
  rejected before it (``Q(1) = 1 / (T + 1)``), so ``d ln P / d ln s = 1 - s Q'(1 - s) / Q(1 - s)`` lies in
  ``[1 - (B - 1) s / (1 - s), 1]`` and ``Delta_outer(m) in [eps_s (1 - (B - 1) p / (1 - p)), eps_s]``;
  a middle threshold's probability ``(1 - B P_outer) / T`` lies in ``[(1 - B p / (T + 1)) / T, 1 / T]``,
  so ``|Delta_middle(m)| <= -ln(1 - B p / (T + 1))``.

On the grid {0.25, 0.75} the search's bound is ``eps_s + eps_l``, the ``up`` entry of an outer threshold as
``m`` grows without bound; that entry stays below it at every finite ``m`` (``Delta_outer(m) < eps_s`` while
``p > 0``: the derivative bound is strict when ``B >= 2``). Where a middle threshold's ``down`` entry matters
(few middle thresholds, e.g. values 0 and 0.25), its leaf term is only bounded by ``[0, eps_l]`` at a point,
and the search reports the gap that leaves.
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from audit.diprime.exact_law import flip_grid, forest_setup, leaf_terms
from audit.engine.exact_law.allsizes import INF, CountLaw
from reference.mechanisms import PermuteAndFlip

__all__ = ["DiPriMeFlipCountLaw"]

#: exact node values are computed for this many values of ``m`` per box; the tail bound covers the rest
WINDOW = 64
#: relative and absolute slack of each computed end (PermuteAndFlip.logpmf_all in double precision, a few sums)
REL, ABS = 1e-9, 1e-12
#: at or above this many records in a leaf, the leaf's exact up-term is not claimed at a point (module docstring)
BIG = 10 ** 6
#: substitution pairs of at most this many records take their leaves' lower ends from the enumerated leaf laws too
#: (:func:`audit.diprime.exact_law.leaf_terms`, the listed law's), beside the closed form of the pure value
ENUMERATED = 40


class DiPriMeFlipCountLaw(CountLaw):
    """The strict DiPriMeFlip classifier's depth-1 law on the four counts (module docstring).

    Parameters
    ----------
    params : dict
        The classifier's parameters: ``variant="flip"``, ``max_depth=1``, ``n_estimators=1``, one feature,
        two classes, strict accounting (otherwise a ValueError names the parameter).
    grid : sequence of two floats
        The feature's public values ``x_a < x_b`` inside its bounds.
    """

    relations = ("add-remove", "substitute")

    def __init__(self, params: dict, grid=(0.25, 0.75)):
        s = forest_setup(params)
        for name, ok, want in (("variant", s.variant == "flip", "'flip'"), ("max_depth", s.max_depth == 1, "1"),
                               ("bounds", len(s.bounds) == 1, "one feature")):
            if not ok:
                raise ValueError(f"{name}={params.get(name)!r}: DiPriMeFlip's count law covers {want}")
        lo, hi = s.bounds[0]
        grid = tuple(float(v) for v in grid)
        if len(grid) != 2 or not lo <= grid[0] < grid[1] <= hi:
            raise ValueError(f"grid={grid!r}: DiPriMeFlip's count law covers two increasing values in the bounds")
        thresholds = flip_grid(lo, hi)
        below = np.searchsorted(np.array(grid), thresholds, side="left")  # #{grid values < g}: 0, 1 or 2
        self.groups = {name: int(np.count_nonzero(below == v)) for name, v in (("below", 0), ("between", 1),
                                                                                ("above", 2))}
        self.T, self.B = self.groups["between"], self.groups["below"] + self.groups["above"]
        if self.T == 0 or self.B == 0:
            raise ValueError(f"grid={grid!r}: the count law needs public thresholds both between and outside the "
                             f"two values (got {self.T} between, {self.B} outside)")
        self.eps_s, self.eps_l = float(s.eps_s), float(s.eps_l)
        self.rate = float(s.rate)  # the leaves' geometric rate (eps_l)
        self.pf = PermuteAndFlip(self.eps_s, 1.0)
        #: beyond this m the outer thresholds' probabilities underflow: the tail bound alone covers them
        self.m_exact = int(300.0 / self.eps_s)
        names = [f"x = {v:g}, class {c!r}" for v in grid for c in s.classes]
        self.cells = tuple(names)
        self.releases = tuple((g, d) for g, n in self.groups.items() if n for d in ("up", "down"))
        self.limits = {"add-remove": (self.eps_s + self.eps_l,
                                      f"a threshold outside the two values: the median's factor moves by up to "
                                      f"eps_s = {self.eps_s:g} as min(n_a, n_b) grows without bound, the leaf by "
                                      f"eps_l = {self.eps_l:g}"),
                       "substitute": (self.eps_s + 2 * self.eps_l,
                                      f"a threshold outside the two values and a record of the class absent from the "
                                      f"other records moved to the other value: the median's factor moves by up to "
                                      f"eps_s = {self.eps_s:g} as min(n_a, n_b) grows without bound, the one leaf "
                                      f"by 2 eps_l = {2 * self.eps_l:g}")}

    @lru_cache(maxsize=100_000)
    def _node(self, m: int) -> tuple[float, float]:
        """``(Delta_outer(m), Delta_middle(m))`` exactly (rounding aside): ``ln P_m - ln P_m+1`` of one threshold."""
        def logp(mm):
            return self.pf.logpmf_all(np.array([-2.0 * mm] * self.B + [0.0] * self.T))
        a, b = logp(m), logp(m + 1)
        return float(a[0] - b[0]), float(a[-1] - b[-1])

    def _node_range(self, m_lo: int, m_hi: float) -> tuple[tuple, tuple]:
        """Intervals of ``Delta_outer`` and ``Delta_middle`` over ``m_lo <= m <= m_hi`` (module docstring)."""
        top = min(m_hi, m_lo + WINDOW - 1, self.m_exact)
        vals = [self._node(m) for m in range(int(m_lo), int(top) + 1)]
        o = [v[0] for v in vals]
        d = [v[1] for v in vals]
        outer = (min(o), max(o)) if vals else (INF, -INF)
        middle = (min(d), max(d)) if vals else (INF, -INF)
        if m_hi > top:  # the tail m >= M
            p = math.exp(-self.eps_s * max(top + 1, m_lo))
            tail_o = (self.eps_s * (1.0 - (self.B - 1) * p / (1.0 - p)), self.eps_s)
            w = -math.log1p(-self.B * p / (self.T + 1))
            outer = (min(outer[0], tail_o[0]), max(outer[1], tail_o[1]))
            middle = (min(middle[0], -w), max(middle[1], w))
        return outer, middle

    def delta(self, lo: tuple, hi: tuple, i: int) -> dict:
        """Per (threshold group, direction), an interval of the largest signed log-ratio over the group's releases
        for the pair ``(c, c + e_i)``, valid for every ``c`` of the box (module docstring)."""
        na = (lo[0] + lo[1], hi[0] + hi[1])
        nb = (lo[2] + lo[3], hi[2] + hi[3])
        own, other = (na, nb) if i < 2 else (nb, na)
        # m moves (m = own count -> own + 1) iff own < other; it stays otherwise
        cases = []
        if own[0] < other[1]:
            cases.append(self._node_range(own[0], min(own[1], other[1] - 1)))
        if own[1] >= other[0]:
            cases.append(((0.0, 0.0), (0.0, 0.0)))
        outer = (min(c[0][0] for c in cases), max(c[0][1] for c in cases))
        middle = (min(c[1][0] for c in cases), max(c[1][1] for c in cases))
        point = lo == hi
        leaf_up = (self.rate if point and sum(hi) < BIG else 0.0, self.rate)
        out = {}
        for (g, d) in self.releases:
            node = middle if g == "between" else outer
            if d == "up":
                a, b = node[0] + leaf_up[0], node[1] + leaf_up[1]
            else:
                a, b = -node[1], -node[0] + self.rate
            out[(g, d)] = (a - REL * abs(a) - ABS, b + REL * abs(b) + ABS)
        return out

    # ------------------------------------------------------------------ substitution (module docstring)
    def _with_without(self, k: int, point: bool, big: bool) -> tuple[float, float]:
        """Interval of ``max_v ln P(v | leaf + e) / P(v | leaf)`` for a record of a class with ``k`` records in the
        leaf: at most ``eps_l``, at least ``G(k)`` at a point (the value pure in the record's class)."""
        return (self._g(k) if point and not big else 0.0), self.rate

    def _g(self, k: int) -> float:
        """``G(k) = ln P(n >= 1 | k + 1) - ln P(n >= 1 | k)`` of the clamped geometric count (``P(n <= 0 | k) =
        a^k / (1 + a)``): ``eps_l`` at ``k = 0``, decreasing to 0."""
        a = math.exp(-self.rate)
        return math.log1p(-a ** (k + 1) / (1 + a)) - math.log1p(-a ** k / (1 + a))

    def _sub_node(self, lo: tuple, hi: tuple, i: int, j: int) -> tuple[tuple, tuple]:
        """Intervals of ``ln P_m0(g) - ln P_m1(g)`` (outer, middle), ``m0`` the median's ``m`` on ``c + e_i`` and
        ``m1`` on ``c + e_j``: 0 at the same value; with ``i`` at the value of ``n`` and ``j`` at the other
        (``n'``), ``m`` moves from ``n`` to ``n + 1`` where ``n < n'`` (``-Delta(n)``), from ``n' + 1`` to ``n'``
        where ``n' < n`` (``+Delta(n')``), and not where ``n = n'``."""
        if i // 2 == j // 2:
            return (0.0, 0.0), (0.0, 0.0)
        na = (lo[0] + lo[1], hi[0] + hi[1])
        nb = (lo[2] + lo[3], hi[2] + hi[3])
        own, other = (na, nb) if i < 2 else (nb, na)
        cases = []
        if own[0] < other[1]:
            o, d = self._node_range(own[0], min(own[1], other[1] - 1))
            cases.append(((-o[1], -o[0]), (-d[1], -d[0])))
        if other[0] < own[1]:
            cases.append(self._node_range(other[0], min(other[1], own[1] - 1)))
        if own[1] >= other[0] and other[1] >= own[0]:
            cases.append(((0.0, 0.0), (0.0, 0.0)))
        return ((min(c[0][0] for c in cases), max(c[0][1] for c in cases)),
                (min(c[1][0] for c in cases), max(c[1][1] for c in cases)))

    def pair_delta(self, lo: tuple, hi: tuple, move: tuple) -> dict:
        """Add/remove: :meth:`delta`. Substitution ``(c + e_i, c + e_j)``: per (threshold group, direction) an
        interval of the largest signed log-ratio over the group's releases (``up``: ``ln P(r | c + e_i) / P(r | c +
        e_j)``, ``down`` the reverse), valid on the box: the median's term (:meth:`_sub_node`) plus the leaves'.

        The leaves, given the threshold (each release's probability is the node's times the two leaves'): a leaf
        holding neither moved record is the same under both datasets; a leaf holding one (a middle threshold, the
        two records at different values) moves as an add/remove pair, its largest ratio *without / with* exactly
        ``eps_l`` at a point (:meth:`delta`, the ``up`` leaf term) and *with / without* in ``[G(k), eps_l]``
        (:meth:`_g`); a leaf holding both (an outer threshold, or both at one value) changes the class of one
        record: nothing when the classes are equal, else every count vector's ratio lies within ``e^(2 eps_l)`` and
        the value pure in ``c + e_i``'s extra class, released iff the other class's clamped count is 0 and its own
        at least 1 (rounding aside, below :data:`BIG` records), has ratio ``e^(eps_l + G(k))``, ``k`` that class's
        count in the leaf without the moved record (``2 eps_l`` at ``k = 0``)."""
        if len(move) == 1:
            return self.delta(lo, hi, move[0])
        i, j = move
        point, big = lo == hi, sum(hi) + 1 >= BIG
        ci, cj = i % 2, j % 2
        outer, middle = self._sub_node(lo, hi, i, j)
        eps = self.rate

        enum = point and sum(lo) + 1 <= ENUMERATED

        def listed(c_first, c_second):
            """The enumerated lower ends (up, down) of one leaf's largest ratio (the listed law's leaf terms)."""
            t = leaf_terms(tuple(c_first), tuple(c_second), self.rate)
            return t[1], t[3]

        def swap(leaf_counts):
            """(up, down) intervals of a leaf whose record changes class (``leaf_counts``: without it, a point)."""
            if ci == cj:
                return (0.0, 0.0), (0.0, 0.0)
            if not point or big:
                return (0.0, 2 * eps), (0.0, 2 * eps)
            up, down = eps + self._g(leaf_counts[ci]), eps + self._g(leaf_counts[cj])
            if enum:
                a = [v + (k == ci) for k, v in enumerate(leaf_counts)]
                b = [v + (k == cj) for k, v in enumerate(leaf_counts)]
                e_up, e_down = listed(a, b)
                up, down = max(up, e_up), max(down, e_down)
            return (min(up, 2 * eps), 2 * eps), (min(down, 2 * eps), 2 * eps)

        def with_without(leaf_counts, k):
            """Interval of the largest ratio *with / without* a record of class ``k`` (a point's counts)."""
            low, up = self._with_without(leaf_counts[k], point, big)
            if enum:
                low = max(low, listed([v + (c == k) for c, v in enumerate(leaf_counts)], leaf_counts)[0])
            return min(low, up), up

        total = [lo[0] + lo[2], lo[1] + lo[3]]  # the leaf of an outer threshold: every record
        leaf = {"outer": swap(total)}
        if i // 2 == j // 2:  # one value: its leaf changes class, the other leaf is the same
            v = i // 2
            leaf["between"] = swap([lo[2 * v], lo[2 * v + 1]])
        else:  # two leaves: c + e_i has the record in i's leaf, c + e_j in j's
            with_i = with_without([lo[2 * (i // 2)], lo[2 * (i // 2) + 1]], ci)
            with_j = with_without([lo[2 * (j // 2)], lo[2 * (j // 2) + 1]], cj)
            without = ((eps if point and not big else 0.0), eps)
            leaf["between"] = ((with_i[0] + without[0], with_i[1] + without[1]),
                               (with_j[0] + without[0], with_j[1] + without[1]))
        out = {}
        for (g, d) in self.releases:
            node = middle if g == "between" else outer
            up, down = leaf["between" if g == "between" else "outer"]
            if d == "up":
                a, b = node[0] + up[0], node[1] + up[1]
            else:
                a, b = -node[1] + down[0], -node[0] + down[1]
            out[(g, d)] = (a - REL * abs(a) - ABS, b + REL * abs(b) + ABS)
        return out
