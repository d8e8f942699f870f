"""A user's private estimator (the README's claims-file example)."""
import numpy as np


class PrivateMajority:
    """Predicts one label for every input: the exponential mechanism over the public ``classes`` with utility
    the label's count (sensitivity 1 under substitution and add/remove), so it is epsilon-DP.

    Parameters
    ----------
    epsilon : float
    classes : sequence of int
        The public label set (never read from the data).
    random_state : int or None
    """

    def __init__(self, epsilon=1.0, classes=(0, 1, 2), random_state=None):
        self.epsilon, self.classes, self.random_state = epsilon, classes, random_state

    def get_params(self, deep=False):
        return {"epsilon": self.epsilon, "classes": self.classes, "random_state": self.random_state}

    def fit(self, X, y):
        rng = np.random.default_rng(self.random_state)
        counts = np.array([np.count_nonzero(np.asarray(y) == c) for c in self.classes], dtype=float)
        logits = self.epsilon * counts / 2.0  # exp(epsilon u / (2 sensitivity)), sensitivity 1
        p = np.exp(logits - logits.max())
        self.label_ = int(self.classes[rng.choice(len(p), p=p / p.sum())])
        return self

    def predict(self, X):
        return np.full(len(X), self.label_)

    def release(self):
        return (self.label_,)
