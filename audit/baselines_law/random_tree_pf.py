"""The exact law of the DiffPrivLib-style random tree's release on tiny inputs (issue 29).

:class:`reference.baselines.diffprivlib_tree.RandomTreePFClassifier` (PrivaTree's "DiffPrivLib" baseline,
Vos et al. 2023 section III-A and section VI; spec/privatree.md section 3.2) written a second
time, as a law composed from the mechanisms' laws, independently of the sampling code. Its ``release()``
(the default, ``thresholds=False``) is the tree's features and leaf labels: the thresholds are dropped.

Composition
-----------
* **Structure** (spec 3.2 step 2): each internal node draws a feature uniformly among the ``m`` and a
  threshold uniform in that feature's interval *within the node's cell* (a left child's cell ends at its
  parent's threshold, a right child's begins there); no data is read. A record goes left iff
  ``x_j <= t``. On records whose values lie on a public set of *cut points* (the domain's grid and the
  data's own values), two thresholds in the same gap between consecutive cut points route every record
  alike, so a structure is enumerated by *classes*: a feature and a gap per node. The class's
  probability is data-independent; at depth 1 it is ``(1/m) |A| / (H - L)``; at depth 2 the children's
  gaps depend on the root's threshold ``t`` and the class's probability is the integral
  ``(1/m)^3 / (H - L) int_A f(t) g(t) dt`` with ``f`` (left child) either ``|B| / range`` (another
  feature), ``|B| / (t - L)`` (a gap below ``A``) or ``(t - a0) / (t - L)`` (the part of ``A`` below
  ``t``), and ``g`` alike on the right. Written ``f = alpha + beta / (t - L)``,
  ``g = gamma + delta / (H - t)``, the integral is closed-form (``1 / (u v) = (1/u + 1/v) / (H - L)``
  with ``u + v = H - L``): ``alpha gamma |A| + alpha delta I_v + beta gamma I_u + beta delta (I_u + I_v) /
  (H - L)``, ``I_u = ln((a1 - L) / (a0 - L))``, ``I_v = ln((H - a0) / (H - a1))``.
* **Leaves** (spec 3.2 step 3): monotone permute-and-flip on the leaf's class counts with the whole
  ``epsilon`` (:meth:`reference.mechanisms.PermuteAndFlip.logpmf_all`); the leaves are independent given
  the structure. A release's probability is the sum over the classes with its features of the class's
  probability times the product of its leaves' label probabilities.

Exactness
---------
No truncation. The class probabilities carry the rounding of a few ``log`` and products: a relative
slack :data:`WEIGHT_SLACK` (far above it). The loss of a pair has an analytic upper end that needs no
weights: the mixture's ratio is at most the largest ratio over the classes of positive probability (the
classes' law is the same under both datasets), and a class's ratio is the product of its leaves'
permute-and-flip ratios; that upper end is computed in log space with :data:`LOG_SLACK`. The lower end
comes from the mixture's intervals.

Limits
------
``max_depth <= 2`` (:data:`MAX_DEPTH`: deeper nested cells give iterated integrals not summed out
here); any number of features and classes.
"""
from __future__ import annotations

import dataclasses
import itertools
import math
from functools import lru_cache

import numpy as np

from audit.baselines_law._compose import learner_of
from audit.engine.exact_law.laws import PairLoss, ReleaseLaw, add_interval, laws_pair_loss
from reference.baselines.diffprivlib_tree import RandomTreePFClassifier
from reference.mechanisms import PermuteAndFlip

__all__ = ["release_law", "pair_loss", "structure_classes", "MAX_DEPTH"]

#: deepest tree whose structure law is summed out here
MAX_DEPTH = 2
#: relative slack of a structure class's computed probability
WEIGHT_SLACK = 1e-9
#: absolute slack of a computed log-ratio of permute-and-flip probabilities, per leaf
LOG_SLACK = 1e-14


def _gaps(low: float, high: float, cuts) -> tuple:
    """The gaps ``(a0, a1)`` of ``[low, high]`` between the cut points strictly inside it."""
    inner = sorted({float(v) for v in cuts if low < v < high})
    edges = [low] + inner + [high]
    return tuple((a, b) for a, b in zip(edges[:-1], edges[1:]) if b > a)


