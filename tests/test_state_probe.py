"""The state probe (audit.engine.state_probe): random state a fitted model keeps after fit.

Deterministic checks (no sampling): estimators that keep a Generator, a SeedSequence, a
RandomState, a stdlib Random, or a copy of the seed, directly, nested in lists and dicts or only in
their pickle, are each reported by attribute path; clean estimators are not; the constructor's own
``random_state`` is a note, not a finding.
"""
from __future__ import annotations

import random

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
        ss = np.random.SeedSequence(self.random_state)
        self.trees_ = [{"noise": ss.spawn(1)[0]}]
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


def test_a_copy_of_the_seed_is_reported_and_the_parameter_is_a_note():
    rep = probe_estimator(KeepsSeedCopy, X, Y)
    assert [f.path for f in rep.findings] == ["model.meta_['seed_used']"] * 2  # live object and pickle
    assert [f.path for f in rep.notes] == ["model.random_state"] * 2


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
