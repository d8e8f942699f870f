"""Learner-level candidates for the oracle: whole PrivaTree and DiPriMe releases against the reference learners.

The reference side is always the reference learner (:mod:`reference.privatree`,
:mod:`reference.diprime`) fitted once per draw; the candidates are the
project's batched fast paths (expected: same law) and subtly wrong learners
(expected: different), each changing one detail of Algorithm 1 of PrivaTree
(Vos et al. 2023) or of DiPriMe's leaves:

* the per-level node budget computed as if the tree were one level deeper
  (``(eps - eps_leaf - eps_q) / (d + 1)`` instead of ``/ d``, Eqs. 9-10);
* every numerical threshold one bin to the right of the chosen boundary;
* ties between features of equal noisy Gini broken towards the last feature
  instead of the first (Algorithm 1 lines 11-12 take the first);
* DiPriMe's leaf noise scale 10% too large;

and one outside candidate: IBM diffprivlib's ``DecisionTreeClassifier``
against the reference DiffPrivLib-style baseline
(:mod:`reference.baselines.diffprivlib_tree`), compared through its
predictions at public probe points (present only where diffprivlib is
installed).

The public inputs are tiny (8 records, depth 1) so the reference fits fast
and the releases have few distinct values (a G test on whole releases).
"""
from __future__ import annotations

import dataclasses
from contextlib import contextmanager
from functools import partial

import numpy as np

import reference.privatree.learner as privatree_module
from reference.privatree import PrivaTreeClassifier

__all__ = ["learner_references", "learner_cases", "BudgetOffByOneLevel", "ThresholdOffByOneBin",
           "TiesToLastFeature", "PRIVATREE_PARAMS", "DIPRIME_PARAMS", "diffprivlib_tree"]

#: depth 1, two numerical features on public bounds, uniform (public) bins, explicit shares: few releases
PRIVATREE_PARAMS = dict(epsilon=8.0, max_depth=1, bounds=[(0.0, 1.0)] * 2, classes=[0, 1], binning="uniform",
                        max_bins=4, epsilon_shares=(0.0, 0.5, 0.5))
_X = np.array([0.1, 0.2, 0.3, 0.45, 0.55, 0.7, 0.8, 0.9])
#: two identical columns: the features' exact histograms are equal, so their noisy Ginis tie often
PRIVATREE_INPUTS = [("8 records, twin features", (np.column_stack((_X, _X)), np.array([0, 0, 0, 0, 1, 1, 1, 1]))),
                    ("8 records, one informative feature",
                     (np.column_stack((_X, _X[::-1])), np.array([0, 0, 1, 0, 1, 1, 0, 1])))]


class _Release:
    """A PrivaTree-like estimator fitted per draw, its ``release()`` returned (the target's release format)."""

    def __init__(self, make):
        self.make = make

    def __call__(self, data, rng):
        X, y = data
        return self.make(random_state=rng).fit(X, y).release()

    def __repr__(self):
        return f"_Release({self.make!r})"


@contextmanager
def _budget_one_level_deeper():
    """Within the block, :func:`reference.privatree.budget_split` divides the node budget by ``d + 1``."""
    original = privatree_module.budget_split

    def shifted(epsilon, max_depth, K, **kw):
        b = original(epsilon, max_depth, K, **kw)
        if max_depth >= 1 and b["node_num"] > 0:
            scale = max_depth / (max_depth + 1.0)
            b = dict(b, node_num=b["node_num"] * scale, node_cat=b["node_cat"] * scale)
        return b

    privatree_module.budget_split = shifted
    try:
        yield
    finally:
        privatree_module.budget_split = original


class BudgetOffByOneLevel(PrivaTreeClassifier):
    """Wrong on purpose: the per-level node budget as if the tree had ``max_depth + 1`` split levels."""

    def fit(self, X, y):
        with _budget_one_level_deeper():
            return super().fit(X, y)


class ThresholdOffByOneBin(PrivaTreeClassifier):
    """Wrong on purpose: a numerical split's boundary is moved one bin to the right (when there is one)."""

    def _best_split(self, idx, y, scope, path):
        best = super()._best_split(idx, y, scope, path)
        if best is None or best[0] in self._ctx["cats"]:
            return best
        j, s, _ = best
        s = min(s + 1, self._ctx["n_bins"][j] - 2)
        return j, s, np.arange(s + 1)


class TiesToLastFeature:
    """Wrong on purpose: PrivaTree scanning the features last to first, so equal noisy Ginis go to the last.

    It fits the reference learner on the columns in reverse order (bounds reversed with them) and maps the
    feature indices of the release back.
    """

    def __init__(self, **params):
        self.params = params

    def __call__(self, data, rng):
        X, y = data
        params = dict(self.params, bounds=list(self.params["bounds"])[::-1])
        tree = PrivaTreeClassifier(random_state=rng, **params).fit(X[:, ::-1], y).release()
        return _remap(tree, X.shape[1])


def _remap(node, m):
    if node[0] == "leaf":
        return node
    _, j, key, left, right = node
    return ("node", m - 1 - j, key, _remap(left, m), _remap(right, m))


def _privatree_reference(**params):
    return _Release(partial(PrivaTreeClassifier, **params))


def _privatree_batched(**params):
    from reference.privatree.batch import PrivaTreeBatch

    return PrivaTreeBatch(edges=None, **params)


