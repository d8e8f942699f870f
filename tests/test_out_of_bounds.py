"""Records outside the declared public bounds (reference.validation.OutOfBoundsWarning): every learner that takes
``bounds`` or ``target_bounds`` warns the caller of ``fit`` with how many records, which feature and what it does
with them; the model learns exactly what it learns from the records moved where the warning says (clipped to the
bound), so nothing of the count is kept in the release, the ledger or the attributes; in-bounds data (the
auditor's pairs at the bounds included) gives no warning. Deterministic (fixed seeds): no false alarm possible."""
from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest

from reference import OutOfBoundsWarning
from reference.baselines.cart import HistogramCARTClassifier
from reference.baselines.diffprivlib_tree import RandomTreePFClassifier
from reference.baselines.dp_ert import DPExtraTreesClassifier, DPExtraTreesRegressor
from reference.baselines.dp_logistic import DPLogisticRegression
from reference.baselines.median_forest import MedianForestClassifier, MedianForestRegressor
from reference.baselines.phist import PHISTRegressor
from reference.diprime import DiPriMeForestClassifier, DiPriMeForestRegressor
from reference.lpdt import LPDTRegressor, PublicPartitionTreeRegressor
from reference.privatree import PrivaTreeClassifier
from reference.random_trees import RandomDecisionForestClassifier
from reference.validation import CLIPPED, EDGE_CELL

RNG = np.random.default_rng(5)
X_IN = RNG.uniform(0.1, 0.9, size=(30, 2))
Y_CLS = (X_IN[:, 0] > 0.5).astype(int)
Y_REG = X_IN[:, 0] * 2.0 - 0.5  # in [-0.3, 1.3], inside target_bounds (-1, 2)
B = [(0.0, 1.0), (0.0, 1.0)]
PUBLIC = (RNG.uniform(0.0, 1.0, size=(40, 2)), RNG.uniform(-1.0, 2.0, size=40))

#: name -> (factory, task, what the warning says the learner does)
LEARNERS = {
    "privatree": (lambda: PrivaTreeClassifier(1.0, 2, bounds=B, classes=[0, 1], n_public=30, random_state=1),
                  "cls", CLIPPED),
    "diprime-cls": (lambda: DiPriMeForestClassifier(1.0, n_estimators=2, max_depth=2, bounds=B, classes=[0, 1],
                                                    random_state=1), "cls", CLIPPED),
    "diprime-reg": (lambda: DiPriMeForestRegressor(1.0, n_estimators=2, max_depth=2, bounds=B,
                                                   target_bounds=(-1.0, 2.0), random_state=1), "reg", CLIPPED),
    "random-trees": (lambda: RandomDecisionForestClassifier(n_estimators=3, max_depth=2, epsilon=1.0, bounds=B,
                                                            classes=[0, 1], random_state=1), "cls", CLIPPED),
    "diffprivlib-tree": (lambda: RandomTreePFClassifier(1.0, 2, bounds=B, classes=[0, 1], random_state=1), "cls",
                         CLIPPED),
    "dp-lr": (lambda: DPLogisticRegression(1.0, 0.1, bounds=B, classes=[0, 1], random_state=1), "cls", CLIPPED),
    "cart": (lambda: HistogramCARTClassifier(2, bounds=B, classes=[0, 1]), "cls", CLIPPED),
    "dp-ert-cls": (lambda: DPExtraTreesClassifier(1.0, n_estimators=2, max_depth=2, bounds=B, classes=[0, 1],
                                                  random_state=1), "cls", CLIPPED),
    "dp-ert-reg": (lambda: DPExtraTreesRegressor(1.0, n_estimators=2, max_depth=2, bounds=B,
                                                 target_bounds=(-1.0, 2.0), random_state=1), "reg", CLIPPED),
    "median-cls": (lambda: MedianForestClassifier(n_estimators=2, max_depth=2, max_features=2, bounds=B,
                                                  classes=[0, 1], random_state=1), "cls", CLIPPED),
    "median-reg": (lambda: MedianForestRegressor(n_estimators=2, max_depth=2, max_features=2, bounds=B,
                                                 target_bounds=(-1.0, 2.0), random_state=1), "reg", CLIPPED),
    "lpdt": (lambda: LPDTRegressor(1.0, 2, target_bounds=(-1.0, 2.0), bounds=B, public_data=PUBLIC,
                                   random_state=1), "reg", EDGE_CELL),
    "public-partition": (lambda: PublicPartitionTreeRegressor(2, target_bounds=(-1.0, 2.0), bounds=B,
                                                              public_data=PUBLIC), "reg", EDGE_CELL),
    "phist": (lambda: PHISTRegressor(1.0, 2, target_bounds=(-1.0, 2.0), bounds=B, random_state=1), "reg",
              EDGE_CELL),
}


