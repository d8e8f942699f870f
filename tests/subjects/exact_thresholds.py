"""Subjects for the exact check whose randomness includes uniform draws that are not noise: a random threshold
drawn from public bounds (as random decision trees draw their splits), kept in the fitted model and compared with
the records, and a random point of a segment (``dirichlet((1, 1))``) as an empty leaf's value.

The tiny domain's records have one feature in {0.0, 1.0} (estimators) or take values in a public set
(mechanisms); ``a = exp(-epsilon)`` throughout, and every subject draws from a generator made as engineers make
it (``np.random.default_rng()``, or the ``rng`` a mechanism is handed).

* :class:`RandomStump`: one random threshold from the public bounds, noisy leaf counts of each class (two-sided
  geometric, a difference of two geometric draws); correct, exact loss epsilon under add/remove.
* :class:`RandomStumpExactSide`: the same stump also keeps the exact number of records left of its threshold;
  violation, loss infinite.
* :func:`threshold_count`: a mechanism releasing a random threshold ``t`` and the number of records below ``t``,
  with noise (correct: loss epsilon times the largest change of that count over the cells of ``t``) or without
  (violation: infinite wherever the count changes).
* :func:`segment_point`: a random point of the segment, ``rng.dirichlet((1, 1))``, beside a noisy count: correct,
  loss epsilon; with three classes (a Dirichlet of the triangle) the draw is continuous and undecided.
"""
import numpy as np


class RandomStump:
    """A one-split random tree: the threshold uniform on the public bounds, then noisy counts per leaf and class."""

    def __init__(self, epsilon=1.0, bounds=((0.0, 1.0),), classes=(0, 1)):
        self.epsilon, self.bounds, self.classes = epsilon, bounds, classes

    def get_params(self, deep=True):
        return {"epsilon": self.epsilon, "bounds": self.bounds, "classes": self.classes}

    def _counts(self, X, y):
        left = X[:, 0] < self.threshold_
        return np.array([[np.sum((left == side) & (y == c)) for c in self.classes] for side in (True, False)])

    def fit(self, X, y):
        rng = np.random.default_rng()
        low, high = self.bounds[0]
        self.threshold_ = low + rng.random() * (high - low)
        counts = self._counts(X, y)
        p = 1 - np.exp(-self.epsilon)
        self.noisy_counts_ = counts + rng.geometric(p, counts.shape) - rng.geometric(p, counts.shape)
        return self

    def predict(self, X):
        side = np.where(X[:, 0] < self.threshold_, 0, 1)
        return np.asarray(self.classes)[np.argmax(self.noisy_counts_[side], axis=1)]


class RandomStumpExactSide(RandomStump):
    """The stump, keeping beside its noisy counts how many records fell left of the threshold: not private."""

    def fit(self, X, y):
        super().fit(X, y)
        self.n_left_ = int(np.sum(X[:, 0] < self.threshold_))
        return self


def threshold_count(data, rng, epsilon=1.0, noisy=True):
    """``(t, #{x < t} + noise)`` for a uniform threshold ``t`` on ``[0, 1)``."""
    t = rng.random()
    count = sum(1 for x in data if x < t)
    if noisy:
        p = 1 - np.exp(-epsilon)
        count = count + rng.geometric(p) - rng.geometric(p)
    return t, count


def segment_point(data, rng, epsilon=1.0, classes=2):
    """A random point of the simplex of ``classes`` classes beside the record count with two-sided geometric
    noise."""
    p = 1 - np.exp(-epsilon)
    return rng.dirichlet(np.ones(classes)), len(data) + rng.geometric(p) - rng.geometric(p)
