"""BDPT (Guan et al. 2020) as re-implemented by the PrivaTree authors (spec/privatree.md section 3.3).

Binary classes. Written from the spec's description:

* numerical features (leaky, no noise): the sorted *unique* training values
  ``u_0 < u_1 < ...`` of a feature are merged in runs of ``merge_samples = 5``
  into categories (rank ``r`` -> ``r // 5``), with group minima ``T[c] =
  u_{5c}``; at prediction time ``searchsorted(T, x, "right") - 1`` (``-1``
  -> 0). Categorical features are used as given.
* budget: ``eps_node = eps / (2 d)`` per level for split selection and
  ``eps / 2`` for count queries, growing with depth ``t = 0..d``:
  ``eps_t = (eps/2)(1 - 2^(1/3)) 2^(t/3) / (1 - 2^((d+1)/3))``.
* a node is a leaf at depth ``d``, when pure, or when it has fewer than 2
  records (data-dependent: not DP);
* split: one-vs-rest ``(j, c)`` over every category (``x_j == c`` goes left),
  utility ``0.5 - Gini`` (exact), "smooth" sensitivity ``2 n~ / (n~ + 1)^2``
  with ``n~ = max(1, n + Lap(1 / eps_t))``, exponential mechanism with
  ``eps_node`` (non-monotone);
* leaf: ``c~_k = N_k + Lap(1 / eps_t)``; label 1 iff ``c~_1 >= c~_0``.

The ledger records the method's own claim (``eps`` along every path) and
charges each leak listed in ``privacy_leaks_`` ``epsilon = inf`` (not DP for
any epsilon), so its total is infinite.
"""
from __future__ import annotations


import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

from reference.randomness import PublishSafeMixin, fit_rng
from reference.baselines._gini import one_vs_rest_gini_utility
from reference.validation import (BinaryOnlyMixin, category_codes, check_fitted, check_max_depth,
                                  check_positive_finite, check_X, check_y, facts_by_index, shown)
from reference.ledger import PrivacyLedger, Scope
from reference.tree import leaf, nested, predict_values, split
from reference.mechanisms import ExponentialMechanism, TwoSidedGeometric

__all__ = ["BDPTClassifier", "depth_budgets"]


def depth_budgets(epsilon: float, max_depth: int) -> np.ndarray:
    """``eps_t`` for ``t = 0..d`` (sums to ``epsilon / 2``)."""
    t = np.arange(max_depth + 1)
    r = 2.0 ** (1.0 / 3.0)
    return (epsilon / 2) * (1 - r) * r ** t / (1 - r ** (max_depth + 1))


