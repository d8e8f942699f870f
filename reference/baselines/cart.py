"""Non-private histogram CART: the epsilon -> infinity limit of PrivaTree*.

The same bins as PrivaTree* (numerical edges: exact quantiles 0.1..0.9 of the
clipped data plus the public upper bound, ``np.quantile`` linear
interpolation; or public equal-width edges), the same candidates ("the first
s+1 bins go left"; binary categorical features ordered by their class-1 share,
ties by code), the same weighted Gini with the first minimum winning (compared exactly on the counts,
:mod:`reference.ties`), depth-only
stopping, and majority leaves (ties to the lowest class index). Written
independently of :mod:`reference.privatree` so that it can serve as its oracle
(spec 7: "PrivaTree* on toy data must equal an exact histogram-CART tree").

Not differentially private. ``release()`` has PrivaTree's format.

References
----------
Breiman, Friedman, Olshen, Stone (1984), CART; PrivaTree (Vos et al. 2023)
section IV and spec/privatree.md section 2.5 for the histogram version.
"""
from __future__ import annotations


import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

from reference.validation import warn_outside_bounds
from reference.validation import (category_codes, check_fitted, check_max_depth, check_X, check_y, facts_by_index,
                                  shown)
from reference.tree import bin_split, leaf, nested, predict_values
from reference.ties import EXACT_COUNT, TIE_WINDOW, weighted_gini

__all__ = ["HistogramCARTClassifier"]


class HistogramCARTClassifier(ClassifierMixin, BaseEstimator):
    """Exact-count histogram CART of depth ``max_depth`` (not private).

    Parameters
    ----------
    max_depth : int
    bounds : sequence of (low, high) or None per feature (None for categorical features)
    categories : dict, feature index -> category values
    classes : sequence of labels
    max_bins : int
    binning : {"quantile", "uniform"}
    min_samples_leaf : int
    """

    #: equal-Gini splits go to the first candidate (feature, then bin); True lets the last win. Only the
    #: oracle's tests set it, to check that the deterministic comparison notices a tie broken the other way.
    _later_ties_win = False

    def __init__(self, max_depth=4, *, bounds=None, categories=None, classes=None, max_bins=10,
                 binning="quantile", min_samples_leaf=1):
        self.max_depth = max_depth
        self.bounds = bounds
        self.categories = categories
        self.classes = classes
        self.max_bins = max_bins
        self.binning = binning
        self.min_samples_leaf = min_samples_leaf

    def fit(self, X, y):
        d = check_max_depth(self.max_depth)
        if self.classes is None:
            raise ValueError("classes is required: the class labels")
        if self.binning not in ("quantile", "uniform"):
            raise ValueError(f"binning must be 'quantile' or 'uniform', got {shown(self.binning)}")
        classes = np.asarray(list(self.classes))
        X = np.asarray(check_X(self, X, reset=True, numeric=not self.categories), dtype=object)
        cats = dict(facts_by_index(self, "categories", self.categories or {}, X.shape[1]))
        if X.shape[0] == 0:
            raise ValueError(f"X must be a non-empty 2-D array, got shape {X.shape}")
        pos = {c: k for k, c in enumerate(classes.tolist())}
        try:
            yk = np.array([pos[v] for v in check_y(self, y, X.shape[0]).tolist()], dtype=np.int64)
        except KeyError as e:
            raise ValueError(f"y holds the label {shown(e.args[0])}, not among classes") from None
        m = X.shape[1]
        given = facts_by_index(self, "bounds", self.bounds, m)
        bounds = given if isinstance(given, dict) else dict(enumerate(given or [None] * m))
        bins, edges, n_bins = np.empty(X.shape, dtype=np.int64), {}, []
        levels = np.linspace(0.0, 1.0, self.max_bins + 1)[1:-1]
        for j in range(m):
            if j in cats:
                lookup = {v: c for c, v in enumerate(cats[j])}
                bins[:, j] = [lookup[v] for v in X[:, j].tolist()]
                n_bins.append(len(cats[j]))
                continue
            if bounds.get(j) is None:
                raise ValueError(f"bounds[{j}] is missing for numerical feature {j}")
            lo, hi = (float(v) for v in bounds[j])
            col = np.clip(X[:, j].astype(float), lo, hi)
            inner = np.quantile(col, levels) if self.binning == "quantile" else np.linspace(lo, hi, self.max_bins + 1)[1:-1]
            e = np.unique(np.concatenate((inner, [hi])))
            edges[j] = e
            bins[:, j] = np.searchsorted(e, col, side="left")
            n_bins.append(e.size)
        warn_outside_bounds(self, X, {j: b for j, b in bounds.items() if j not in cats})  # to the caller only
        self._bins, self._y, self._K, self._cats, self._nb = bins, yk, classes.size, cats, n_bins
        self.tree_ = self._grow(np.arange(len(yk)), 0)
        del self._bins, self._y
        self.classes_, self.bin_edges_, self.categories_ = classes, edges, cats
        self.n_features_in_ = m
        return self

    def _grow(self, idx, depth):
        y = self._y[idx]
        if depth < self.max_depth:
            best, best_g, best_g_float = None, None, np.inf
            for j, B in enumerate(self._nb):
                H = np.zeros((B, self._K))
                np.add.at(H, (self._bins[idx, j], y), 1.0)
                binary_cat = j in self._cats and self._K == 2
                if binary_cat:
                    tot = H.sum(axis=1)
                    share = np.array([H[b, 1] / tot[b] if tot[b] else 0.5 for b in range(B)])
                    order = np.argsort(share, kind="stable")
                else:
                    order = np.arange(B)
                left = np.zeros(self._K)
                right = H.sum(axis=0)
                for s in range(B - 1):
                    left = left + H[order[s]]
                    right = right - H[order[s]]
                    nl, nr = left.sum(), right.sum()
                    if nl < max(self.min_samples_leaf, 1) or nr < max(self.min_samples_leaf, 1):
                        continue
                    g = (nl * (1 - np.sum((left / nl) ** 2)) + nr * (1 - np.sum((right / nr) ** 2))) / (nl + nr)
                    if best is not None and g > best_g_float + TIE_WINDOW and nl + nr < EXACT_COUNT:
                        continue  # clearly worse (reference.ties); near ties are compared exactly below
                    ge = weighted_gini(left, right)
                    if best is None or ge < best_g or (self._later_ties_win and ge == best_g):
                        lb = np.sort(order[: s + 1])
                        best_g, best_g_float = ge, g
                        best = (j, tuple(int(b) for b in lb) if binary_cat else s, lb)
            if best is not None:
                j, key, lb = best
                go = np.isin(self._bins[idx, j], lb)
                return bin_split(j, key, self._grow(idx[go], depth + 1), self._grow(idx[~go], depth + 1))
        counts = np.bincount(y, minlength=self._K)
        return leaf(int(np.argmax(counts)))

    def predict(self, X):
        check_fitted(self)
        X = np.asarray(check_X(self, X, reset=False, numeric=not self.categories_), dtype=object)
        bins = np.empty(X.shape, dtype=np.int64)
        for j in range(X.shape[1]):
            if j in self.categories_:
                bins[:, j] = category_codes(X[:, j].tolist(), self.categories_[j])
            else:
                bins[:, j] = np.searchsorted(self.bin_edges_[j], X[:, j].astype(float), side="left")
        return self.classes_[predict_values(self.tree_, bins)]

    def release(self):
        """The tree in :meth:`reference.privatree.PrivaTreeClassifier.release` format."""
        check_fitted(self)
        return nested(self.tree_)
