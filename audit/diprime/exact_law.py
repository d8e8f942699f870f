"""The exact privacy loss of a DiPriMe tree's release on tiny inputs (issue 29): DiPriMeFlip, DiPriMeExp and
base DiPriMe, classifier and regressor, and DP-ERT.

:class:`reference.diprime.DiPriMeForestClassifier` / :class:`~reference.diprime.DiPriMeForestRegressor`
(V003 section 3.1, Algorithm 1 FITTREE/FINDSPLIT, spec A6) and :mod:`reference.baselines.dp_ert` (V003
section 4), written a second time as a law composed from the mechanisms' own laws. The release (``release()``:
every node's feature and threshold in preorder, every leaf's value rounded to 6 decimals) factorises over the
nodes:

* **a DiPriMeFlip split node** (``variant="flip"``, FINDSPLIT): the ``min(K, |A|)`` candidate attributes are
  a uniform subset of the active ones (public); each candidate's median is permute-and-flip (McKenna and
  Sheldon 2020, Algorithm 1) over the node range's ``FLIP_GRID`` public thresholds with utility
  ``-|2 #{x < g} - N|`` (budget ``eps_s``; :meth:`reference.mechanisms.PermuteAndFlip.logpmf_all` is its exact
  law); the attribute is permute-and-flip over the candidates with utility ``-SSE`` of their splits
  (``eps_a``, sensitivity 2 for classes, ``4 B^2`` for targets). The release shows the chosen attribute and
  its threshold only: the other candidates' medians and the subset are summed out, so a node's factor is
  ``A(j, t) = sum_S P(S) sum_{t_S} prod_i PF_i(t_i) PF_attr(j | t_S)``;
* **a DiPriMeExp node** (``variant="exp"``, V003 section 3.1): the same with the median
  :class:`reference.mechanisms.IntervalExponential` (V003 section 3.1, the proof of Theorem 3, on the public
  grid ``effective_grid(DEFAULT_GRID, lo, hi)`` of the node range; its ``logpmf`` is the law of one grid point)
  and the attribute :class:`reference.mechanisms.ExponentialMechanism` on ``-SSE``. The grid points between
  consecutive cuts of the two datasets' values (``#{t_j < x}`` and ``#{t_j <= x}``) route both datasets alike
  and have one probability each: one representative per such *piece* carries the node's log-ratios, and a
  hidden median is summed over the pieces (size times the point's probability);
* **a base DiPriMe node** (``variant="base"``): a uniform active attribute and its IntervalExponential median;
* **a DP-ERT node** (:class:`reference.baselines.dp_ert.RandomSplitGrower`, V003 section 4, spec section 3.3
  and A12, the whole budget on the leaves): a uniform attribute and a uniform
  threshold of the node range, data independent: its law is the same under both datasets, so a pair's loss is
  the worst over the gaps between the domain's values (``audit.random_trees.exact_law``'s structure classes);
* **a classification leaf**: every class count gets two-sided geometric noise (``eps_l``), clamped at 0; the
  leaf releases ``noisy / total``, or ``1 / C`` per class when every noisy count is 0. Its law is the clamped
  lattice law summed over the count vectors of each released value (atoms), as in
  :func:`audit.engine.exact_law.count_leaf_law.leaf_law` (clamp rule, whose all-zero mass is here the atom ``(1/2, 1/2)``);
* **a regression leaf**: :mod:`audit.diprime.regression_leaf` (the strict noisy sum over noisy count, and the
  papers' count-scaled leaf, a published gap).

The thresholds are in the release, so a release's log-likelihood ratio is a sum over nodes, and the loss of
a pair is the recursive maximum over each node's (attribute, threshold) of its node term plus its children's
maxima. Every leaf term's upper end is analytic (``rate |c - c'|_1``: every count vector's probability ratio
is within it, hence every atom's); its lower end comes from enumerated atoms. The 6-decimal rounding of the
thresholds is post-processing (upper end); it is one-to-one on the grids used here (step at least ``2e-6``,
checked), so the lower end holds for the rounded release too. The selections' residual delta (float
probabilities) is accounted in the ledger, not here.

Limits: two classes, one tree (``n_estimators=1``), numerical features; strict accounting, except the
regressor's ``accounting="paper"`` with ``variant`` exp or base (the count-scaled leaf, measured as a gap);
IntervalExponential medians (exp, base) at ``max_depth=1`` only (a child's grid depends on the exact parent
threshold: 65537 of them); at most ``MAX_NODE_COMBOS`` hidden median combinations per node.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable

import numpy as np

from audit.diprime.regression_leaf import count_scaled_leaf_terms, strict_leaf_terms
from audit.engine.exact_law.count_leaf_law import grid_gaps as _gaps, leaf_law
from reference.baselines.dp_ert import RandomSplitGrower
from reference.diprime import DiPriMeForestClassifier, DiPriMeForestRegressor
from reference.diprime.grower import FLIP_GRID
from reference.mechanisms import ExponentialMechanism, IntervalExponential, Laplace, PermuteAndFlip, TwoSidedGeometric
from reference.mechanisms.base import record_units, span_up
from reference.mechanisms.grid import DEFAULT_GRID, effective_grid, grid_cuts

__all__ = ["PairLoss", "pair_loss", "node_factor", "leaf_atoms", "MAX_NODE_COMBOS"]

#: most (candidate subset, hidden medians) combinations summed at one node
MAX_NODE_COMBOS = 200_000


@dataclass(frozen=True)
class _Setup:
    classes: list  # class labels; empty for a regressor
    bounds: list
    max_depth: int
    k: int  # max_features, clipped to the number of features
    eps_s: float
    eps_a: float
    rate: float  # the classification leaves' two-sided geometric rate
    variant: str = "flip"  # "flip", "exp", "base" or "ert" (data-independent splits)
    score_sensitivity: float = 2.0  # the attribute score's (-SSE) sensitivity
    leaf: Callable | None = None  # leaf(y0, y1) -> (up, up_lower, down, down_lower)
    eps_l: float = 0.0  # the leaves' budget
    target_bounds: tuple = ()  # a regressor's (lo, hi)

    @property
    def regression(self) -> bool:
        return not self.classes


def forest_setup(params: dict, cls=DiPriMeForestClassifier) -> _Setup:
    """The public facts of a DiPriMe forest of ``params`` that its exact law reads (its parameters validated
    by the estimator itself, as ``fit`` would)."""
    est = cls(**params)
    est._validate_params()
    ert = issubclass(est._grower, RandomSplitGrower)
    regression = isinstance(est, DiPriMeForestRegressor)
    variant = "ert" if ert else est.variant
    paper_leaf = regression and est.accounting == "paper" and variant != "flip"
    if est.accounting != "strict" and not paper_leaf:
        raise ValueError(f"the exact law covers strict accounting (and the regressor's count-scaled leaf with "
                         f"variant 'exp' or 'base'), got variant={est.variant!r}, accounting={est.accounting!r}")
    if int(est.n_estimators) != 1:
        raise ValueError(f"the exact law covers one tree, got n_estimators={est.n_estimators!r}")
    if est.categories:
        raise ValueError(f"the exact law covers numerical features, got categories={est.categories!r}")
    if variant in ("exp", "base") and int(est.max_depth) != 1:
        raise ValueError(f"the exact law of IntervalExponential medians (variant {variant!r}) covers "
                         f"max_depth=1, got max_depth={est.max_depth!r}")
    bounds = [tuple(map(float, b)) for b in est.bounds]
    k = min(int(est.max_features), len(bounds))
    b = est._budget(float(est.epsilon), k)  # the estimator's own budget rule (a seeded mutant may change it)
    rate = TwoSidedGeometric(b.eps_l, 1.0).noise_law.rate
    target_bounds = ()
    if regression:
        lo, hi = target_bounds = tuple(map(float, est.target_bounds))
        if round(lo, 6) != lo or round(hi, 6) != hi:
            raise ValueError(f"the regression leaf's law needs target_bounds on 6 decimals (the release's "
                             f"rounding), got target_bounds={est.target_bounds!r}")
        classes, sens = [], 4.0 * max(abs(lo), abs(hi)) ** 2
        leaf = _count_scaled_leaf(b.eps_l, lo, hi) if paper_leaf else _strict_regression_leaf(b.eps_l, lo, hi)
    else:
        classes = list(est.classes)
        if len(classes) != 2:
            raise ValueError(f"the exact law covers two classes, got classes={classes!r}")
        sens = 2.0
        leaf = (lambda y0, y1: leaf_terms(_counts(y0), _counts(y1), rate))
    return _Setup(classes, bounds, int(est.max_depth), k, b.eps_s, b.eps_a, rate, variant, sens, leaf, b.eps_l,
                  target_bounds)


@dataclass(frozen=True)
class StrictLeaf:
    """The strict regression leaf of :meth:`reference.diprime.grower.TreeGrower.leaf`: ``stats(y)`` is the
    records' whole grid units and count ``(c, n)``; the leaf releases ``clip(centre + S g / max(N, 1), lo, hi)``
    with ``S = c + DLap(rate_s)``, ``N = n + DLap(rate_n)`` (:mod:`audit.diprime.regression_leaf`)."""

    stats: Callable
    rate_s: float
    rate_n: float
    g: float
    centre: float
    lo: float
    hi: float


def strict_leaf(eps_l: float, lo: float, hi: float) -> StrictLeaf:
    """:class:`StrictLeaf` of the leaf budget ``eps_l`` and target bounds ``(lo, hi)``."""
    centre, half = (lo + hi) / 2.0, span_up(lo, hi) / 2.0
    mech = Laplace(eps_l / 2.0, half)
    g, bound = mech.grid, mech.grid_sensitivity
    units: dict = {}  # each record's whole grid units, by target value (record_units, a per-record function)

    def stats(y):
        vals = y.tolist()
        for v in vals:
            if v not in units:
                units[v] = int(record_units(np.array([float(v) - centre]), g, bound)[0])
        return sum(units[v] for v in vals), len(vals)

    return StrictLeaf(stats, mech.law(1).rate, TwoSidedGeometric(eps_l / 2.0, 1.0).noise_law.rate, g, centre, lo, hi)


def _strict_regression_leaf(eps_l: float, lo: float, hi: float):
    """The strict regression leaf (:func:`strict_leaf`) as a leaf term, through
    :func:`audit.diprime.regression_leaf.strict_leaf_terms`."""
    f = strict_leaf(eps_l, lo, hi)
    return lambda y0, y1: strict_leaf_terms(f.stats(y0), f.stats(y1), f.rate_s, f.rate_n, f.g, f.centre, lo, hi)


def _count_scaled_leaf(eps_l: float, lo: float, hi: float):
    """The papers' count-scaled leaf (V003 section 3: ``S = 2 max |B|``) as a leaf term
    (:func:`audit.diprime.regression_leaf.count_scaled_leaf_terms`)."""
    numerator = 2.0 * max(abs(lo), abs(hi))

    def stats(y):
        y = np.asarray(y, dtype=float)
        return int(y.size), float(y.mean()) if y.size else 0.0

    return lambda y0, y1: count_scaled_leaf_terms(stats(y0), stats(y1), numerator, eps_l, lo, hi)


def flip_grid(lo: float, hi: float) -> np.ndarray:
    """The node's public thresholds (spec A6): ``FLIP_GRID`` interior points of ``[lo, hi]``."""
    return lo + (hi - lo) * np.arange(1, FLIP_GRID + 1) / (FLIP_GRID + 1)


