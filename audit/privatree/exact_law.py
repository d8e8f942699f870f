"""The exact law of PrivaTree's release on tiny inputs (issue 29, first learner).

:class:`reference.privatree.PrivaTreeClassifier`'s ``release()`` (the tree over bin ids) is
written here a second time, as a *law*: the probability of every tree, composed from the
mechanisms' own laws, independently of the sampling code. The sampler and this law are two
implementations of Algorithm 1 of PrivaTree (Vos et al.), and the tests hold them against each
other.

Composition (Algorithm 1 of the paper, lines 6-15)
-------------------------------------------------
The noise of different nodes is independent, and a child's data depend on its parent only
through the split chosen, so ``P(tree | D) = prod_nodes P(choice at node | records at node)``:

* an internal node draws, for every feature, a histogram of per-class counts in each bin
  with two-sided geometric noise clamped at 0 (Eq. 4): ``H = max(c + Z, 0)`` with
  ``P(H = 0) = alpha^c / (1 + alpha)`` and ``P(H = h) = (1 - alpha) / (1 + alpha) alpha^|h - c|``
  for ``h >= 1`` (``alpha`` from :class:`reference.mechanisms.TwoSidedGeometric`, the law its exact
  sampler draws). The node keeps the (feature, boundary) of least Gini on the noisy counts among
  candidates whose noisy sides hold at least ``max(min_samples_leaf, 1)`` records, the first
  feature and first boundary on ties; with no candidate the node is a leaf. The law of the choice
  is summed out over every noisy histogram: per feature, the law of its best candidate and Gini
  value (the same double-precision formula as the learner, so ties break the same way), then
  ``P(feature j wins with Gini g) = P_j(g) prod_{j' < j} P(G_j' > g) prod_{j' > j} P(G_j' >= g)``;
* a leaf draws its label by monotone permute-and-flip on the exact class counts (section IV-C;
  :meth:`reference.mechanisms.PermuteAndFlip.logpmf_all`);
* ``stopping="paper"`` stops on pure nodes and nodes of at most one record (line 7): a
  deterministic function of the data, so the law is exact and the loss between neighbours that
  flip it is infinite (the published gap G2).

Exactness
---------
With one numerical feature of two bins the only candidate's filter is a finite sum of the clamped
laws and the law is exact up to the rounding of ``exp`` (relative error below ``1e-12``, kept as
the interval's width). Otherwise each noisy count is summed out up to a cut-off ``Hmax`` whose
tail ``P(H > Hmax) = alpha^(Hmax - c + 1) / (1 + alpha)`` bounds what is left out; the truncated
mass of a node goes into the width of every interval it touches (a choice's probability lies in
``[computed, computed + truncated]``). A release's probability is an interval ``[lower, upper]``.

Limits
------
Numerical features only, with public bin edges: ``binning="uniform"``, or PrivaTree*'s exact
quantile edges (``use_private_quantiles=False``, paper accounting: a deterministic function of the
data). JointExp's private edges are out of reach here (their law over the ``2**16 + 1``-point
grid is not summed out yet); an error says so. The per-feature enumeration must stay under
:data:`MAX_CELLS_STATES` noisy histograms.

Mutants
-------
``variant`` gives the law of three of :mod:`audit.privatree.mutants`' known-flawed learners, written
here from their definitions (not from their code):

* ``"half-leaf-noise"`` (``HalfLeafNoise``): the leaves' permute-and-flip at twice the charged epsilon;
* ``"exact-min-samples-leaf"`` (``ExactCandidateFilter``, flaw 2 of the authors' fix commit): a
  candidate passes when its *exact* sides hold at least ``max(min_samples_leaf, 1)`` records, and
  its noisy sides are not empty (an empty noisy side makes the Gini 0/0, which the learner's
  comparison never keeps);
* ``"exact-empty-side"`` (``ExactEmptySideGini``, flaw 6): the noisy filter, and a candidate with an
  exactly empty side is dropped.

The two exact filters are written for one feature of two bins only (a node's choice is then its
filter's probability); elsewhere an error says so.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from audit.engine.laws import ROUNDING, PairLoss, ReleaseLaw, add_interval, join_children, laws_pair_loss
from audit.privatree.three_bin_law import choice_law as three_bin_choice_law
from reference.mechanisms import PermuteAndFlip, TwoSidedGeometric
from reference.privatree import PrivaTreeClassifier, budget_split
from reference.tree import bin_split, leaf, nested

#: the generic pieces (interval law, composition, pair loss) live in :mod:`audit.engine.laws`; their names stay
#: importable from here
__all__ = ["ROUNDING", "ReleaseLaw", "release_law", "PairLoss", "pair_loss", "laws_pair_loss", "add_interval",
           "join_children", "MAX_CELLS_STATES", "TAIL", "VARIANTS"]

#: largest number of noisy histograms of one feature enumerated at one node
MAX_CELLS_STATES = 3_000_000
#: target truncated mass per noisy count
TAIL = 1e-13
#: the mutants whose law :func:`release_law` writes (module docstring, "Mutants"); ``None``: the learner
VARIANTS = (None, "half-leaf-noise", "exact-min-samples-leaf", "exact-empty-side")
#: the variants whose candidate filter reads the exact counts
_EXACT_FILTERS = VARIANTS[2:]


# ------------------------------------------------------------------ the laws of one node
def _clamped_pmf(alpha: float, c: int, hmax: int) -> np.ndarray:
    """``P(max(c + Z, 0) = h)`` for ``h = 0..hmax``, ``Z`` two-sided geometric with ratio ``alpha``."""
    h = np.arange(hmax + 1)
    p = (1.0 - alpha) / (1.0 + alpha) * alpha ** np.abs(h - c)
    p[0] = alpha ** c / (1.0 + alpha)
    return p


def _hmax(alpha: float, c: int) -> int:
    """Cut-off with tail ``alpha^(hmax - c + 1) / (1 + alpha) <= TAIL``."""
    return int(c + max(0, math.ceil(math.log(TAIL) / math.log(alpha))))


def _tail(alpha: float, c: int, hmax: int) -> float:
    return alpha ** (hmax - c + 1) / (1.0 + alpha)


def _feature_law(counts: np.ndarray, alpha: float, floor: float, need_gini: bool, variant=None):
    """Law of a feature's best candidate: ``{(s, gini): mass}`` (``s = -1``, ``gini = inf``: no
    candidate passes the filter) and the truncated mass, over every noisy histogram of the exact
    ``counts`` (shape ``(B, K)``). With two bins and ``need_gini`` False only the filter matters,
    and its probability is a finite sum (no truncation; the Gini key is ``None``). ``variant``: an
    exact-count filter of a mutant (module docstring), on that two-bin case only."""
    B, K = counts.shape
    cells = counts.ravel()
    if B < 2:  # one bin (e.g. PrivaTree*'s edges on no data): no candidate boundary
        return {(-1, math.inf): 1.0}, 0.0
    if variant in _EXACT_FILTERS:
        if B != 2 or need_gini:
            raise ValueError(f"the exact law of the mutant {variant!r} is written for one feature of two bins; got "
                             f"{B} bins{' and several features' if need_gini else ''}")
        flaw2 = variant == "exact-min-samples-leaf"
        # flaw 2: the exact sides must hold max(min_samples_leaf, 1) records; flaw 6: an exactly empty side
        # drops the candidate
        if min(int(counts[0].sum()), int(counts[1].sum())) < (max(floor, 1.0) if flaw2 else 1):
            return {(-1, math.inf): 1.0}, 0.0
        if flaw2:  # the noisy sides still enter through the Gini: an empty one gives 0/0, which loses every
            floor = 1.0  # comparison of the learner (nan < best is False), so they must hold at least one record
    if B == 2 and not need_gini:
        t = int(math.ceil(floor))

        def below(row):  # P(sum of the row's noisy counts < t)
            dist = np.array([1.0])
            for c in row:
                dist = np.convolve(dist, _clamped_pmf(alpha, int(c), t - 1))[:t]
            return float(dist.sum())

        ok = (1.0 - below(counts[0])) * (1.0 - below(counts[1]))
        return {(0, None): ok, (-1, math.inf): 1.0 - ok}, 0.0
    hm = [_hmax(alpha, int(c)) for c in cells]
    truncated = 1.0 - math.prod(1.0 - _tail(alpha, int(c), h) for c, h in zip(cells, hm))
    if B == 3 and K == 2 and not need_gini and variant is None and floor <= 1.0:
        # one feature of three bins: the comparison separates (audit.privatree.three_bin_law), O(Hmax^4 log Hmax)
        law3, _ = three_bin_choice_law([_clamped_pmf(alpha, int(c), h) for c, h in zip(cells, hm)], truncated)
        return {(0, None): law3[0], (1, None): law3[1], (-1, math.inf): law3[None]}, truncated
    n_states = math.prod(h + 1 for h in hm)
    if n_states > MAX_CELLS_STATES:
        raise ValueError(f"PrivaTree's exact law is out of reach here: one feature's noisy histogram of {B} bins x "
                         f"{K} classes has {n_states:,} states after truncation (limit {MAX_CELLS_STATES:,}); use "
                         "one feature of two bins, fewer classes or a larger node epsilon")
    grids = np.stack([g.ravel() for g in np.meshgrid(*[np.arange(h + 1) for h in hm], indexing="ij")], axis=1)
    mass = np.ones(grids.shape[0])
    for i, (c, h) in enumerate(zip(cells, hm)):
        mass *= _clamped_pmf(alpha, int(c), h)[grids[:, i]]
    H = grids.reshape(-1, B, K).astype(float)
    # the learner's own arithmetic (reference.privatree.PrivaTreeClassifier._best_split), row by row
    L = np.cumsum(H, axis=1)[:, :-1, :]
    R = H.sum(axis=1)[:, None, :] - L
    nL, nR = L.sum(axis=2), R.sum(axis=2)
    ok = (nL >= floor) & (nR >= floor)
    with np.errstate(divide="ignore", invalid="ignore"):
        gini = (nL - (L ** 2).sum(axis=2) / nL + nR - (R ** 2).sum(axis=2) / nR) / (nL + nR)
    gini = np.where(ok, gini, math.inf)
    s = np.argmin(gini, axis=1)
    g = gini[np.arange(gini.shape[0]), s]
    s = np.where(np.isfinite(g), s, -1)
    law = {}
    for sv in np.unique(s).tolist():
        sel = s == sv
        keys, inv = np.unique(g[sel], return_inverse=True)
        sums = np.bincount(inv.ravel(), weights=mass[sel])
        law.update({(int(sv), gv): w for gv, w in zip(keys.tolist(), sums.tolist())})
    for cand in range(B - 1):  # every structurally possible choice, even if only the tails reach it
        if not any(k[0] == cand for k in law):
            law[(cand, math.inf if truncated == 0 else math.nan)] = 0.0
    return law, truncated


def _gini_cdf(law: dict):
    """Sorted Gini values of a feature's law (``inf``: no candidate), their cumulative masses and the
    total: ``P(G > g) = total - cum[#values <= g - 1]`` by binary search."""
    items = sorted((g, w) for (_, g), w in law.items() if not math.isnan(g))
    values = np.array([g for g, _ in items], dtype=float)
    cum = np.cumsum([w for _, w in items]) if items else np.zeros(0)
    return values, cum, float(cum[-1]) if items else 0.0


def _choice_law(hists: list, alpha: float, floor: float, variant=None):
    """``{(feature, boundary) or None: mass}`` of a node's choice (the first least Gini over features,
    module docstring) and the truncated mass."""
    need_gini = len(hists) > 1
    laws, truncated, seen = [], 0.0, {}
    for counts in hists:
        key = (counts.shape, np.ascontiguousarray(counts).tobytes())  # features of equal counts: one law
        if key not in seen:
            seen[key] = _feature_law(counts, alpha, floor, need_gini, variant)
        law, tr = seen[key]
        laws.append(law)
        truncated += tr
    out = {}
    cdfs = [_gini_cdf(law) for law in laws] if need_gini else None
    for j, law in enumerate(laws):
        keys = [(sv, g) for (sv, g) in law if sv >= 0]
        if not keys:
            continue
        w = np.array([law[k] for k in keys])
        if need_gini:
            g = np.array([k[1] for k in keys], dtype=float)
            for jj, (values, cum, total) in enumerate(cdfs):
                if jj == j:
                    continue
                # P(G_jj > g) for an earlier feature (it wins ties), P(G_jj >= g) for a later one
                side = "right" if jj < j else "left"
                k = np.searchsorted(values, g, side=side)
                w = w * (total - np.where(k > 0, cum[np.maximum(k - 1, 0)], 0.0))
        for (sv, _), v in zip(keys, w.tolist()):
            out[(j, sv)] = out.get((j, sv), 0.0) + v
    out[None] = math.prod(sum(v for (s, _), v in law.items() if s < 0) for law in laws)
    return out, min(truncated, 1.0)


# ------------------------------------------------------------------ the whole release
@dataclass
class _Setup:
    bins: np.ndarray
    y: np.ndarray
    K: int
    n_bins: list
    budget: dict
    depth: int
    stopping: str
    floor: float
    leaf_epsilon: float


def _setup(params: dict, X, y, variant=None) -> _Setup:
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
    est = PrivaTreeClassifier(**params)
    eps, d = est._check_params()
    X = np.asarray(X, dtype=float)
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D, got shape {X.shape}")
    m = X.shape[1]
    classes, cats, bounds = est._check_schema(m)
    if cats:
        raise ValueError("PrivaTree's exact law covers numerical features only (categories given)")
    private_q = est.binning == "quantile" and est.use_private_quantiles
    if private_q and d > 0:
        raise ValueError("PrivaTree's exact law is out of reach with JointExp's private bin edges: use "
                         "binning='uniform' (public edges) or PrivaTree*'s exact quantiles")
    index = {c: k for k, c in enumerate(classes.tolist())}
    yk = np.array([index[v] for v in np.asarray(y).tolist()], dtype=np.int64)
    Z = np.clip(X, [bounds[j][0] for j in range(m)], [bounds[j][1] for j in range(m)]) if m else X
    budget = budget_split(eps, d, classes.size, m_num=m, m_cat=0, n_public=est.n_public, E_max=est.E_max,
                          max_leaf_share=est.max_leaf_share, epsilon_shares=est.epsilon_shares,
                          private_quantiles=private_q, accounting=est.accounting)
    bins = np.empty(Z.shape, dtype=np.int64)
    n_bins = []
    B = est.max_bins
    for j in range(m):
        lo, hi = bounds[j]
        if d == 0:
            e = np.array([hi])
        elif est.binning == "uniform":
            e = np.unique(np.concatenate((np.linspace(lo, hi, B + 1)[1:-1], [hi])))
        else:  # PrivaTree*: exact quantiles of the data (not DP)
            col = Z[:, j]
            inner = np.quantile(col, np.linspace(0.0, 1.0, B + 1)[1:-1]) if col.size else np.array([])
            e = np.unique(np.concatenate((inner, [hi])))
        bins[:, j] = np.searchsorted(e, Z[:, j], side="left")
        n_bins.append(e.size)
    stopping = est.stopping or ("paper" if est.accounting == "paper" else "depth")
    leaf_epsilon = float(budget["leaf"]) * (2.0 if variant == "half-leaf-noise" else 1.0)
    return _Setup(bins, yk, classes.size, n_bins, budget, d, stopping, max(est.min_samples_leaf, 1e-12),
                  leaf_epsilon)


def release_law(params: dict, X, y, variant=None) -> ReleaseLaw:
    """The law of ``PrivaTreeClassifier(**params).fit(X, y).release()`` (module docstring).

    Parameters
    ----------
    params : dict
        The learner's parameters (``random_state`` is ignored).
    X, y : the dataset (tiny: every node's histograms are summed out)
    variant : one of :data:`VARIANTS`
        ``None``: the learner; otherwise the law of that mutant (module docstring, "Mutants").

    Returns
    -------
    ReleaseLaw
    """
    params = {k: v for k, v in params.items() if k != "random_state"}
    st = _setup(params, X, y, variant)
    alpha = TwoSidedGeometric(st.budget["node_num"], 1.0).alpha if st.depth > 0 else 0.0
    pf = PermuteAndFlip(st.leaf_epsilon, 1.0, monotonic=True)

    @lru_cache(maxsize=None)
    def leaf_law(counts: tuple) -> dict:
        p = np.exp(pf.logpmf_all(np.asarray(counts, dtype=float)))
        return {("leaf", k): float(v) for k, v in enumerate(p) if v > 0}

    @lru_cache(maxsize=None)
    def choice_law(key) -> tuple:
        hists = [np.asarray(h, dtype=np.int64).reshape(st.n_bins[j], st.K) for j, h in enumerate(key)]
        return _choice_law(hists, alpha, st.floor, variant)

    truncated = [0.0]

    def node(idx: np.ndarray, depth: int) -> dict:
        """``{release: (lower, upper)}`` of the subtree grown on records ``idx``."""
        y_n = st.y[idx]
        counts = tuple(np.bincount(y_n, minlength=st.K).tolist())
        stop = depth == st.depth or (st.stopping == "paper" and (idx.size <= 1 or np.unique(y_n).size == 1))
        out = {}
        if not stop:
            key = tuple(tuple(np.bincount(st.bins[idx, j] * st.K + y_n, minlength=st.n_bins[j] * st.K).tolist())
                        for j in range(len(st.n_bins)))
            choices, tr = choice_law(key)
            truncated[0] += tr
            for choice, w in choices.items():
                if choice is None or (w <= 0 and tr <= 0):  # impossible (the filter's exact sum says so)
                    continue
                j, s = choice
                go_left = st.bins[idx, j] <= s
                join_children(out, (w, w + tr), node(idx[go_left], depth + 1), node(idx[~go_left], depth + 1),
                              lambda rl, rr: nested(bin_split(j, s, _as_node(rl), _as_node(rr))))
            w_none = choices.get(None, 0.0)
            for r, p in leaf_law(counts).items():
                add_interval(out, r, w_none * p, min(1.0, w_none + tr) * p)
            return out
        return {r: (p, p) for r, p in leaf_law(counts).items()}

    return ReleaseLaw.from_intervals(node(np.arange(st.y.size), 0), truncated[0])


def _as_node(r):
    """A nested release back as a :class:`reference.tree.Node` (so :func:`nested` rebuilds it)."""
    if r[0] == "leaf":
        return leaf(r[1])
    _, j, key, left, right = r
    return bin_split(j, key, _as_node(left), _as_node(right))


# ------------------------------------------------------------------ the loss of a pair
def pair_loss(params: dict, d0, d1) -> PairLoss:
    """:class:`PairLoss` of the datasets ``d0 = (X0, y0)`` and ``d1 = (X1, y1)``."""
    return laws_pair_loss(release_law(params, *d0), release_law(params, *d1))