def _factor(j, gap, root_j, root_gap, low, high, side, bounds):
    """``(alpha, beta)`` of a child's factor (module docstring), or ``None`` when the child's gap cannot
    hold its threshold. ``side`` is ``"L"`` (cell ``[low, t]``) or ``"R"`` (cell ``[t, high]``)."""
    (g0, g1), (a0, a1) = gap, root_gap
    if j != root_j:
        lo_j, hi_j = bounds[j]
        return (g1 - g0) / (hi_j - lo_j), 0.0
    if gap == root_gap:
        return (1.0, low - a0) if side == "L" else (1.0, a1 - high)
    if side == "L" and g1 <= a0:
        return 0.0, g1 - g0
    if side == "R" and g0 >= a1:
        return 0.0, g1 - g0
    return None


def _depth2_weight(m, root_j, root_gap, left, right, bounds) -> float:
    low, high = bounds[root_j]
    a0, a1 = root_gap
    fl = _factor(*left, root_j, root_gap, low, high, "L", bounds)
    fr = _factor(*right, root_j, root_gap, low, high, "R", bounds)
    if fl is None or fr is None:
        return 0.0
    (al, be), (ga, de) = fl, fr
    iu = math.log((a1 - low) / (a0 - low)) if be else 0.0
    iv = math.log((high - a0) / (high - a1)) if de else 0.0
    integral = al * ga * (a1 - a0) + al * de * iv + be * ga * iu + be * de * (iu + iv) / (high - low)
    return max(0.0, integral) / (high - low) / m ** 3


@lru_cache(maxsize=64)
def structure_classes(bounds: tuple, cuts: tuple, max_depth: int) -> tuple:
    """Every structure class ``(nodes, weight)``: ``nodes`` in heap order, each ``(feature, (a0, a1))``
    (its threshold's gap), ``weight`` the class's probability (module docstring); classes of probability 0
    are left out."""
    if max_depth > MAX_DEPTH:
        raise ValueError(f"max_depth={max_depth}: the DiffPrivLib tree's exact law covers max_depth <= {MAX_DEPTH} "
                         "(the nested cells of deeper trees give iterated integrals not summed out here)")
    m = len(bounds)
    if max_depth == 0:
        return (((), 1.0),)
    options = [(j, g) for j in range(m) for g in _gaps(*bounds[j], cuts[j])]
    out = []
    for j, gap in options:
        w1 = (gap[1] - gap[0]) / (bounds[j][1] - bounds[j][0]) / m
        if max_depth == 1:
            out.append((((j, gap),), w1))
            continue
        for left, right in itertools.product(options, repeat=2):
            w = _depth2_weight(m, j, gap, left, right, bounds)
            if w > 0:
                out.append((((j, gap), left, right), w))
    return tuple(out)


def _leaves(X: np.ndarray, nodes, depth: int) -> np.ndarray:
    """Each record's leaf (heap order among the ``2**depth`` leaves): left iff ``x_j <= a0``."""
    v = np.zeros(X.shape[0], dtype=np.int64)
    for _ in range(depth):
        j = np.array([nodes[i][0] for i in v.tolist()], dtype=np.int64)
        a0 = np.array([nodes[i][1][0] for i in v.tolist()])
        right = X[np.arange(X.shape[0]), j] > a0 if X.shape[0] else np.zeros(0, dtype=bool)
        v = 2 * v + 1 + right
    return v - (2 ** depth - 1)


def _shape(nodes, labels, i: int = 0):
    """The release ``("node", feature, left, right)`` / ``("leaf", k)`` of node ``i`` (heap order)."""
    if i >= len(nodes):
        return ("leaf", int(labels[i - len(nodes)]))
    return ("node", nodes[i][0], _shape(nodes, labels, 2 * i + 1), _shape(nodes, labels, 2 * i + 2))


