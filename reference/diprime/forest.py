"""DiPriMe median forests: differentially private random trees with private median splits.

Consul and Williamson, "Differentially Private Median Forests for Regression
and Classification" (V000, Consul and Williamson 2020) and "Balance is key:
Private median splits yield high-utility random trees" (V003,
Consul and Williamson 2021), as specified in spec/diprime.md.

Each tree splits every node above ``max_depth`` at a private median of one of
``K = max_features`` random candidate attributes (V003 Algorithm 1), and its
leaves hold Laplace-noised means (regression) or class counts
(classification). The forest fits ``n_estimators`` trees on a random
partition of the records (each tree gets the full epsilon, parallel
composition) or on all records (each tree gets epsilon / n_estimators;
V000 Algorithm 2, V003 Algorithm 2).

Variants (V003 section 3.1 and section 4): ``"base"`` (DiPriMe: EM median with
``eps_s = rho eps / d_max``, uniform attribute), ``"exp"`` (DiPriMeExp: EM
median and EM attribute with score ``-SSE``, ``eps_s = eps_a = rho eps / (2 d_max)``)
and ``"flip"`` (DiPriMeFlip: permute-and-flip for both). ``version="v000"`` is
V000's DiPriMe (Algorithms 1-3: index median, EM attribute, leaf noise
``(B_U - B_L)/(N eps_2)``); it is only available with ``accounting="paper"``
because its median is not differentially private (spec 2.4 (iii)).

Accounting (spec 2.4 and section 5):

* ``"strict"`` (default) is epsilon-DP under add/remove neighbours (V003
  appendix A's relation): the ``K`` candidate medians are charged ``K`` times
  (spec A3: ``eps_s`` is divided by ``K``); the regression leaf is a noisy
  centred sum over a noisy count, each with ``eps_l / 2`` (spec A7), so empty
  leaves need no special case; the DiPriMeFlip median is permute-and-flip over
  ``FLIP_GRID`` public thresholds (spec A6); records go to trees
  independently and uniformly (spec A13).
* ``"paper"`` is exactly as published: one ``eps_s`` for all K candidates
  (V003 section 3.1, "Privacy analysis"), leaf noise ``S/(N eps_l)`` with the
  private count (V000 section 3, ``S = B_U - B_L``; V003 section 3, ``S = 2B``)
  and ``Uniform(B_L, B_U)`` for empty leaves, the authors' DiPriMeFlip median
  (:class:`reference.diprime.mechanisms.AuthorsFlipMedian`), records split
  into equal parts of a random permutation. Adding a record can move others
  between trees, so the ledger composes those trees sequentially with a group
  charge (:func:`charge_equal_parts`: ``(2t - 1) max_i e_i`` in all), not in
  parallel.

The ledger charges every mechanism call at the epsilon it actually uses, so
under ``accounting="paper"`` its total shows the true sequential cost of the
K candidates (``d_max (K eps_s + eps_a) + eps_l``), beside the paper's claim
``epsilon``; the mechanisms that are not DP (V000's index median, the authors'
DiPriMeFlip median, the count-scaled regression leaf) are charged
``epsilon = inf``, so a forest using one has an infinite total.
"""
from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin

from reference.randomness import PublishSafeMixin, fit_rng
from reference.validation import warn_outside_bounds, warn_outside_target_bounds
from reference.validation import (check_choice, check_fitted, check_int, check_pair, check_positive_finite, check_X,
                                  check_y, facts_by_index)
from reference.validation import shown
from reference.diprime.grower import MAX_CATEGORIES, TreeGrower, budget
from reference.tree import route
from reference.ledger import PrivacyLedger, Scope

__all__ = ["DiPriMeForestRegressor", "DiPriMeForestClassifier", "VARIANTS", "VERSIONS", "ACCOUNTINGS",
           "MAX_DEPTH", "charge_equal_parts"]

def charge_equal_parts(ledger: PrivacyLedger, tree_totals) -> None:
    """Charge a forest whose trees read equal parts of one random permutation of the records.

    Adding a record (inserted at a uniform position of the permutation, a coupling that
    preserves the uniform law) moves at most one record across each of the ``t - 1``
    boundaries between parts, so the trees' inputs change by at most ``1 + 2 (t - 1)``
    additions and removals in all, at most three in one tree. By group privacy over that
    coupling the release costs at most ``(2t - 1) max_i e_i``, ``e_i`` tree ``i``'s total:
    the trees' charges are composed sequentially (their scopes overlap: every tree may hold
    any record) and this charge adds the rest, ``(2t - 1) max_i e_i - sum_i e_i``. Parallel
    composition (the papers' ``max_i e_i``) under-counts: issue 17, finding 4.
    """
    t = len(tree_totals)
    top = max(tree_totals, default=0.0)
    if t < 2 or top == float("inf"):
        return
    extra = (2 * t - 1) * top - sum(tree_totals)
    if extra > 0:
        ledger.charge("forest:partition", "equal parts of a random permutation", extra, scope=Scope.root(),
                      note=f"up to {t - 1} records move between the {t} trees when one is added (group privacy)")


