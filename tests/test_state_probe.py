"""The state probe (audit.engine.state_probe): random state a fitted model keeps after fit.

Deterministic checks (no sampling): estimators that keep a Generator, a SeedSequence, a
RandomState, a stdlib Random, or a copy of the seed, directly, nested in lists and dicts or only in
their pickle, are each reported by attribute path; clean estimators are not; the constructor's own
``random_state`` is a note, not a finding.
"""
from __future__ import annotations

import pickle
import random
from collections import deque

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from audit.engine.state_probe import PROBE_SEED, find_state, probe_estimator

X = np.array([[0.1], [0.4], [0.6], [0.9]])
Y = np.array([0, 0, 1, 1])


class _Base:
    def __init__(self, random_state=None):
        self.random_state = random_state

    def get_params(self, deep=True):
        return {"random_state": self.random_state}

    def set_params(self, **kw):
        for k, v in kw.items():
            setattr(self, k, v)
        return self

    def predict(self, X):
        return np.zeros(len(X), dtype=int)


class Clean(_Base):
    def fit(self, X, y):
        rng = np.random.default_rng(self.random_state)
        self.counts_ = np.bincount(y) + rng.laplace(size=2)
        return self


class KeepsGenerator(_Base):
    def fit(self, X, y):
        self._rng = np.random.default_rng(self.random_state)
        self.counts_ = np.bincount(y) + self._rng.laplace(size=2)
        return self


class KeepsSeedSequenceNested(_Base):
    def fit(self, X, y):
        child = np.random.SeedSequence(self.random_state).spawn(1)[0]
        self.counts_ = np.bincount(y, minlength=2) + np.random.default_rng(child).laplace(size=2)
        self.trees_ = [{"noise": child}]
        return self


class KeepsSeedCopy(_Base):
    def fit(self, X, y):
        self.meta_ = {"seed_used": int(self.random_state)}
        return self


class KeepsRandomState(_Base):
    def fit(self, X, y):
        self.rs_ = np.random.RandomState(0)
        return self


class KeepsStdlibRandom(_Base):
    def fit(self, X, y):
        self.r_ = random.Random(1)
        return self


class SlotsModel:
    __slots__ = ("random_state", "state_")

    def __init__(self, random_state=None):
        self.random_state = random_state

    def fit(self, X, y):
        self.state_ = (1, np.random.default_rng(2).bit_generator)
        return self

    def __getstate__(self):
        return {"random_state": self.random_state, "state_": self.state_}

    def __setstate__(self, s):
        for k, v in s.items():
            setattr(self, k, v)


class OnlyInPickle(_Base):
    """Clean as a live object, but its pickle carries a generator (a custom ``__getstate__``)."""

    def fit(self, X, y):
        self.counts_ = np.bincount(y)
        return self

    def __getstate__(self):
        return {**self.__dict__, "_restored_rng": np.random.default_rng(5)}


@pytest.mark.parametrize("cls, path, type_name", [
    (KeepsGenerator, "model._rng", "Generator"),
    (KeepsSeedSequenceNested, "model.trees_[0]['noise']", "SeedSequence"),
    (KeepsRandomState, "model.rs_", "RandomState"),
    (KeepsStdlibRandom, "model.r_", "Random"),
    (SlotsModel, "model.state_[1]", "BitGenerator"),
    (OnlyInPickle, "model._restored_rng", "Generator"),
])
def test_kept_generators_are_reported_by_path(cls, path, type_name):
    rep = probe_estimator(cls, X, Y)
    assert not rep.clean
    assert any(f.path == path and f.type_name == type_name for f in rep.findings), rep.summary()
    assert path in rep.summary() and "an attacker can" in rep.summary()


def test_a_copy_of_the_injected_seed_at_any_depth_is_a_note_not_a_finding():
    """As the code ships no seed is injected: the probe's seed wherever it lands (the parameter, a dict, a
    sub-estimator it was forwarded to) is the gate's secret, so it is a note and is never replayed."""
    rep = probe_estimator(KeepsSeedCopy, X, Y)
    assert rep.verdict == "clean" and not rep.findings and not rep.replays, rep.summary()
    assert sorted(f.path for f in rep.notes) == ["model.meta_['seed_used']"] * 2 + ["model.random_state"] * 2
    assert "as shipped no seed is injected" in rep.summary()


def test_clean_estimator_passes_with_the_parameter_as_a_note():
    rep = probe_estimator(Clean, X, Y)
    assert rep.clean and [f.path for f in rep.notes] == ["model.random_state"] * 2
    assert rep.to_json()["clean"] is True


def test_a_fit_that_raises_is_inconclusive_not_clean():
    """A probe that could not run proves nothing: verdict inconclusive with the reason (it used to count as clean)."""
    class Raises(_Base):
        def fit(self, X, y):
            raise ValueError("no")

    rep = probe_estimator(Raises, X, Y)
    assert not rep.clean and rep.verdict == "inconclusive" and "ValueError" in rep.skipped
    assert not rep.findings and rep.to_json()["verdict"] == "inconclusive" and "could not run" in rep.evidence


