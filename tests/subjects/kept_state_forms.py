"""Outside-style estimators that keep their randomness in ordinary forms (state probe tests).

Each releases noisy class counts (Laplace noise, ``counts_``) and keeps what replays that noise in one
form: the scikit-learn idiom ``random_state_``, a bit generator's state dict, a bound method, a dict key,
pickled bytes, a deque, a ``__slots__ = "rng"`` holder, a derived seed, the seed as a string or as two
32-bit words, an OS-entropy seed, ``random.Random().getstate()``, or a generator nested deeper than the
old probe's 200,000-node cap. ``CleanLocal`` and ``NoisyBigCounts`` are the clean counterparts: the
first keeps nothing, the second keeps noisy integers that change from fit to fit but are no seed.
"""
from __future__ import annotations

import pickle
import random
import secrets
from collections import deque

import numpy as np
from sklearn.utils import check_random_state


class _Noisy:
    def __init__(self, epsilon=1.0, random_state=None):
        self.epsilon, self.random_state = epsilon, random_state

    def get_params(self, deep=True):
        return {"epsilon": self.epsilon, "random_state": self.random_state}

    def set_params(self, **kw):
        for k, v in kw.items():
            setattr(self, k, v)
        return self

    def _counts(self, y, laplace):
        return np.bincount(np.asarray(y, dtype=int), minlength=2) + laplace(0.0, 1 / self.epsilon, size=2)

    def predict(self, X):
        return np.full(len(X), int(np.argmax(self.counts_)))


class KeepsCheckRandomState(_Noisy):
    """The scikit-learn idiom kept: ``self.random_state_ = check_random_state(self.random_state)``."""

    def fit(self, X, y):
        self.random_state_ = check_random_state(self.random_state)
        self.counts_ = self._counts(y, self.random_state_.laplace)
        return self


class CleanLocal(_Noisy):
    """The same with the generator local to ``fit``: nothing kept."""

    def fit(self, X, y):
        rng = check_random_state(self.random_state)
        self.counts_ = self._counts(y, rng.laplace)
        return self


class KeepsBitGeneratorState(_Noisy):
    def fit(self, X, y):
        rng = np.random.default_rng(self.random_state)
        self.rng_state_ = rng.bit_generator.state
        self.counts_ = self._counts(y, rng.laplace)
        return self


class KeepsBoundMethod(_Noisy):
    def fit(self, X, y):
        rng = np.random.default_rng(self.random_state)
        self.counts_ = self._counts(y, rng.laplace)
        self.jitter_ = rng.random
        return self


class GeneratorAsDictKey(_Noisy):
    def fit(self, X, y):
        rng = np.random.default_rng(self.random_state)
        self.counts_ = self._counts(y, rng.laplace)
        self.table_ = {rng: "noise source"}
        return self


class GeneratorInBytes(_Noisy):
    def fit(self, X, y):
        rng = np.random.default_rng(self.random_state)
        self.counts_ = self._counts(y, rng.laplace)
        self.blob_ = pickle.dumps(rng)
        return self


class GeneratorInDeque(_Noisy):
    def fit(self, X, y):
        rng = np.random.default_rng(self.random_state)
        self.counts_ = self._counts(y, rng.laplace)
        self.history_ = deque([rng], maxlen=4)
        return self


class Holder:
    __slots__ = "rng"

    def __init__(self, rng):
        self.rng = rng


class GeneratorInSlotsHolder(_Noisy):
    def fit(self, X, y):
        rng = np.random.default_rng(self.random_state)
        self.counts_ = self._counts(y, rng.laplace)
        self.holder_ = Holder(rng)
        return self


class DerivedTreeSeed(_Noisy):
    """The scikit-learn forest pattern: a seed drawn from the generator, kept, and used for the noise."""

    def fit(self, X, y):
        rng = np.random.default_rng(self.random_state)
        self.tree_seed_ = int(rng.integers(2 ** 31))
        self.counts_ = self._counts(y, np.random.default_rng(self.tree_seed_).laplace)
        return self


class SeedAsString(_Noisy):
    def fit(self, X, y):
        self.tag_ = f"fitted with seed {self.random_state}"
        self.counts_ = self._counts(y, np.random.default_rng(self.random_state).laplace)
        return self


class SeedAsWords(_Noisy):
    def fit(self, X, y):
        s = int(self.random_state)
        self.words_ = (s >> 32, s & 0xFFFFFFFF)
        self.counts_ = self._counts(y, np.random.default_rng(s).laplace)
        return self


class OSEntropySeed(_Noisy):
    """``seed_ = SeedSequence(random_state).entropy``: OS entropy when unseeded, kept, used for the noise."""

    def fit(self, X, y):
        self.seed_ = np.random.SeedSequence(self.random_state).entropy
        self.counts_ = self._counts(y, np.random.default_rng(self.seed_).laplace)
        return self


class OSEntropyBits(_Noisy):
    """Takes only strong seeds (64 bits): unseeded, ``seed_ = secrets.randbits(64)`` is kept and used for the
    noise. The probe's seeds are refused, so it fits unseeded: no seed copy, no generator; only a replay with
    ``seed_`` as ``random_state`` shows the leak."""

    def fit(self, X, y):
        if self.random_state is not None and not 2 ** 32 <= int(self.random_state) < 2 ** 64:
            raise ValueError("random_state must be a 64-bit seed")
        self.seed_ = secrets.randbits(64) if self.random_state is None else int(self.random_state)
        self.counts_ = self._counts(y, np.random.default_rng(self.seed_).laplace)
        return self


class KeepsRandomGetState(_Noisy):
    def fit(self, X, y):
        r = random.Random(self.random_state)
        self.state_ = r.getstate()
        self.counts_ = np.bincount(np.asarray(y, dtype=int), minlength=2) + np.array(
            [r.expovariate(self.epsilon) - r.expovariate(self.epsilon) for _ in range(2)])
        return self


class NestedGenerator(_Noisy):
    """A generator behind ``2 * ENTRIES`` other nodes (breadth first), at ``log_[ENTRIES][0]['source']``: 300, past
    a walk capped at 100 nodes."""

    ENTRIES = 150

    def fit(self, X, y):
        rng = np.random.default_rng(self.random_state)
        self.counts_ = self._counts(y, rng.laplace)
        self.log_ = [[float(i)] for i in range(self.ENTRIES)] + [[{"source": rng}]]
        return self


class DeeplyNestedGenerator(NestedGenerator):
    """A generator behind 210,000 other nodes (breadth first): past the old probe's 200,000-node cap."""

    ENTRIES = 105_000


class NoisyBigCounts(_Noisy):
    """Clean: keeps large noisy integer counts (they change from fit to fit, yet replaying with one does
    not reproduce the model)."""

    def fit(self, X, y):
        rng = np.random.default_rng(self.random_state)
        base = 100_000 + np.bincount(np.asarray(y, dtype=int), minlength=2)
        noise = rng.geometric(1 - np.exp(-self.epsilon), size=2) - rng.geometric(1 - np.exp(-self.epsilon), size=2)
        self.counts_ = (base + noise).astype(np.int64)
        self.total_ = int(self.counts_.sum())
        return self


class EntropyIgnoringSeed(_Noisy):
    """Ignores ``random_state``: ``seed_`` is drawn from OS entropy on every fit, kept, and seeds the noise. No
    seed of a known fit names it; replaying the fit with every integer seed it makes replaced by ``seed_``
    reproduces the model."""

    def fit(self, X, y):
        self.seed_ = int(np.random.SeedSequence().entropy % 2**63)
        self.counts_ = self._counts(y, np.random.default_rng(self.seed_).laplace)
        return self