def _sse(y: np.ndarray, regression: bool = False) -> float:
    """The attribute score's SSE (:func:`reference.diprime.grower._sse`, spec A4, A5): of the targets
    (regression), of the one-hot labels (``N`` times Gini) of class indices ``y`` (two classes)."""
    n = y.size
    if n == 0:
        return 0.0
    if regression:
        return float(np.sum((y - y.mean()) ** 2))
    c1 = int(y.sum())
    return float(n - ((n - c1) ** 2 + c1 ** 2) / n)


@lru_cache(maxsize=65536)
def _pf_logpmf(epsilon: float, sensitivity: float, utilities: tuple) -> np.ndarray:
    """Permute-and-flip's exact law on ``utilities`` (it depends on them only through ``u - max u``)."""
    return PermuteAndFlip(epsilon, sensitivity).logpmf_all(np.array(utilities))


def _shifted(u) -> tuple:
    u = np.asarray(u, dtype=float)
    return tuple((u - u.max()).tolist())


def node_factor(s: _Setup, X: np.ndarray, y: np.ndarray, ranges: tuple, active: list) -> dict:
    """``{(j, t_index): log A(j, t)}``: the node's law of (attribute, threshold), hidden choices summed out."""
    m_act = len(active)
    k = min(s.k, m_act)
    subsets = list(itertools.combinations(active, k))
    grids = {j: flip_grid(*ranges[j]) for j in active}
    logpf = {}
    for j in active:
        below = np.searchsorted(np.sort(X[:, j]), grids[j], side="left")
        logpf[j] = _pf_logpmf(s.eps_s, 1.0, _shifted(-np.abs(2.0 * below - X.shape[0])))
    n_combos = len(subsets) * FLIP_GRID ** k
    if n_combos > MAX_NODE_COMBOS:
        raise ValueError(f"the exact law sums at most {MAX_NODE_COMBOS} hidden choices per node; max_features={k} "
                         f"gives {n_combos}")
    out: dict = {}
    log_subset = -math.log(len(subsets))
    for sub in subsets:
        if k == 1:
            j = sub[0]
            for ti in range(FLIP_GRID):
                key = (j, ti)
                out[key] = np.logaddexp(out.get(key, -math.inf), log_subset + logpf[j][ti])
            continue
        sse = {j: np.array([_split_sse(s, X, y, j, g) for g in grids[j]]) for j in sub}
        for tis in itertools.product(range(FLIP_GRID), repeat=k):
            base = log_subset + sum(logpf[j][ti] for j, ti in zip(sub, tis))
            la = _pf_logpmf(s.eps_a, s.score_sensitivity, _shifted([-sse[j][ti] for j, ti in zip(sub, tis)]))
            for c, (j, ti) in enumerate(zip(sub, tis)):
                key = (j, ti)
                out[key] = np.logaddexp(out.get(key, -math.inf), base + la[c])
    return out


