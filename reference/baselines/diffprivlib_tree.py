"""DiffPrivLib-style random decision tree with permute-and-flip leaves (PrivaTree's "DiffPrivLib" baseline).

As described in spec/privatree.md section 3.2 (diffprivlib 0.6.2
``DecisionTreeClassifier``; PrivaTree, Vos et al. 2023, section
III-A: "creates random decision nodes and uses all privacy budget to label
leaves using the permute-and-flip mechanism"), written from that description:

1. clip X to the public ``bounds``;
2. a complete tree of depth ``d`` drawn without the data: each internal node
   takes a feature uniformly at random and a threshold uniform in that
   feature's range *within the node's cell* (the left child's upper bound and
   the right child's lower bound become the threshold);
3. every leaf is labelled by monotone permute-and-flip on its class counts with
   the whole ``epsilon`` (leaves partition the records: parallel composition).
   A leaf no record reaches gets PF on zero counts, i.e. a uniform label, the
   same law diffprivlib's uniform random label has.

Epsilon-DP under add/remove (one record changes one count of one leaf by 1).
"""
from __future__ import annotations


import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

from reference.randomness import PublishSafeMixin, fit_rng
from reference.validation import warn_outside_bounds
from reference.validation import check_fitted, check_max_depth, check_positive_finite, check_X, check_y, facts_by_index, shown
from reference.ledger import PrivacyLedger, Scope
from reference.tree import leaf, nested, predict_values, split
from reference.mechanisms import PermuteAndFlip

__all__ = ["RandomTreePFClassifier"]


class RandomTreePFClassifier(PublishSafeMixin, ClassifierMixin, BaseEstimator):
    """Random tree + permute-and-flip leaves (diffprivlib-style).

    Parameters
    ----------
    epsilon : float
    max_depth : int
    bounds : sequence of (low, high), one per feature (categorical codes included)
    classes : sequence of labels (at least two)
    random_state : int, Generator or None
        Privacy first: the fit's noise comes from fresh OS entropy, whatever this holds, unless seeded fits are
        on (``reference.randomness.seeded_fits``, used by the auditor and reproductions): then an integer seeds
        the fit's stream and a Generator spawns its child (never drawn from or kept), and the seed is a secret key.
        The stream is discarded after fit; a fitted model's pickle drops ``random_state``.

    References
    ----------
    Holohan et al. (2019), diffprivlib; Fletcher and Islam (2017) for random
    trees; McKenna and Sheldon (2020), permute-and-flip; spec/privatree.md 3.2.
    """

    def __init__(self, epsilon=1.0, max_depth=4, *, bounds=None, classes=None, random_state=None):
        self.epsilon = epsilon
        self.max_depth = max_depth
        self.bounds = bounds
        self.classes = classes
        self.random_state = random_state

    def fit(self, X, y):
        eps = check_positive_finite("epsilon", self.epsilon)
        d = check_max_depth(self.max_depth)
        if self.bounds is None:
            raise ValueError("bounds is required: the public (low, high) of every feature")
        if self.classes is None or len(set(self.classes)) < 2:
            raise ValueError(f"classes must list at least two distinct labels, got {shown(self.classes)}")
        X = check_X(self, X, reset=True)  # names, counts, 2-D, finite
        bounds = np.asarray(facts_by_index(self, "bounds", self.bounds, X.shape[1], sequence=True), dtype=float)
        if X.shape[1] != bounds.shape[0]:  # no records is valid: leaves from noise alone
            raise ValueError(f"X must have one column per bounds entry, got shape {X.shape}")
        classes = np.asarray(list(self.classes))
        pos = {c: k for k, c in enumerate(classes.tolist())}
        try:
            yk = np.array([pos[v] for v in check_y(self, y, X.shape[0]).tolist()], dtype=np.int64)
        except KeyError as e:
            raise ValueError(f"y holds the label {shown(e.args[0])}, not among classes") from None
        rng = fit_rng(self.random_state, self)  # a fresh child stream, discarded with the fit (reference.randomness)
        warn_outside_bounds(self, X, bounds)  # to the caller only: the count is private
        X = np.clip(X, bounds[:, 0], bounds[:, 1])
        ledger = PrivacyLedger("add-remove")
        pf = PermuteAndFlip(eps, 1.0, monotonic=True)
        K = classes.size

        def grow(idx, cell, depth, scope, path):
            if depth == d:
                counts = np.bincount(yk[idx], minlength=K).astype(float)
                ledger.charge(f"leaf{path or '^'}", "PermuteAndFlip(monotonic)", eps, scope=scope,
                              delta=pf.residual_delta(K), note="float flip probabilities")
                return leaf(int(pf.sample(counts, rng)))
            j = int(rng.integers(bounds.shape[0]))
            lo, hi = cell[j]
            t = float(rng.uniform(lo, hi))
            go = X[idx, j] <= t
            left_cell, right_cell = cell.copy(), cell.copy()
            left_cell[j, 1] = t
            right_cell[j, 0] = t
            part = f"split{path or '^'}"
            # x <= t goes left: the next double above t is the threshold of reference.tree's x < threshold
            return split(j, grow(idx[go], left_cell, depth + 1, scope.child(part, "L"), path + "L"),
                         grow(idx[~go], right_cell, depth + 1, scope.child(part, "R"), path + "R"),
                         threshold=np.nextafter(t, np.inf), key=t)

        self.tree_ = grow(np.arange(len(yk)), bounds.copy(), 0, Scope.root(), "")
        self.classes_, self.bounds_, self.n_features_in_ = classes, bounds, bounds.shape[0]
        self.privacy_ledger_ = ledger
        return self

    def predict(self, X):
        X = check_X(self, X, reset=False)  # NotFittedError; names, counts, 2-D, finite
        return self.classes_[predict_values(self.tree_, X)]

    def release(self, thresholds=False):
        """The tree as nested tuples; thresholds (data-independent) rounded to 6 decimals, or dropped
        (``thresholds=False``: features and labels only, post-processing of the model)."""
        check_fitted(self)
        if thresholds:
            return nested(self.tree_, key=lambda node: round(node.key, 6))

        def strip(node):
            if node.is_leaf:
                return ("leaf", node.value)
            return ("node", node.feature, strip(node.left), strip(node.right))
        return strip(self.tree_)
