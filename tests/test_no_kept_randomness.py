"""No randomness survives a fit (issue 26 findings 2, 3 and 6), re-run as tests.

Deterministic checks over every learner of reference/ (the list of tests/test_sklearn_conventions.py),
fitted with ``random_state`` None, an integer and a Generator: no Generator, BitGenerator,
SeedSequence, RandomState or ``random.Random`` is reachable from the fitted model or from the model
rebuilt from its pickle, and no copy of the seed (``audit.engine.state_probe.find_state``); the
pickle of a fitted model unpickles with ``random_state=None``; an unfitted one keeps it.
"""
from __future__ import annotations

import pickle

import numpy as np
import pytest

from audit.engine.state_probe import PROBE_SEED, find_state
from reference.random_trees import RandomDecisionForestClassifier
from reference.randomness import fit_rng, predict_rng
from test_sklearn_conventions import LEARNERS, with_public_facts

RNG = np.random.default_rng(0)
X = RNG.random((40, 2))
Y_CLS = (X[:, 0] > 0.5).astype(int)
Y_REG = X[:, 0] + X[:, 1]


#: the learners that draw randomness (DeepPartitionAggregation is deterministic: no random_state), but for the
#: non-private RpartLikeClassifier, whose scikit-learn tree takes only integer seeds and keeps them, as
#: scikit-learn does (it claims no privacy)
RANDOM = sorted(n for n, (cls, kw) in LEARNERS.items()
                if "random_state" in cls(**kw).get_params() and n != "RpartLikeClassifier")


def _fitted(name, random_state):
    cls, kw = LEARNERS[name]
    est = with_public_facts(cls)(**kw).set_params(random_state=random_state)
    return est.fit(X, Y_REG if "Regressor" in name else Y_CLS)


@pytest.mark.parametrize("name", RANDOM)
@pytest.mark.parametrize("kind", ["none", "int", "generator"])
def test_no_generator_or_seed_is_kept_by_the_model_or_its_pickle(name, kind):
    rs = {"none": None, "int": PROBE_SEED, "generator": np.random.default_rng(PROBE_SEED)}[kind]
    est = _fitted(name, rs)
    seed = PROBE_SEED if kind == "int" else None
    live = [f for f in find_state(est, seed) if not f.path == "model.random_state"]
    assert not live, [f.describe() for f in live]
    back = pickle.loads(pickle.dumps(est))
    assert back.random_state is None  # a fitted model's pickle carries no seed and no generator
    assert not find_state(back, seed), [f.describe() for f in find_state(back, seed)]


@pytest.mark.parametrize("name", RANDOM)
def test_an_unfitted_estimator_pickles_with_its_seed(name):
    """joblib and GridSearchCV(n_jobs=...) pickle unfitted clones: nothing was drawn, so the seed stays."""
    cls, kw = LEARNERS[name]
    est = cls(**kw, random_state=7)
    assert pickle.loads(pickle.dumps(est)).random_state == 7


def test_the_fit_never_draws_from_or_advances_the_users_generator():
    """Finding 3: the Generator passed as random_state stayed in the model advanced by the fit (PCG64 rewinds).
    The fit now draws from a spawned child; the user's generator's state is untouched."""
    g = np.random.default_rng(5)
    before = g.bit_generator.state
    cls, kw = LEARNERS["PrivaTreeClassifier"]
    with_public_facts(cls)(**kw, random_state=g).fit(X, Y_CLS)
    assert g.bit_generator.state == before
    assert fit_rng(g) is not g


def test_the_forest_keeps_no_sibling_of_its_noise_seed_and_predicts_with_fresh_coins():
    """Finding 2: the forest kept a predict Generator spawned beside its noise stream; from it (or its pickle)
    anyone rebuilt the noise and subtracted it. Now nothing seed-like is kept; probabilistic voting draws its
    coins from a separate entropy pool at each call (the same for an integer seed, new for None)."""
    est = RandomDecisionForestClassifier(epsilon=1.0, n_estimators=5, max_depth=2, bounds=[(0, 1)] * 2, classes=[0, 1],
                                         voting="probabilistic", random_state=11).fit(X, Y_CLS)
    assert not [f for f in find_state(est, 11) if f.path != "model.random_state"]
    assert not hasattr(est, "_predict_rng")
    twin = RandomDecisionForestClassifier(**est.get_params()).fit(X, Y_CLS)
    Xp = RNG.random((200, 2))
    first = est.predict(Xp)
    assert np.array_equal(first, twin.predict(Xp)) and np.array_equal(first, est.predict(Xp))  # integer seed
    free = RandomDecisionForestClassifier(**{**est.get_params(), "random_state": None}).fit(X, Y_CLS)
    assert not np.array_equal(free.predict(Xp), free.predict(Xp))  # OS entropy: new coins (P(equal) < 2^-50)
    noise_like = np.random.SeedSequence(11).spawn(2)[1]  # the fit's noise stream
    coins = predict_rng(11).bit_generator.seed_seq
    assert coins.entropy != noise_like.entropy or coins.spawn_key != noise_like.spawn_key