# ----------------------------------------------------------------------------- DiPriMe
#: the DiPriMe target's strict classification claim with more leaf budget in play (epsilon 8, DiPriMeExp)
DIPRIME_PARAMS = dict(epsilon=8.0, variant="exp", n_estimators=1, max_depth=1, max_features=2,
                      bounds=[(0.0, 1.0)] * 2, target_bounds=(0.0, 1.0))
DIPRIME_BINS = 4


def _diprime_inputs():
    from audit.diprime.claims import X_TINY, Y_REG

    return [("X_TINY (regression)", (X_TINY, Y_REG))]


def _diprime_reference(**params):
    from audit.diprime.claims import ReleaseMechanism
    from reference.diprime import DiPriMeForestRegressor

    return ReleaseMechanism(lambda: DiPriMeForestRegressor(**params), DIPRIME_BINS, DIPRIME_BINS)


def _diprime_batched(leaf_factor: float = 1.0):
    from reference.diprime.batch import DiPriMeBatch

    class Candidate(DiPriMeBatch):
        def _leaves(self, member, y, p, rng):
            if leaf_factor != 1.0:
                p = dict(p, budget=dataclasses.replace(p["budget"], eps_l=p["budget"].eps_l / leaf_factor))
            return super()._leaves(member, y, p, rng)

    return Candidate("regression", bins=DIPRIME_BINS, leaf_bins=DIPRIME_BINS, **DIPRIME_PARAMS)


# ----------------------------------------------------------------------------- diffprivlib's tree
#: depth 2 on two features in [0, 1]; outputs compared: the predictions at four public probe points
DPL_PARAMS = dict(epsilon=1.0, max_depth=2, bounds=[(0.0, 1.0)] * 2, classes=[0, 1])
DPL_PROBE = np.array([[0.2, 0.2], [0.2, 0.8], [0.8, 0.2], [0.8, 0.8]])
DPL_INPUTS = [("8 records, label = x0 > 0.5", (np.column_stack((_X, _X[::-1])), np.array([0, 0, 0, 0, 1, 1, 1, 1])))]


class _Predictions:
    """An estimator fitted per draw (an integer seed from the oracle's generator), its predictions at the probe."""

    def __init__(self, make, probe):
        self.make, self.probe = make, probe

    def __call__(self, data, rng):
        X, y = data
        est = self.make(random_state=int(rng.integers(2**31 - 1))).fit(X, y)
        return tuple(int(v) for v in est.predict(self.probe))


def _dpl_reference(epsilon, max_depth, bounds, classes):
    from reference.baselines.diffprivlib_tree import RandomTreePFClassifier

    return _Predictions(partial(RandomTreePFClassifier, epsilon, max_depth, bounds=bounds, classes=classes),
                        DPL_PROBE)


def diffprivlib_tree(epsilon, max_depth, bounds, classes):
    """IBM diffprivlib's ``DecisionTreeClassifier`` with the same public facts, as an oracle candidate.

    Raises ImportError when diffprivlib is not installed (it needs scikit-learn < 1.6).
    """
    from diffprivlib.models import DecisionTreeClassifier

    lo, hi = np.array(bounds, dtype=float).T
    return _Predictions(partial(DecisionTreeClassifier, max_depth=max_depth, epsilon=epsilon, bounds=(lo, hi),
                                classes=classes), DPL_PROBE)


def learner_references() -> dict:
    """name -> (factory(**params) -> reference mechanism, params, public inputs), as
    :data:`audit.oracle.cases.REFERENCES` (built on call: the DiPriMe inputs import its target)."""
    return {"privatree": (_privatree_reference, PRIVATREE_PARAMS, PRIVATREE_INPUTS),
            "diprime": (_diprime_reference, DIPRIME_PARAMS, _diprime_inputs()),
            "diffprivlib-style-tree": (_dpl_reference, DPL_PARAMS, DPL_INPUTS)}


def learner_cases():
    """``(id, reference, description, make, expected)`` for each learner-level candidate."""
    P = PRIVATREE_PARAMS
    return [
        ("privatree-batched", "privatree", "PrivaTree, the batched fast path (reference.privatree.batch)",
         lambda: _privatree_batched(**P), "same"),
        ("privatree-budget-off-by-one-level", "privatree",
         "PrivaTree with the per-level node budget divided by d + 1 instead of d",
         lambda: _Release(partial(BudgetOffByOneLevel, **P)), "different"),
        ("privatree-threshold-off-by-one-bin", "privatree",
         "PrivaTree with every numerical threshold one bin to the right",
         lambda: _Release(partial(ThresholdOffByOneBin, **P)), "different"),
        ("privatree-ties-to-last-feature", "privatree",
         "PrivaTree breaking equal noisy Ginis towards the last feature (the reference takes the first)",
         lambda: TiesToLastFeature(**P), "different"),
        ("diprime-batched", "diprime", "DiPriMeExp regressor, the batched fast path (reference.diprime.batch)",
         lambda: _diprime_batched(), "same"),
        ("diprime-leaf-noise-1.1", "diprime", "DiPriMeExp regressor with leaf noise scale 10% too large",
         lambda: _diprime_batched(1.1), "different"),
        # diffprivlib 0.6.6 draws a feature uniformly and a threshold uniform in the node's cell, labels each
        # reached leaf by monotone permute-and-flip and each empty leaf uniformly: the baseline's law
        ("diffprivlib-decision-tree", "diffprivlib-style-tree",
         "IBM diffprivlib 0.6.6 DecisionTreeClassifier (predictions at 4 probe points; needs the diffprivlib extra)",
         lambda: diffprivlib_tree(**DPL_PARAMS), "same"),
    ]
