"""`audit check` reads everything an estimator publishes by default (``release()``, the predictions of
``predict`` and ``predict_proba``, and the numbers of the fitted model's pickle), and gives estimators the
floating-point probe on every real-valued coordinate.

Every sampled audit here has a fixed seed and alpha = 0.05 (its false-alarm rate, shared over the audited
pairs and both directions). The leaky subjects of ``tests/subjects/published.py`` lose infinitely much (an
exact count) except ``FloatLaplaceCount``, whose float lattices the probe separates at epsilon >= 4.1 at
5,000 outputs per input on its pair (measured; the claim is 1).
"""
import json
import time
from pathlib import Path

import numpy as np
import pytest

from audit.__main__ import main
from audit.check import CheckError, parse_release
from audit.engine.estimation import events
from audit.engine.model_state import MAX_ITEMS, state_numbers
from audit.engine.release import MAX_ATTRIBUTES, EstimatorRelease, release_spec
from audit.engine.estimation.sampling import Samples

HERE = Path(__file__).parent


@pytest.fixture(autouse=True)
def subjects_on_path(monkeypatch):
    monkeypatch.syspath_prepend(str(HERE))


def _row(tmp_path, name):
    path = tmp_path / f"check-subjects.published-{name}" / "report.json"
    return json.loads(path.read_text())["claims"][0]


# --------------------------------------------------------------------------- the model's state
class _Leaf:
    def __init__(self, n):
        self.n_samples, self.parent, self.name = n, None, "leaf"


class _Model:
    def __init__(self, epsilon=1.0, random_state=None):
        self.epsilon, self.random_state = epsilon, random_state

    def fit(self, X, y):
        self.count_ = 3
        self._secret = np.array([1.5, 2.5])
        self.rng_ = np.random.default_rng(0)
        leaf = _Leaf(4)
        leaf.parent = self  # a cycle back to the model
        self.nodes_ = {"root": leaf, 7: (True, None, "text")}
        self.table_ = np.zeros(2, dtype=[("n", int), ("w", float)])
        self.big_ = list(range(MAX_ITEMS + 5))
        return self


def test_state_numbers_walks_the_pickle_by_attribute_path():
    from sklearn.tree import DecisionTreeClassifier

    X, y = np.array([[0.1, 0.2], [0.9, 0.8], [0.2, 0.9]]), np.array([0, 1, 1])
    nums, _ = state_numbers(DecisionTreeClassifier(random_state=0, max_depth=1).fit(X, y))
    assert nums["model.tree_.nodes['n_node_samples'][0]"] == 3.0
    assert "model.tree_.nodes['threshold'][0]" in nums and "model.tree_.values[0, 0, 1]" in nums
    assert not any(k.startswith(("model.max_depth", "model.random_state")) for k in nums)  # constructor params

    nums, truncated = state_numbers(_Model().fit(None, None))
    assert nums["model.count_"] == 3.0 and nums["model._secret[1]"] == 2.5 and nums["len(model._secret)"] == 2
    assert nums["model.nodes_['root'].n_samples"] == 4.0 and nums["model.nodes_[7][0]"] == 1.0
    assert nums["model.table_['n'][1]"] == 0.0 and nums["len(model.table_)"] == 2
    assert not any("rng_" in k or "epsilon" in k or "parent" in k for k in nums)
    assert nums["len(model.big_)"] == MAX_ITEMS + 5 and f"model.big_[{MAX_ITEMS}]" not in nums
    assert truncated and truncated[0].startswith("model.big_")


class _Growing:
    """A fitted list whose length is the number of records, and many state numbers."""

    def __init__(self, wide=False):
        self.wide = wide

    def fit(self, X, y):
        self.items_ = [float(v) for v in y]
        if self.wide:
            self.cells_ = [[0.0] * 200 for _ in range(8)]
        return self


def test_release_is_the_union_of_paths_seen_with_lengths_and_a_stated_cap():
    X = np.zeros((3, 1))
    rel = EstimatorRelease(_Growing, {}, bounds=[(0, 1)], classes=[0, 1])
    rel.calibrate([(X[:1], np.array([1])), (X, np.array([1, 0, 1]))])
    assert rel.names[1:] == ["len(model.items_)", "model.items_[0]", "model.items_[1]", "model.items_[2]"]
    out = rel((X[:1], np.array([1])), np.random.default_rng(0))
    assert out.tolist() == [0.0, 1.0, 1.0, 0.0, 0.0]  # paths this fit lacks read 0
    wide = EstimatorRelease(_Growing, {"wide": True}, bounds=[(0, 1)], classes=[0, 1])
    wide.calibrate([(X, np.array([1, 0, 1]))])
    assert wide.length == MAX_ATTRIBUTES and wide.dropped == 4 + 1 + 8 + 8 * 200 - MAX_ATTRIBUTES
    assert f"dropped by the cap of {MAX_ATTRIBUTES}" in wide.description


