"""PrivaTree: differentially private decision trees from noisy histograms.

Vos, Vos, Li, Erkin, Verwer, "Differentially-Private Decision Trees and
Provable Robustness to Data Poisoning" (arXiv 2305.15394, seed
Vos et al. 2023), implemented from ``spec/privatree.md``.

Algorithm 1 of the paper, as implemented here:

1. budget split (Eqs. 7-10): ``eps_leaf = min(eps * max_leaf_share, eps'_leaf)``
   with ``eps'_leaf = 2^d Phi_K / (n E_max)`` (Corollary 1, Eq. 7), the rest
   over quantiles and tree levels;
2. numerical features binned once into at most ``max_bins`` bins whose edges
   are JointExp private quantiles at levels 0.1..0.9 plus the public upper
   bound (section IV-B; :mod:`reference.mechanisms.jointexp`); categorical features use
   their category codes as bins (section IV-A);
3. at every internal node, one per-class histogram per feature with two-sided
   geometric noise (Eq. 4), clamped at 0; the (feature, boundary) candidate of
   least weighted Gini on the noisy counts wins (the first minimum on ties, compared in rational arithmetic
   on the counts by :mod:`reference.ties`, so mirror-image splits of equal Gini tie);
   binary categorical features are ordered by their noisy class-1 share,
   multiclass ones keep the given order (section IV-A);
4. leaves labelled by monotone permute-and-flip on the exact class counts
   (section IV-C).

Privacy accounting (``accounting``)
-----------------------------------
``"paper"``: Eqs. 8-10 exactly; every numerical feature gets ``eps_quantiles``
and every feature's histogram ``eps_node,num`` or ``eps_node,cat``, and the
tree stops early on pure nodes and nodes of at most one record (Algorithm 1,
line 7). Theorem 3's proof composes features in parallel, but every record is
in every feature's histogram, so the true cost is
``m_num eps_q + d (m_num eps_num + m_cat eps_cat) + eps_leaf`` (spec 4.3, G1),
which the ledger shows; the stopping rule is not DP for any epsilon (G2) and
is listed in ``privacy_leaks_``.

``"strict"`` (default, epsilon-DP under add/remove): ``eps_leaf`` as above;
``eps_q,total = (eps - eps_leaf) / (1 + d)`` when private quantiles are used,
split equally over the numerical features; the per-level budget
``(eps - eps_leaf - eps_q,total) / d`` split equally over all features; the
tree stops at depth ``d`` only. The ledger then totals exactly ``eps``.

Neighbouring relation: add/remove one record. ``n_public`` (the paper's public
dataset size, used only by Eq. 7) is a parameter, never read from the data,
so neighbours of different sizes get the same budget split.
"""
from __future__ import annotations

import math
from numbers import Integral

import numpy as np
from scipy.optimize import minimize_scalar
from sklearn.base import BaseEstimator, ClassifierMixin

from reference.randomness import PublishSafeMixin, fit_rng
from reference.validation import warn_outside_bounds
from reference.validation import check_max_depth, check_positive_finite, check_probability, check_fitted, check_X, \
    check_y, facts_by_index, shown
from reference.mechanisms.jointexp import JointExp
from reference.ledger import PrivacyLedger, Scope
from reference.tree import bin_split, leaf, nested, predict_values
from reference.mechanisms import PermuteAndFlip, TwoSidedGeometric
from reference.privatree.codes import bin_codes, class_indices, node_rows
from reference.ties import EXACT_COUNT, TIE_WINDOW, exact_shares_safe, first_minimum, share_order, weighted_gini

__all__ = ["PrivaTreeClassifier", "edge_cells", "phi_K", "leaf_epsilon_bound", "budget_split", "charge_exact_quantiles",
           "charge_stopping"]


def charge_exact_quantiles(ledger, j):
    """Charge PrivaTree*'s exact quantile edges of feature ``j``: not DP, so ``epsilon = inf``."""
    ledger.charge(f"quantiles[{j}]", "exact quantiles (PrivaTree*, not DP)", math.inf, scope=Scope.root(),
                  note="section VI: bin edges are the data's exact quantiles")


