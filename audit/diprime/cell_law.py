"""The law of a depth-1 strict DiPriMe tree's whole release under two datasets, on shared cells (issue 29).

:class:`reference.diprime.DiPriMeForestClassifier` / :class:`~reference.diprime.DiPriMeForestRegressor` with
one tree of depth 1 (V003, Consul and Williamson 2021, Algorithm 1 FITTREE/FINDSPLIT and section 3.1; strict
accounting, spec A6) releases ``((("split", j, t), ("leaf", left), ("leaf", right)),)`` (``release()``, the
threshold and the leaf values rounded to 6 decimals). :func:`pair_cell_laws` gives its law under ``d0`` and
``d1`` as two :class:`audit.engine.comparison.exact_oracle.CellLaw` on the same cells, from the node and leaf laws of
:mod:`audit.diprime.exact_law` (whose docstring derives them). A release's cell is ``(node, left, right)``:

* **node**: DiPriMeFlip (``variant="flip"``): ``(j, t)``, one per public threshold (``FLIP_GRID`` per
  feature), probability :func:`audit.diprime.exact_law.node_factor`. DiPriMeExp and base DiPriMe: the
  IntervalExponential threshold lies on the grid ``t_i = lo + (hi - lo) i / M`` of ``M + 1`` points
  (``M = 2**16``); the grid points between consecutive cuts of *both* datasets' values (a *piece*,
  :func:`audit.diprime.exact_law.ie_pieces`) have one probability each and route both datasets alike, so the
  cell is ``(j, piece index)`` with probability ``size x`` one point's (``ie_node``, the other candidates'
  medians summed out). A released threshold is mapped back to its grid index (the step is at least ``2e-6``,
  so the 6-decimal rounding is one-to-one, checked by ``ie_pieces``) and then to its piece;
* **classification leaf**: each released value ``n / sum(n)`` of the clamped geometric counts
  (:func:`audit.diprime.exact_law.leaf_atoms`) of probability at least
  :data:`ATOM_CELL` under *either* dataset is a cell (``[p, p + tail]``, ``[0, tail]``
  where one dataset's enumeration misses it); every other value is the leaf's ``OTHER``;
* **regression leaf** (strict: noisy sum over noisy count, clipped to ``target_bounds``): the clip ends
  ``"lo"`` and ``"hi"`` and ``windows`` equal windows of the target range in between, each with the probability
  interval of :func:`audit.diprime.regression_leaf.strict_window_prob` (the rounding window's ends moved by
  ``ETA``, the noisy count's tail added to the upper end); the few released values ``("=", r)`` at which
  :func:`audit.diprime.regression_leaf.strict_leaf_terms` seeks the leaf's largest ratio (the values
  ``centre + c g / max(n, 1)`` of both datasets' statistics, one step either side) are cells of their own,
  carved out of their windows, so that the cells keep the lower end of :func:`audit.diprime.exact_law.pair_loss`.

Each dataset's leaf statistics come from its own records routed by the node's threshold. A cell's interval is
the product of the node's and the leaves' intervals, widened by the node laws' relative rounding slack
:data:`audit.diprime.exact_law.ROUNDING`. Coarsening is post-processing, so the cells' loss
(:func:`cell_loss`) is at most the release's (:func:`audit.diprime.exact_law.pair_loss`).

Limits: ``n_estimators=1``, ``max_depth=1``, ``accounting="strict"``, ``variant`` flip, exp or base, two
classes, numerical features (an error names the parameter).
"""
from __future__ import annotations

import bisect
import itertools
import math
from collections import Counter

import numpy as np

from audit.diprime.exact_law import ROUNDING, flip_node, ie_node, ie_pieces, forest_setup, leaf_atoms, prepare, \
    strict_leaf
from audit.diprime.regression_leaf import ETA, TAIL, strict_window_prob
from audit.engine.comparison.exact_oracle import OTHER, CellLaw
from reference.diprime import DiPriMeForestClassifier
from reference.mechanisms.grid import DEFAULT_GRID, effective_grid

__all__ = ["pair_cell_laws", "path_cell_laws", "cell_loss", "WINDOWS", "ATOM_CELL"]

#: equal windows of the target range between the clip ends (regression leaf cells)
WINDOWS = 20
#: smallest probability of a leaf atom (DiPriMe, random forest: :mod:`audit.oracle.exact_laws`) that gets a cell
#: of its own
ATOM_CELL = 1e-3
_HALF = 5e-7  # half a unit of the 6th decimal