def test_release_kinds_narrow_what_is_read():
    from subjects.published import ExactPredictCount

    assert release_spec("auto")[0] == {"release", "predictions", "structure", "attributes"}
    assert release_spec(["release", "count_"]) == ({"release"}, ["count_"])
    assert parse_release("release,predictions") == ["release", "predictions"]
    assert parse_release("attributes") == "attributes"
    with pytest.raises(CheckError):
        parse_release("release,not an attribute")
    X, y = np.zeros((2, 2)), np.array([1, 1])
    for spec, names in [("release", ["len(release())", "release()[0]"]), (["attributes"], ["model.count_", "model._shown"]),
                        ("predictions", ["prediction at (0.125, 0.125)"])]:
        rel = EstimatorRelease(ExactPredictCount, {}, bounds=[(0, 1)] * 2, classes=[0, 1], release=spec)
        rel.calibrate([(X, y)])
        assert rel.names[1:1 + len(names)] == names, rel.names


# --------------------------------------------------------------------------- float events on vectors
def test_vector_float_events_skip_integer_and_constant_coordinates_and_stay_bounded():
    rng = np.random.default_rng(0)
    n, d = 333, 300  # about the screening pilot's half at quick, and 300 coordinates
    xa, xb = rng.laplace(0, 1, (n, d)), 0.3 + rng.laplace(0, 1, (n, d))
    xa[:, :50] = xb[:, :50] = 1.0  # constant
    xa[:, 50:100], xb[:, 50:100] = np.round(xa[:, 50:100]), np.round(xb[:, 50:100])  # integers
    varying = list(range(50, d))
    assert events.float_coordinates(xa, xb, varying) == list(range(100, d))
    start = time.perf_counter()
    found = list(events._vector_float_candidates(xa, xb, varying))
    took = time.perf_counter() - start
    print(f"vector float candidates, 200 real coordinates of 300: {took:.2f} s")
    assert len(found) == events.MAX_FLOAT_EVENTS
    assert found[0][2]().description.startswith("float pattern (sign, exponent, mantissa mod ")
    a, b = Samples("vector", xa, ()), Samples("vector", xb, ())
    with events.float_probe(False):
        off = sum(1 for _ in events.candidates(a, b))
    with events.float_probe(True):
        on = sum(1 for _ in events.candidates(a, b))
    assert on - off == events.MAX_FLOAT_EVENTS


# --------------------------------------------------------------------------- check on the subjects
LEAKS = [("ExactPredictCount", ("prediction at", "model._shown")),
         ("NodeCountTree", ("n_samples",)),
         ("DPLeafTree", ("n_node_samples",))]


@pytest.mark.parametrize("name,words", LEAKS)
def test_check_finds_what_the_model_publishes_besides_its_release(name, words, tmp_path):
    base = ["check", f"subjects.published:{name}", "--epsilon", "1", "--quiet", "--n-samples", "1000",
            "--pairs", "subjects.published:count_pairs", "--no-search", "--no-scale", "--after-finding", "sample",
            "--out", str(tmp_path)]
    assert main(base + ["--params", '{"broken": true}']) == 1
    row = _row(tmp_path, name)
    event = row["detail"].split("event [", 1)[1].split("]", 1)[0]
    assert any(w in event for w in words), event
    assert row["epsilon_lower"] > 3 and "numbers of the fitted model's state" in row["detail"]
    assert main(base + ["--params", '{"broken": false}']) == 0


def test_check_float_probe_decides_on_an_estimators_float_attribute(tmp_path):
    base = ["check", "subjects.published:FloatLaplaceCount", "--epsilon", "1", "--quiet", "--n-samples", "5000",
            "--pairs", "subjects.published:count_pairs", "--no-search", "--no-scale", "--out", str(tmp_path)]
    assert main(base) == 1
    row = _row(tmp_path, "FloatLaplaceCount")
    assert row["decided_by"][0] == "float probe" and row["epsilon_lower"] > 2
    assert "violation through the floating-point probe on model.count_" in row["detail"]
    assert main(base + ["--params", '{"discrete": true}']) == 0
    assert main(base + ["--no-float-probe"]) == 0  # in real arithmetic the claim holds