VARIANTS = ("base", "exp", "flip")
VERSIONS = ("v003", "v000")
ACCOUNTINGS = ("strict", "paper")
#: deepest tree allowed (2^MAX_DEPTH leaves per tree)
MAX_DEPTH = 20








class _DiPriMeForest(PublishSafeMixin, BaseEstimator):
    """Shared fit and release of the two forests (see the module docstring)."""

    _n_classes = 0

    def __init__(self, epsilon=1.0, n_estimators=10, max_depth=4, max_features=5, rho=0.5, variant="exp",
                 version="v003", accounting="strict", partition=True, bounds=None, categories=None,
                 random_state=None):
        self.epsilon = epsilon
        self.n_estimators = n_estimators
        self.max_depth = max_depth
        self.max_features = max_features
        self.rho = rho
        self.variant = variant
        self.version = version
        self.accounting = accounting
        self.partition = partition
        self.bounds = bounds
        self.categories = categories
        self.random_state = random_state

    # ------------------------------------------------------------------ validation
    def _validate_params(self):
        eps = check_positive_finite("epsilon", self.epsilon)
        check_int("n_estimators", self.n_estimators, 1)
        check_int("max_depth", self.max_depth, 1, MAX_DEPTH)
        check_int("max_features", self.max_features, 1)
        if isinstance(self.rho, bool) or not isinstance(self.rho, Real) or not 0.0 < float(self.rho) < 1.0:
            raise ValueError(f"rho must be a number in (0, 1), got {shown(self.rho)}")
        check_choice("variant", self.variant, VARIANTS)
        check_choice("version", self.version, VERSIONS)
        check_choice("accounting", self.accounting, ACCOUNTINGS)
        if not isinstance(self.partition, (bool, np.bool_)):
            raise ValueError(f"partition must be True or False, got {shown(self.partition)}")
        if self.version == "v000" and self.accounting != "paper":
            raise ValueError("version='v000' needs accounting='paper': its index median is not differentially "
                             "private (V000's Algorithm 3 ignores the gaps' lengths), so it has no strict form; got accounting="
                             f"{shown(self.accounting)}")
        if self.version == "v000" and self.variant != "exp":
            raise ValueError(f"version='v000' is the 'exp' variant (EM attribute choice), got variant={shown(self.variant)}")
        return eps

    def _public_facts(self, m: int):
        """``bounds`` for every numerical feature, ``categories`` for every categorical one."""
        cats = {} if self.categories is None else facts_by_index(self, "categories", self.categories, m)
        if not isinstance(cats, dict):
            raise ValueError(f"categories must be a dict feature index -> category values, got {shown(cats)}")
        categories = {}
        for j, values in cats.items():
            if isinstance(j, bool) or not isinstance(j, Integral) or not 0 <= j < m:
                raise ValueError(f"categories has a key {shown(j)} that is not a feature index in [0, {m - 1}]")
            vals = tuple(float(v) for v in values)
            if len(vals) < 1 or len(set(vals)) != len(vals):
                raise ValueError(f"categories[{j}] must list distinct category values, got {shown(values)}")
            if len(vals) > MAX_CATEGORIES:
                raise ValueError(f"categories[{j}] has {len(vals)} values; at most {MAX_CATEGORIES} are supported "
                                 "(2^(m-1) - 1 candidate bipartitions)")
            categories[int(j)] = vals
        numerical = [j for j in range(m) if j not in categories]
        if numerical and self.bounds is None:
            raise ValueError("bounds is required: the public (low, high) range of every numerical feature "
                             f"(features {numerical}); it is never read from the private data")
        given = facts_by_index(self, "bounds", self.bounds, m)
        raw = given if isinstance(given, dict) else dict(enumerate(given or ()))
        if not isinstance(self.bounds, dict) and self.bounds is not None and len(self.bounds) != m:
            raise ValueError(f"bounds has {len(self.bounds)} entries but X has {m} features")
        bounds = {}
        for j in numerical:
            if raw.get(j) is None:
                raise ValueError(f"bounds[{j}] is missing: the public (low, high) range of numerical feature {j}")
            bounds[j] = check_pair(f"bounds[{j}]", raw[j])
        return bounds, categories

    def _validate_X(self, X, bounds, categories):
        X = np.array(X, dtype=float)
        if X.ndim != 2:  # no records is a valid input: the forest is then drawn from noise alone
            raise ValueError(f"X must be a 2-D array, got shape {X.shape}")
        if not np.all(np.isfinite(X)):
            i, j = np.argwhere(~np.isfinite(X))[0]
            raise ValueError(f"X must be finite, found X[{i}, {j}] = {shown(X[i, j])}")
        for j, vals in categories.items():
            bad = ~np.isin(X[:, j], vals)
            if bad.any():
                raise ValueError(f"X[:, {j}] has the value {shown(X[bad, j][0])}, not in categories[{j}] = {list(vals)}")
        clipped = 0
        for j, (lo, hi) in bounds.items():
            out = (X[:, j] < lo) | (X[:, j] > hi)
            clipped += int(out.sum())
            X[:, j] = np.clip(X[:, j], lo, hi)
        return X, clipped

    # ------------------------------------------------------------------ fit
    def _fit(self, X, y_enc, target_bounds):
        eps = self._validate_params()
        X = check_X(self, X, reset=True)  # names, counts, 2-D, finite
        m = X.shape[1]
        bounds, categories = self._public_facts(m)
        warn_outside_bounds(self, X, bounds, stacklevel=4)  # to the caller only: the count is private
        X, _ = self._validate_X(X, bounds, categories)  # the clipped count is private: not kept
        if y_enc.shape != (X.shape[0],):
            raise ValueError(f"y must have shape ({X.shape[0]},), got {y_enc.shape}")
        rng = fit_rng(self.random_state, self)  # a fresh child stream, discarded with the fit (reference.randomness)
        t = int(self.n_estimators)
        ledger = PrivacyLedger("add-remove")
        k_eff = min(int(self.max_features), m)
        eps_tree = eps if self.partition else eps / t
        self.budget_ = self._budget(eps_tree, k_eff)
        n = X.shape[0]
        if not self.partition:
            parts = [np.arange(n)] * t
        elif self.accounting == "strict":
            owner = rng.integers(0, t, size=n)  # each record to a uniform tree, independently (spec A13)
            parts = [np.flatnonzero(owner == i) for i in range(t)]
        else:
            parts = np.array_split(rng.permutation(n), t)  # the authors' equal parts
        equal_parts = self.partition and self.accounting == "paper"
        self.estimators_ = []
        tree_totals = []
        for i, part in enumerate(parts):
            by_record = self.partition and not equal_parts
            scope = Scope.root().child("forest:records", f"tree{i}", by_value=False) if by_record else Scope.root()
            tree_ledger = PrivacyLedger("add-remove") if equal_parts else ledger
            grower = self._grower(X[part], y_enc[part], bounds, categories, self._n_classes, target_bounds,
                                int(self.max_depth), k_eff, self.variant, self.version, self.accounting,
                                self.budget_, tree_ledger, scope, f"t{i}:", rng)
            self.estimators_.append(grower.grow())
            if equal_parts:
                tree_totals.append(tree_ledger.total_epsilon())
                ledger.extend(tree_ledger)
        if equal_parts:
            charge_equal_parts(ledger, tree_totals)
        self.privacy_ledger_ = ledger
        self.bounds_, self.categories_ = bounds, categories
        self.n_features_in_ = m
        self.paper_epsilon_ = eps  # what the papers claim for every configuration
        return self

    #: the tree grower (the baselines of reference.baselines substitute theirs)
    _grower = TreeGrower

    def _budget(self, eps_tree, k_eff):
        return budget(eps_tree, float(self.rho), int(self.max_depth), self.variant, self.version, self.accounting,
                      k_eff)

    def _check_fitted(self):
        check_fitted(self)  # sklearn's NotFittedError (a ValueError)

    def _leaf_values(self, X) -> np.ndarray:
        """Leaf values of every tree at every row: (trees, n) or (trees, n, C)."""
        X = check_X(self, X, reset=False)  # NotFittedError; names, counts; NaN rows refused
        shape = (X.shape[0], self._n_classes) if self._n_classes else (X.shape[0],)
        return np.stack([route(tree, X, np.empty(shape)) for tree in self.estimators_])

    # ------------------------------------------------------------------ release
    def batched_release_sampler(self, bins: int | None = None, leaf_bins: int | None = None):
        """The fast path (:mod:`reference.fast_path`): a
        :class:`reference.diprime.batch.DiPriMeBatch` drawing many releases
        ``release(bins, leaf_bins)`` at once, or ``None`` for categorical
        features and for any subclass that defines a method of its own (DP-ERT,
        the median forest, audit mutants: the batch would not run their code).
        """
        from reference.fast_path import overrides_nothing, registered

        base = DiPriMeForestRegressor if isinstance(self, DiPriMeForestRegressor) else DiPriMeForestClassifier
        if not overrides_nothing(type(self), base) or self.categories:
            return None
        params = {k: v for k, v in self.get_params(deep=False).items() if k != "random_state"}
        return registered(base)("regression" if base is DiPriMeForestRegressor else "classification", bins=bins,
                                leaf_bins=leaf_bins, **params)

    def release(self, bins: int | None = None, leaf_bins: int | None = None) -> tuple:
        """Everything the model publishes, canonical and hashable.

        One tuple per tree, its nodes in preorder: ``("split", feature, where)``
        and ``("leaf", value)``. With ``bins=None``, ``where`` is the threshold
        (or the tuple of categories sent left) and leaf values are floats
        rounded to 6 decimals. With an integer ``bins`` (for audits: discrete
        outcomes that can be counted), thresholds become their bin on a grid of
        ``bins`` equal cells over the feature's public range, regression leaves
        the code ``"low"``/``"high"`` at a target bound or their bin of ``bins``
        cells, class probabilities their bins. ``leaf_bins`` (default ``bins``)
        sets the leaves' grid apart from the thresholds'. Both are post-processing.
        """
        self._check_fitted()
        if bins is not None:
            check_int("bins", bins, 1)
        leaf_bins = bins if leaf_bins is None else check_int("leaf_bins", leaf_bins, 1)
        return tuple(tuple(self._release_node(t, bins, leaf_bins, [])) for t in self.estimators_)

    def _release_node(self, node, bins, leaf_bins, out):
        if node.is_leaf:
            out.append(("leaf", self._release_leaf(node.value, leaf_bins)))
            return out
        if node.categorical:
            where = tuple(float(c) for c in node.left_categories)
        elif bins is None:
            where = round(float(node.threshold), 6)
        else:
            lo, hi = self.bounds_[node.feature]
            where = min(bins - 1, int((node.threshold - lo) / (hi - lo) * bins))
        out.append(("split", int(node.feature), where))
        self._release_node(node.left, bins, leaf_bins, out)
        self._release_node(node.right, bins, leaf_bins, out)
        return out


