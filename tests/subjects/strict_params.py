"""An outside-style estimator whose constructor wants what JSON cannot say: ``bounds`` as a tuple of two
sequences ``(mins, maxs)``, as IBM diffprivlib's models do (issue 27 item 5, ``--params``)."""
import numpy as np


class TupleBounds:
    """A noisy count of class-1 records (two-sided geometric noise, epsilon-DP), predicted everywhere."""

    def __init__(self, epsilon=1.0, bounds=None, random_state=None):
        if not (isinstance(bounds, tuple) and len(bounds) == 2):
            raise TypeError(f"bounds must be a tuple (mins, maxs), got {type(bounds).__name__}")
        self.epsilon, self.bounds, self.random_state = epsilon, bounds, random_state

    def fit(self, X, y):
        rng = np.random.default_rng(self.random_state)
        a = np.exp(-self.epsilon)
        noise = int(rng.geometric(1 - a) - rng.geometric(1 - a))
        self.count_ = int(np.sum(np.asarray(y) == 1)) + noise
        return self

    def predict(self, X):
        return np.full(len(X), min(max(self.count_, -3), 6))


def params():
    """The constructor's arguments, arrays included (``--params subjects.strict_params:params``)."""
    return {"epsilon": 1.0, "bounds": (np.zeros(1), np.ones(1))}
