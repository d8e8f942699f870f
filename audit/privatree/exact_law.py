"""The exact law of PrivaTree's release on tiny inputs (issue 29, first learner).

:class:`reference.privatree.PrivaTreeClassifier`'s ``release()`` (the tree over bin ids) is
written here a second time, as a *law*: the probability of every tree (and, with ``edges=G``, of
its edges' cells), composed from the
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

Bin edges and categorical features
----------------------------------
Numerical features are binned once at the root (Algorithm 1 lines 3-5): public uniform edges
(``binning="uniform"``), PrivaTree*'s exact quantiles (``use_private_quantiles=False``, paper
accounting: a deterministic function of the data), or JointExp's private quantiles (the learner's
default; Gillenwater et al. 2021, PrivaTree section IV-B). The tree depends on the edges only through
the bins they induce, so ``P(edge cells, tree | D) = sum_edges P_JointExp(edges | D) P(tree | bins)``,
the sum running over the pieces of JointExp's grid between the data's values (and the released cells)
rather than its ``2**16 + 1`` points (:mod:`audit.privatree.edge_law`). ``edges=None`` gives the law of
``release()`` (the edges summed out), ``edges=G`` that of ``release(edges=G)`` (each numerical edge's
cell among ``G`` equal cells of its public range), and ``pair_loss(..., edges="grid")`` the exact loss of
the release with the edges' grid points themselves (two laws lumped over the pieces of both datasets'
values: one probability ratio per lump; :mod:`audit.privatree.edge_law`, "The exact grid index"). A categorical feature's bins are its category codes,
its histogram is charged ``node_cat``, and with two classes its categories are ordered by noisy class-1
share (section IV-A; :mod:`audit.privatree.node_law`).

Costs (measured on the certificate's domains, one core)
------------------------------------------------------
* JointExp, ``max_bins=2`` (one private edge): at most ``2 n + G + 2`` pieces, so that many edge
  outcomes (fewer after merging equal bins and cells), each a tree law of one feature of two bins
  (finite sums): about 9 ms a dataset at depth 2 on up to 6 records (210 datasets, 1.9 s); memory
  ``O(M)`` for the grid's pieces (peak 2.7 MB a dataset). More edges (``max_bins > 2``): ``C(P + m - 1, m)`` piece
  sequences (refused above :data:`audit.privatree.edge_law.MAX_EDGE_SEQUENCES`); a lone feature of three
  bins is summed by :mod:`audit.privatree.three_bin_law`, and larger node histograms (about ``10^11``
  states for 3 bins x 2 classes beside another feature at the report's epsilon) are refused above
  :data:`MAX_CELLS_STATES`, an error that names the count.
* One binary categorical feature: each row's ``(Hmax + 1)^2`` noisy states (about ``2.3e4`` at node
  epsilon 1/4), sorted by share: about 60 ms a dataset at depth 2 (210 datasets, 12 s; peak 3.9 MB).
* Several features, or a categorical feature of three or more categories: every noisy histogram of each
  feature is enumerated (``prod (Hmax_c + 1)`` states): JointExp's edge and a binary categorical feature
  at node epsilon 2.4 each take about 0.35 s a dataset (45 datasets, 16 s; peak 12 MB); three categories
  need a node epsilon of about 3 or more (at node epsilon 4, about 1.5 s on three records). Each feature's
  law, its Gini distribution and its survival at the other features' Gini values are kept for the next nodes
  (one release law meets the same few histograms of a feature under every binning of the edges): three
  numerical features under JointExp's edges at node epsilon 1 (343 binnings, 11 distinct feature laws of
  about 1.6e5 Gini values) take about 12 s a dataset of 6 records, peak memory about 2 GB.
* The report's rows (:data:`audit.privatree.claims.EDGE_LAW_CONFIGS`, one core, four datasets each): one
  feature of three bins to depth 2 at node epsilon 1, about 65 s (50 three-bin node laws a dataset, about
  0.25 s each); three numerical features, about 45 s; two binary categorical features, 10 s; a numerical
  beside a binary categorical feature, about 20 s; with ``tail=1e-9``, as the report computes them, about
  19, 13, 2 and 6 s (peak memory 0.9 GB), intervals up to about 2e-5 wide. Three bins at node epsilon 1/3
  (the report's row at epsilon 2): 273 three-bin node laws over the four datasets, 179 of them distinct (kept
  by their counts), about 0.6 s each with ``tail=1e-9`` (each bin's least likely noisy pairs of mass at most
  the tail left out, :func:`audit.privatree.three_bin_law.choice_law`'s ``drop``): about 110 s in all, intervals
  about 2e-7 wide; with ``tail=2e-5`` (the quick budget) about 10 s, about 3.5e-3 wide.
  The standard and full budgets compute them in the run; a quick run reads them from the committed law
  certificate (:mod:`audit.privatree.committed_laws`).

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

import itertools
import math
from dataclasses import dataclass
from functools import lru_cache
from numbers import Integral

import numpy as np

from audit.engine.exact_law.laws import ROUNDING, PairLoss, ReleaseLaw, add_interval, join_children, laws_pair_loss
from audit.privatree.edge_law import EDGE_ROUNDING, category_bins, jointexp_edges, public_edges
from audit.privatree.node_law import EXACT_FILTERS, MAX_CELLS_STATES, TAIL, choice_law
from reference.mechanisms import PermuteAndFlip, TwoSidedGeometric
from reference.privatree import PrivaTreeClassifier, budget_split
from reference.tree import bin_split, leaf, nested

#: the generic pieces (interval law, composition, pair loss) live in :mod:`audit.engine.exact_law.laws`; their names stay
#: importable from here
__all__ = ["ROUNDING", "ReleaseLaw", "release_law", "PairLoss", "pair_loss", "laws_pair_loss", "add_interval",
           "join_children", "MAX_CELLS_STATES", "TAIL", "VARIANTS"]

#: the mutants whose law :func:`release_law` writes (module docstring, "Mutants"); ``None``: the learner
VARIANTS = (None, "half-leaf-noise", "exact-min-samples-leaf", "exact-empty-side")
assert VARIANTS[2:] == EXACT_FILTERS


# ------------------------------------------------------------------ the whole release
@dataclass
class _Setup:
    y: np.ndarray
    K: int
    outcomes: list  # per feature: its edge outcomes (audit.privatree.edge_law.EdgeOutcome)
    alphas: list  # per feature: the noise ratio of its node histograms
    ordered: list  # per feature: categorical with two classes (bins ordered by noisy share)
    numerical: list  # the numerical features, in order (their edge cells are released)
    depth: int
    stopping: str
    floor: float
    leaf_epsilon: float


def _check_edges(edges):
    if edges is None or edges == "grid":
        return edges
    if isinstance(edges, Integral) and not isinstance(edges, bool) and edges >= 1:
        return int(edges)
    raise ValueError(f"edges must be None, a positive integer G (the release's edge cells) or 'grid' (the edges' "
                     f"grid points, lumped), got {edges!r}")


def _setup(params: dict, X, y, variant=None, edges=None, cuts=None) -> _Setup:
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
    G = _check_edges(edges)
    est = PrivaTreeClassifier(**params)
    eps, d = est._check_params()
    Xa = np.asarray(X, dtype=object if est.categories else float)
    if Xa.ndim != 2:
        raise ValueError(f"X must be 2-D, got shape {Xa.shape}")
    m = Xa.shape[1]
    classes, cats, bounds = est._check_schema(m)
    if cats and variant in EXACT_FILTERS:
        raise ValueError(f"the exact law of the mutant {variant!r} is written for numerical features only; got "
                         f"categories for features {sorted(cats)}")
    num = [j for j in range(m) if j not in cats]
    private_q = est.binning == "quantile" and est.use_private_quantiles
    index = {c: k for k, c in enumerate(classes.tolist())}
    yk = np.array([index[v] for v in np.asarray(y).tolist()], dtype=np.int64)
    Z, _ = est._encode(Xa, cats, bounds, fitting=True)  # codes and clipped values, as fit makes them
    budget = budget_split(eps, d, classes.size, m_num=len(num), m_cat=len(cats), n_public=est.n_public,
                          E_max=est.E_max, max_leaf_share=est.max_leaf_share, epsilon_shares=est.epsilon_shares,
                          private_quantiles=private_q, accounting=est.accounting)
    B = est.max_bins
    levels = np.linspace(0.0, 1.0, B + 1)[1:-1]
    outcomes = []
    for j in range(m):
        if j in cats:
            outcomes.append(category_bins(Z[:, j].astype(np.int64), len(cats[j])))
            continue
        lo, hi = bounds[j]
        col = Z[:, j]
        if d == 0 or lo == hi:
            e = np.array([hi])
        elif est.binning == "uniform":
            e = np.unique(np.concatenate((np.linspace(lo, hi, B + 1)[1:-1], [hi])))
        elif not est.use_private_quantiles:  # PrivaTree*: exact quantiles of the data (not DP)
            inner = np.quantile(col, levels) if col.size else np.array([])
            e = np.unique(np.concatenate((inner, [hi])))
        else:
            outcomes.append(jointexp_edges(col, (lo, hi), budget["quantile"], levels, G,
                                           cuts=None if cuts is None else cuts[j]))
            continue
        outcomes.append(public_edges(e, col, (lo, hi), G))
    alphas = [TwoSidedGeometric(budget["node_cat" if j in cats else "node_num"], 1.0).alpha if d > 0 else 0.0
              for j in range(m)]
    stopping = est.stopping or ("paper" if est.accounting == "paper" else "depth")
    leaf_epsilon = float(budget["leaf"]) * (2.0 if variant == "half-leaf-noise" else 1.0)
    return _Setup(yk, classes.size, outcomes, alphas, [j in cats and classes.size == 2 for j in range(m)], num, d,
                  stopping, max(est.min_samples_leaf, 1e-12), leaf_epsilon)


def release_law(params: dict, X, y, variant=None, edges=None, cuts=None, tail: float = TAIL) -> ReleaseLaw:
    """The law of ``PrivaTreeClassifier(**params).fit(X, y).release(edges)`` (module docstring).

    Parameters
    ----------
    params : dict
        The learner's parameters (``random_state`` is ignored).
    X, y : the dataset (tiny: every node's histograms are summed out)
    variant : one of :data:`VARIANTS`
        ``None``: the learner; otherwise the law of that mutant (module docstring, "Mutants").
    edges : None or int
        ``None``: the release is the tree over bin ids (JointExp's edges summed out); an integer ``G``: the
        release also holds each numerical feature's edge cells among ``G`` equal cells of its public range;
        ``"grid"``: the edges' grid points, lumped over the pieces cut at ``cuts``
        (:mod:`audit.privatree.edge_law`, "The exact grid index"; use :func:`pair_loss`).
    cuts : dict, optional
        Numerical feature -> public values at which JointExp's pieces are also cut (``edges="grid"``).
    tail : float
        The truncated mass of each noisy count (module docstring, "Exactness"): a larger one sums fewer
        noisy histograms (their number falls as ``ln(1 / tail)^(cells)``) and widens the intervals.

    Returns
    -------
    ReleaseLaw
    """
    params = {k: v for k, v in params.items() if k != "random_state"}
    st = _setup(params, X, y, variant, edges, cuts)
    pf = PermuteAndFlip(st.leaf_epsilon, 1.0, monotonic=True)

    @lru_cache(maxsize=None)
    def leaf_law(counts: tuple) -> dict:
        p = np.exp(pf.logpmf_all(np.asarray(counts, dtype=float)))
        return {("leaf", k): float(v) for k, v in enumerate(p) if v > 0}

    feature_laws: dict = {}  # each feature's law, for every node of every binning (node_law.choice_law)

    @lru_cache(maxsize=None)
    def node_choice(key, n_bins) -> tuple:
        hists = [np.asarray(h, dtype=np.int64).reshape(n_bins[j], st.K) for j, h in enumerate(key)]
        return choice_law(hists, st.alphas, st.floor, variant, st.ordered, cache=feature_laws, tail=tail)

    truncated = [0.0]

    def tree(bins: np.ndarray, n_bins: tuple) -> dict:
        def node(idx: np.ndarray, depth: int) -> dict:
            """``{release: (lower, upper)}`` of the subtree grown on records ``idx``."""
            y_n = st.y[idx]
            counts = tuple(np.bincount(y_n, minlength=st.K).tolist())
            stop = depth == st.depth or (st.stopping == "paper" and (idx.size <= 1 or np.unique(y_n).size == 1))
            if stop:
                return {r: (p, p) for r, p in leaf_law(counts).items()}
            key = tuple(tuple(np.bincount(bins[idx, j] * st.K + y_n, minlength=n_bins[j] * st.K).tolist())
                        for j in range(len(n_bins)))
            choices, tr = node_choice(key, n_bins)
            truncated[0] += tr
            out = {}
            for choice, w in choices.items():
                if choice is None or (w <= 0 and tr <= 0):  # impossible (the filter's exact sum says so)
                    continue
                j, s = choice
                go_left = np.isin(bins[idx, j], s) if isinstance(s, tuple) else bins[idx, j] <= s
                join_children(out, (w, w + tr), node(idx[go_left], depth + 1), node(idx[~go_left], depth + 1),
                              lambda rl, rr: nested(bin_split(j, s, _as_node(rl), _as_node(rr))))
            w_none = choices.get(None, 0.0)
            for r, p in leaf_law(counts).items():
                add_interval(out, r, w_none * p, min(1.0, w_none + tr) * p)
            return out

        return node(np.arange(st.y.size), 0)

    out: dict = {}
    for combo in itertools.product(*st.outcomes):  # the features' binnings are independent (one mechanism each)
        w = math.prod(o.weight for o in combo)
        w_lo, w_hi = (w, w) if all(o.weight == 1.0 for o in combo) else (w * (1 - EDGE_ROUNDING),
                                                                            w * (1 + EDGE_ROUNDING))
        bins = np.stack([o.bins for o in combo], axis=1) if combo else np.zeros((st.y.size, 0), dtype=np.int64)
        before = truncated[0]
        law = tree(bins, tuple(o.n_bins for o in combo))
        truncated[0] = before + w_hi * (truncated[0] - before)
        cells = None if edges is None else tuple((j, combo[j].cells) for j in st.numerical)
        for r, (lo, hi) in law.items():
            add_interval(out, r if edges is None else (cells, r), w_lo * lo, min(1.0, w_hi * hi))
    return ReleaseLaw.from_intervals(out, truncated[0])


def _as_node(r):
    """A nested release back as a :class:`reference.tree.Node` (so :func:`nested` rebuilds it)."""
    if r[0] == "leaf":
        return leaf(r[1])
    _, j, key, left, right = r
    return bin_split(j, key, _as_node(left), _as_node(right))


# ------------------------------------------------------------------ the loss of a pair
def pair_loss(params: dict, d0, d1, edges=None) -> PairLoss:
    """:class:`PairLoss` of the datasets ``d0 = (X0, y0)`` and ``d1 = (X1, y1)`` for ``release(edges)``;
    ``edges="grid"``: the release with the edges' exact grid points, whose loss and profile the two laws
    lumped over the pieces of both datasets' values give exactly (:mod:`audit.privatree.edge_law`)."""
    cuts = None
    if edges == "grid":
        cats = PrivaTreeClassifier(**{k: v for k, v in params.items() if k != "random_state"}).categories or {}
        both = [np.asarray(d[0], dtype=object) for d in (d0, d1)]
        cuts = {j: np.concatenate([b[:, j].astype(float) for b in both]) for j in range(both[0].shape[1])
                if j not in cats}
    return laws_pair_loss(*(release_law(params, *d, edges=edges, cuts=cuts) for d in (d0, d1)))
