"""A DP mean whose noise assumes more records than the smallest datasets hold.

``NoisyMean`` releases the mean of feature 0 (public bounds [0, 1]) plus Laplace noise of a fixed scale, rounded
to a public lattice of 1e-4 (post-processing). Under add/remove the mean of ``n`` records moves by at most
``1 / (n + 1)`` when one is added, so the sensitivity is 1/2 (one record vs two); the leaky version assumes 1/4
(scale ``1 / (4 epsilon)``, right from three records on): one record at a bound vs two at opposite bounds loses
``2 epsilon``, two vs three ``4/3 epsilon``, larger datasets at most ``epsilon``. ``fixed=True`` uses the
sensitivity 1/2 (scale ``1 / (2 epsilon)``): exactly epsilon-DP, the loss epsilon reached on that same pair.
"""
import numpy as np


class NoisyMean:
    def __init__(self, epsilon=1.0, random_state=None, fixed=False):
        self.epsilon, self.random_state, self.fixed = epsilon, random_state, fixed

    def get_params(self, deep=True):
        return {"epsilon": self.epsilon, "random_state": self.random_state, "fixed": self.fixed}

    def set_params(self, **kw):
        for k, v in kw.items():
            setattr(self, k, v)
        return self

    def fit(self, X, y):
        X = np.asarray(X, dtype=float)
        if len(X) == 0:
            raise ValueError("cannot take the mean of no records")
        rng = np.random.default_rng(self.random_state)
        scale = 1.0 / ((2 if self.fixed else 4) * self.epsilon)
        self.mean_ = round(float(np.clip(X[:, 0], 0, 1).mean() + rng.laplace(0.0, scale)), 4)
        return self

    def predict(self, X):
        return np.full(len(X), self.mean_)