@settings(max_examples=30, deadline=None)
@given(st.recursive(st.one_of(st.integers(), st.floats(allow_nan=False), st.text(max_size=3), st.none()),
                    lambda kids: st.one_of(st.lists(kids, max_size=3), st.dictionaries(st.text(max_size=2), kids,
                                                                                       max_size=3)),
                    max_leaves=12), st.integers(0, 3))
def test_a_generator_hidden_anywhere_in_nested_containers_is_found(tree, depth):
    """Hypothesis: a generator placed at the bottom of a random nest of lists and dicts is found, and a
    nest without one yields nothing (no false report; the seed is not among the generated integers)."""
    nest = tree
    for _ in range(depth):
        nest = [nest, {"k": nest}]
    holder = {"data": nest}
    assert not [f for f in find_state(holder, None) if f.kind == "generator"]
    holder["deep"] = [{"x": [np.random.default_rng(0)]}]
    assert [f.path for f in find_state(holder, None)] == ["model['deep'][0]['x'][0]"]
    assert 10 ** 9 < PROBE_SEED < 2 ** 31  # distinctive, and accepted by RandomState


def test_every_dp_learner_of_the_reference_is_clean():
    """Our own learners after issue 26: no generator or seed survives a fit, live or pickled."""
    from reference.privatree import PrivaTreeClassifier

    rep = probe_estimator(lambda: PrivaTreeClassifier(epsilon=1.0, max_depth=1, bounds=[(0, 1)], classes=[0, 1],
                                                      n_public=4), X, Y)
    assert rep.clean, rep.summary()


# --- ordinary leaky forms (tests/subjects/kept_state_forms.py): each is caught, by path ---------------------------

from functools import partial  # noqa: E402

from audit.engine.state_probe import StateReport, find_state_walk  # noqa: E402
from subjects import kept_state_forms as forms  # noqa: E402


@pytest.mark.parametrize("cls, path, kind", [
    (forms.KeepsCheckRandomState, "model.random_state_", "generator"),
    (forms.KeepsBitGeneratorState, "model.rng_state_", "state"),
    (forms.KeepsBoundMethod, "model.jitter_.__self__", "generator"),
    (forms.GeneratorAsDictKey, "model.table_.keys()[0]", "generator"),
    (forms.GeneratorInBytes, "model.blob_.<unpickled>", "generator"),
    (forms.GeneratorInDeque, "model.history_[0]", "generator"),
    (forms.GeneratorInSlotsHolder, "model.holder_.rng", "generator"),
    (forms.KeepsRandomGetState, "model.state_", "state"),
    (forms.DeeplyNestedGenerator, "model.log_[105000][0]['source']", "generator"),
])
def test_each_ordinary_form_of_kept_state_is_caught_by_path(cls, path, kind):
    rep = probe_estimator(cls, X, Y)
    assert rep.verdict == "violation" and not rep.clean, rep.summary()
    assert [(f.kind, f.where) for f in rep.findings if f.path == path] == [(kind, "fitted object"), (kind, "pickle")]
    assert rep.epsilon_lower == float("inf") and path in rep.evidence and not rep.truncated


def test_the_clean_counterpart_keeps_nothing_and_its_seed_is_accepted():
    """check_random_state refuses seeds of 2**32 and more: the probe's seed is below 2**31, so the
    scikit-learn idiom is really probed (fitted, not skipped)."""
    rep = probe_estimator(forms.CleanLocal, X, Y)
    assert rep.verdict == "clean" and not rep.remarks and not rep.replays
    assert [(f.path, f.where) for f in rep.notes] == [("model.random_state", "fitted object"),
                                                       ("model.random_state", "pickle")]


def test_a_scikit_learn_estimator_is_probed_not_skipped():
    from sklearn.tree import DecisionTreeClassifier

    rep = probe_estimator(lambda: DecisionTreeClassifier(max_depth=2), X, Y)
    assert rep.verdict == "clean" and not rep.skipped and not rep.remarks, rep.summary()
    assert rep.notes and rep.notes[0].path == "model.random_state"


def test_generator_states_and_seed_forms_in_plain_data():
    seed = 5_000_000_017  # above 2**32: its two 32-bit words are (1, 705032721)
    hi, lo = seed >> 32, seed & 0xFFFFFFFF
    holder = {"legacy": np.random.RandomState(3).get_state(),
              "as_dict": np.random.RandomState(3).get_state(legacy=False),
              "bits": np.random.default_rng(1).bit_generator.state, "stdlib": random.Random(2).getstate(),
              "hi_lo": np.array([7, hi, lo], dtype=np.uint32), "lo_hi": [lo, hi], "as_float": float(seed),
              "in_text": f"run-{seed}-final", "harmless": [hi, 7, lo], "other": seed + 1}
    got = {f.path: (f.kind, f.type_name) for f in find_state(holder, seed)}
    assert got == {"model['legacy']": ("state", "RandomState.get_state()"),
                   "model['as_dict']": ("state", "bit_generator.state"),
                   "model['bits']": ("state", "bit_generator.state"),
                   "model['stdlib']": ("state", "random.Random.getstate()"),
                   "model['hi_lo']": ("seed", "ndarray"), "model['lo_hi']": ("seed", "list"),
                   "model['as_float']": ("seed", "float"), "model['in_text']": ("seed", "str")}


