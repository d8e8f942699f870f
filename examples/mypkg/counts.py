"""A noisy-count classifier as one ships it with NumPy's generator (the exact-mode guide's example)."""
import numpy as np


class NoisyCounts:
    """Per-class counts plus two-sided geometric noise, P(z) proportional to exp(-epsilon |z|): epsilon-DP
    under add/remove (one record moves one count by one). Predicts the noisy majority."""

    def __init__(self, epsilon=1.0, classes=(0, 1), random_state=None):
        self.epsilon, self.classes, self.random_state = epsilon, classes, random_state

    def get_params(self, deep=True):
        return {"epsilon": self.epsilon, "classes": self.classes, "random_state": self.random_state}

    def set_params(self, **params):
        for key, value in params.items():
            setattr(self, key, value)
        return self

    def _rate(self):
        return self.epsilon

    def fit(self, X, y):
        rng = np.random.default_rng(self.random_state)
        p = 1.0 - np.exp(-self._rate())
        counts = np.array([np.sum(np.asarray(y) == c) for c in self.classes])
        self.counts_ = counts + rng.geometric(p, size=len(counts)) - rng.geometric(p, size=len(counts))
        return self

    def predict(self, X):
        return np.full(len(X), self.classes[int(np.argmax(self.counts_))])


class NoisyCountsHalfNoise(NoisyCounts):
    """The same with the noise's rate doubled (half the noise): 2 epsilon-DP, not epsilon."""

    def _rate(self):
        return 2 * self.epsilon