def charge_stopping(ledger):
    """Charge Algorithm 1 line 7's data-dependent stopping: not DP for any epsilon (spec 4.3, G2)."""
    ledger.charge("stopping", "pure node or <= 1 record (not DP)", math.inf, scope=Scope.root(),
                  note="Algorithm 1 line 7: whether a node stops reveals its exact counts")


# --------------------------------------------------------------------------- budget (Eqs. 7-10)
def _pf_worst(p: float, K: int) -> float:
    return 2.0 * math.log(1.0 / p) * (1.0 - (1.0 - (1.0 - p) ** K) / (K * p))


def phi_K(K: int) -> float:
    """``Phi_K = max_{p in (0, 1]} 2 log(1/p) (1 - (1 - (1-p)^K) / (K p))`` of Corollary 1 (Eq. 7).

    ``1/e`` in closed form for ``K = 2``; otherwise a bounded scalar
    maximisation refined from the best point of a grid.
    """
    if isinstance(K, bool) or not isinstance(K, Integral) or K < 2:
        raise ValueError(f"K (number of classes) must be an integer >= 2, got {shown(K)}")
    if K == 2:
        return 1.0 / math.e
    grid = np.linspace(1e-6, 1.0, 2001)
    vals = [_pf_worst(p, K) for p in grid]
    i = int(np.argmax(vals))
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)]
    res = minimize_scalar(lambda p: -_pf_worst(p, K), bounds=(lo, hi), method="bounded",
                          options={"xatol": 1e-12})
    return float(max(-res.fun, max(vals)))


def leaf_epsilon_bound(K: int, max_depth: int, n: float, E_max: float) -> float:
    """``eps'_leaf = 2^d Phi_K / (n E_max)`` (Corollary 1, Eq. 7; spec A4: used with "=")."""
    return (2.0 ** max_depth) * phi_K(K) / (float(n) * float(E_max))


def budget_split(epsilon, max_depth, K, *, m_num, m_cat, n_public=None, E_max=0.01, max_leaf_share=0.5,
                 epsilon_shares="auto", private_quantiles=True, accounting="strict") -> dict:
    """Per-call budgets of PrivaTree (Eqs. 8-10, or their strict correction; see the module docstring).

    Returns
    -------
    dict with ``leaf`` (each leaf's PF), ``quantile`` (each numerical
    feature's JointExp), ``node_num`` and ``node_cat`` (each feature's
    histogram at one node), and ``total`` (the composed epsilon of a fit).

    References
    ----------
    PrivaTree, Eqs. 7-10 and Algorithm 1 lines 1-2; spec 2.3 (explicit shares)
    and A1 (strict accounting); A20 (``d = 0``).
    """
    m = m_num + m_cat
    d = max_depth
    if d == 0 or m == 0:
        return {"leaf": epsilon, "quantile": 0.0, "node_num": 0.0, "node_cat": 0.0, "total": epsilon}
    use_q = private_quantiles and m_num > 0
    if isinstance(epsilon_shares, str):
        if n_public is None:
            raise ValueError("n_public is required with epsilon_shares='auto': Eq. 7 needs the public dataset "
                             "size (never read from the data); give n_public, or explicit epsilon_shares")
        leaf = min(epsilon * max_leaf_share, leaf_epsilon_bound(K, d, n_public, E_max))
        q_total = (epsilon - leaf) / (1 + d) if private_quantiles else 0.0
        rest = epsilon - leaf - q_total  # nodes
        s_q = q_total / epsilon
    else:
        s_q, s_node, s_leaf = (float(s) for s in epsilon_shares)
        leaf = epsilon * s_leaf
        rest = epsilon * s_node
    if accounting == "paper":
        q = epsilon * s_q if use_q else 0.0
        if isinstance(epsilon_shares, str):
            node_num = (epsilon - leaf) / (1 + d) if private_quantiles else (epsilon - leaf) / d
            node_cat = (epsilon - leaf) / d
        else:
            node_num = rest / d
            node_cat = (rest + epsilon * s_q) / d
        total = m_num * q + d * (m_num * node_num + m_cat * node_cat) + leaf
        return {"leaf": leaf, "quantile": q, "node_num": node_num, "node_cat": node_cat, "total": total}
    q_total = epsilon * s_q if use_q else 0.0
    level = (epsilon - leaf - q_total) / d
    per = level / m
    return {"leaf": leaf, "quantile": q_total / m_num if use_q else 0.0, "node_num": per, "node_cat": per,
            "total": q_total + d * level + leaf}