def test_partials_closures_and_getstate_are_walked():
    rng = np.random.default_rng(0)

    def make():
        return lambda: rng.random()

    class Custom:
        __slots__ = ("a",)

        def __getstate__(self):
            return {"hidden": np.random.RandomState(1)}

    holder = {"p": partial(print, rng.bit_generator), "closure": make(), "custom": Custom()}
    got = {f.path: f.type_name for f in find_state(holder, None)}
    assert got == {"model['p'].args[0]": "BitGenerator", "model['closure'].__closure__[0]": "Generator",
                   "model['custom'].hidden": "RandomState"}


def test_a_long_log_of_numbers_is_read_whole_and_a_seed_in_it_is_still_found():
    """A list of more than 1,024 numeric tuples (a process-wide budget log) is one node for the state walk, so its
    cost does not grow with what the process fitted before; a copy of the seed among its numbers is still found,
    and a string among its items sends the walk item by item again (a string may spell a generator's state)."""
    class Model:
        pass

    m = Model()
    m.log_ = [(1.0, 0)] * 5_000
    found, truncated = find_state_walk(m, 123_456)
    assert found == [] and not truncated
    m.log_ = [(1.0, 0)] * 3_000 + [(0.5, 123_456)] + [(1.0, 0)] * 1_000
    found, _ = find_state_walk(m, 123_456)
    assert [(f.path, f.kind) for f in found] == [("model.log_", "seed")]
    m.log_ = [(1.0, 0)] * 3_000 + ["seed 123456"]
    found, _ = find_state_walk(m, 123_456)
    assert [(f.path, f.kind) for f in found] == [("model.log_[3000]", "seed")]


def test_the_node_limit_is_said_not_silent(monkeypatch):
    nest = [list(range(50)) for _ in range(50)] + [[[np.random.default_rng(0)]]]  # behind 2,551 nodes
    found, truncated = find_state_walk(nest, None, max_nodes=1_000)
    assert truncated and not found
    found, truncated = find_state_walk(nest, None)
    assert not truncated and [f.path for f in found] == ["model[50][0][0]"]
    import audit.engine.state_probe as sp

    monkeypatch.setattr(sp, "MAX_NODES", 100)
    rep = probe_estimator(forms.NestedGenerator, X, Y)
    assert rep.truncated and rep.verdict == "inconclusive" and "node limit" in rep.evidence
    assert StateReport(truncated=True).to_json()["verdict"] == "inconclusive"


_WRAPS = {
    "list": (lambda o: [0, o], "[1]"),
    "tuple": (lambda o: (o,), "[0]"),
    "dict": (lambda o: {"k": o}, "['k']"),
    "key": (lambda o: {("x", o): 1}, ".keys()[0][1]"),
    "deque": (lambda o: deque([1.5, o]), "[1]"),
    "set": (lambda o: frozenset([o]), "{0}"),
    "bytes": (lambda o: pickle.dumps(o), ".<unpickled>"),
    "partial": (lambda o: partial(print, o), ".args[0]"),
    "slots": (lambda o: forms.Holder(o), ".rng"),
}


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(sorted(_WRAPS)), min_size=1, max_size=8))
def test_a_generator_behind_any_chain_of_wrappers_is_found_at_its_path(chain):
    """Hypothesis: wrap a generator in a random chain of containers, dict keys, pickled bytes, partials and slots
    holders; the walk finds exactly that generator at exactly the path the chain spells."""
    obj, path = np.random.default_rng(1), ""
    for name in chain:
        wrap, suffix = _WRAPS[name]
        if name in ("set", "key") and not _hashable(obj):
            continue
        obj, path = wrap(obj), suffix + path
    found = find_state(obj, None)
    assert [(f.path, f.kind) for f in found] == [("model" + path, "generator")]


def _hashable(o) -> bool:
    try:
        hash(o)
    except TypeError:
        return False
    return True


@pytest.mark.parametrize("cls, path", [(forms.SeedAsString, "model.tag_"), (forms.SeedAsWords, "model.words_")])
def test_the_injected_seed_spelt_another_way_is_a_note(cls, path):
    """A string or two words spelling the probe's seed: found (so the report names it) but a note, since the
    shipped model (random_state=None) keeps no seed there."""
    rep = probe_estimator(cls, X, Y)
    assert rep.verdict == "clean" and path in {f.path for f in rep.notes}, rep.summary()
