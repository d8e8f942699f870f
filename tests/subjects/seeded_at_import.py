"""Classifiers whose noise is seeded when their module is imported: the same noise in every fresh process.

Each releases per-class counts with two-sided geometric noise (exactly epsilon-DP for counts under add/remove,
were the noise fresh) and predicts the noisy majority. Inside one process every fit draws new noise, so every
coordinate has the right law there; only a new process shows that its first fit (and every later one) adds
the same noise as any other process's: whoever knows the code subtracts it.

* ``GlobalSeededAtImport``: ``np.random.seed(1234)`` at import, then numpy's global functions in ``fit``;
* ``ModuleGenerator``: a module-level ``np.random.default_rng(2024)`` shared by every fit.
"""
import numpy as np

np.random.seed(1234)  # "reproducible results"
_RNG = np.random.default_rng(2024)


class _Counts:
    def __init__(self, epsilon=1.0, classes=(0, 1)):
        self.epsilon, self.classes = epsilon, classes

    def get_params(self, deep=True):
        return {"epsilon": self.epsilon, "classes": self.classes}

    def set_params(self, **kw):
        for k, v in kw.items():
            setattr(self, k, v)
        return self

    def _geometric(self, size):
        raise NotImplementedError

    def fit(self, X, y):
        y = np.asarray(y)
        exact = np.array([np.sum(y == c) for c in self.classes])
        self.counts_ = exact + self._geometric(len(self.classes)) - self._geometric(len(self.classes))
        return self

    def predict(self, X):
        return np.full(len(X), self.classes[int(np.argmax(self.counts_))])


class GlobalSeededAtImport(_Counts):
    def _geometric(self, size):
        return np.random.geometric(1.0 - np.exp(-self.epsilon), size=size)


class ModuleGenerator(_Counts):
    def _geometric(self, size):
        return _RNG.geometric(1.0 - np.exp(-self.epsilon), size=size)