def _check(params: dict, cls, who: str = "the DiPriMe cell law", depths=(1,), variants=("flip", "exp", "base")) -> None:
    """``who`` covers one tree of depth in ``depths``, a variant in ``variants`` and strict accounting; an error
    names the parameter and its value otherwise."""
    est = cls(**params)
    for name, ok, want in (("n_estimators", lambda v: int(v) == 1, "1"),
                           ("max_depth", lambda v: int(v) in depths, " or ".join(map(str, depths))),
                           ("variant", lambda v: v in variants, " or ".join(map(repr, variants))),
                           ("accounting", lambda v: v == "strict", "'strict'")):
        v = getattr(est, name, None)
        if not ok(v):
            raise ValueError(f"{who} covers {name}={want}, got {name}={v!r}")


def with_other(lower: dict, upper: dict) -> tuple[dict, dict]:
    """The named cells' ``(lower, upper)`` with :data:`OTHER`, the rest of the law, added: its probability is
    between one minus the named upper ends and one minus the named lower ends."""
    lo_named, up_named = sum(lower.values()), sum(upper.values())
    lower[OTHER], upper[OTHER] = max(0.0, 1.0 - up_named), min(1.0, 1.0 - lo_named)
    return lower, upper


def _class_leaves(s, y0, y1) -> tuple:
    """Each dataset's ``(lower, upper)`` on the leaf's cells: the atoms of probability at least
    :data:`ATOM_CELL` under either dataset, and ``OTHER``."""
    laws = [leaf_atoms((int(np.count_nonzero(y == 0)), int(np.count_nonzero(y == 1))), s.rate) for y in (y0, y1)]
    named = {v for atoms, _ in laws for v, p in atoms.items() if p >= ATOM_CELL}
    # the count vectors not enumerated (mass at most tail) may round to a named value too
    return tuple(with_other({v: atoms.get(v, 0.0) for v in named},
                             {v: min(1.0, atoms.get(v, 0.0) + tail) for v in named}) for atoms, tail in laws)


def _edges(lo: float, hi: float, windows: int) -> list:
    """The interior window edges of the target range, on 6 decimals (released values compare exactly)."""
    return [round(lo + (hi - lo) * k / windows, 6) for k in range(1, windows)]


def _fine_values(f, stats: list) -> list:
    """The released values :func:`audit.diprime.regression_leaf.strict_leaf_terms` tries for the lower end of
    the leaf's loss (the values ``centre + c g / max(n, 1)`` of both datasets' statistics, one step either side),
    inside the clip ends."""
    out = set()
    for (c, _), (_, n) in itertools.product(stats, stats):
        v = f.centre + c * f.g / max(n, 1)
        out |= {round(min(max(v + k * 1e-6, f.lo), f.hi), 6) for k in (-1, 0, 1)}
    return sorted(r for r in out if f.lo < r < f.hi)


def _regression_leaves(f, edges: list, y0, y1) -> tuple:
    """Each dataset's ``(lower, upper)`` on the cells of the strict leaf ``f``: the clip ends ``"lo"`` and
    ``"hi"``, the windows ``0 .. W-1`` between the ``edges`` (the offset ``S g / max(N, 1)`` cut at the rounding
    boundaries of the released value), and the values of :func:`_fine_values` ``("=", r)`` carved out of their
    windows."""
    cuts = [f.lo + _HALF, *(e - _HALF for e in edges), f.hi - _HALF]
    bounds = [-math.inf, *(c - f.centre for c in cuts), math.inf]
    names = ["lo", *range(len(edges) + 1), "hi"]
    stats = [f.stats(y0), f.stats(y1)]
    fine = _fine_values(f, stats)
    out = []
    for c, n in stats:
        def prob(a, b):  # (lower, upper) of the offset in [a, b]: the window shrunk, and widened plus the tail
            return (strict_window_prob(c, n, a + ETA, b - ETA, f.rate_s, f.rate_n, f.g)[0],
                    sum(strict_window_prob(c, n, a - ETA, b + ETA, f.rate_s, f.rate_n, f.g)))
        lower, upper = {}, {}
        for name, a, b in zip(names, bounds[:-1], bounds[1:]):
            lower[name], upper[name] = prob(a, b)
        for r in fine:
            lo_r, up_r = prob(r - _HALF - f.centre, r + _HALF - f.centre)
            lower["=", r], upper["=", r] = lo_r, min(1.0, up_r)
            w = bisect.bisect_right(edges, r)  # the window of r (inside the clip ends), as the cell function finds it
            lower[w], upper[w] = lower[w] - up_r, upper[w] - lo_r
        out.append(({k: max(0.0, v) for k, v in lower.items()}, {k: min(1.0, v) for k, v in upper.items()}))
    return tuple(out)


