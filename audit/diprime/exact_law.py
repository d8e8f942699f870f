"""The exact privacy loss of a DiPriMeFlip classification tree's release on tiny inputs (issue 29).

:class:`reference.diprime.DiPriMeForestClassifier` with ``variant="flip"`` (DiPriMeFlip, V003 section 3.1,
Algorithm 1 FITTREE/FINDSPLIT with the strict median on public thresholds, spec A6), written a second time
as a law composed from the mechanisms' own laws. Its release (``release()``: every node's feature and
threshold in preorder, every leaf's class fractions rounded to 6 decimals) factorises over the nodes:

* **a split node** (FINDSPLIT): the ``min(K, |A|)`` candidate attributes are a uniform subset of the active
  ones (public); each candidate's median is permute-and-flip (McKenna and Sheldon 2020, Algorithm 1) over
  the node range's ``FLIP_GRID`` public thresholds with utility ``-|2 #{x < g} - N|`` (budget ``eps_s``;
  :meth:`reference.mechanisms.PermuteAndFlip.logpmf_all` is its exact law); the attribute is
  permute-and-flip over the candidates with utility ``-SSE`` of their splits (``eps_a``, sensitivity 2). The
  release shows the chosen attribute and its threshold only: the other candidates' medians and the subset
  are summed out, so a node's factor is ``A(j, t) = sum_S P(S) sum_{t_S} prod_i PF_i(t_i) PF_attr(j | t_S)``;
* **a leaf**: every class count gets two-sided geometric noise (``eps_l``), clamped at 0; the leaf releases
  ``noisy / total``, or ``1 / C`` per class when every noisy count is 0. Its law is the clamped lattice law
  summed over the count vectors of each released value (atoms), as in
  :func:`audit.random_trees.exact_law.leaf_law` (clamp rule, whose all-zero mass is here the atom
  ``(1/2, 1/2)``).

The thresholds are in the release, so a release's log-likelihood ratio is a sum over nodes, and the loss of
a pair is the recursive maximum over each node's (attribute, threshold) of its node term plus its children's
maxima. Every leaf term's upper end is analytic (``rate |c - c'|_1``: every count vector's probability ratio
is within it, hence every atom's); its lower end comes from enumerated atoms (interval width below
``1e-5``). The selections' residual delta (permute-and-flip's float flip probabilities) is accounted in the
ledger, not here.

Limits: two classes, one tree (``n_estimators=1``), ``variant="flip"`` with strict accounting (the paper's
flip median is a float mechanism with no lattice law), numerical features, at most ``MAX_NODE_COMBOS``
hidden median combinations per node.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from audit.random_trees.exact_law import leaf_law
from reference.diprime import DiPriMeForestClassifier
from reference.diprime.grower import FLIP_GRID
from reference.mechanisms import PermuteAndFlip, TwoSidedGeometric

__all__ = ["PairLoss", "pair_loss", "node_factor", "leaf_atoms", "MAX_NODE_COMBOS"]

#: most (candidate subset, hidden medians) combinations summed at one node
MAX_NODE_COMBOS = 200_000


@dataclass(frozen=True)
class _Setup:
    classes: list
    bounds: list
    max_depth: int
    k: int  # max_features, clipped to the number of features
    eps_s: float
    eps_a: float
    rate: float  # the leaves' two-sided geometric rate


def _setup(params: dict, cls=DiPriMeForestClassifier) -> _Setup:
    est = cls(**params)
    if est.variant != "flip" or est.accounting != "strict":
        raise ValueError(f"the exact law covers strict DiPriMeFlip (variant='flip', accounting='strict'), got "
                         f"variant={est.variant!r}, accounting={est.accounting!r}")
    if int(est.n_estimators) != 1:
        raise ValueError(f"the exact law covers one tree, got n_estimators={est.n_estimators!r}")
    classes = list(est.classes)
    if len(classes) != 2:
        raise ValueError(f"the exact law covers two classes, got classes={classes!r}")
    bounds = [tuple(map(float, b)) for b in est.bounds]
    k = min(int(est.max_features), len(bounds))
    b = est._budget(float(est.epsilon), k)  # the estimator's own budget rule (a seeded mutant may change it)
    rate = TwoSidedGeometric(b.eps_l, 1.0).noise_law.rate
    return _Setup(classes, bounds, int(est.max_depth), k, b.eps_s, b.eps_a, rate)


def _grid(lo: float, hi: float) -> np.ndarray:
    """The node's public thresholds (spec A6): ``FLIP_GRID`` interior points of ``[lo, hi]``."""
    return lo + (hi - lo) * np.arange(1, FLIP_GRID + 1) / (FLIP_GRID + 1)