@lru_cache(maxsize=4096)
def leaf_atoms(counts: tuple, rate: float):
    """``(atoms, tail)``: the leaf's released values (rounded as ``release()`` does) with their enumerated
    probabilities; all-zero noisy counts release ``(0.5, 0.5)``; ``tail`` bounds the mass left out."""
    law = leaf_law(counts, rate, "clamp")
    atoms = dict(law.atoms)
    atoms[(0.5, 0.5)] = atoms.get((0.5, 0.5), 0.0) + law.invalid
    return atoms, law.tail


@lru_cache(maxsize=65536)
def leaf_terms(c0: tuple, c1: tuple, rate: float) -> tuple:
    """``(up, up_lower, down, down_lower)`` of one leaf: analytic upper end and enumerated lower end of the
    largest ``ln P0/P1`` (up) and ``ln P1/P0`` (down) over its released values."""
    d = sum(abs(a - b) for a, b in zip(c0, c1))
    if d == 0:
        return 0.0, 0.0, 0.0, 0.0
    a0, t0 = leaf_atoms(c0, rate)
    a1, t1 = leaf_atoms(c1, rate)
    lows = []
    for a, b, tb in ((a0, a1, t1), (a1, a0, t0)):
        lows.append(max((math.log(p / (b.get(v, 0.0) + tb)) for v, p in a.items() if p > 0), default=0.0))
    return d * rate, min(lows[0], d * rate), d * rate, min(lows[1], d * rate)


