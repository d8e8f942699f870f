"""Privacy-first seeding (``reference.randomness``): by default no ``random_state`` replays a fit.

A fitted learner's release is replayed three ways an attacker holding the published objects could try:
refitting ``clone(model)`` (what ``get_params`` gives: the live ``random_state``, a Generator's spawn counter
set back by one), the unfitted
base estimator kept inside a pickled ``GridSearchCV`` (with its best parameters), and the unfitted member
kept inside a pickled ``VotingClassifier``. Each is run in both modes on every learner of reference/ whose
release varies from fit to fit:

* seeded mode (the test session's, ``tests/conftest.py``): every replay gives the same release, so the
  replays are real and the default-mode assertions below could fail;
* default mode (inside ``seeded_fits(False)``): no replay gives the same release. The OS entropy is
  replaced by a counter from a fixed start (``_os_entropy`` monkeypatched), so the test is deterministic:
  the original fit and each replay draw from different, known seed material, as fresh OS entropy would.

Deterministic; no false-alarm rate to state.
"""
from __future__ import annotations

import itertools
import pickle

import numpy as np
import pytest
from sklearn.base import clone, is_classifier
from sklearn.ensemble import VotingClassifier, VotingRegressor
from sklearn.model_selection import GridSearchCV

import reference.randomness as randomness
from reference.randomness import SeedIgnoredWarning, fit_rng, fit_seed_sequence, seeded_fits, seeded_fits_enabled
from test_no_kept_randomness import LEARNERS, RANDOM, X, Y_CLS, Y_REG, with_public_facts

#: learners whose release is the same on every fit of these 40 records (nothing to replay)
DETERMINISTIC = {"MedianForestClassifier", "MedianForestRegressor", "PublicPartitionTreeRegressor"}
VARYING = [n for n in RANDOM if n not in DETERMINISTIC]


def _estimator(name, random_state):
    cls, kw = LEARNERS[name]
    return with_public_facts(cls)(**kw).set_params(random_state=random_state)


def _y(name):
    return Y_REG if "Regressor" in name else Y_CLS


def _rewound(random_state):
    """A live model's ``random_state`` as it was before the fit: a Generator's spawn counter goes back by one
    (the fit spawned one child, in seeded mode); an integer is the seed itself."""
    if not isinstance(random_state, np.random.Generator):
        return random_state
    ss = random_state.bit_generator.seed_seq
    back = np.random.SeedSequence(ss.entropy, spawn_key=ss.spawn_key, pool_size=ss.pool_size,
                                  n_children_spawned=max(0, ss.n_children_spawned - 1))
    return np.random.Generator(type(random_state.bit_generator)(back))


def _replays(name, random_state):
    """``(original release, [replayed releases])`` for the three published objects (module docstring)."""
    y = _y(name)
    est = _estimator(name, random_state)
    model = est.fit(X, y)
    out = [clone(model).set_params(random_state=_rewound(model.random_state)).fit(X, y).release()]
    param = next(iter(est.get_params(deep=False)))
    search = GridSearchCV(clone(est), {param: [est.get_params()[param]]}, cv=2).fit(X, y)
    kept = pickle.loads(pickle.dumps(search))
    out.append(clone(kept.estimator).set_params(**kept.best_params_).fit(X, y).release())
    searched = search.best_estimator_.release()
    ensemble = (VotingClassifier if is_classifier(est) else VotingRegressor)([("m", clone(est))]).fit(X, y)
    kept = pickle.loads(pickle.dumps(ensemble))
    out.append(clone(kept.estimators[0][1]).fit(X, y).release())
    return (model.release(), searched, ensemble.estimators_[0].release()), out


def _same(a, b) -> bool:
    """Releases equal in every element (they may hold arrays)."""
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(_same(u, v) for u, v in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.shape(a) == np.shape(b) and bool(np.array_equal(a, b))
    return bool(a == b)


def _kinds():
    return {"int": 12345, "generator": np.random.default_rng(12345)}


@pytest.mark.parametrize("name", VARYING)
@pytest.mark.parametrize("kind", ["int", "generator"])
def test_seeded_mode_replays_from_the_published_objects(name, kind):
    """The control: with seeded fits on, each published object replays its fit exactly."""
    assert seeded_fits_enabled()
    originals, replays = _replays(name, _kinds()[kind])
    assert [_same(o, r) for o, r in zip(originals, replays)] == [True, True, True]


@pytest.mark.parametrize("name", VARYING)
@pytest.mark.parametrize("kind", ["int", "generator"])
def test_default_mode_replays_nothing(name, kind, monkeypatch):
    counter = itertools.count(2**100)
    monkeypatch.setattr(randomness, "_os_entropy", lambda: next(counter))
    with seeded_fits(False):
        originals, replays = _replays(name, _kinds()[kind])
    assert [_same(o, r) for o, r in zip(originals, replays)] == [False, False, False]


def test_default_mode_streams_come_from_os_entropy(monkeypatch):
    monkeypatch.setattr(randomness, "_WARNED", set())
    with seeded_fits(False):
        with pytest.warns(SeedIgnoredWarning, match="seeded_fits"):
            a, b = fit_rng(0), fit_rng(0)
        assert a.integers(2**62) != b.integers(2**62)  # equal with probability 2**-62
        g = np.random.default_rng(0)
        fit_rng(g)
        assert g.bit_generator.seed_seq.n_children_spawned == 0  # the user's generator is not touched
        assert fit_seed_sequence(7).entropy != fit_seed_sequence(7).entropy
        with pytest.raises(ValueError, match="random_state must be"):
            fit_rng(-1)  # validated in both modes


def test_seeded_fits_restores_the_mode():
    with seeded_fits(False):
        assert not seeded_fits_enabled()
        with seeded_fits():
            assert seeded_fits_enabled()
            assert fit_rng(3).integers(2**62) == fit_rng(3).integers(2**62)
        assert not seeded_fits_enabled()
    assert seeded_fits_enabled()  # the session's mode (tests/conftest.py) is back
    with pytest.raises(ValueError, match="enabled must be True or False, got 'yes'"):
        with seeded_fits("yes"):
            pass


def test_the_auditor_seeds_its_own_fits():
    """``learner_mechanism`` fits in seeded mode even when the caller is in default mode: the same
    seed gives the same release (DESIGN: same seed, same result)."""
    from audit import learner_mechanism
    from reference.privatree import PrivaTreeClassifier

    mech = learner_mechanism(lambda: PrivaTreeClassifier(epsilon=1.0, max_depth=2, bounds=[(0, 1), (0, 1)],
                                                         classes=[0, 1], n_public=40))
    with seeded_fits(False):
        first = mech((X, Y_CLS), np.random.default_rng(5))
        assert first == mech((X, Y_CLS), np.random.default_rng(5))
        assert not seeded_fits_enabled()
