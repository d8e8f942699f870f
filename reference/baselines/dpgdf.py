"""DPGDF (Xin et al. 2019) as re-implemented by the PrivaTree authors (spec/privatree.md section 3.4).

Categorical features only, binary classes. Written from the spec's description:

* budget: ``eps_node = eps / (2 d)`` per level, ``eps_leaf = eps / 2``;
* a node is a leaf at depth ``d``, when it is pure, or when it has fewer than
  ``min_samples_split = 11`` records (data-dependent: not DP, see
  ``privacy_leaks_``), or when no candidate is left;
* candidates are one-vs-rest pairs ``(j, c)`` (``x_j == c`` goes left) not yet
  used on the path; utility ``0.5 - Gini`` on exact counts with global
  sensitivity 0.5; selection by non-monotone permute-and-flip with ``eps_node``
  (the code uses PF where the paper's Table I says EM);
* leaves: exponential mechanism with "smooth sensitivity"
  ``S = exp(-eps_leaf (N_(1) - N_(2)))`` on utilities ``1[N_k = N_(1)]``
  (monotonic form): not rigorously epsilon-DP (spec A15).

The ledger records the budget the method claims (``eps``) and charges the
stopping rule and the leaf rule, listed in ``privacy_leaks_``, ``epsilon =
inf`` (not DP for any epsilon), so its total is infinite.
"""
from __future__ import annotations

import math

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

from reference.randomness import PublishSafeMixin, fit_rng
from reference.baselines._gini import one_vs_rest_gini_utility
from reference.validation import (BinaryOnlyMixin, category_codes, check_fitted, check_max_depth,
                                  check_positive_finite, check_X, check_y, facts_by_index, shown)
from reference.ledger import PrivacyLedger, Scope
from reference.tree import leaf as leaf_node
from reference.tree import nested, predict_values, split
from reference.mechanisms import ExponentialMechanism, PermuteAndFlip

__all__ = ["DPGDFClassifier"]


