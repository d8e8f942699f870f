"""Issue 17, findings 6 and 7.

Finding 6: ``fit`` on an empty dataset (no records, the right number of columns) must return a
valid model in every learner that claims DP under add/remove neighbours: raising tells {x} from
the empty set with certainty. The model is drawn from noise alone and charged as usual.

Finding 7: no fitted attribute may hold an exact private count. The scan below walks every
fitted learner's attributes (``vars``, nested lists, tuples, dicts, arrays and objects) on a
dataset where exactly ``CLIPPED`` feature values and ``CLIPPED`` labels lie outside the public
bounds, and collects every integer-valued scalar it finds; the exact clipped count must not be
among them across several seeds (a released noisy count equals it with small probability, so
it is required to differ in at least one of the seeds; a kept exact count equals it in all).
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from reference.baselines.bdpt import BDPTClassifier
from reference.baselines.diffprivlib_tree import RandomTreePFClassifier
from reference.baselines.dp_ert import DPExtraTreesClassifier, DPExtraTreesRegressor
from reference.baselines.dpgdf import DPGDFClassifier
from reference.baselines.phist import PHISTRegressor
from reference.diprime import DiPriMeForestClassifier, DiPriMeForestRegressor
from reference.lpdt import LPDTRegressor
from reference.privatree import PrivaTreeClassifier
from reference.random_trees import RandomDecisionForestClassifier

B2 = [(0.0, 1.0), (0.0, 1.0)]
CATS = {0: [0.0, 1.0], 1: [0.0, 1.0, 2.0]}
RNG = np.random.default_rng(0)
XP, YP = RNG.random((40, 2)), RNG.random(40) * 2 - 1  # LPDT's public sample

LEARNERS = {
    "PrivaTree": (lambda s: PrivaTreeClassifier(1.0, 2, bounds=B2, classes=[0, 1], n_public=50, random_state=s),
                  "clf", None),
    "PrivaTree uniform": (lambda s: PrivaTreeClassifier(1.0, 2, bounds=B2, classes=[0, 1], binning="uniform",
                                                        epsilon_shares=(0.0, 0.5, 0.5), random_state=s), "clf", None),
    "DiPriMe regressor": (lambda s: DiPriMeForestRegressor(1.0, 2, 2, bounds=B2, target_bounds=(-1.0, 1.0),
                                                           random_state=s), "reg", None),
    "DiPriMe classifier": (lambda s: DiPriMeForestClassifier(1.0, 2, 2, bounds=B2, classes=[0, 1],
                                                             random_state=s), "clf", None),
    "DiPriMe flip": (lambda s: DiPriMeForestClassifier(1.0, 2, 2, variant="flip", bounds=B2, classes=[0, 1],
                                                       random_state=s), "clf", None),
    "DP-ERT regressor": (lambda s: DPExtraTreesRegressor(1.0, 2, 2, bounds=B2, target_bounds=(-1.0, 1.0),
                                                         random_state=s), "reg", None),
    "DP-ERT classifier": (lambda s: DPExtraTreesClassifier(1.0, 2, 2, bounds=B2, classes=[0, 1], random_state=s),
                          "clf", None),
    "random forest": (lambda s: RandomDecisionForestClassifier(3, 2, bounds=B2, classes=[0, 1], random_state=s),
                      "clf", None),
    "LPDT": (lambda s: LPDTRegressor(1.0, 2, 1, (-1.0, 1.0), B2, random_state=s), "reg", "public"),
    "PHIST": (lambda s: PHISTRegressor(1.0, 2, (-1.0, 1.0), B2, random_state=s), "reg", None),
    "DiffPrivLib-style tree": (lambda s: RandomTreePFClassifier(1.0, 2, bounds=B2, classes=[0, 1], random_state=s),
                               "clf", None),
    "BDPT": (lambda s: BDPTClassifier(1.0, 2, classes=[0, 1], random_state=s), "clf", None),
    "DPGDF": (lambda s: DPGDFClassifier(1.0, 2, categories=CATS, classes=[0, 1], random_state=s), "cat", None),
}


def _fit(name, X, y, seed):
    make, _, public = LEARNERS[name]
    model = make(seed)
    return model.fit(X, y, XP, YP) if public else model.fit(X, y)


@pytest.mark.parametrize("name", sorted(LEARNERS))
def test_fit_on_no_records_returns_a_model_drawn_from_noise(name):
    """Finding 6: no error on the empty set; the model predicts, and its ledger is charged as usual."""
    _, task, _ = LEARNERS[name]
    X, y = np.empty((0, 2)), np.empty(0, dtype=float if task == "reg" else int)
    model = _fit(name, X, y, 0)
    probe = np.array([[0.0, 0.0], [1.0, 2.0]]) if task == "cat" else np.array([[0.2, 0.7], [0.9, 0.1]])
    pred = model.predict(probe)
    assert pred.shape == (2,)
    if task == "reg":
        assert np.all((pred >= -1.0) & (pred <= 1.0))
    else:
        assert set(np.asarray(pred).tolist()) <= {0, 1}
    assert model.privacy_ledger_.total_epsilon() > 0  # charged as usual, never free
    # the same fit on one record is possible too, so the pair ({x}, {}) has a valid release on both sides
    one = (np.array([[0.0, 1.0]]) if task == "cat" else np.array([[0.5, 0.5]]), np.array([1]))
    _fit(name, *one, 0).predict(probe)


def _integers_in(obj, seen=None, depth=0):
    """Every integer-valued finite scalar reachable from ``obj``'s attributes (ints, floats, arrays)."""
    seen = set() if seen is None else seen
    if id(obj) in seen or depth > 12:
        return []
    seen.add(id(obj))
    if isinstance(obj, (bool, np.bool_, str, bytes, type(None), np.random.Generator)) or callable(obj):
        return []
    if isinstance(obj, (int, float, np.integer, np.floating)):
        v = float(obj)
        return [int(v)] if math.isfinite(v) and v == int(v) else []
    if isinstance(obj, np.ndarray):
        if obj.dtype.kind not in "iuf":
            return [v for item in obj.ravel().tolist() for v in _integers_in(item, seen, depth + 1)]
        flat = obj.astype(float).ravel()
        flat = flat[np.isfinite(flat)]
        return flat[flat == np.round(flat)].astype(int).tolist()
    if isinstance(obj, dict):
        return [v for item in obj.values() for v in _integers_in(item, seen, depth + 1)]
    if isinstance(obj, (list, tuple, set, frozenset)):
        return [v for item in obj for v in _integers_in(item, seen, depth + 1)]
    attrs = getattr(obj, "__dict__", None)
    if attrs is None:
        return []
    return [v for k, item in attrs.items() if not k.startswith("__") for v in _integers_in(item, seen, depth + 1)]