@dataclasses.dataclass
class _Setup:
    bounds: tuple
    K: int
    depth: int
    X: np.ndarray
    y: np.ndarray
    pf: PermuteAndFlip


def _setup(params: dict, X, y) -> _Setup:
    est, eps, d = learner_of(RandomTreePFClassifier, params, "the DiffPrivLib tree", MAX_DEPTH,
                             " (the nested cells of deeper trees give iterated integrals not summed out here)")
    if est.bounds is None or est.classes is None:
        raise ValueError("bounds and classes are required (public facts)")
    bounds = tuple((float(a), float(b)) for a, b in est.bounds)
    classes = list(est.classes)
    X = np.asarray(X, dtype=float).reshape(-1, len(bounds))
    X = np.clip(X, [b[0] for b in bounds], [b[1] for b in bounds])
    yk = np.array([classes.index(v) for v in np.asarray(y).tolist()], dtype=np.int64)
    return _Setup(bounds, len(classes), d, X, yk, PermuteAndFlip(eps, 1.0, monotonic=True))


def _cuts(st: _Setup, grid, *more) -> tuple:
    cols = [set() for _ in st.bounds]
    for j in range(len(st.bounds)):
        if grid is not None:
            cols[j].update(float(v) for v in grid[j])
        for X in (st.X,) + more:
            cols[j].update(X[:, j].tolist())
    return tuple(tuple(sorted(c)) for c in cols)


def _leaf_logs(st: _Setup, nodes) -> list:
    """Per leaf, the log-probabilities of its labels (monotone permute-and-flip on its class counts)."""
    leaf = _leaves(st.X, nodes, st.depth)
    counts = np.zeros((2 ** st.depth, st.K))
    np.add.at(counts, (leaf, st.y), 1.0)
    return [_pf_logs(st.pf.epsilon, tuple(c)) for c in counts.tolist()]


@lru_cache(maxsize=4096)
def _pf_logs(epsilon: float, counts: tuple) -> np.ndarray:
    return PermuteAndFlip(epsilon, 1.0, monotonic=True).logpmf_all(np.asarray(counts, dtype=float))


def _law(st: _Setup, cuts: tuple) -> ReleaseLaw:
    out = {}
    for nodes, w in structure_classes(st.bounds, cuts, st.depth):
        logs = _leaf_logs(st, nodes)
        for labels in itertools.product(range(st.K), repeat=len(logs)):
            p = math.exp(sum(lg[k] for lg, k in zip(logs, labels)))
            add_interval(out, _shape(nodes, labels), w * (1.0 - WEIGHT_SLACK) * p, w * (1.0 + WEIGHT_SLACK) * p)
    return ReleaseLaw.from_intervals(out)


def release_law(params: dict, X, y, grid=None) -> ReleaseLaw:
    """The law of ``RandomTreePFClassifier(**params).fit(X, y).release()`` (module docstring); the cut
    points are ``grid`` (per feature, optional) and the data's values."""
    st = _setup(params, X, y)
    return _law(st, _cuts(st, grid))


def pair_loss(params: dict, d0, d1, grid=None) -> PairLoss:
    """:class:`audit.engine.exact_law.laws.PairLoss` of ``d0 = (X0, y0)`` and ``d1 = (X1, y1)``: the lower end
    from the two interval laws (on the same cut points), the upper end the smaller of theirs and the
    class-wise bound (module docstring, "Exactness")."""
    s0, s1 = _setup(params, *d0), _setup(params, *d1)
    cuts = _cuts(s0, grid, s1.X)
    res = laws_pair_loss(_law(s0, cuts), _law(s1, cuts))
    bound = 0.0
    for nodes, _ in structure_classes(s0.bounds, cuts, s0.depth):
        l0, l1 = _leaf_logs(s0, nodes), _leaf_logs(s1, nodes)
        up = sum(float(np.max(a - b)) for a, b in zip(l0, l1))
        down = sum(float(np.max(b - a)) for a, b in zip(l0, l1))
        bound = max(bound, up, down)
    bound += LOG_SLACK * 2 ** s0.depth
    return dataclasses.replace(res, upper=min(res.upper, bound))