def _fit(make, task, X, y=None):
    y = (Y_CLS if task == "cls" else Y_REG) if y is None else y
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = make().fit(X, y)
    return model, [w for w in caught if issubclass(w.category, OutOfBoundsWarning)]


def _published(model) -> bytes:
    """Everything the fitted model holds (its pickle: attributes, ledger) and its release, as bytes."""
    release = model.release() if hasattr(model, "release") else None
    return pickle.dumps((release, model.__dict__))


@pytest.mark.parametrize("name", sorted(LEARNERS))
def test_out_of_bounds_records_warn_the_caller_only(name):
    make, task, action = LEARNERS[name]
    X = X_IN.copy()
    X[3, 1], X[7, 1], X[7, 0] = 1.4, -0.2, 1.2  # two records: feature 1 twice, feature 0 once
    model, caught = _fit(make, task, X)
    (w,) = caught
    text = str(w.message)
    assert f"2 of {len(X)} records lie outside the declared bounds" in text
    assert "1 in feature 0, outside [0, 1]" in text and "2 in feature 1, outside [0, 1]" in text
    assert action in text and w.filename == __file__  # points at the caller's line, not the learner's
    clipped, none = _fit(make, task, np.clip(X, 0.0, 1.0))
    assert none == []
    # the model is the one the clipped records give: no trace of the count in the release, ledger or attributes
    assert _published(model) == _published(clipped)


@pytest.mark.parametrize("name", sorted(n for n, v in LEARNERS.items() if v[1] == "reg"))
def test_labels_outside_target_bounds_warn(name):
    make, task, _ = LEARNERS[name]
    y = Y_REG.copy()
    y[[0, 5, 9]] = [2.5, -3.0, 7.0]
    model, caught = _fit(make, task, X_IN, y)
    (w,) = caught
    assert f"3 of {len(y)} labels lie outside the declared target_bounds [-1, 2]" in str(w.message)
    assert _published(model) == _published(_fit(make, task, X_IN, np.clip(y, -1.0, 2.0))[0])


@pytest.mark.parametrize("name", sorted(LEARNERS))
def test_records_at_the_bounds_give_no_warning(name):
    make, task, _ = LEARNERS[name]
    X = X_IN.copy()
    X[0], X[1] = (0.0, 1.0), (1.0, 0.0)  # the corners the auditor's pairs add
    assert _fit(make, task, X)[1] == []


def test_feature_names_are_named():
    pd = pytest.importorskip("pandas")
    X = pd.DataFrame(X_IN.copy(), columns=["age", "income"])
    X.loc[2, "income"] = 3.0
    _, (w,) = _fit(LEARNERS["privatree"][0], "cls", X)
    assert "1 in feature 1 ('income'), outside [0, 1]" in str(w.message)


def test_the_privatree_audit_parts_raise_no_out_of_bounds_warning():
    # the auditor's pairs lie at or inside the bounds: its own sampling never warns
    from audit.privatree.claims import _mutant_part

    with warnings.catch_warnings():
        warnings.simplefilter("error", OutOfBoundsWarning)
        for k in (1, 5):  # two mutants fitted through the reference learner, with records added at the corners
            _mutant_part(k, "quick", 0)
