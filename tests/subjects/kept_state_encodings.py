"""Outside-style estimators that keep their noise generator's state in an encoding (state probe tests).

Each releases noisy class counts (Laplace noise, ``counts_``, as in :mod:`subjects.kept_state_forms`) and keeps
the generator's state after the noise in one encoding: a JSON string, a ``repr`` string, PCG64's ``[state, inc]``
as two ints, the same as a ``uint64`` array of four words, as bytes, or as two attributes; MT19937's key and
position; Philox's counter and key words; SFC64's four words. Loading the words into the bit generator and stepping
it back redraws the noise. ``RunIdentifier`` and ``PublicFacts`` are the correct controls: the first keeps two
large odd integers that change from fit to fit (a run id drawn from the generator, not its state), the second a
hash of its public parameters, ``n_features_in_``, ``classes_`` and a model card naming only public parameters.
"""
# The noisy counts of the leak subjects are floats (Laplace noise, as in subjects.kept_state_forms): the gate also
# flags them through the floating-point probe; the state probe's finding comes first and names the encoding.
from __future__ import annotations

import hashlib
import json

import numpy as np
from sklearn.utils import check_random_state

from subjects.kept_state_forms import _Noisy

_M64 = 2 ** 64 - 1


def _generator(random_state, bit_generator=np.random.PCG64):
    """``random_state`` as a Generator: passed through when it is one, else seeds ``bit_generator``."""
    if isinstance(random_state, np.random.Generator):
        return random_state
    return np.random.Generator(bit_generator(random_state))


def _pcg(rng):
    st = rng.bit_generator.state["state"]
    return st["state"], st["inc"]


class StateAsJson(_Noisy):
    """``rng_state_ = json.dumps(rng.bit_generator.state)``: a checkpoint string to resume the stream."""

    def fit(self, X, y):
        rng = np.random.default_rng(self.random_state)
        self.counts_ = self._counts(y, rng.laplace)
        self.rng_state_ = json.dumps(rng.bit_generator.state)
        return self


class StateAsRepr(_Noisy):
    """``repr`` of the state dict, kept in a log-style string."""

    def fit(self, X, y):
        rng = np.random.default_rng(self.random_state)
        self.counts_ = self._counts(y, rng.laplace)
        self.rng_state_ = repr(rng.bit_generator.state)
        return self


class PCG64Pair(_Noisy):
    """PCG64's ``[state, inc]`` as two Python ints in a list."""

    def fit(self, X, y):
        rng = np.random.default_rng(self.random_state)
        self.counts_ = self._counts(y, rng.laplace)
        self.pcg_ = list(_pcg(rng))
        return self


class PCG64TwoAttributes(_Noisy):
    """The same two ints under two attribute names."""

    def fit(self, X, y):
        rng = np.random.default_rng(self.random_state)
        self.counts_ = self._counts(y, rng.laplace)
        self.stream_pos_, self.stream_id_ = _pcg(rng)
        return self


class PCG64Words(_Noisy):
    """``[state, inc]`` split into four 64-bit words (high word first) in a ``uint64`` array."""

    def fit(self, X, y):
        rng = np.random.default_rng(self.random_state)
        self.counts_ = self._counts(y, rng.laplace)
        s, inc = _pcg(rng)
        self.words_ = np.array([s >> 64, s & _M64, inc >> 64, inc & _M64], dtype=np.uint64)
        return self


class PCG64Bytes(_Noisy):
    """``state.to_bytes(16, 'little') + inc.to_bytes(16, 'little')``: a compact checkpoint."""

    def fit(self, X, y):
        rng = np.random.default_rng(self.random_state)
        self.counts_ = self._counts(y, rng.laplace)
        s, inc = _pcg(rng)
        self.checkpoint_ = s.to_bytes(16, "little") + inc.to_bytes(16, "little")
        return self


class MT19937KeyPos(_Noisy):
    """The scikit-learn generator's MT19937 key (624 ``uint32`` words) and position, kept as two attributes."""

    def fit(self, X, y):
        rs = check_random_state(self.random_state)
        self.counts_ = self._counts(y, rs.laplace)
        _, key, pos, _, _ = rs.get_state()
        self.mt_key_, self.mt_pos_ = key.copy(), int(pos)
        return self


class PhiloxWords(_Noisy):
    """A counter-based generator (Philox) whose counter and key words are kept in one ``uint64`` array."""

    def fit(self, X, y):
        rng = _generator(self.random_state, np.random.Philox)
        self.counts_ = self._counts(y, rng.laplace)
        st = rng.bit_generator.state["state"]
        self.philox_ = np.concatenate([st["counter"], st["key"]])
        return self


class SFC64Words(_Noisy):
    """SFC64's four state words kept as a tuple of ints."""

    def fit(self, X, y):
        rng = _generator(self.random_state, np.random.SFC64)
        self.counts_ = self._counts(y, rng.laplace)
        self.sfc_ = tuple(int(w) for w in rng.bit_generator.state["state"]["state"])
        return self


class RunIdentifier(_Noisy):
    """Correct: keeps a run id, two odd 128-bit integers drawn from the generator (not its state); they change from
    fit to fit, as a state would, but no generator seeded with the fit's seed holds them."""

    def fit(self, X, y):
        rng = np.random.default_rng(self.random_state)
        self.counts_ = self._counts(y, rng.laplace)
        hi = [int(w) for w in rng.integers(0, 2 ** 63, size=4)]
        self.run_id_ = [(hi[0] << 64 | hi[1]), (hi[2] << 64 | hi[3]) | 1]
        return self


class PublicFacts(_Noisy):
    """Correct: keeps only public facts beside the noisy counts: ``n_features_in_``, the declared ``classes_``, a
    model card naming its public parameters and two large ints hashing them (the second made odd, like PCG64's
    increment). Its counts take two-sided geometric noise (integers: no floating-point lattice to read)."""

    def fit(self, X, y):
        rng = np.random.default_rng(self.random_state)
        p = 1 - np.exp(-self.epsilon)
        noise = rng.geometric(p, size=2) - rng.geometric(p, size=2)
        self.counts_ = np.bincount(np.asarray(y, dtype=int), minlength=2) + noise
        self.n_features_in_ = np.asarray(X).shape[1]
        self.classes_ = np.array([0, 1])
        self.model_card_ = f"noisy class counts, Laplace noise, epsilon={self.epsilon}, classes 0 and 1"
        h = hashlib.sha256(self.model_card_.encode()).digest()
        self.card_hash_ = [int.from_bytes(h[:16], "little"), int.from_bytes(h[16:], "little") | 1]
        return self