def _counts(y: np.ndarray) -> tuple:
    return (int(np.count_nonzero(y == 0)), int(np.count_nonzero(y == 1)))


def _split_sse(s: _Setup, X, y, j: int, g: float) -> float:
    m = X[:, j] < g
    return _sse(y[m], s.regression) + _sse(y[~m], s.regression)


def ie_pieces(eps: float, lo: float, hi: float, x0: np.ndarray, x1: np.ndarray) -> list:
    """``(threshold, size, logp0, logp1)`` per piece of the node range's IntervalExponential grid (module
    docstring): a representative grid point (computed as ``IntervalExponential.sample`` does), the number of
    grid points, and one point's log-probability under each dataset (the mechanism's ``logpmf``)."""
    M = effective_grid(DEFAULT_GRID, lo, hi)
    if (hi - lo) / M < 2e-6:
        raise ValueError(f"the exact law needs grid steps of at least 2e-6 (6-decimal thresholds one-to-one); the "
                         f"range ({lo}, {hi}) of bounds gives {(hi - lo) / M:.3g}")
    mech = IntervalExponential(eps, (lo, hi), 1.0, M)
    vals = sorted(set(x0.tolist()) | set(x1.tolist()))
    cuts = sorted({0, M + 1} | set(grid_cuts(vals, lo, hi, M, "left")) | set(grid_cuts(vals, lo, hi, M, "right")))
    out = []
    for a, b in zip(cuts[:-1], cuts[1:]):
        if b > a:
            t = lo + (hi - lo) * (a / M)
            out.append((t, b - a, mech.logpmf(t, x0), mech.logpmf(t, x1)))
    return out