def _regression_cell(f, edges: list):
    def cell(r, names):
        if r <= f.lo:
            return "lo"
        if r >= f.hi:
            return "hi"
        return ("=", r) if ("=", r) in names else bisect.bisect_right(edges, r)
    return cell


def _leaf_cells(s, windows: int) -> tuple:
    """``(leaves, leaf_cell)``: ``leaves(y0, y1)`` gives each dataset's ``(lower, upper)`` on a leaf's cells
    (:func:`_regression_leaves` or :func:`_class_leaves`), ``leaf_cell(value, names)`` a released value's cell."""
    if s.regression:
        f = strict_leaf(s.eps_l, *s.target_bounds)
        edges = _edges(f.lo, f.hi, windows)
        return (lambda a, b: _regression_leaves(f, edges, a, b)), _regression_cell(f, edges)
    return (lambda a, b: _class_leaves(s, a, b)), (lambda r, names: r if r in names else OTHER)


def _nodes(s, X0, y0, X1, y1, ranges, active) -> tuple[list, object]:
    """``([(node cell, j, threshold, log P0, log P1)], threshold cell)``: the node cells with a representative
    threshold and their log-probabilities, and the map ``(j, released threshold) -> node cell`` (module
    docstring)."""
    if s.variant == "flip":
        rows = [((j, round(float(g), 6)), j, float(g), l0, l1)
                for j, g, l0, l1 in flip_node(s, X0, y0, X1, y1, ranges, active)]
        known = {r[0] for r in rows}
        return rows, lambda j, t: (j, t) if (j, t) in known else OTHER
    starts, index, grids = {}, {}, {}
    for j in active:
        lo, hi = ranges[j]
        M = grids[j] = effective_grid(DEFAULT_GRID, lo, hi)
        pieces = ie_pieces(s.eps_s, lo, hi, X0[:, j], X1[:, j])
        starts[j] = [round((t - lo) / (hi - lo) * M) for t, *_ in pieces]
        for p, (t, size, *_) in enumerate(pieces):
            index[j, t] = (p, size)
    rows = []
    for j, t, l0, l1 in ie_node(s, X0, y0, X1, y1, ranges, active):
        p, size = index[j, t]
        rows.append(((j, p), j, t, l0 + math.log(size), l1 + math.log(size)))

    def node_cell(j, r):
        if j not in grids:
            return OTHER
        lo, hi = ranges[j]
        i = round((r - lo) / (hi - lo) * grids[j])
        if not 0 <= i <= grids[j] or round(lo + (hi - lo) * (i / grids[j]), 6) != r:
            return OTHER  # not a grid point's release
        return j, bisect.bisect_right(starts[j], i) - 1
    return rows, node_cell


