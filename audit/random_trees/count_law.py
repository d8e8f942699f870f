"""The strict random forest over every dataset of any size on a public grid (audit.engine.exact_law.allsizes).

Bojarski et al.'s forest (2014, Algorithm 2; :mod:`audit.random_trees.exact_law`): every tree's structure is drawn
without the data, and every leaf's class counts get two-sided geometric noise of rate ``r`` (``epsilon / k`` under
add/remove, ``epsilon / (2k)`` under strict substitution accounting). A dataset on the grid enters the law only
through its counts per (grid value, class), so the loss of every pair of any size is bounded per box of counts.

Upper end, every box: the law's own supremum
--------------------------------------------
The structures cancel in every likelihood ratio and the trees are independent and alike, so a release's
log-ratio is a sum over trees, and the loss of a pair is ``k`` times the worst, over the structure classes of
positive probability (:func:`audit.random_trees.exact_law.structure_classes`) and the two directions, of the sum
over the leaves the record moves of that leaf's log-ratio supremum in that direction. A leaf's release
(unrounded; the 6-decimal rounding is post-processing and only merges events) is an *event* of its noisy counts
``n``: one ray ``{t (p, q), t >= 1}`` (``theta = n / |n|``), or the invalid set (its uniform draw has the same
density under both datasets, so its ratio is that of the invalid masses). Every noisy count vector's ratio is
``P_c(n) / P_c'(n) = e^(r S(n))`` with ``S(n) = sum_i (|n_i - c'_i| - |n_i - c_i|)``, an integer of the same
parity as ``|c - c'|_1`` and at most it in size, so an event's ratio, a weighted mean of its atoms' ratios, lies
within ``e^(+-r |c - c'|_1)``. The supremum of each leaf move, at every count vector (of the class counts
``(u, v)`` of the leaf, the moved class first):

* *a record added* (``c' = c + e_k``): ``r`` in both directions, attained at every count vector: the ray on which
  ``n_k = 0`` (every atom ``n_k <= c_k``: ratio ``e^r``; with ``invalid_rule="clamp"`` the clamped event
  ``n_k <= 0``, the same ratio) and the ray ``(c_k + 1, 1)`` (every atom ``n_k >= c_k + 1``: ratio ``e^-r``);
  *a record removed*: the same, the directions swapped;
* *a record's class changed within the leaf* (``c = (u + 1, v)``, ``c' = (u, v + 1)``): ``2 r``, at every count
  vector. The direction ``P_c / P_c'`` reaches it at ``u = 0`` by the ray ``(1, 0)`` (every atom
  ``n_1 >= u + 1``, ``n_2 = 0 <= v``) and approaches it at every ``v >= 1`` by the rays ``(p, 1)`` as ``p`` grows
  (the atom ``t = 1``, of ratio ``e^(2r)`` once ``p >= u + 1``, carries all but ``O(a^p)`` of the ray's mass,
  ``a = e^-r``); the other direction alike with the classes swapped, so at ``v = 0`` it is attained by the ray
  ``(0, 1)``. Each direction alone falls below ``2 r`` only on a face (``v = 0 < u``, or ``u = 0 < v``) where the
  other reaches it.

So the bound of a box is the exact supremum of the unrounded release's loss over the box, indeed at each of its
count vectors (the leaf suprema do not depend on the counts), at most the privacy proof's ``k r |c - c'|_1`` (Bojarski et al. 2014, section 5) and equal
to it for every move the structures can separate: ``k r`` under add/remove and ``2 k r`` under substitution, the
claim ``epsilon`` in both. No bound from the law can be lower, since the unrounded release attains it; the rounded
release is post-processing, so its loss is at most this.

Lower end, at a point
---------------------
The listed-dataset law's lower end (:func:`audit.random_trees.exact_law.pair_loss` on the datasets of those counts,
the rounded release's atoms enumerated), up to :data:`MAX_POINT_RECORDS` records (0 above): the pair found reaches
the claim up to the enumeration's and the rounded uniform draw's slack (the value ``(1, 0)`` of a leaf is also a
6-decimal point of the uniform draw of an invalid leaf, whose mass on it is only known within
``[0.99e-6, 1.01e-6]`` per unit of invalid mass).
"""
from __future__ import annotations

import numpy as np

from audit.engine.exact_law.allsizes import CountLaw
from audit.random_trees.exact_law import leaf_of, forest_setup, pair_loss, structure_classes

__all__ = ["ForestCountLaw", "MAX_POINT_RECORDS", "leaf_moves", "leaf_supremum"]

#: largest dataset whose pair's lower end is computed at a point (the leaves' atoms are enumerated)
MAX_POINT_RECORDS = 120
#: the relative slack put on the law's bound (one rounding of a product of floats, well above it)
BOUND_SLACK = 1e-12