def edge_cells(e, bounds, G: int) -> np.ndarray:
    """Which of ``G`` equal cells of the public range ``bounds = (lo, hi)`` each bin edge of ``e`` lies in
    (``release(edges=G)``): ``min(floor((e - lo) / (hi - lo) G), G - 1)``, 0 on a range of width zero."""
    lo, hi = bounds
    e = np.asarray(e, dtype=float)
    if hi == lo:
        return np.zeros(e.shape, dtype=np.int64)
    return np.minimum(((e - lo) / (hi - lo) * G).astype(int), G - 1)


def _overrides(est, *names) -> bool:
    """Whether ``est``'s class overrides any of the methods ``names`` of :class:`PrivaTreeClassifier`."""
    return any(getattr(type(est), n) is not getattr(PrivaTreeClassifier, n) for n in names)


# --------------------------------------------------------------------------- the learner
class PrivaTreeClassifier(PublishSafeMixin, ClassifierMixin, BaseEstimator):
    """PrivaTree (Vos et al. 2023, Algorithm 1); see the module docstring.

    Parameters
    ----------
    epsilon : float
        Total privacy budget (add/remove neighbours).
    max_depth : int, default 4
        ``d``: number of split levels; leaves at depth ``<= d``.
    bounds : sequence or dict
        Public ``(low, high)`` of every numerical feature: a dict ``{j: (low,
        high)}`` or a sequence over all features (``None`` for categorical ones).
    categories : dict, optional
        Feature index -> its public category values; those features are categorical.
    classes : sequence
        The public class labels (at least two).
    n_public : float, optional
        Public dataset size for Eq. 7 (needed with ``epsilon_shares="auto"`` and ``max_depth >= 1``).
    max_bins : int, default 10
        Bins per numerical feature (9 interior quantiles 0.1..0.9 plus the upper bound).
    E_max : float, default 0.01
        Maximum expected labelling error of Corollary 1.
    max_leaf_share : float, default 0.5
        Cap on ``eps_leaf / eps`` (Eq. 8).
    epsilon_shares : "auto" or (s_q, s_node, s_leaf)
        Eqs. 8-10, or explicit shares summing to 1 (the paper's Fig. 2).
    use_private_quantiles : bool, default True
        False gives PrivaTree*: non-private quantile edges (not DP; section VI).
    binning : {"quantile", "uniform"}
        "uniform" uses public equal-width edges on the bounds (no quantile budget).
    accounting : {"strict", "paper"}
    stopping : {None, "depth", "paper"}
        None follows ``accounting``; "paper" is Algorithm 1 line 7 (not DP, G2).
    min_samples_leaf : int, default 1
        Candidates with a noisy side total below it are skipped (post-processing).
    random_state : int, Generator or None
        Privacy first: the fit's noise comes from fresh OS entropy, whatever this holds, unless seeded fits are
        on (``reference.randomness.seeded_fits``, used by the auditor and reproductions): then an integer seeds
        the fit's stream and a Generator spawns its child (never drawn from or kept), and the seed is a secret key.
        The stream is discarded after fit; a fitted model's pickle drops ``random_state``.

    Attributes
    ----------
    privacy_ledger_, budget_, bin_edges_, classes_, n_features_in_,
    privacy_leaks_. (How many values were clipped into ``bounds`` is private and is not kept.)
    tree_ : reference.tree.Node
        The fitted tree over bin ids (a leaf's ``value`` is a class index);
        :meth:`release` publishes it as nested tuples.

    References
    ----------
    PrivaTree: Algorithm 1; Eqs. 4 and 7-10; Corollary 1; Theorem 3 (and its
    gaps G1, per-feature node budget, and G2, the stopping rule). JointExp: Gillenwater et al. (2021).
    Permute-and-flip: McKenna and Sheldon (2020).
    """

    #: the private-quantile mechanism of Algorithm 1 lines 3-5 (a hook for the auditor's mutants)
    _quantile_mechanism = JointExp

    def __init__(self, epsilon=1.0, max_depth=4, *, bounds=None, categories=None, classes=None, n_public=None,
                 max_bins=10, E_max=0.01, max_leaf_share=0.5, epsilon_shares="auto", use_private_quantiles=True,
                 binning="quantile", accounting="strict", stopping=None, min_samples_leaf=1, random_state=None):
        self.epsilon = epsilon
        self.max_depth = max_depth
        self.bounds = bounds
        self.categories = categories
        self.classes = classes
        self.n_public = n_public
        self.max_bins = max_bins
        self.E_max = E_max
        self.max_leaf_share = max_leaf_share
        self.epsilon_shares = epsilon_shares
        self.use_private_quantiles = use_private_quantiles
        self.binning = binning
        self.accounting = accounting
        self.stopping = stopping
        self.min_samples_leaf = min_samples_leaf
        self.random_state = random_state

    # ------------------------------------------------------------------ validation
    def _check_params(self):
        eps = check_positive_finite("epsilon", self.epsilon)
        d = check_max_depth(self.max_depth)
        b = self.max_bins
        if isinstance(b, bool) or not isinstance(b, Integral) or not 2 <= b <= 255:
            raise ValueError(f"max_bins must be an integer in [2, 255], got {shown(b)}")
        check_probability("E_max", self.E_max, open_low=True, open_high=True)
        check_probability("max_leaf_share", self.max_leaf_share, open_low=True)
        if self.accounting not in ("strict", "paper"):
            raise ValueError(f"accounting must be 'strict' or 'paper', got {shown(self.accounting)}")
        if self.stopping not in (None, "depth", "paper"):
            raise ValueError(f"stopping must be None, 'depth' or 'paper', got {shown(self.stopping)}")
        if self.binning not in ("quantile", "uniform"):
            raise ValueError(f"binning must be 'quantile' or 'uniform', got {shown(self.binning)}")
        if self.accounting == "strict":  # strict accounting refuses every step that is not DP
            if self.stopping == "paper":
                raise ValueError("stopping='paper' (Algorithm 1 line 7) is not differentially private: "
                                 "accounting='strict' refuses it; use stopping='depth' or accounting='paper'")
            if self.binning == "quantile" and not self.use_private_quantiles:
                raise ValueError("use_private_quantiles=False (PrivaTree*, exact quantile edges) is not "
                                 "differentially private: accounting='strict' refuses it; use "
                                 "binning='uniform' or accounting='paper'")
        msl = self.min_samples_leaf
        if isinstance(msl, bool) or not isinstance(msl, Integral) or msl < 0:
            raise ValueError(f"min_samples_leaf must be a non-negative integer, got {shown(msl)}")
        if not (isinstance(self.epsilon_shares, str) and self.epsilon_shares == "auto"):
            try:
                shares = [float(s) for s in self.epsilon_shares]
            except (TypeError, ValueError):
                raise ValueError(f"epsilon_shares must be 'auto' or three shares, got {shown(self.epsilon_shares)}") from None
            if len(shares) != 3 or min(shares) < 0 or not math.isclose(sum(shares), 1.0, abs_tol=1e-9) \
                    or (d > 0 and shares[1] + shares[0] <= 0) or shares[2] <= 0:
                raise ValueError("epsilon_shares must be three non-negative shares (quantiles, nodes, leaves) "
                                 f"summing to 1 with positive leaf and node shares, got {shown(self.epsilon_shares)}")
        if self.n_public is not None:
            check_positive_finite("n_public", self.n_public)
        return eps, int(d)

    def _check_schema(self, m):
        if self.classes is None:
            raise ValueError("classes is required: the public class labels (never read from y)")
        classes = np.asarray(list(self.classes))
        if classes.ndim != 1 or np.unique(classes).size != classes.size or classes.size < 2:
            raise ValueError(f"classes must list at least two distinct labels, got {shown(self.classes)}")
        cats = {} if self.categories is None else dict(facts_by_index(self, "categories", self.categories, m))
        for j, values in cats.items():
            if not (isinstance(j, Integral) and 0 <= j < m):
                raise ValueError(f"categories has feature index {shown(j)} outside 0..{m - 1}")
            if len(values) < 1 or len(set(values)) != len(values):
                raise ValueError(f"categories[{j}] must list distinct category values, got {shown(values)}")
        num = [j for j in range(m) if j not in cats]
        if num and self.bounds is None:
            raise ValueError("bounds is required: the public (low, high) of every numerical feature "
                             "(never read from the data)")
        bounds = {}
        given = facts_by_index(self, "bounds", self.bounds, m)
        src = given if isinstance(given, dict) else (dict(enumerate(given)) if given is not None else {})
        if not isinstance(self.bounds, dict) and self.bounds is not None and len(src) != m:
            raise ValueError(f"bounds has {len(src)} entries but X has {m} features")
        for j in num:
            if src.get(j) is None:
                raise ValueError(f"bounds[{j}] is missing for numerical feature {j}")
            try:
                lo, hi = (float(v) for v in src[j])
            except (TypeError, ValueError):
                raise ValueError(f"bounds[{j}] must be a (low, high) pair, got {shown(src[j])}") from None
            if not (math.isfinite(lo) and math.isfinite(hi) and lo <= hi):
                raise ValueError(f"bounds[{j}] must be finite with low <= high, got {shown(src[j])}")
            bounds[j] = (lo, hi)
        return classes, cats, bounds

    def _encode(self, X, cats, bounds, *, fitting):
        """Codes of categorical features (-1 for unknown at predict time) and clipped numerical values."""
        X = np.asarray(X, dtype=float) if not cats else np.asarray(X, dtype=object)
        if X.ndim != 2:
            raise ValueError(f"X must be 2-D, got shape {X.shape}")
        Z = np.empty(X.shape, dtype=float)
        clipped = np.zeros(X.shape[1], dtype=int)
        for j in range(X.shape[1]):
            if j in cats:
                lookup = {v: c for c, v in enumerate(cats[j])}
                codes = [lookup.get(v, -1) for v in X[:, j].tolist()]
                if fitting and -1 in codes:
                    bad = X[codes.index(-1), j]
                    raise ValueError(f"X[:, {j}] holds {shown(bad)}, not among categories[{j}]")
                Z[:, j] = codes
            else:
                col = X[:, j].astype(float)
                if not np.all(np.isfinite(col)):
                    raise ValueError(f"X[:, {j}] must be finite (no NaN or infinity)")
                lo, hi = bounds[j]
                clipped[j] = int(np.sum((col < lo) | (col > hi)))
                Z[:, j] = np.clip(col, lo, hi) if fitting else col
        return Z, clipped

    # ------------------------------------------------------------------ fit
    def fit(self, X, y):
        """Fit the tree (Algorithm 1) and record every mechanism call in ``privacy_ledger_``.

        The records are binned once, feature by feature, into small integer codes ``bin * K + class``
        (one byte for up to 256 codes); the nodes hold row indices, and each histogram is one
        ``np.bincount`` of the node's codes. Numerical data is read column by column, never copied whole
        (on 1,000,000 x 10 the fit's peak new memory is below the size of ``X``)."""
        eps, d = self._check_params()
        y = check_y(self, y)
        X = check_X(self, X, reset=True, numeric=not self.categories)  # names, counts, 2-D, finite
        if y.shape != (X.shape[0],):
            raise ValueError(f"y must be 1-D with one label per row of X, got shape {y.shape}")
        m = X.shape[1]
        classes, cats, bounds = self._check_schema(m)
        yk = class_indices(y, classes)
        # categorical values (or an overridden step that reads the clipped data) need the encoded matrix
        Z = self._encode(X, cats, bounds, fitting=True)[0] if cats or _overrides(self, "_encode", "_bounds_for_fit") \
            else None
        warn_outside_bounds(self, X, bounds)  # to the caller only: the count is private
        bounds = self._bounds_for_fit(bounds, Z)
        rng = fit_rng(self.random_state, self)  # a fresh child stream, discarded with the fit (reference.randomness)
        K = classes.size
        num = [j for j in range(m) if j not in cats]
        private_q = self.binning == "quantile" and self.use_private_quantiles
        budget = budget_split(eps, d, K, m_num=len(num), m_cat=len(cats), n_public=self.n_public, E_max=self.E_max,
                              max_leaf_share=self.max_leaf_share, epsilon_shares=self.epsilon_shares,
                              private_quantiles=private_q, accounting=self.accounting)
        ledger = PrivacyLedger("add-remove")
        leaks = []
        edges, codes, n_bins = {}, [], []
        for j in range(m):  # Algorithm 1 lines 3-5 (edges drawn in feature order), then the bins
            if j in cats:
                n_bins.append(len(cats[j]))
                codes.append(self._bin_codes(Z[:, j], None, yk, K, n_bins[-1]))
                continue
            col = Z[:, j] if Z is not None else np.clip(np.asarray(X[:, j], dtype=float), *bounds[j])
            edges[j] = self._edges(col, bounds[j], budget["quantile"], rng, ledger, j, d) if d > 0 else \
                np.array([bounds[j][1]])
            n_bins.append(edges[j].size)
            codes.append(self._bin_codes(col, edges[j], yk, K, n_bins[-1]))  # E[b-1] < x <= E[b]
        del Z
        if d > 0 and num and self.binning == "quantile" and not self.use_private_quantiles:
            leaks.append("PrivaTree*: bin edges are exact quantiles of the data (not DP)")
        stopping = self.stopping or ("paper" if self.accounting == "paper" else "depth")
        if stopping == "paper" and d > 0:
            leaks.append("data-dependent stopping (Algorithm 1 line 7): not DP for any epsilon")
            charge_stopping(ledger)
        self._ctx = dict(codes=codes, y=yk, K=K, cats=cats, n_bins=n_bins, budget=budget, d=d, rng=rng,
                         ledger=ledger, stopping=stopping, noise={})
        try:
            self.tree_ = self._grow(np.arange(X.shape[0]), 0, Scope.root(), "")
        finally:
            del self._ctx
        self.classes_ = classes
        self.n_features_in_ = m
        self.budget_ = budget
        self.bin_edges_ = edges
        self.categories_ = cats
        self.bounds_ = bounds
        self.privacy_ledger_ = ledger
        self.privacy_leaks_ = leaks
        return self

    def _edges(self, col, bound, eps_q, rng, ledger, j, d):
        lo, hi = bound
        B = self.max_bins
        levels = np.linspace(0.0, 1.0, B + 1)[1:-1]
        if self.binning == "uniform":
            inner = np.linspace(lo, hi, B + 1)[1:-1]
        elif not self.use_private_quantiles:
            inner = np.quantile(col, levels) if col.size else np.array([])
            charge_exact_quantiles(ledger, j)
        elif lo == hi:
            inner = np.array([])
        else:
            mech = self._quantile_mechanism(eps_q, levels, (lo, hi))
            inner = mech.sample(col, rng)  # points of JointExp's public grid on (lo, hi)
            ledger.charge(f"quantiles[{j}]", "JointExp", eps_q, scope=Scope.root(), sensitivity=2.0,
                          delta=mech.residual_delta,
                          note="Algorithm 1 lines 3-5; every record is in every feature's quantiles")
        return np.unique(np.concatenate((inner, [hi])))

    def _grow(self, idx, depth, scope, path):
        c = self._ctx
        y = node_rows(c["y"], idx)
        K, d = c["K"], c["d"]
        stop = depth == d
        if c["stopping"] == "paper" and (idx.size <= 1 or np.unique(y).size == 1):
            stop = True  # Algorithm 1 line 7: data-dependent, not DP (G2)
        if not stop:
            split = self._best_split(idx, y, scope, path)
            if split is not None:
                j, key, left_bins = split
                to_left = np.zeros(c["n_bins"][j], dtype=bool)
                to_left[left_bins] = True
                go_left = np.repeat(to_left, K)[node_rows(c["codes"][j], idx)]  # a code's bin is code // K
                part = f"split{path or '^'}"
                left = self._grow(idx[go_left], depth + 1, scope.child(part, "L"), path + "L")
                right = self._grow(idx[~go_left], depth + 1, scope.child(part, "R"), path + "R")
                return bin_split(j, key, left, right)
        counts = np.bincount(y, minlength=K)
        eps_leaf = c["budget"]["leaf"]
        pf = PermuteAndFlip(self._leaf_mechanism_epsilon(eps_leaf), 1.0, monotonic=True)
        label = pf.sample(counts.astype(float), c["rng"])
        c["ledger"].charge(f"leaf{path or '^'}", "PermuteAndFlip(monotonic)", eps_leaf, scope=scope,
                           delta=PermuteAndFlip(eps_leaf, 1.0, monotonic=True).residual_delta(K),
                           note="section IV-C; leaves partition the records; float flip probabilities")
        return leaf(int(label))

    def _best_split(self, idx, y, scope, path):
        """Noisy histograms of every feature and the least-Gini candidate (Algorithm 1 lines 11-12)."""
        c = self._ctx
        K, rng = c["K"], c["rng"]
        best, best_gini = None, None
        for j, B in enumerate(c["n_bins"]):
            cat = j in c["cats"]
            eps_j = c["budget"]["node_cat" if cat else "node_num"]
            exact = np.bincount(node_rows(c["codes"][j], idx), minlength=B * K)  # bin * K + class of every record
            if eps_j not in c["noise"]:  # one mechanism per budget in a fit (stateless: the same draws)
                c["noise"][eps_j] = TwoSidedGeometric(eps_j, 1.0)
            H = np.maximum(c["noise"][eps_j].sample(exact, rng), 0).reshape(B, K).astype(float)
            c["ledger"].charge(f"histogram[{j}]{path or '^'}", "TwoSidedGeometric", eps_j, scope=scope,
                               note="Eq. 4; one record changes one count of each feature's histogram")
            order = self._category_order(H, exact.reshape(B, K)) if cat and K == 2 else np.arange(B)
            L = np.cumsum(H[order], axis=0)[:-1]
            R = H.sum(axis=0)[None, :] - L
            nL, nR = L.sum(axis=1), R.sum(axis=1)
            ok = self._candidates_ok(nL, nR, exact.reshape(B, K)[order])
            if not np.any(ok):
                continue
            with np.errstate(divide="ignore", invalid="ignore"):
                gini = (nL - (L ** 2).sum(axis=1) / nL + nR - (R ** 2).sum(axis=1) / nR) / (nL + nR)
            gini = np.where(ok, gini, math.inf)
            # ties are exact (reference.ties): the float Ginis only screen, the first exact minimum wins
            big = H.max() >= EXACT_COUNT  # float squares no longer exact: compare every candidate exactly
            if big:
                gini = np.where(ok, 0.0, math.inf)
            s = first_minimum(gini, lambda i: weighted_gini(L[i], R[i]))
            if np.isnan(gini[s]):  # an empty noisy side (a mutant's filter lets it through): 0/0 loses
                continue
            if best is not None:
                if big or best_gini[2] or abs(gini[s] - best_gini[0]) <= TIE_WINDOW:
                    if not weighted_gini(L[s], R[s]) < weighted_gini(*best_gini[1]):
                        continue  # strict: the first feature keeps an exact tie
                elif gini[s] > best_gini[0]:
                    continue
            best_gini = (gini[s], (L[s].copy(), R[s].copy()), big)  # float, exact sides, exact-only
            left_bins = np.sort(order[: s + 1])
            key = s if not cat or K != 2 else tuple(int(b) for b in left_bins)
            best = (j, key, left_bins)
        return best

    def _node_bins(self, idx, j):
        """The bin ids of feature ``j`` of the records ``idx`` during ``fit`` (for a subclass's ``_best_split``)."""
        return (self._ctx["codes"][j][idx] // self._ctx["K"]).astype(np.int64)

    # ------------------------------------------------------------------ hooks (overridden only by audit mutants)
    def _bounds_for_fit(self, bounds, Z):
        """The public bounds, unchanged (never moved by the data)."""
        return bounds

    def _bin_codes(self, col, edges, labels, K, n_bins):
        """``bin * K + label`` of every record (:func:`reference.privatree.codes.bin_codes`): bin ``b`` holds
        ``E[b-1] < x <= E[b]``; a categorical feature (``edges`` None) is binned by its codes."""
        return bin_codes(col, edges, labels, K, n_bins)

    def _leaf_mechanism_epsilon(self, eps_leaf):
        """Epsilon given to each leaf's permute-and-flip: the charged ``eps_leaf``."""
        return eps_leaf

    @staticmethod
    def _category_order(H, exact):
        """Binary classes: categories by noisy class-1 share, 0.5 when empty, ties by code (section IV-A, A5);
        the float shares order exactly below ``2^26`` records a bin (:func:`reference.ties.exact_shares_safe`)."""
        tot = H.sum(axis=1)
        if not exact_shares_safe(tot):  # float shares could round two different shares together
            return share_order(H)
        share = np.divide(H[:, 1], tot, out=np.full(H.shape[0], 0.5), where=tot != 0)
        return np.argsort(share, kind="stable")

    def _candidates_ok(self, nL, nR, exact_ordered):
        """Candidates whose *noisy* side totals reach ``min_samples_leaf`` (post-processing, spec A6)."""
        floor = max(self.min_samples_leaf, 1e-12)
        return (nL >= floor) & (nR >= floor)

    # ------------------------------------------------------------------ outputs
    def _bins_for_predict(self, X):
        check_fitted(self)
        X = check_X(self, X, reset=False, numeric=not self.categories_)
        Z, _ = self._encode(X, self.categories_, self.bounds_, fitting=False)
        if Z.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {Z.shape[1]} features, expected {self.n_features_in_}")
        bins = np.empty(Z.shape, dtype=np.int64)
        for j in range(Z.shape[1]):
            if j in self.categories_:
                bins[:, j] = Z[:, j].astype(np.int64)
            else:
                bins[:, j] = np.searchsorted(self.bin_edges_[j], Z[:, j], side="left")
        return bins

    def predict_proba(self, X):
        """One-hot of the leaf label (section IV-C)."""
        bins = self._bins_for_predict(X)  # NotFittedError before fit
        labels = predict_values(self.tree_, bins)
        out = np.zeros((len(labels), self.classes_.size))
        out[np.arange(len(labels)), labels] = 1.0
        return out

    def predict(self, X):
        """Class of each row: numerical ``x <= threshold`` and categorical ``x in L`` go left."""
        check_fitted(self)
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]

    def batched_release_sampler(self, edges=None):
        """The fast path (:mod:`reference.fast_path`): a
        :class:`reference.privatree.batch.PrivaTreeBatch` drawing many releases
        ``release(edges)`` of this estimator's parameters at once, or ``None``
        for a subclass that overrides a step of Algorithm 1 (the batch would
        not run its code).
        """
        from reference.fast_path import registered

        params = {k: v for k, v in self.get_params(deep=False).items() if k != "random_state"}
        sampler = registered(PrivaTreeClassifier)(edges=edges, estimator=type(self), **params)
        return sampler if sampler.vectorised else None

    def release(self, edges=None):
        """The published model as nested tuples (hashable, canonical).

        ``("node", feature, key, left, right)`` with ``key`` the last bin id of
        the left side (numerical and multiclass categorical features) or the
        sorted tuple of left category codes (binary categorical); ``("leaf",
        class_index)``. ``edges=None`` omits the numerical bin edges (the tree
        over bin ids, post-processing of the model); ``edges="exact"`` adds them
        rounded to 6 decimals; an integer ``G`` adds, per edge, which of ``G``
        equal cells of its public range it falls in.
        """
        check_fitted(self)
        if edges is None:
            return nested(self.tree_)
        feats = []
        for j, e in sorted(self.bin_edges_.items()):
            if edges == "exact":
                feats.append((j, tuple(round(float(v), 6) for v in e)))
            else:
                feats.append((j, tuple(int(v) for v in edge_cells(e, self.bounds_[j], int(edges)))))
        return (tuple(feats), nested(self.tree_))
