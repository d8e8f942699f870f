"""The determinism probe reads what a model serves through Python's protocols and to public arguments
(:mod:`audit.gate.protocol`): ``len(model)``, ``model(X)``, ``model[label]``, ``n in model``, a method taking a
class label, a method's boolean flag turned, a generator method and a ``__getattr__`` name are each found and
named; a control serving public facts and noisy values through the same protocols is clean.

The leaks are deterministic functions of the data, so their verdicts do not depend on chance. The control draws
fresh noise; the probe's false-alarm rate is at most its alpha (0.001) per run whatever the subject does.
"""
from __future__ import annotations

import numpy as np
import pytest

from audit.gate.behaviour import query_points
from audit.gate.observe import observe_fit, source_of
from audit.gate.protocol import MAX_ITEMS, consumed, flag_variants, scalar_arguments
from audit.gate.search import candidate_pairs
from determinism_probe import BOUNDS, CLASSES, GRID, probe as _probe
from subjects import leaks_by_protocol as L



LEAKS = {
    "SizedTable": "len()",
    "CallableModel": "call(record 0)",
    "IndexedCounts": "getitem(1)",
    "CountFor": "count_for(1)",
    "SizeTest": "contains(",
    "FlaggedSummary": "summary(exact=True)",
    "StreamedCounts": "iter_counts()[1][1]",
    "DynamicAttributes": "getattr('n_class_1')",
}


@pytest.mark.parametrize("name", sorted(LEAKS))
def test_a_table_served_through_a_protocol_or_an_argument_is_found_and_named(name):
    report = _probe(getattr(L, name))
    assert report.verdict == "violation", report.summary()
    paths = [p["path"] for p in report.paths]
    assert any(p.startswith(LEAKS[name]) for p in paths), paths
    assert report.epsilon_lower > 1.0


@pytest.mark.parametrize("relation", ["add-remove", "substitute"])
def test_a_control_serving_public_facts_and_noisy_values_through_the_same_protocols_is_clean(relation):
    report = _probe(L.ServedPublicFacts, relation)
    assert report.verdict == "clean", report.summary()


def test_the_control_is_asked_through_every_protocol_it_defines():
    pair = candidate_pairs(BOUNDS, CLASSES, "add-remove", seed=0)[0]
    obs = observe_fit(lambda: L.ServedPublicFacts(), pair.d0, GRID, CLASSES, records=query_points(pair, 1))
    for path in ("len()", "iter()[1]", "array()", "hash()", "call(grid)", "contains(1)", "getitem(0)",
                 "summary()[0]", "summary(rounded=False)[1]", "noisy_count(1)", "getattr('noisy_1')"):
        assert path in obs, path
    assert obs["len()"][0] == ("int", 2) and obs["contains(5)"][0] == ("bool", False)
    assert source_of("getitem(label 'a')") == "getitem" and source_of("len()") == "len"


def test_an_ensemble_served_through_iteration_reads_as_references_to_its_own_parts():
    """scikit-learn's ensembles iterate and index their fitted trees: those read as the model's own parts, once."""
    from sklearn.ensemble import RandomForestClassifier

    pair = candidate_pairs(BOUNDS, CLASSES, "add-remove", seed=0)[0]
    obs = observe_fit(lambda: RandomForestClassifier(n_estimators=3), pair.d0, GRID, CLASSES)
    assert obs["iter()[2]"][1] == "the model's model.estimators_[2]"
    assert obs["getitem(1)"][1] == "the model's model.estimators_[1]"
    assert not any(p.startswith("iter()[0].") for p in obs)


def test_public_scalars_flags_and_iterators():
    q = query_points(candidate_pairs(BOUNDS, CLASSES, "add-remove", seed=0)[0], 1)
    scalars = scalar_arguments(["a", 0, 1], q)
    names = [w for w, _ in scalars]
    assert names[:4] == ["label 'a'", "0", "1", "2"] and names.count("0") == 1
    assert names[-1] == "row 0" and np.asarray(scalars[-1][1]).ndim == 1

    def summary(self, exact=False, *, digits=2, raw=True):
        return self
    assert flag_variants(summary) == {"exact": True, "raw": False}
    assert consumed(iter(range(10 ** 6))) == list(range(MAX_ITEMS)) and consumed([1, 2]) == [1, 2]