def ie_node(s: _Setup, X0, y0, X1, y1, ranges: tuple, active: list) -> list:
    """``[(j, threshold, log A0, log A1)]`` of a DiPriMeExp or base DiPriMe node (module docstring), the hidden
    candidates' medians summed over their pieces (V003 Algorithm 1, FINDSPLIT)."""
    pieces = {j: ie_pieces(s.eps_s, *ranges[j], X0[:, j], X1[:, j]) for j in active}
    if s.variant == "base":  # one uniform attribute, then its median
        return [(j, t, -math.log(len(active)) + l0, -math.log(len(active)) + l1)
                for j in active for t, _, l0, l1 in pieces[j]]
    k = min(s.k, len(active))
    subsets = list(itertools.combinations(active, k))
    n_combos = len(subsets) * max(len(p) for p in pieces.values()) ** k
    if n_combos > MAX_NODE_COMBOS:
        raise ValueError(f"the exact law sums at most {MAX_NODE_COMBOS} hidden choices per node; max_features={k} "
                         f"gives {n_combos}")
    em = ExponentialMechanism(s.eps_a, s.score_sensitivity)
    acc: dict = {}
    log_subset = -math.log(len(subsets))
    for sub in subsets:
        for combo in itertools.product(*(range(len(pieces[j])) for j in sub)):
            chosen = [pieces[j][p] for j, p in zip(sub, combo)]
            for side, (X, y) in enumerate(((X0, y0), (X1, y1))):
                # every candidate's piece: its size times one point's probability, except the released one's
                logw = [math.log(size) + lp[side] for _, size, *lp in chosen]
                la = em.logpmf_all(np.array([-_split_sse(s, X, y, j, t) for j, (t, *_) in zip(sub, chosen)]))
                total = log_subset + sum(logw)
                for c, (j, p) in enumerate(zip(sub, combo)):
                    key = (j, p, side)
                    term = total - math.log(chosen[c][1]) + la[c]
                    acc[key] = np.logaddexp(acc.get(key, -math.inf), term)
    return [(j, pieces[j][p][0], acc[j, p, 0], acc[j, p, 1]) for j in active for p in range(len(pieces[j]))
            if (j, p, 0) in acc]


def _ert_node(s: _Setup, X0, y0, X1, y1, ranges: tuple, active: list) -> list:
    """A DP-ERT node (:class:`reference.baselines.dp_ert.RandomSplitGrower`): a uniform attribute and a uniform
    threshold of its range, the same law under both datasets (node term 0); one threshold per gap between the
    two datasets' values (:func:`audit.engine.exact_law.count_leaf_law.grid_gaps`) carries every routing."""
    out = []
    for j in active:
        values = set(X0[:, j].tolist()) | set(X1[:, j].tolist())
        out += [(j, t, 0.0, 0.0) for t, q in _gaps(*ranges[j], values) if q > 0]
    return out


def flip_node(s: _Setup, X0, y0, X1, y1, ranges: tuple, active: list) -> list:
    """``[(j, threshold, log A0, log A1)]`` of a DiPriMeFlip node over the public thresholds of :func:`flip_grid`."""
    f0 = node_factor(s, X0, y0, ranges, active)
    f1 = node_factor(s, X1, y1, ranges, active)
    grids = {j: flip_grid(*ranges[j]).tolist() for j in active}
    return [(j, grids[j][ti], f0.get((j, ti), -math.inf), f1.get((j, ti), -math.inf))
            for j, ti in sorted(f0.keys() | f1.keys())]


_NODES = {"flip": flip_node, "exp": ie_node, "base": ie_node, "ert": _ert_node}


