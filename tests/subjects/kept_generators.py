"""Models that keep a generator built from fresh OS entropy: for later use only (correct), or tied to the noise.

Each releases noisy class counts (two-sided geometric noise, exactly epsilon-DP under add/remove) and keeps a
``numpy.random.Generator`` as ``_rng`` for ``predict``'s random tie-breaking:

* ``TieBreaker`` (correct): the noise comes from a local generator; ``_rng`` is a second one, built afterwards
  from fresh OS entropy, that the fit never draws from. Its state tells nothing about the noise.
* ``TieBreakerStamped`` (correct): the same, with a fit time stamp and duration that change on every fit.
* ``KeptNoiseSource``: ``_rng`` drew the noise (the classic leak: rewound, it replays the fit).
* ``JumpedNoise``: the noise comes from ``_rng.bit_generator.jumped()``; ``_rng`` itself draws nothing.
* ``SpawnedNoise``: the noise comes from ``_rng.spawn(1)[0]``, a child of ``_rng``'s seed sequence, which its
  pickle carries.
* ``SeedFromKept``: the noise generator is seeded with ``_rng.integers(2**63)``.
* ``OneCoin``: a randomized-response bit (ε = 1) for the majority class, drawn from ``_rng``: a coarse release
  that repeats on about 3 fits in 4 whatever the seed.

Three keep a generator's raw words instead (PCG64's state and increment, :mod:`audit.gate.state.unseeded`):
``CheckpointBeforeDraws`` and ``StateAfterDraws`` of the noise generator (leaks), ``IdleCheckpoint`` of a second
generator the fit never draws from (the control).

Four keep a generator's *state* in plain data, which a walk recognises on sight (:mod:`audit.gate.state.walk`):
``NoiseStateDict`` (the noise generator's ``bit_generator.state`` after the draws) and ``RandomCheckpoint`` (a
``random.Random`` seeded from ``os.urandom``, its state pickled and zlib-compressed before it draws the noise) are
leaks; ``IdleStateDict`` and ``IdleRandomCheckpoint`` keep the same of a second generator the fit never draws from
(the controls).
"""
from __future__ import annotations

import math
import os
import pickle
import random
import time
import zlib

import numpy as np

from .noisy_counts import NoisyCounts, two_sided_geometric


class TieBreaker(NoisyCounts):
    def fit(self, X, y):
        super().fit(X, y)
        self._rng = np.random.default_rng()
        return self

    def predict(self, X):
        top = np.flatnonzero(self.counts_ == self.counts_.max())
        return np.asarray(self.classes)[self._rng.choice(top, size=len(X))]


class TieBreakerStamped(TieBreaker):
    def fit(self, X, y):
        start = time.perf_counter()
        super().fit(X, y)
        self.fitted_at_, self.fit_seconds_ = time.time(), time.perf_counter() - start
        return self


class SaltsFromTieBreaker(TieBreaker):
    """A control: hashing salts for the bucket table drawn from the kept tie-breaking ``random.Random()``; the noise
    from a fresh generator of its own (the salts move with the kept generator's source, alike on every input)."""

    def fit(self, X, y):
        super().fit(X, y)
        self._ties = random.Random()
        self.bucket_salts_ = [self._ties.getrandbits(32) for _ in range(16)]
        return self


class _KeptTied(TieBreaker):
    def fit(self, X, y):
        y = np.asarray(y)
        exact = np.array([int(np.sum(y == c)) for c in self.classes])
        self._rng = np.random.default_rng()
        self.counts_ = exact + two_sided_geometric(self._noise_source(), self.epsilon, len(self.classes))
        return self


class KeptNoiseSource(_KeptTied):
    def _noise_source(self):
        return self._rng


class JumpedNoise(_KeptTied):
    def _noise_source(self):
        return np.random.Generator(self._rng.bit_generator.jumped())


class SpawnedNoise(_KeptTied):
    def _noise_source(self):
        return self._rng.spawn(1)[0]


class SeedFromKept(_KeptTied):
    def _noise_source(self):
        return np.random.default_rng(int(self._rng.integers(2 ** 63)))


class OneCoin(TieBreaker):
    def fit(self, X, y):
        y = np.asarray(y)
        self._rng = np.random.default_rng()
        majority = int(np.sum(y == self.classes[1]) > np.sum(y == self.classes[0]))
        keep = self._rng.random() < np.e / (1 + np.e)
        self.majority_ = majority if keep else 1 - majority
        self.counts_ = np.array([1 - self.majority_, self.majority_])
        return self