def _sse(y: np.ndarray) -> float:
    """One-hot SSE (N times Gini) of class indices ``y`` (two classes)."""
    n = y.size
    if n == 0:
        return 0.0
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
    grids = {j: _grid(*ranges[j]) for j in active}
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
        sse = {j: np.array([_sse(y[X[:, j] < g]) + _sse(y[X[:, j] >= g]) for g in grids[j]]) for j in sub}
        for tis in itertools.product(range(FLIP_GRID), repeat=k):
            base = log_subset + sum(logpf[j][ti] for j, ti in zip(sub, tis))
            la = _pf_logpmf(s.eps_a, 2.0, _shifted([-sse[j][ti] for j, ti in zip(sub, tis)]))
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
def _leaf_terms(c0: tuple, c1: tuple, rate: float) -> tuple:
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


def _loss(s: _Setup, X0, y0, X1, y1, ranges: tuple, depth: int) -> tuple:
    """``(up, up_lower, down, down_lower, witness)`` of the subtree at this node."""
    active = [j for j, (lo, hi) in enumerate(ranges) if hi > lo]
    if depth >= s.max_depth or not active:
        u, ul, d, dl = _leaf_terms(_counts(y0), _counts(y1), s.rate)
        return u, ul, d, dl, ("leaf",)
    f0 = node_factor(s, X0, y0, ranges, active)
    f1 = node_factor(s, X1, y1, ranges, active)
    best = [-math.inf, -math.inf, -math.inf, -math.inf]
    wit = [None, None]
    for key in f0.keys() | f1.keys():
        l0, l1 = f0.get(key, -math.inf), f1.get(key, -math.inf)
        if l0 == -math.inf and l1 == -math.inf:
            continue
        j, ti = key
        g = _grid(*ranges[j])[ti]
        left_r = tuple((r[0], float(g)) if i == j else r for i, r in enumerate(ranges))
        right_r = tuple((float(g), r[1]) if i == j else r for i, r in enumerate(ranges))
        m0, m1 = X0[:, j] < g, X1[:, j] < g
        left = _loss(s, X0[m0], y0[m0], X1[m1], y1[m1], left_r, depth + 1)
        right = _loss(s, X0[~m0], y0[~m0], X1[~m1], y1[~m1], right_r, depth + 1)
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


#: relative rounding slack of the node laws (logpmf_all in double precision, a few sums)
ROUNDING = 1e-9


def pair_loss(params: dict, d0, d1, grid=None, cls=DiPriMeForestClassifier) -> PairLoss:
    """:class:`PairLoss` of ``d0 = (X0, y0)`` and ``d1 = (X1, y1)`` (``grid`` unused: the thresholds are
    public grids of the node ranges)."""
    s = _setup(params, cls)
    data = []
    for X, y in (d0, d1):
        X = np.clip(np.asarray(X, dtype=float).reshape(-1, len(s.bounds)), [b[0] for b in s.bounds],
                    [b[1] for b in s.bounds])
        data += [X, np.array([s.classes.index(v) for v in np.asarray(y).tolist()], dtype=np.int64)]
    up, up_lo, down, down_lo, wit = _loss(s, *data, tuple(s.bounds), 0)
    hi = max(up, down)
    lo = max(up_lo, down_lo, 0.0)
    slack = ROUNDING * max(1.0, abs(hi))
    return PairLoss(max(0.0, lo - slack), hi + slack if math.isfinite(hi) else hi, repr(wit))