class DiPriMeForestRegressor(RegressorMixin, _DiPriMeForest):
    """DiPriMe median forest for regression (V003 Algorithms 1-2; V000 Algorithms 1-3).

    Parameters
    ----------
    epsilon : float
        Total privacy budget of the forest (add/remove neighbours).
    n_estimators : int
        Number of trees ``N_T``.
    max_depth : int
        ``d_max``: every tree has ``2^d_max`` leaves (root depth 0), in [1, 20].
    max_features : int
        ``K``, candidate attributes per split (ignored by ``variant="base"``).
    rho : float in (0, 1)
        Share of epsilon spent on splits (V000 section 3, V003 section 4).
    variant : {"base", "exp", "flip"}
        DiPriMe, DiPriMeExp, DiPriMeFlip (V003 section 3.1).
    version : {"v003", "v000"}
        ``"v000"`` needs ``accounting="paper"`` and ``variant="exp"``.
    accounting : {"strict", "paper"}
        See the module docstring.
    partition : bool
        Trees on disjoint random parts of the records (full epsilon each) or on
        all records (epsilon / n_estimators each).
    bounds : sequence of (low, high) or dict feature -> (low, high)
        Public range of every numerical feature (entries of categorical
        features may be None). Values outside are clipped (how many is private and not kept).
    categories : dict feature index -> sequence of numeric category values
        Public category set of every categorical feature (at most 12 values).
    target_bounds : (B_L, B_U)
        Public range of the target; targets outside are clipped (never used to
        widen it; how many is private and not kept).
    random_state : None, int or numpy Generator
        Privacy first: the fit's noise comes from fresh OS entropy, whatever this holds, unless seeded fits are
        on (``reference.randomness.seeded_fits``, used by the auditor and reproductions): then an integer seeds
        the fit's stream and a Generator spawns its child (never drawn from or kept), and the seed is a secret key.
        The stream is discarded after fit; a fitted model's pickle drops ``random_state``.

    Attributes
    ----------
    estimators_ : list of :class:`reference.tree.Node`
    privacy_ledger_ : PrivacyLedger
    budget_ : Budget, the per-call epsilons of each tree

    References
    ----------
    Consul and Williamson 2021 (V003), Algorithms 1-2, section 3.1, section 4 (budgets); Consul and
    Williamson 2020 (V000), Algorithms 1-3, section 3.
    """

    def __init__(self, epsilon=1.0, n_estimators=10, max_depth=4, max_features=5, rho=0.5, variant="exp",
                 version="v003", accounting="strict", partition=True, bounds=None, categories=None,
                 target_bounds=None, random_state=None):
        super().__init__(epsilon, n_estimators, max_depth, max_features, rho, variant, version, accounting,
                         partition, bounds, categories, random_state)
        self.target_bounds = target_bounds

    def fit(self, X, y):
        """Fit the forest on ``(X, y)``; returns ``self``."""
        if self.target_bounds is None:
            raise ValueError("target_bounds is required: the public (low, high) range of the target; "
                             "it is never read from the private data")
        lo, hi = check_pair("target_bounds", self.target_bounds)
        y = check_y(self, y, numeric=True)
        if y.ndim != 1 or not np.all(np.isfinite(y)):
            raise ValueError(f"y must be a 1-D array of finite numbers, got shape {y.shape}")
        self.target_bounds_ = (lo, hi)
        warn_outside_target_bounds(self, y, (lo, hi))
        return self._fit(X, np.clip(y, lo, hi), (lo, hi))

    def predict(self, X) -> np.ndarray:
        """Mean of the trees' leaf values."""
        return self._leaf_values(X).mean(axis=0)

    def _release_leaf(self, value, bins):
        lo, hi = self.target_bounds_
        if bins is None:
            return round(float(value), 6)
        if value <= lo:
            return "low"
        if value >= hi:
            return "high"
        return min(bins - 1, int((value - lo) / (hi - lo) * bins))


