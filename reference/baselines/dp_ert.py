"""DP-ERT: extremely randomised trees with private leaves, DiPriMe's baseline.

The comparison method of V000 section 4 and V003 section 4 (after Bojarski et
al. 2014; spec/diprime.md section 3.3): every split is drawn without looking
at the data (a uniform active attribute; a threshold uniform on the node's
current public range, or a uniform random proper bipartition of the node's
categories), so splits cost no privacy, and the whole budget goes to the
leaves, which use DiPriMe's leaf mechanisms (:meth:`TreeGrower.leaf`).

Budget (spec A12): every method gets exactly ``epsilon``. With
``partition=False`` (the authors' code: every tree on all records) each tree's
leaves get ``epsilon / n_estimators``; with ``partition=True`` each gets
``epsilon``. ``accounting="strict"`` uses the noisy-sum-over-noisy-count
regression leaf; ``"paper"`` the count-scaled leaf of the authors' code (not DP,
spec 2.4 (ii)).

References
----------
Consul and Williamson 2021 section 4 ("DP-ERT"),
Consul and Williamson 2020 section 4; Geurts, Ernst and Wehenkel (2006).
"""
from __future__ import annotations

from reference.diprime.forest import DiPriMeForestClassifier, DiPriMeForestRegressor
from reference.diprime.grower import Budget, TreeGrower, bipartitions

__all__ = ["DPExtraTreesRegressor", "DPExtraTreesClassifier", "RandomSplitGrower"]


class RandomSplitGrower(TreeGrower):
    """Data-independent splits; leaves as in DiPriMe. Charges only the leaves."""

    def find_split(self, idx, ranges, active, scope, path):
        j = active[int(self.rng.integers(len(active)))]
        if j in self.categories:
            cats = ranges[j]
            masks = bipartitions(len(cats))
            row = masks[int(self.rng.integers(masks.shape[0]))]
            return j, tuple(c for c, m in zip(cats, row) if m)
        lo, hi = ranges[j]
        return j, float(self.rng.uniform(lo, hi))


class _ERT:
    _grower = RandomSplitGrower

    def _budget(self, eps_tree, k_eff):
        return Budget(0.0, 0.0, eps_tree, 1)


class DPExtraTreesRegressor(_ERT, DiPriMeForestRegressor):
    """DP-ERT for regression. Parameters as :class:`reference.diprime.DiPriMeForestRegressor`;
    ``rho``, ``variant``, ``version`` and ``max_features`` are ignored (one uniform
    attribute per split, all of ``epsilon`` on the leaves). ``partition`` defaults to
    False, as in the authors' code."""

    def __init__(self, epsilon=1.0, n_estimators=10, max_depth=4, max_features=1, rho=0.5, variant="base",
                 version="v003", accounting="strict", partition=False, bounds=None, categories=None,
                 target_bounds=None, random_state=None):
        super().__init__(epsilon, n_estimators, max_depth, max_features, rho, variant, version, accounting,
                         partition, bounds, categories, target_bounds, random_state)


class DPExtraTreesClassifier(_ERT, DiPriMeForestClassifier):
    """DP-ERT for classification (noisy class counts at the leaves); see :class:`DPExtraTreesRegressor`."""

    def __init__(self, epsilon=1.0, n_estimators=10, max_depth=4, max_features=1, rho=0.5, variant="base",
                 version="v003", accounting="strict", partition=False, bounds=None, categories=None,
                 classes=None, random_state=None):
        super().__init__(epsilon, n_estimators, max_depth, max_features, rho, variant, version, accounting,
                         partition, bounds, categories, classes, random_state)
