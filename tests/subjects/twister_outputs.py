"""Noise from a Mersenne twister whose later outputs the model keeps: 624 outputs are the whole generator.

Each subject is :class:`~subjects.noisy_counts.NoisyCounts` (two-sided geometric noise on the class counts) drawn
from a twister, and then keeps outputs the same twister draws after the noise, for a use that looks harmless:

* ``HashSalts``: ``random.Random()`` from the OS; 624 32-bit salts for a hashing trick (``getrandbits(32)``);
* ``FeatureHashKeys``: NumPy's ``RandomState()``; 400 64-bit keys (``randint(0, 2**64, dtype=uint64)``: two
  outputs each, high word first);
* ``SeededSalts``: ``RandomState(random_state)``, the scikit-learn habit; 700 ``uint32`` salts.

Whoever holds the model untempers 624 outputs, steps the state back past the noise draws and redraws the noise.

``SaltsOfTheirOwn`` is the control: its salts come from a ``random.Random()`` of their own, and its noise from a
fresh ``default_rng()``; nothing the salts reveal is in the counts.
"""
import math
import random

import numpy as np

from subjects.noisy_counts import NoisyCounts, TakesRandomState, two_sided_geometric


def _geometric(r, p):
    """A geometric draw on {1, 2, ...} from ``random.Random`` ``r`` (inversion)."""
    return int(math.log(1.0 - r.random()) // math.log(1.0 - p)) + 1


class HashSalts(NoisyCounts):
    def fit(self, X, y):
        r = random.Random()
        p = 1.0 - math.exp(-self.epsilon)
        y = np.asarray(y)
        exact = np.array([int(np.sum(y == c)) for c in self.classes])
        self.counts_ = exact + np.array([_geometric(r, p) - _geometric(r, p) for _ in self.classes])
        self.salts_ = [r.getrandbits(32) for _ in range(624)]
        return self


class FeatureHashKeys(NoisyCounts):
    def _rng(self):
        self._twister = np.random.RandomState()
        return self._twister

    def _keep(self, X, y, exact, noise):
        self.counts_ = exact + noise
        self.keys_ = self._twister.randint(0, 2**64, size=400, dtype=np.uint64)
        del self._twister


class SeededSalts(TakesRandomState):
    def fit(self, X, y):
        rs = np.random.RandomState(self.random_state)
        y = np.asarray(y)
        exact = np.array([int(np.sum(y == c)) for c in self.classes])
        self.counts_ = exact + two_sided_geometric(rs, self.epsilon, len(self.classes))
        self.salts_ = rs.randint(0, 2**32, size=700, dtype=np.uint32)
        return self


class SaltsOfTheirOwn(NoisyCounts):
    def _keep(self, X, y, exact, noise):
        self.counts_ = exact + noise
        r = random.Random()
        self.salts_ = [r.getrandbits(32) for _ in range(624)]