class DiPriMeForestClassifier(ClassifierMixin, _DiPriMeForest):
    """DiPriMe median forest for classification, binary or multiclass.

    Leaves hold ``max(0, n_k + Laplace(1/eps_l))`` per class, normalised
    (uniform when all are 0); the forest averages the trees' probabilities
    and predicts the argmax, ties to the first class (V003
    section 3, V000 section 3). The attribute score is the one-hot SSE
    (``N * Gini``, sensitivity 2); under ``accounting="paper"`` with two
    classes, the authors' 0/1 SSE with sensitivity 4.

    Parameters
    ----------
    classes : sequence
        Public class labels (at least two, distinct); a label of ``y`` outside
        them is an error.
    epsilon, n_estimators, max_depth, max_features, rho, variant, version, accounting, partition, bounds, \
categories, random_state
        As for :class:`DiPriMeForestRegressor`.

    References
    ----------
    As for :class:`DiPriMeForestRegressor`; V003 Theorem 2 for the leaf rule.
    """

    def __init__(self, epsilon=1.0, n_estimators=10, max_depth=4, max_features=5, rho=0.5, variant="exp",
                 version="v003", accounting="strict", partition=True, bounds=None, categories=None,
                 classes=None, random_state=None):
        super().__init__(epsilon, n_estimators, max_depth, max_features, rho, variant, version, accounting,
                         partition, bounds, categories, random_state)
        self.classes = classes

    def fit(self, X, y):
        """Fit the forest on ``(X, y)``; returns ``self``."""
        if self.classes is None:
            raise ValueError("classes is required: the public list of class labels")
        classes = np.asarray(list(self.classes))
        if classes.ndim != 1 or classes.size < 2 or np.unique(classes).size != classes.size:
            raise ValueError(f"classes must list at least two distinct labels, got {shown(self.classes)}")
        y = check_y(self, y)
        if y.ndim != 1:
            raise ValueError(f"y must be 1-D, got shape {y.shape}")
        unknown = ~np.isin(y, classes)
        if unknown.any():
            raise ValueError(f"y contains the label {shown(y[unknown][0])}, not in classes {shown(classes.tolist())}")
        self.classes_ = classes
        self._n_classes = classes.size
        index = {c: i for i, c in enumerate(classes.tolist())}
        y_enc = np.fromiter((index[v] for v in y.tolist()), dtype=np.int64, count=y.size)
        return self._fit(X, y_enc, (0.0, 1.0))

    def predict_proba(self, X) -> np.ndarray:
        """Mean over trees of the leaves' normalised noisy class counts."""
        return self._leaf_values(X).mean(axis=0)

    def predict(self, X) -> np.ndarray:
        check_fitted(self)
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]

    def _release_leaf(self, value, bins):
        if bins is None:
            return tuple(round(float(v), 6) for v in value)
        return tuple(min(bins - 1, int(v * bins)) for v in value)
