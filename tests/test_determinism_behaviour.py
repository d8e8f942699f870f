"""The determinism probe observes behaviour, not only storage (:mod:`audit.gate.behaviour`): a table served by a
public method, state kept in a module's weak dictionary or context variable, and a model that answers exactly at
the rows it was trained on are found; a control with extra public methods serving public facts and noisy values
is not flagged.

The leaks are deterministic functions of the data, so their verdicts do not depend on chance. The control draws
fresh noise; the probe's false-alarm rate is at most its alpha (0.001) per run whatever the subject does.
"""
from __future__ import annotations

import json
import weakref

import numpy as np
import pytest

from audit.__main__ import main
from audit.gate.behaviour import THE_MODEL, model_view, public_methods, query_points
from audit.gate.determinism import probe_determinism
from audit.gate.observe import observe_fit, source_of
from audit.gate.outputs import probe_grid
from audit.gate.search import candidate_pairs
from audit.gate.state.walk import walk
from subjects import leaks_by_behaviour as L

BOUNDS, CLASSES = [(0.0, 1.0)], [0, 1]
GRID = probe_grid(BOUNDS)


def _pairs(relation="add-remove", family=None):
    pairs = candidate_pairs(BOUNDS, CLASSES, relation, seed=0)
    return [p for p in pairs if family is None or family in p.description]


def _probe(cls, pairs=None, relation="add-remove"):
    return probe_determinism(lambda: cls(epsilon=1.0), _pairs(relation) if pairs is None else pairs, grid=GRID,
                             classes=CLASSES, epsilon=1.0, relation=relation)


LEAKS = {
    "MethodTable": "class_counts()",
    "WeakRegistry": "module subjects.leaks_by_behaviour.FITTED['model']",
    "ContextCounts": "module subjects.leaks_by_behaviour.LAST_COUNTS.get()[1]",
    "Memoriser": "predict_proba(record 0)",
    "OtherModule": "module colorsys.last_class_counts[1]",
}


@pytest.mark.parametrize("name", sorted(LEAKS))
def test_a_table_served_or_kept_outside_the_model_is_found_and_named(name):
    report = _probe(getattr(L, name))
    assert report.verdict == "violation", report.summary()
    assert LEAKS[name] in [p["path"] for p in report.paths]
    assert report.epsilon_lower > 1.0 and report.fits <= 64


def test_a_memoriser_is_found_at_the_differing_record_whichever_side_holds_it():
    """Added at a corner, the record is answered exactly on D' only (D answers noisily there): the path is
    confirmed from D' (the pair reads swapped). Moved to a corner under substitution, D answers exactly at its
    record and D' noisily."""
    added = _probe(L.Memoriser, _pairs(family="domain corner"))
    assert added.verdict == "violation" and added.pair.startswith("swapped: ")
    assert added.paths[0] == {"path": "predict_proba(record 0)", "on_d": "array[1, 2] [0.0, 1.0]",
                              "on_d1": "other values", "record_count": False}
    moved = _probe(L.Memoriser, _pairs("substitute", "domain corner"), relation="substitute")
    assert moved.verdict == "violation" and "predict_proba(record 0)" in [p["path"] for p in moved.paths]


@pytest.mark.parametrize("relation", ["add-remove", "substitute"])
def test_a_control_with_extra_public_methods_is_clean(relation):
    report = _probe(L.CorrectWithMethods, relation=relation)
    assert report.verdict == "clean", report.summary()


def test_the_control_calls_every_public_method_at_the_records_and_on_the_grid():
    pair = _pairs(family="domain corner")[0]
    queries = query_points(pair, 1)
    obs = observe_fit(lambda: L.CorrectWithMethods(), pair.d0, GRID, CLASSES, records=queries)
    for path in ("describe()", "noisy_counts()", "get_params()['epsilon']", "explain(record 0)['rows']",
                 "explain(records)['rows']", "explain(grid)['rows']", "predict_proba(record 0)",
                 "predict_proba(records)", "predict(records)"):
        assert path in obs, path
    assert obs["explain(records)['rows']"][0] == ("int", 2) and obs["explain(grid)['rows']"][0] == ("int", len(GRID))
    assert source_of("explain(record 0)") == "explain" and source_of("noisy_counts()") == "noisy_counts"
    wanted = observe_fit(lambda: L.CorrectWithMethods(), pair.d0, GRID, CLASSES, records=queries,
                         want={"describe"})
    assert "describe()" in wanted and "noisy_counts()" not in wanted and "model.counts_" not in wanted


def test_query_points_put_the_differing_record_first_and_are_the_same_for_both_sides():
    X = np.array([[0.2], [0.4]])
    pair = type("P", (), {"d0": (X, np.array([0, 1])), "d1": (np.vstack((X, [[1.0]])), np.array([0, 1, 1]))})
    q = query_points(pair, 1)
    assert q.records.tolist() == [[1.0], [0.2], [0.4]] and q.differing == 1
    assert q.records.dtype == float and q.records.ndim == 2


class _Fitted:
    """A stand-in model with public methods of every arity."""

    def fit(self, X, y):
        return self

    def set_params(self, **kw):
        return self

    def summary(self):
        return "s"

    def explain(self, X, detail=False):
        return len(X)

    def pair(self, X, y):
        return 0

    def named(self, *, key):
        return key

    @property
    def table(self):
        return 1


def test_public_methods_are_those_taking_nothing_or_X_never_fitting_or_setting():
    assert public_methods(_Fitted()) == [("explain", 1), ("summary", 0)]


def test_weak_containers_and_context_variables_are_read_with_the_model_named():
    import contextvars

    model, other = _Fitted(), _Fitted()
    keyed = weakref.WeakKeyDictionary({model: 3, other: 4})
    assert model_view(keyed, model) == {"model": 3}
    assert model_view(weakref.WeakValueDictionary({"last": model}), model) == {"last": THE_MODEL}
    assert model_view(weakref.ref(model), model) == THE_MODEL
    var = contextvars.ContextVar("v")
    var.set({"n": 5})
    seen = dict(walk({"a": var, "w": weakref.WeakSet([model])}, "root"))
    assert seen["root['a'].get()['n']"] == 5 and "root['w']{0}" in seen


def test_check_fails_a_method_served_table(tmp_path):
    cheap = ["--epsilon", "1", "--quiet", "--n-samples", "2000", "--no-search", "--no-grow", "--bounds", "[[0, 1]]",
             "--classes", "0,1"]
    assert main(["check", "subjects.leaks_by_behaviour:MethodTable", *cheap, "--out", str(tmp_path)]) == 1
    report = tmp_path / "check-subjects.leaks_by_behaviour-MethodTable" / "report.json"
    row = json.loads(report.read_text())["claims"][0]
    assert row["verdict"] == "violation" and "determinism" in row["decided_by"]
    assert "class_counts()" in [p["path"] for p in row["determinism"]["paths"]]