def leaf_supremum(kind: str, rate: float) -> float:
    """The supremum over the leaf's events and count vectors of its log-ratio in either direction, for a leaf move
    ``kind`` (:func:`leaf_moves`): ``"add"`` and ``"remove"``: ``rate``; ``"swap"`` (a record's class changed within
    the leaf): ``2 rate`` (module docstring, "Upper end")."""
    if kind in ("add", "remove"):
        return rate
    if kind == "swap":
        return 2.0 * rate
    raise ValueError(f"kind must be 'add', 'remove' or 'swap', got {kind!r}")


def leaf_moves(route: tuple, n_classes: int, move: tuple) -> list[tuple[int, str]]:
    """``[(leaf, kind)]``: the leaves a pair's record moves in one tree, and how, for a structure whose grid value
    ``g`` lands in leaf ``route[g]``; cell ``j`` is grid value ``j // n_classes``, class ``j % n_classes``.
    ``move = (i,)``: the record of cell ``i`` added (the pair ``(c, c + e_i)``); ``move = (i, j)``: the record of
    cell ``i`` replaced by one of cell ``j`` (the pair ``(c + e_i, c + e_j)``)."""
    cell = [(m // n_classes, m % n_classes) for m in move]
    if len(move) == 1:
        return [(route[cell[0][0]], "add")]
    (gi, ki), (gj, kj) = cell
    li, lj = route[gi], route[gj]
    if li == lj:
        return [] if ki == kj else [(li, "swap")]
    return [(li, "remove"), (lj, "add")]


class ForestCountLaw(CountLaw):
    """The strict forest's loss on counts per (grid value, class) of one feature (module docstring).

    Parameters
    ----------
    params : dict
        The forest's parameters (strict accounting, ``private=True``, two classes, one feature).
    grid : sequence of float
        The feature's public values.
    """

    def __init__(self, params: dict, grid=(0.25, 0.75)):
        est_k, h, bounds, _X, _y, rate, _rule = forest_setup(params, np.zeros((0, 1)), [])
        if len(bounds) != 1:
            raise ValueError(f"bounds={params.get('bounds')!r}: the forest's count law covers one feature")
        if params.get("accounting", "strict") != "strict":
            raise ValueError(f"accounting={params.get('accounting')!r}: the forest's count law covers 'strict'")
        self.params, self.grid = dict(params), [float(v) for v in grid]
        self.k, self.rate = est_k, rate
        self.classes = list(params["classes"])
        self.cells = tuple(f"x = {v:g}, class {c!r}" for v in self.grid for c in self.classes)
        self.releases = ("forest",)
        self.limits = {}
        # each structure class of positive probability, as the leaf of every grid value (the routing is all a
        # count vector meets; the values are clipped into the feature's range as the learner does)
        lo, hi = float(bounds[0][0]), float(bounds[0][1])
        xs = [[min(max(v, lo), hi)] for v in self.grid]
        self.routes = sorted({tuple(leaf_of(x, nodes, h) for x in xs)
                              for nodes, w in structure_classes(bounds.tolist(), [self.grid], h) if w > 0})

    def law_bound(self, move: tuple) -> float:
        """The loss of every pair of ``move`` at every count vector is at most this: ``k`` times the largest, over
        the structure classes, of the summed leaf suprema of the moves (module docstring, "Upper end"), with
        :data:`BOUND_SLACK`."""
        K = len(self.classes)
        per_tree = max(sum(leaf_supremum(kind, self.rate) for _, kind in leaf_moves(route, K, move))
                       for route in self.routes)
        return self.k * per_tree * (1 + BOUND_SLACK)

    def _dataset(self, c):
        K = len(self.classes)
        X = np.array([[self.grid[j // K]] for j in range(len(c)) for _ in range(c[j])], dtype=float).reshape(-1, 1)
        y = np.array([self.classes[j % K] for j in range(len(c)) for _ in range(c[j])])
        return X, y

    def pair_delta(self, lo: tuple, hi: tuple, move: tuple) -> dict:
        """``{"forest": (L, U)}``: ``U`` the law's bound (:meth:`law_bound`, the same on every box), ``L`` the listed
        law's lower end of the loss at a point (module docstring); the entry is the loss itself."""
        upper = self.law_bound(tuple(move))
        lower = 0.0
        if lo == hi and sum(lo) + 1 <= MAX_POINT_RECORDS:
            c0 = lo if len(move) == 1 else tuple(v + (j == move[0]) for j, v in enumerate(lo))
            c1 = tuple(v + (j == move[-1]) for j, v in enumerate(lo))
            ref = pair_loss(self.params, self._dataset(c0), self._dataset(c1), grid=[self.grid])
            lower = min(ref.lower, upper)
        return {"forest": (lower, upper)}

    def delta(self, lo: tuple, hi: tuple, i: int) -> dict:
        return self.pair_delta(lo, hi, (i,))