def _loss(s: _Setup, X0, y0, X1, y1, ranges: tuple, depth: int) -> tuple:
    """``(up, up_lower, down, down_lower, witness)`` of the subtree at this node."""
    active = [j for j, (lo, hi) in enumerate(ranges) if hi > lo]
    if depth >= s.max_depth or not active:
        u, ul, d, dl = s.leaf(y0, y1)
        return u, ul, d, dl, ("leaf",)
    best = [-math.inf, -math.inf, -math.inf, -math.inf]
    wit = [None, None]
    leaves: dict = {}  # children that are leaves depend on the routing only
    for j, g, l0, l1 in _NODES[s.variant](s, X0, y0, X1, y1, ranges, active):
        if l0 == -math.inf and l1 == -math.inf:
            continue
        left_r = tuple((r[0], float(g)) if i == j else r for i, r in enumerate(ranges))
        right_r = tuple((float(g), r[1]) if i == j else r for i, r in enumerate(ranges))
        m0, m1 = X0[:, j] < g, X1[:, j] < g
        key = (m0.tobytes(), m1.tobytes()) if depth + 1 >= s.max_depth else None
        if key is None or key not in leaves:
            children = (_loss(s, X0[m0], y0[m0], X1[m1], y1[m1], left_r, depth + 1),
                        _loss(s, X0[~m0], y0[~m0], X1[~m1], y1[~m1], right_r, depth + 1))
            if key is None:
                left, right = children
            else:
                leaves[key] = children
        if key is not None:
            left, right = leaves[key]
        node = l0 - l1  # +inf / -inf when one side cannot choose it
        terms = (node + left[0] + right[0], node + left[1] + right[1],
                 -node + left[2] + right[2], -node + left[3] + right[3])
        if terms[0] > best[0]:
            wit[0] = (j, round(float(g), 6), left[4], right[4])
        if terms[2] > best[2]:
            wit[1] = (j, round(float(g), 6), left[4], right[4])
        best = [max(b, t) for b, t in zip(best, terms)]
    return best[0], best[1], best[2], best[3], (wit[0] if best[0] >= best[2] else wit[1])


@dataclass(frozen=True)
class PairLoss:
    """Exact loss of a pair as an interval (the node laws' float rounding below ``ROUNDING``) and a release
    (feature, threshold per split node in preorder) attaining the upper end."""

    lower: float
    upper: float
    release: str

    def delta(self, epsilon: float) -> float:
        """Upper bound on ``delta(epsilon)``: 0 from the exact loss on; below it, the pure-DP bound
        ``1 - e^(epsilon - upper)`` (the tree's loss distribution is not composed here)."""
        if epsilon >= self.upper:
            return 0.0
        return float(-math.expm1(epsilon - self.upper)) if math.isfinite(self.upper) else 1.0


def prepare(s: _Setup, d) -> tuple:
    """``(X, y)`` of ``d`` as the law reads them: features clipped to the bounds, class labels as indices
    (targets are clipped to ``target_bounds`` by the leaf's units)."""
    X, y = d
    X = np.clip(np.asarray(X, dtype=float).reshape(-1, len(s.bounds)), [b[0] for b in s.bounds],
                [b[1] for b in s.bounds])
    if s.regression:
        return X, np.asarray(y, dtype=float).ravel()
    return X, np.array([s.classes.index(v) for v in np.asarray(y).tolist()], dtype=np.int64)


#: relative rounding slack of the node laws (logpmf_all in double precision, a few sums)
ROUNDING = 1e-9


def pair_loss(params: dict, d0, d1, grid=None, cls=DiPriMeForestClassifier) -> PairLoss:
    """:class:`PairLoss` of ``d0 = (X0, y0)`` and ``d1 = (X1, y1)`` (``grid`` unused: the thresholds are
    public grids of the node ranges, or, for DP-ERT, the gaps between the two datasets' values). ``cls``: the
    estimator class (DiPriMe's classifier or regressor, DP-ERT's, or a seeded mutant of one)."""
    s = forest_setup(params, cls)
    up, up_lo, down, down_lo, wit = _loss(s, *prepare(s, d0), *prepare(s, d1), tuple(s.bounds), 0)
    hi = max(up, down)
    lo = max(up_lo, down_lo, 0.0)
    # DP-ERT has no node law: its loss is a sum of analytic leaf ends (a few float additions)
    slack = (1e-15 if s.variant == "ert" else ROUNDING) * max(1.0, abs(hi))
    return PairLoss(max(0.0, lo - slack), hi + slack if math.isfinite(hi) else hi, repr(wit))
