"""The non-private median forest: DiPriMe's structure with exact medians and exact leaves.

spec/diprime.md section 3.3 ("Median trees"): at each node, ``K`` random
candidate attributes get their exact median split (``np.median`` of the
node's values for a continuous attribute, ``x < median`` going left; the most
balanced proper bipartition for a categorical one), the attribute with the
smallest SSE is chosen, and leaves hold exact means (regression) or class
fractions (classification; uniform when empty). Every tree sees all records
(``partition=False``) unless asked otherwise. NOT private: a reference for
utility only; its ledger is empty.

References
----------
Consul and Williamson 2021 section 4 ("Median");
Consul and Williamson 2020 section 4 ("Median Trees").
"""
from __future__ import annotations

import numpy as np

from reference.diprime.forest import DiPriMeForestClassifier, DiPriMeForestRegressor
from reference.diprime.grower import Budget, TreeGrower, bipartitions
from reference.tree import Node

__all__ = ["MedianForestRegressor", "MedianForestClassifier", "ExactMedianGrower"]


class ExactMedianGrower(TreeGrower):
    """Exact medians, argmin-SSE attribute, exact leaves; charges nothing."""

    def candidate(self, idx, j, rng_j, scope, note):
        x = self.X[idx, j]
        if j in self.categories:
            cats = rng_j
            masks = bipartitions(len(cats))
            counts = np.array([np.count_nonzero(x == c) for c in cats], dtype=float)
            k = int(np.argmin(np.abs(2.0 * (masks @ counts) - x.size)))
            return tuple(c for c, m in zip(cats, masks[k]) if m)
        lo, hi = rng_j
        return float(np.median(x)) if x.size else (lo + hi) / 2.0

    def choose_attribute(self, idx, cand, splits, scope, note) -> int:
        return int(np.argmin([self._split_sse(idx, j, s) for j, s in zip(cand, splits)]))

    def leaf(self, idx, scope, path) -> Node:
        y = self.y[idx]
        if self.n_classes:
            counts = np.bincount(y, minlength=self.n_classes).astype(float)
            return Node(value=counts / counts.sum() if counts.sum() else np.full(self.n_classes, 1 / self.n_classes))
        return Node(value=float(y.mean()) if y.size else float(np.mean(self.target_bounds)))


class _Median:
    _grower = ExactMedianGrower

    def _budget(self, eps_tree, k_eff):
        return Budget(0.0, 0.0, 0.0, k_eff)


class MedianForestRegressor(_Median, DiPriMeForestRegressor):
    """Non-private median forest (regression). Parameters as
    :class:`reference.diprime.DiPriMeForestRegressor`; the privacy parameters are ignored."""

    def __init__(self, n_estimators=10, max_depth=4, max_features=5, partition=False, bounds=None,
                 categories=None, target_bounds=None, random_state=None):
        super().__init__(1.0, n_estimators, max_depth, max_features, 0.5, "exp", "v003", "strict", partition,
                         bounds, categories, target_bounds, random_state)


class MedianForestClassifier(_Median, DiPriMeForestClassifier):
    """Non-private median forest (classification); see :class:`MedianForestRegressor`."""

    def __init__(self, n_estimators=10, max_depth=4, max_features=5, partition=False, bounds=None,
                 categories=None, classes=None, random_state=None):
        super().__init__(1.0, n_estimators, max_depth, max_features, 0.5, "exp", "v003", "strict", partition,
                         bounds, categories, classes, random_state)