def pair_cell_laws(params: dict, d0, d1, cls=DiPriMeForestClassifier, windows: int = WINDOWS) -> tuple[CellLaw,
                                                                                                       CellLaw]:
    """The law of the full ``release()`` of a one-tree depth-1 strict DiPriMe forest under ``d0`` and ``d1``.

    Parameters
    ----------
    params : dict
        The estimator's parameters (``n_estimators=1``, ``max_depth=1``, ``accounting="strict"``, ``variant``
        flip, exp or base; ``classes`` of two labels or ``target_bounds`` on 6 decimals).
    d0, d1 : (X, y)
        The two datasets.
    cls : class
        :class:`reference.diprime.DiPriMeForestClassifier` or :class:`~reference.diprime.DiPriMeForestRegressor`.
    windows : int
        Regression only: equal windows of the target range between the clip ends.

    Returns
    -------
    (CellLaw, CellLaw)
        The laws under ``d0`` and ``d1``, on the same cells with the same ``cell`` function (module docstring):
        ``lower[c] <= P(cell c) <= upper[c]``.
    """
    _check(params, cls)
    s = forest_setup(params, cls)
    (X0, y0), (X1, y1) = prepare(s, d0), prepare(s, d1)
    ranges = tuple(s.bounds)
    active = [j for j, (a, b) in enumerate(ranges) if b > a]
    if not active:
        raise ValueError(f"the DiPriMe cell law needs a feature of positive range, got bounds={s.bounds!r}")
    rows, node_cell = _nodes(s, X0, y0, X1, y1, ranges, active)
    leaves, leaf_cell = _leaf_cells(s, windows)
    lower, upper = ({}, {}), ({}, {})
    named = {}  # (node cell, side) -> the classification leaf's named values
    cache: dict = {}
    for node, j, g, *logp in rows:
        m0, m1 = X0[:, j] < g, X1[:, j] < g
        key = (m0.tobytes(), m1.tobytes())
        if key not in cache:
            cache[key] = (leaves(y0[m0], y1[m1]), leaves(y0[~m0], y1[~m1]))
        left, right = cache[key]
        named[node, 0], named[node, 1] = set(left[0][0]), set(right[0][0])
        keys = [(node, a, b) for a in left[0][0] for b in right[0][0]]
        for d in (0, 1):
            p = math.exp(logp[d])
            (l_lo, l_up), (r_lo, r_up) = (tuple(np.fromiter(h.values(), float) for h in side[d]) for side in (left, right))
            lower[d].update(zip(keys, (p * (1 - ROUNDING) * np.outer(l_lo, r_lo)).ravel().tolist()))
            upper[d].update(zip(keys, np.minimum(1.0, p * (1 + ROUNDING) * np.outer(l_up, r_up)).ravel().tolist()))

    def cell(release):
        ((_, j, thr), (_, left), (_, right)), = release
        node = node_cell(j, thr)
        if (node, 0) not in named:
            return OTHER
        return node, leaf_cell(left, named[node, 0]), leaf_cell(right, named[node, 1])

    return CellLaw(lower[0], upper[0], cell), CellLaw(lower[1], upper[1], cell)


def cell_loss(law0: CellLaw, law1: CellLaw) -> tuple[float, float]:
    """``(lower, upper)`` of ``max_c |ln P0(c) / P1(c)|`` over the cells of two laws on the same cells, from
    their intervals (cells of upper end 0 under both skipped)."""
    lo, up = 0.0, 0.0

    def log_ratio(a, b):
        if a == 0:
            return -math.inf
        return math.inf if b == 0 else math.log(a / b)

    for c in law0.upper:
        l0, u0, l1, u1 = law0.lower[c], law0.upper[c], law1.lower[c], law1.upper[c]
        if u0 == 0 and u1 == 0:
            continue
        lo = max(lo, log_ratio(l0, u1), log_ratio(l1, u0))
        up = max(up, log_ratio(u0, l1), log_ratio(u1, l0))
    return lo, up


# ------------------------------------------------------------------ DiPriMeFlip to depth 2: the extra record's path
def _extra_record(X0, y0, X1, y1) -> np.ndarray:
    """The features of the one record that one dataset has and the other lacks (add/remove neighbours)."""
    def rows(X, y):
        return Counter(tuple(x) + (v,) for x, v in zip(X.tolist(), y.tolist()))

    r0, r1 = rows(X0, y0), rows(X1, y1)
    extra = list((r0 - r1).elements()) + list((r1 - r0).elements())
    if len(extra) != 1:
        raise ValueError(f"path_cell_laws needs add/remove neighbours (one record in one dataset only), got "
                         f"{len(extra)} differing records")
    return np.asarray(extra[0][:-1], dtype=float)


def _subtree_end(nodes: tuple, i: int) -> int:
    """The index after the subtree that starts at ``nodes[i]`` (a preorder list of splits and leaves)."""
    return i + 1 if nodes[i][0] == "leaf" else _subtree_end(nodes, _subtree_end(nodes, i + 1))


def _child_ranges(ranges: tuple, j: int, g: float, side: int) -> tuple:
    return tuple(((r[0], float(g)) if side == 0 else (float(g), r[1])) if i == j else r for i, r in enumerate(ranges))