class DPGDFClassifier(PublishSafeMixin, BinaryOnlyMixin, ClassifierMixin, BaseEstimator):
    """DPGDF tree (categorical features only, two classes).

    Parameters
    ----------
    epsilon : float
    max_depth : int
    categories : dict, feature index -> category values (every feature)
    classes : two labels
    min_samples_split : int, default 11
    random_state : int, Generator or None
        Privacy first: the fit's noise comes from fresh OS entropy, whatever this holds, unless seeded fits are
        on (``reference.randomness.seeded_fits``, used by the auditor and reproductions): then an integer seeds
        the fit's stream and a Generator spawns its child (never drawn from or kept), and the seed is a secret key.
        The stream is discarded after fit; a fitted model's pickle drops ``random_state``.

    References
    ----------
    Xin, Yang, Wang, Zhang (2019); PrivaTree (Vos et al. 2023) Table I
    and section VI; spec/privatree.md 3.4 and A15.
    """

    def __init__(self, epsilon=1.0, max_depth=4, *, categories=None, classes=None, min_samples_split=11,
                 random_state=None):
        self.epsilon = epsilon
        self.max_depth = max_depth
        self.categories = categories
        self.classes = classes
        self.min_samples_split = min_samples_split
        self.random_state = random_state

    def fit(self, X, y):
        eps = check_positive_finite("epsilon", self.epsilon)
        d = check_max_depth(self.max_depth)
        if self.classes is None or len(set(self.classes)) != 2:
            raise ValueError(f"classes must list exactly two labels, got {shown(self.classes)}: Only binary "
                             "classification is supported (DPGDF is binary).")
        X = np.asarray(check_X(self, X, reset=True, numeric=False), dtype=object)
        cats = dict(facts_by_index(self, "categories", self.categories or {}, X.shape[1]))
        if sorted(cats) != list(range(X.shape[1])):
            raise ValueError("categories is required for every feature: DPGDF handles categorical features only")
        codes = np.empty(X.shape, dtype=np.int64)
        for j in range(X.shape[1]):
            lookup = {v: c for c, v in enumerate(cats[j])}
            col = [lookup.get(v, -1) for v in X[:, j].tolist()]
            if -1 in col:
                raise ValueError(f"X[:, {j}] holds {shown(X[col.index(-1), j])}, not among categories[{j}]")
            codes[:, j] = col
        classes = np.asarray(list(self.classes))
        pos = {c: k for k, c in enumerate(classes.tolist())}
        try:
            yk = np.array([pos[v] for v in check_y(self, y, X.shape[0]).tolist()], dtype=np.int64)
        except KeyError as e:
            raise ValueError(f"y holds the label {shown(e.args[0])}, not among classes") from None
        rng = fit_rng(self.random_state, self)  # a fresh child stream, discarded with the fit (reference.randomness)
        eps_node = eps / (2 * d) if d else 0.0
        eps_leaf = eps / 2 if d else eps
        ledger = PrivacyLedger("add-remove")
        all_pairs = [(j, c) for j in range(X.shape[1]) for c in range(len(cats[j]))]

        def leaf(idx, scope, path):
            n = np.bincount(yk[idx], minlength=2)
            top = np.sort(n)[::-1]
            S = math.exp(-eps_leaf * (top[0] - top[1]))
            u = (n == top[0]).astype(float)
            ledger.charge(f"leaf{path or '^'}", "Exponential(smooth sensitivity)", eps_leaf, scope=scope,
                          sensitivity=max(S, 1e-300), note="smooth sensitivity: not rigorously DP")
            if S < 1e-300:  # exp(eps u / S) is then a point mass on the unique majority (the limit of the law)
                return leaf_node(int(np.argmax(n)))
            return leaf_node(int(ExponentialMechanism(eps_leaf, S, monotonic=True).sample(u, rng)))

        def grow(idx, depth, used, scope, path):
            yy = yk[idx]
            cand = [p for p in all_pairs if p not in used]
            if depth == d or idx.size < self.min_samples_split or np.unique(yy).size <= 1 or not cand:
                return leaf(idx, scope, path)
            util = one_vs_rest_gini_utility(codes, idx, yy, cand)
            k = PermuteAndFlip(eps_node, 0.5, monotonic=False).sample(util, rng)
            ledger.charge(f"split{path or '^'}", "PermuteAndFlip", eps_node, scope=scope, sensitivity=0.5,
                          delta=PermuteAndFlip(eps_node, 0.5).residual_delta(len(util)))
            j, c = cand[k]
            go = codes[idx, j] == c
            part = f"split{path or '^'}"
            return split(j, grow(idx[go], depth + 1, used | {(j, c)}, scope.child(part, "L"), path + "L"),
                         grow(idx[~go], depth + 1, used | {(j, c)}, scope.child(part, "R"), path + "R"),
                         categories=(c,), key=c)

        self.tree_ = grow(np.arange(len(yk)), 0, frozenset(), Scope.root(), "")
        self.classes_, self.categories_, self.n_features_in_ = classes, cats, X.shape[1]
        self.privacy_ledger_ = ledger
        self.privacy_leaks_ = ["data-dependent stopping (pure node, fewer than min_samples_split records)",
                               "smooth-sensitivity leaf labels"]
        for leak in self.privacy_leaks_:
            ledger.charge_not_private("leak", leak)
        return self

    def predict(self, X):
        X = np.asarray(check_X(self, X, reset=False, numeric=False), dtype=object)
        codes = np.empty(X.shape, dtype=np.int64)  # an unseen value is -1: it goes right everywhere
        for j in range(X.shape[1]):
            codes[:, j] = category_codes(X[:, j].tolist(), self.categories_[j])
        return self.classes_[predict_values(self.tree_, codes)]

    def release(self):
        """``("node", feature, category_code, left, right)`` / ``("leaf", class_index)``."""
        check_fitted(self)
        return nested(self.tree_)