CLIPPED = 23  # an odd count no public fact or shape of these fits equals (n = 60, depth 2, 2 features)


def _clipped_data(task, seed):
    rng = np.random.default_rng(100 + seed)
    X = rng.random((60, 2))
    X[:CLIPPED, 0] += 5.0  # CLIPPED feature values above the public bound 1
    if task == "reg":
        y = rng.random(60) * 2 - 1
        y[:CLIPPED] = 7.0  # CLIPPED labels above the public target bound 1
    else:
        y = (rng.random(60) < 0.5).astype(int)
    return X, y


@pytest.mark.parametrize("name", sorted(n for n in LEARNERS if LEARNERS[n][1] != "cat"))
def test_no_fitted_attribute_holds_the_exact_clipped_count(name):
    """Finding 7: the scan finds the count when it is kept (checked on a planted attribute below),
    and a fitted learner must not hold it in every one of 4 seeds."""
    _, task, _ = LEARNERS[name]
    hits = 0
    for seed in range(4):
        X, y = _clipped_data(task, seed)
        model = _fit(name, X, y, seed)
        hits += CLIPPED in _integers_in(model)
    assert hits < 4, f"{name} keeps an attribute equal to the exact clipped count in every seed"


def test_the_scan_finds_a_kept_exact_count():
    """The negative control: a model that keeps the count (as n_clipped_ did) is caught."""
    X, y = _clipped_data("clf", 0)
    model = _fit("PrivaTree", X, y, 0)
    model.n_clipped_ = np.array([CLIPPED, 0])  # what the fitted attribute held before issue 17
    assert CLIPPED in _integers_in(model)
    forest = _fit("random forest", X, y, 0)
    forest.forest_.counts = np.array([[[[CLIPPED, 1]]]])  # nested: the exact leaf counts of the forest
    assert CLIPPED in _integers_in(forest)
