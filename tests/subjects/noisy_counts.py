"""The noisy-count classifier the gate's leaky subjects and their controls are built on.

Per-class counts plus two-sided geometric noise, drawn from a fresh ``np.random.default_rng()`` on every fit:
exactly epsilon-DP for the counts under add/remove (one record moves one count by one). It predicts the noisy
majority. A subject changes where the noise comes from (:meth:`NoisyCounts._rng`) or what else the fit keeps,
emits or serves (:meth:`NoisyCounts._keep`). :class:`SeededFromTheOS` seeds the noise from the OS and hands the
seed to :meth:`SeededFromTheOS._keep_seed`, where a subject keeps it in one form or another.
"""
import secrets

import numpy as np


def two_sided_geometric(rng, epsilon, size):
    """Two-sided geometric noise with P(k) proportional to exp(-epsilon |k|), drawn from ``rng`` (a generator,
    or ``numpy.random`` itself)."""
    p = 1.0 - np.exp(-epsilon)
    return rng.geometric(p, size=size) - rng.geometric(p, size=size)


class NoisyCounts:
    """Noisy class counts (``counts_``); fresh entropy per fit unless a subclass says otherwise."""

    def __init__(self, epsilon=1.0, classes=(0, 1)):
        self.epsilon, self.classes = epsilon, classes

    def get_params(self, deep=True):
        return {"epsilon": self.epsilon, "classes": self.classes}

    def set_params(self, **kw):
        for k, v in kw.items():
            setattr(self, k, v)
        return self

    def _rng(self):
        return np.random.default_rng()

    def fit(self, X, y):
        y = np.asarray(y)
        exact = np.array([int(np.sum(y == c)) for c in self.classes])
        noise = two_sided_geometric(self._rng(), self.epsilon, len(self.classes))
        self._keep(np.asarray(X, dtype=float), y, exact, noise)
        return self

    def _keep(self, X, y, exact, noise):
        self.counts_ = exact + noise

    def predict(self, X):
        return np.full(len(X), self.classes[int(np.argmax(self.counts_))])


class TakesRandomState(NoisyCounts):
    """:class:`NoisyCounts` with scikit-learn's ``random_state`` parameter (a subclass decides what it seeds)."""

    def __init__(self, epsilon=1.0, classes=(0, 1), random_state=None):
        super().__init__(epsilon, classes)
        self.random_state = random_state

    def get_params(self, deep=True):
        return {**super().get_params(deep), "random_state": self.random_state}


class SeededFromTheOS(NoisyCounts):
    """Noise seeded from a ``SEED_BITS``-bit OS seed (``secrets``), handed to :meth:`_keep_seed` first: a subclass
    keeps it somewhere (a leak: whoever reads it replays the noise) or nowhere (correct)."""

    SEED_BITS = 64

    def _rng(self):
        seed = secrets.randbits(self.SEED_BITS)
        self._keep_seed(seed)
        return np.random.default_rng(seed)

    def _keep_seed(self, seed):
        pass
