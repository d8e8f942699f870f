"""Outside-style estimators for the state probe of ``audit check`` (issue 27 item 2).

``NoisyCountModel`` releases a noisy count of class-1 records (discrete Laplace noise, epsilon-DP) and
predicts it. With ``keep=True`` it keeps the generator that drew the noise, as our random decision
forest once kept a sibling of its noise seed: whoever holds the model rewinds the generator, redraws
the noise and subtracts it. With ``keep=False`` the generator is local to ``fit``.
"""
import numpy as np


class NoisyCountModel:
    def __init__(self, epsilon=1.0, random_state=None, keep=True):
        self.epsilon, self.random_state, self.keep = epsilon, random_state, keep

    def get_params(self, deep=True):
        return {"epsilon": self.epsilon, "random_state": self.random_state, "keep": self.keep}

    def set_params(self, **kw):
        for k, v in kw.items():
            setattr(self, k, v)
        return self

    def fit(self, X, y):
        rng = np.random.default_rng(self.random_state)
        a = np.exp(-self.epsilon)
        noise = int(rng.geometric(1 - a) - rng.geometric(1 - a))
        self.count_ = int(np.sum(np.asarray(y) == 1)) + noise
        if self.keep:
            self.noise_rng_ = rng
        return self

    def release(self):
        return self.count_

    def predict(self, X):
        return np.full(len(X), self.count_)