class BDPTClassifier(PublishSafeMixin, BinaryOnlyMixin, ClassifierMixin, BaseEstimator):
    """BDPT tree (two classes).

    Parameters
    ----------
    epsilon : float
    max_depth : int
    categories : dict, optional, feature index -> category values (other features are numerical)
    classes : two labels
    merge_samples : int, default 5
    random_state : int, Generator or None
        Privacy first: the fit's noise comes from fresh OS entropy, whatever this holds, unless seeded fits are
        on (``reference.randomness.seeded_fits``, used by the auditor and reproductions): then an integer seeds
        the fit's stream and a Generator spawns its child (never drawn from or kept), and the seed is a secret key.
        The stream is discarded after fit; a fitted model's pickle drops ``random_state``.

    References
    ----------
    Guan, Sun, Shi, Fang (2020); PrivaTree (Vos et al. 2023) section VI; spec/privatree.md 3.3, A16.
    """

    def __init__(self, epsilon=1.0, max_depth=4, *, categories=None, classes=None, merge_samples=5,
                 random_state=None):
        self.epsilon = epsilon
        self.max_depth = max_depth
        self.categories = categories
        self.classes = classes
        self.merge_samples = merge_samples
        self.random_state = random_state

    def _codes(self, X):
        codes = np.empty(X.shape, dtype=np.int64)
        for j in range(X.shape[1]):
            if j in self.categories_:
                codes[:, j] = category_codes(X[:, j].tolist(), self.categories_[j])
            else:
                c = np.searchsorted(self.group_minima_[j], X[:, j].astype(float), side="right") - 1
                codes[:, j] = np.maximum(c, 0)
        return codes

    def fit(self, X, y):
        eps = check_positive_finite("epsilon", self.epsilon)
        d = check_max_depth(self.max_depth)
        if self.classes is None or len(set(self.classes)) != 2:
            raise ValueError(f"classes must list exactly two labels, got {shown(self.classes)}: Only binary "
                             "classification is supported (BDPT is binary).")
        X = np.asarray(check_X(self, X, reset=True, numeric=not self.categories), dtype=object)
        classes = np.asarray(list(self.classes))
        pos = {c: k for k, c in enumerate(classes.tolist())}
        try:
            yk = np.array([pos[v] for v in check_y(self, y, X.shape[0]).tolist()], dtype=np.int64)
        except KeyError as e:
            raise ValueError(f"y holds the label {shown(e.args[0])}, not among classes") from None
        self.categories_ = dict(facts_by_index(self, "categories", self.categories or {}, X.shape[1]))
        self.group_minima_ = {}
        n_cats = []
        for j in range(X.shape[1]):
            if j in self.categories_:
                n_cats.append(len(self.categories_[j]))
            else:
                col = X[:, j].astype(float)
                if not np.all(np.isfinite(col)):
                    raise ValueError(f"X[:, {j}] must be finite (no NaN or infinity)")
                u = np.unique(col)  # leaky: the data's own values (spec A16)
                self.group_minima_[j] = u[:: self.merge_samples]
                n_cats.append(self.group_minima_[j].size)
        codes = self._codes(X)
        if np.any(codes < 0):
            raise ValueError("X holds a categorical value not among its categories")
        rng = fit_rng(self.random_state, self)  # a fresh child stream, discarded with the fit (reference.randomness)
        eps_t = depth_budgets(eps, d)
        eps_node = eps / (2 * d) if d else 0.0
        ledger = PrivacyLedger("add-remove")
        cand = [(j, c) for j in range(X.shape[1]) for c in range(n_cats[j])]

        def grow(idx, t, scope, path):
            yy = yk[idx]
            tag = path or "^"
            if t == d or idx.size < 2 or np.unique(yy).size <= 1:
                # integer counts with exact integer noise (two-sided geometric): on the lattice Z (issue 17)
                noisy = TwoSidedGeometric(eps_t[t], 1.0).sample(np.bincount(yy, minlength=2), rng)
                ledger.charge(f"leaf{tag}", "TwoSidedGeometric", eps_t[t], scope=scope)
                return leaf(int(noisy[1] >= noisy[0]))
            n_noisy = max(1.0, float(TwoSidedGeometric(eps_t[t], 1.0).sample(int(idx.size), rng)))
            ledger.charge(f"count{tag}", "TwoSidedGeometric", eps_t[t], scope=scope, note="noisy node size")
            sens = 2 * n_noisy / (n_noisy + 1) ** 2
            util = one_vs_rest_gini_utility(codes, idx, yy, cand)
            k = ExponentialMechanism(eps_node, sens).sample(util, rng)
            ledger.charge(f"split{tag}", "Exponential(smooth sensitivity)", eps_node, scope=scope, sensitivity=sens)
            j, c = cand[k]
            go = codes[idx, j] == c
            part = f"split{tag}"
            return split(j, grow(idx[go], t + 1, scope.child(part, "L"), path + "L"),
                         grow(idx[~go], t + 1, scope.child(part, "R"), path + "R"), categories=(c,), key=c)

        self.tree_ = grow(np.arange(len(yk)), 0, Scope.root(), "")
        self.classes_, self.n_features_in_ = classes, X.shape[1]
        self.privacy_ledger_ = ledger
        self.privacy_leaks_ = ["numerical values merged from the data's unique values",
                               "data-dependent stopping (pure node, fewer than 2 records)",
                               "smooth sensitivity from a noisy count for the exponential mechanism"]
        for leak in self.privacy_leaks_:
            ledger.charge_not_private("leak", leak)
        return self

    def predict(self, X):
        check_fitted(self)
        codes = self._codes(np.asarray(check_X(self, X, reset=False, numeric=not self.categories_), dtype=object))
        return self.classes_[predict_values(self.tree_, codes)]

    def release(self):
        """``("node", feature, category_or_group, left, right)`` / ``("leaf", class_index)``."""
        check_fitted(self)
        return nested(self.tree_)
