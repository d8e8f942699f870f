"""A random decision forest written from the paper as a user would (issue 57, items 1 and 2), for ``compare``.

Bojarski et al., Algorithm 2, as array code of its own (nothing of :mod:`reference.random_trees` but the release
format): every inner node draws an attribute uniformly and a threshold uniformly in the attribute's public range;
a record goes right iff ``x[attribute] > threshold``; every leaf count gets two-sided geometric noise of scale
``n_estimators / epsilon`` (add/remove); a leaf whose noisy counts hold a negative one or are all zero is
invalid and gets a uniform ``theta``, any other ``theta = noisy / sum(noisy)``. ``release()`` is the reference's:
``(("structure", ((attribute, threshold), ...) per tree), ("leaves", (theta per leaf) per tree))`` rounded to 6
decimals. Each class below changes one detail, as a bug would:

* :class:`UserForest`: correct (expected: "same");
* :class:`ZeroCountInvalid`: a noisy count of exactly 0 makes the leaf invalid (``<= 0`` for ``< 0``): the
  release ``theta = (0, 1)`` of a one-record leaf never occurs (expected: "different");
* :class:`SwappedChildren`: the records ``x <= threshold`` go right and the others left (expected: "different"
  whenever a split routes records, i.e. at depth >= 1).
"""
import numpy as np


class UserForest:
    """The correct candidate (module docstring)."""

    def __init__(self, n_estimators=2, max_depth=0, epsilon=1.0, bounds=None, classes=(0, 1), random_state=None):
        self.n_estimators, self.max_depth, self.epsilon = n_estimators, max_depth, epsilon
        self.bounds, self.classes, self.random_state = bounds, classes, random_state

    def _invalid(self, noisy):
        return np.any(noisy < 0, axis=-1) | np.all(noisy == 0, axis=-1)

    def _goes_right(self, x, t):
        return x > t

    def fit(self, X, y):
        rng = np.random.default_rng(self.random_state)
        X = np.asarray(X, dtype=float)
        k, h, bounds = int(self.n_estimators), int(self.max_depth), np.asarray(self.bounds, dtype=float)
        classes = list(self.classes)
        y_index = np.array([classes.index(v) for v in np.asarray(y).tolist()], dtype=np.int64)
        n_inner, n_leaves = 2 ** h - 1, 2 ** h
        self.attributes_ = rng.integers(0, bounds.shape[0], size=(k, n_inner))
        lo, hi = bounds[self.attributes_, 0], bounds[self.attributes_, 1]
        self.thresholds_ = lo + rng.random(size=(k, n_inner)) * (hi - lo)
        node = np.zeros((k, X.shape[0]), dtype=np.int64)  # heap index of each record's node, per tree
        rows = np.arange(k)[:, None]
        for _ in range(h):
            x = X[np.arange(X.shape[0])[None, :], self.attributes_[rows, node]] if X.shape[0] else np.zeros((k, 0))
            node = 2 * node + np.where(self._goes_right(x, self.thresholds_[rows, node]), 2, 1)
        leaf = node - n_inner
        counts = np.zeros((k, n_leaves, len(classes)), dtype=np.int64)
        np.add.at(counts, (np.repeat(np.arange(k), X.shape[0]), leaf.ravel(), np.tile(y_index, k)), 1)
        p = 1.0 - np.exp(-self.epsilon / k)  # two-sided geometric of scale k / epsilon
        noisy = counts + rng.geometric(p, size=counts.shape) - rng.geometric(p, size=counts.shape)
        total = noisy.sum(axis=-1, keepdims=True)
        theta = np.divide(noisy, total, out=np.zeros(noisy.shape), where=total != 0)
        uniform = rng.dirichlet(np.ones(len(classes)), size=(k, n_leaves))
        self.theta_ = np.where(self._invalid(noisy)[..., None], uniform, theta)
        return self

    def release(self):
        k = self.attributes_.shape[0]
        structure = tuple(tuple((int(a), round(float(t), 6)) for a, t in zip(self.attributes_[i],
                                                                             self.thresholds_[i])) for i in range(k))
        leaves = tuple(tuple(tuple(round(float(v), 6) for v in leaf) for leaf in self.theta_[i]) for i in range(k))
        return (("structure", structure), ("leaves", leaves))


class ZeroCountInvalid(UserForest):
    """The planted bug of issue 57 item 1: ``<= 0`` for ``< 0`` in the invalid-leaf test."""

    def _invalid(self, noisy):
        return np.any(noisy <= 0, axis=-1)


class SwappedChildren(UserForest):
    """Routing with the children swapped at every split (issue 57 item 2)."""

    def _goes_right(self, x, t):
        return x <= t