def path_cell_laws(params: dict, d0, d1, cls=DiPriMeForestClassifier, windows: int = WINDOWS) -> tuple[CellLaw,
                                                                                                       CellLaw]:
    """The law of a strict DiPriMeFlip tree's release, to depth 2, under add/remove neighbours ``d0`` and ``d1``,
    on the cells of the extra record's path (V003, Consul and Williamson 2021, Algorithm 1 FITTREE/FINDSPLIT).

    A release's cell is ``(root, child, leaf)``: the root's ``(j, t)``, the ``(j, t)`` of the child on the side
    the record that one dataset lacks goes (``"leaf"`` when that child is a leaf), and the cell of the leaf it
    reaches (the atoms or windows of :func:`pair_cell_laws`). Nothing off that path is in the cell, and nothing is
    lost: given the nodes on the path, every other node and leaf grows on the same records under both datasets,
    with independent noise, so its conditional law is the same under both and the release's likelihood ratio is
    its path cell's. The cells coarsen the release only where :func:`pair_cell_laws` does (leaf atoms below
    :data:`ATOM_CELL`, regression windows). A cell's probability is the root's node factor times the child's (each
    :func:`audit.diprime.exact_law.node_factor`, the hidden medians summed out) times the leaf's interval.

    Parameters
    ----------
    params : dict
        ``n_estimators=1``, ``max_depth`` 1 or 2, ``variant="flip"``, ``accounting="strict"``.
    d0, d1 : (X, y)
        Neighbours by adding or removing one record.
    cls, windows : see :func:`pair_cell_laws`

    Returns
    -------
    (CellLaw, CellLaw)
        The laws under ``d0`` and ``d1`` on the same cells, with the same ``cell`` function.
    """
    _check(params, cls, "path_cell_laws", depths=(1, 2), variants=("flip",))
    s = forest_setup(params, cls)
    (X0, y0), (X1, y1) = prepare(s, d0), prepare(s, d1)
    x = _extra_record(X0, y0, X1, y1)
    leaves, leaf_cell = _leaf_cells(s, windows)
    lower, upper = ({}, {}), ({}, {})
    named, thresholds = {}, {}  # leaf values named per (root, child); (j, released t) -> grid value per node

    def add(key, logp, leaf_laws):
        named[key] = set(leaf_laws[0][0])
        for d in (0, 1):
            p = math.exp(logp[d])
            for v in leaf_laws[d][0]:
                lower[d][key + (v,)] = max(0.0, p * (1 - 2 * ROUNDING) * leaf_laws[d][0][v])
                upper[d][key + (v,)] = min(1.0, p * (1 + 2 * ROUNDING) * leaf_laws[d][1][v])

    def on_side(j, g, Xa, Xb):
        side = 0 if x[j] < g else 1
        ma, mb = Xa[:, j] < g, Xb[:, j] < g
        return side, (ma if side == 0 else ~ma), (mb if side == 0 else ~mb)

    ranges = tuple(s.bounds)
    active = [j for j, (a, b) in enumerate(ranges) if b > a]
    if not active:
        raise ValueError(f"the DiPriMe cell law needs a feature of positive range, got bounds={s.bounds!r}")
    thresholds["root"] = {}
    for j, g, l0, l1 in flip_node(s, X0, y0, X1, y1, ranges, active):
        if l0 == -math.inf and l1 == -math.inf:
            continue
        root = (j, round(float(g), 6))
        thresholds["root"][root] = g
        side, m0, m1 = on_side(j, g, X0, X1)
        sub = (X0[m0], y0[m0], X1[m1], y1[m1])
        c_ranges = _child_ranges(ranges, j, g, side)
        c_active = [i for i, (a, b) in enumerate(c_ranges) if b > a]
        if s.max_depth == 1 or not c_active:
            add((root, "leaf"), (l0, l1), leaves(sub[1], sub[3]))
            continue
        thresholds[root] = {}
        for j2, g2, q0, q1 in flip_node(s, *sub, c_ranges, c_active):
            if q0 == -math.inf and q1 == -math.inf:
                continue
            child = (j2, round(float(g2), 6))
            thresholds[root][child] = g2
            _, n0, n1 = on_side(j2, g2, sub[0], sub[2])
            add((root, child), (l0 + q0, l1 + q1), leaves(sub[1][n0], sub[3][n1]))

    def cell(release):
        nodes, = release
        root = tuple(nodes[0][1:]) if nodes[0][0] == "split" else None
        g = thresholds["root"].get(root)
        if g is None:
            return OTHER
        i = 1 if x[root[0]] < g else _subtree_end(nodes, 1)
        if nodes[i][0] == "leaf":
            key = (root, "leaf")
        else:
            child = tuple(nodes[i][1:])
            g2 = thresholds.get(root, {}).get(child)
            if g2 is None:
                return OTHER
            key, i = (root, child), (i + 1 if x[child[0]] < g2 else _subtree_end(nodes, i + 1))
        if key not in named:
            return OTHER
        return key + (leaf_cell(nodes[i][1], named[key]),)

    return CellLaw(lower[0], upper[0], cell), CellLaw(lower[1], upper[1], cell)