class CheckpointBeforeDraws(NoisyCounts):
    """Keeps its unseeded ``default_rng()``'s PCG64 state and increment as a checkpoint taken before the noise
    ("to resume with the same noise")."""

    def _rng(self):
        rng = np.random.default_rng()
        self.checkpoint_ = dict(rng.bit_generator.state["state"])
        return rng


class _HoldsNoiseRng(NoisyCounts):
    """Holds its noise generator during the fit (``_noise_rng``), which its pickle leaves out."""

    def _rng(self):
        self._noise_rng = np.random.default_rng()
        return self._noise_rng

    def __getstate__(self):
        return {k: v for k, v in vars(self).items() if k != "_noise_rng"}


class StateAfterDraws(_HoldsNoiseRng):
    """Keeps the same generator's state and increment after the noise, as two attributes."""

    def _keep(self, X, y, exact, noise):
        super()._keep(X, y, exact, noise)
        state = self._noise_rng.bit_generator.state["state"]
        self.position_, self.stream_ = state["state"], state["inc"]


class IdleCheckpoint(NoisyCounts):
    """The control: the state of a second generator, built for later tie-breaking and never drawn from in the
    fit, kept as a checkpoint."""

    def _keep(self, X, y, exact, noise):
        super()._keep(X, y, exact, noise)
        self.tie_checkpoint_ = dict(np.random.default_rng().bit_generator.state["state"])


class NoiseStateDict(_HoldsNoiseRng):
    """Keeps its noise generator's ``bit_generator.state`` after the draws, "for reproducibility"."""

    def _keep(self, X, y, exact, noise):
        super()._keep(X, y, exact, noise)
        self.rng_state_ = self._noise_rng.bit_generator.state


class IdleStateDict(NoisyCounts):
    """The control: the ``bit_generator.state`` of a second generator the fit never draws from."""

    def _keep(self, X, y, exact, noise):
        super()._keep(X, y, exact, noise)
        self.tie_state_ = np.random.default_rng().bit_generator.state


def _python_geometric(r: random.Random, epsilon: float) -> int:
    """Two-sided geometric noise of rate ``epsilon`` from a ``random.Random`` (the difference of two geometric
    draws by inversion)."""
    log_q = -epsilon
    return int(math.log(1.0 - r.random()) // log_q) - int(math.log(1.0 - r.random()) // log_q)


class RandomCheckpoint(NoisyCounts):
    """Draws its noise from ``random.Random(os.urandom(8))`` and keeps that generator's state from before the
    draws, pickled and zlib-compressed, "to replay the fit"."""

    def fit(self, X, y):
        y = np.asarray(y)
        r = random.Random(os.urandom(8))
        self._replay_blob = zlib.compress(pickle.dumps(r.getstate()))
        self.counts_ = np.array([int(np.sum(y == c)) + _python_geometric(r, self.epsilon) for c in self.classes])
        return self


class IdleRandomCheckpoint(NoisyCounts):
    """The control: the compressed state of a second ``random.Random(os.urandom(8))`` kept for tie-breaking,
    which the fit never draws from."""

    def fit(self, X, y):
        super().fit(X, y)
        self._tie_blob = zlib.compress(pickle.dumps(random.Random(os.urandom(8)).getstate()))
        return self


#: randomness drawn before any fit, at import: a tie-breaking generator and a pool of seeds spawned from per fit
_TIES = np.random.default_rng()
_POOL = np.random.SeedSequence()


class ModuleTieBreaker(NoisyCounts):
    """A control: keeps a reference to the module's tie-breaking generator, built at import; the noise comes from
    a generator of the fit's own. No source the fit draws moves the kept generator (a fresh process does)."""

    def fit(self, X, y):
        super().fit(X, y)
        self._rng = _TIES
        return self


class SpawnedTieBreaker(NoisyCounts):
    """A control: a tie-breaking generator spawned from the module's pool at each fit, with the pool's entropy and
    the child's spawn key kept as its provenance; the noise from a generator of the fit's own."""

    def fit(self, X, y):
        super().fit(X, y)
        child = _POOL.spawn(1)[0]
        self.provenance_ = {"entropy": _POOL.entropy, "spawn_key": list(child.spawn_key)}
        self._rng = np.random.default_rng(child)
        return self


class ModuleNoise(NoisyCounts):
    """Leaks: the noise drawn from the module's generator, which the model keeps (rewound, it replays the noise)."""

    def _rng(self):
        return _TIES

    def fit(self, X, y):
        super().fit(X, y)
        self._noise_source = _TIES
        return self
