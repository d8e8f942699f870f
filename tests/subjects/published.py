"""Estimators whose leak is in what they publish besides ``release()``: the predictions, the fitted model's
state (its pickle), or float arithmetic. Each has a correct counterpart (``broken=False``). Domain [0, 1]^2,
classes {0, 1}, add/remove neighbours.

* :class:`ExactPredictCount`: ``release()`` is a count of class-1 records with discrete Laplace noise
  (epsilon-DP); leaky: ``predict`` returns the exact count.
* :class:`NodeCountTree`: a depth-1 tree of nested node objects on a fixed split, leaves by noisy max
  (epsilon-DP by parallel composition); leaky: each node keeps its exact ``n_samples``.
* :class:`DPLeafTree`: a scikit-learn ``DecisionTreeClassifier`` grown on public anchor points (a fixed
  split at x0 = 0.5) whose leaves are relabelled by noisy max on the data; leaky: it refreshes
  ``tree_``'s ``n_node_samples`` with the data's exact counts, as an "honest" tree does.
* :class:`FloatLaplaceCount`: a fitted attribute ``count_ = count + Laplace(1 / epsilon)`` in floats
  (epsilon-DP in real arithmetic only, Mironov 2012); ``discrete=True`` is the fix: discrete Laplace
  noise, an integer.
"""
import numpy as np
from sklearn.tree import DecisionTreeClassifier


def _discrete_laplace(rng, epsilon):
    a = np.exp(-epsilon)
    return int(rng.geometric(1 - a) - rng.geometric(1 - a))


def _noisy_max(rng, counts, epsilon):
    counts = np.asarray(counts, dtype=float)
    return int(np.argmax(counts + rng.laplace(0.0, 2.0 / epsilon, len(counts))))


class ExactPredictCount:
    def __init__(self, epsilon=1.0, random_state=None, broken=False):
        self.epsilon, self.random_state, self.broken = epsilon, random_state, broken

    def get_params(self, deep=False):
        return {"epsilon": self.epsilon, "random_state": self.random_state, "broken": self.broken}

    def fit(self, X, y):
        rng = np.random.default_rng(self.random_state)
        exact = int(np.sum(np.asarray(y) == 1))
        self.count_ = exact + _discrete_laplace(rng, self.epsilon)
        self._shown = exact if self.broken else self.count_  # what predict answers
        return self

    def release(self):
        return (self.count_,)

    def predict(self, X):
        return np.full(len(X), self._shown)


class _Node:
    def __init__(self, feature=None, threshold=None, left=None, right=None, value=None, n_samples=None):
        self.feature, self.threshold, self.left, self.right, self.value = feature, threshold, left, right, value
        if n_samples is not None:
            self.n_samples = n_samples


class NodeCountTree:
    def __init__(self, epsilon=1.0, random_state=None, broken=False):
        self.epsilon, self.random_state, self.broken = epsilon, random_state, broken

    def fit(self, X, y):
        rng = np.random.default_rng(self.random_state)
        X, y = np.asarray(X, dtype=float).reshape(-1, 2), np.asarray(y)
        go = X[:, 0] < 0.5
        keep = (lambda n: int(n)) if self.broken else (lambda n: None)
        leaves = [_Node(value=_noisy_max(rng, [np.sum(y[m] == 0), np.sum(y[m] == 1)], self.epsilon),
                        n_samples=keep(np.sum(m))) for m in (go, ~go)]
        self.root_ = _Node(0, 0.5, *leaves, n_samples=keep(len(y)))
        return self

    def predict(self, X):
        return np.array([(self.root_.left if x[0] < 0.5 else self.root_.right).value for x in np.asarray(X)])


#: public anchor points: a tree grown on them splits at x0 = 0.5 (the midpoint of 0.25 and 0.75)
_ANCHORS = np.array([[0.25, 0.25], [0.25, 0.75], [0.75, 0.25], [0.75, 0.75]])


class DPLeafTree(DecisionTreeClassifier):
    def __init__(self, epsilon=1.0, broken=False, random_state=None):
        super().__init__(max_depth=1, random_state=random_state)
        self.epsilon, self.broken = epsilon, broken

    def fit(self, X, y):
        super().fit(_ANCHORS, (_ANCHORS[:, 0] >= 0.5).astype(int))  # the public structure
        rng = np.random.default_rng(self.random_state)
        X, y = np.asarray(X, dtype=float).reshape(-1, 2), np.asarray(y)
        leaf = self.apply(X) if len(X) else np.zeros(0, dtype=int)
        state = self.tree_.__getstate__()
        nodes, values = state["nodes"].copy(), np.zeros_like(state["values"])
        for node in range(len(nodes)):
            here = leaf == node if node else np.ones(len(X), dtype=bool)
            if nodes["left_child"][node] == -1:  # a leaf: its label by noisy max on the data
                values[node, 0, _noisy_max(rng, [np.sum(y[here] == 0), np.sum(y[here] == 1)], self.epsilon)] = 1.0
            if self.broken:  # the "honest" refresh: exact counts of the data in every node
                nodes["n_node_samples"][node] = nodes["weighted_n_node_samples"][node] = int(np.sum(here))
        values[0, 0] = 0.5  # the root's value is not used for prediction: public
        state["nodes"], state["values"] = nodes, values
        self.tree_.__setstate__(state)
        return self


class FloatLaplaceCount:
    def __init__(self, epsilon=1.0, random_state=None, discrete=False):
        self.epsilon, self.random_state, self.discrete = epsilon, random_state, discrete

    def fit(self, X, y):
        rng = np.random.default_rng(self.random_state)
        count = int(np.sum(np.asarray(y) == 1))
        noise = _discrete_laplace(rng, self.epsilon) if self.discrete else rng.laplace(0.0, 1.0 / self.epsilon)
        self.count_ = float(count + noise)
        return self


def count_pairs():
    """Add/remove pairs that move the count of class-1 records by one: no records versus one, and three
    records of class 0 at one point versus those plus one of class 1 there."""
    from audit.engine.estimation.neighbours import NeighbourPair

    X3, y3 = np.full((3, 2), 0.25), np.zeros(3, dtype=int)
    return [NeighbourPair((np.zeros((0, 2)), np.zeros(0, dtype=int)), (np.array([[0.25, 0.25]]), np.array([1])),
                          "no records vs one of class 1"),
            NeighbourPair((X3, y3), (np.vstack((X3, [[0.25, 0.25]])), np.r_[y3, 1]),
                          "3 of class 0 vs those plus one of class 1")]
