"""Small estimators in the style of third-party research code, written here for the auditor's tests.

Each leaky class carries one leak of issue 18 and has a correct counterpart (``broken=False``). They use
numpy's global generator or read ``random_state`` in ``__init__``, have no ``release()``, and the leaky
``ClassSetFromLabels`` crashes on a single class, as such code often does. Domain [0, 1]^d, classes {0, 1}.
"""
import numpy as np


def _noisy_max(counts, scale):
    """Report-noisy-max with Laplace noise from numpy's global generator (ties to the first)."""
    return int(np.argmax(np.asarray(counts, dtype=float) + np.random.laplace(0.0, scale, len(counts))))


def _cell(X, depth_features):
    """Index of the fixed midpoint cell of each row (data-independent splits)."""
    idx = np.zeros(len(X), dtype=int)
    for f in depth_features:
        idx = 2 * idx + (X[:, f] >= 0.5)
    return idx


class _Node:
    def __init__(self, feature=None, threshold=None, left=None, right=None, value=None):
        self.feature, self.threshold, self.left, self.right, self.value = feature, threshold, left, right, value


class EarlyStopTree:
    """Depth-2 tree on fixed midpoint splits; leaves by noisy max (epsilon-DP by parallel composition).
    Leaky: a node whose records share one label is not split (an exact, unaccounted test)."""

    def __init__(self, epsilon=1.0, random_state=None, broken=False):
        self.epsilon, self.broken = epsilon, broken
        np.random.seed(random_state)  # read in __init__, as such code does

    def _grow(self, X, y, depth):
        pure = len(y) > 0 and np.all(y == y[0])
        if depth == 2 or (self.broken and pure):
            counts = [np.sum(y == 0), np.sum(y == 1)]
            return _Node(value=_noisy_max(counts, 2.0 / self.epsilon))
        f = depth
        go = X[:, f] < 0.5
        return _Node(f, 0.5, self._grow(X[go], y[go], depth + 1), self._grow(X[~go], y[~go], depth + 1))

    def fit(self, X, y):
        self.root_ = self._grow(np.asarray(X), np.asarray(y), 0)
        return self

    def predict(self, X):
        out = []
        for x in X:
            node = self.root_
            while node.feature is not None:
                node = node.left if x[node.feature] < node.threshold else node.right
            out.append(node.value)
        return np.array(out)


class ClassSetFromLabels:
    """Noisy-max label per fixed cell over the classes. Leaky: the classes are read from the labels
    (``np.unique(y)``), and fitting on one class raises, as in many libraries."""

    def __init__(self, epsilon=1.0, classes=(0, 1), broken=False):
        self.epsilon, self.classes, self.broken = epsilon, classes, broken

    def fit(self, X, y):
        X, y = np.asarray(X), np.asarray(y)
        self.classes_ = np.unique(y) if self.broken else np.asarray(self.classes)
        if self.broken and len(self.classes_) < 2:
            raise ValueError("need samples of at least 2 classes")
        cell = _cell(X, [0]) if len(X) else np.zeros(0, dtype=int)
        self.labels_ = [self.classes_[_noisy_max([np.sum((cell == c) & (y == k)) for k in self.classes_],
                                                 2.0 / self.epsilon)] for c in range(2)]
        return self

    def predict(self, X):
        return np.array([self.labels_[int(x[0] >= 0.5)] for x in X])


class QuantileEveryFeature:
    """A split threshold per feature from a noisy rank statistic, stored as nested nodes.
    Correct: the budget is split over the features. Leaky: every feature gets all of it."""

    def __init__(self, epsilon=1.0, random_state=None, broken=False):
        self.epsilon, self.random_state, self.broken = epsilon, random_state, broken

    def fit(self, X, y):
        rng = np.random.RandomState(self.random_state)
        X = np.asarray(X).reshape(-1, np.shape(X)[1])
        d = X.shape[1]
        eps_f = self.epsilon if self.broken else self.epsilon / d
        thresholds = []
        for j in range(d):  # (#below the middle - #above) has sensitivity 1 under add/remove
            diff = np.sum(X[:, j] < 0.5) - np.sum(X[:, j] >= 0.5) + rng.laplace(0.0, 1.0 / eps_f)
            thresholds.append(float(np.clip(0.5 + 0.05 * diff, 0.0, 1.0)))
        leaves = [_Node(value=0), _Node(value=1)]
        node = _Node(d - 1, thresholds[d - 1], *leaves)
        for j in range(d - 2, -1, -1):
            node = _Node(j, thresholds[j], node, _Node(value=1))
        self.tree_root_ = node
        return self

    def predict(self, X):
        return np.zeros(len(X), dtype=int)


class EmptyLeafSpecial:
    """Four fixed cells, noisy-max label each. Leaky: an empty cell predicts class 0 without noise."""

    def __init__(self, epsilon=1.0, broken=False):
        self.epsilon, self.broken = epsilon, broken

    def fit(self, X, y):
        X, y = np.asarray(X), np.asarray(y)
        cell = _cell(X, [0, 1]) if len(X) else np.zeros(0, dtype=int)
        self.labels_ = []
        for c in range(4):
            counts = [np.sum((cell == c) & (y == 0)), np.sum((cell == c) & (y == 1))]
            if self.broken and sum(counts) == 0:
                self.labels_.append(0)
            else:
                self.labels_.append(_noisy_max(counts, 2.0 / self.epsilon))
        return self

    def predict(self, X):
        X = np.asarray(X)
        return np.array([self.labels_[c] for c in _cell(X, [0, 1])])


class _SkTree:
    """The scikit-learn ``tree_`` layout (parallel arrays)."""

    def __init__(self, left, right, feature, threshold, value):
        self.children_left, self.children_right = np.array(left), np.array(right)
        self.feature, self.threshold, self.value = np.array(feature), np.array(threshold), np.array(value)


class _Stump:
    def __init__(self, value):
        self.tree_ = _SkTree([-1], [-1], [-2], [-2.0], [[value]])


class LocalRandomiserForest:
    """Two one-leaf trees, each storing the sum of the records' randomized-response labels (a local
    randomiser, epsilon-LDP per record, so epsilon-DP under substitution). Correct: each label is
    randomized once and reused by every tree. Leaky: the label noise is redrawn for every tree (leaf),
    so each record's label is released twice."""

    def __init__(self, epsilon=1.0, n_trees=2, random_state=None, broken=False):
        self.epsilon, self.n_trees, self.broken = epsilon, n_trees, broken
        self.rng = np.random.RandomState(random_state)  # read in __init__

    def _rr(self, y):
        keep = self.rng.random_sample(len(y)) < np.exp(self.epsilon) / (1 + np.exp(self.epsilon))
        return np.where(keep, y, 1 - y)

    def fit(self, X, y):
        y = np.asarray(y).astype(int)
        once = self._rr(y)
        self.estimators_ = [_Stump(float((self._rr(y) if self.broken else once).sum()))
                            for _ in range(self.n_trees)]
        return self

    def predict(self, X):
        return np.zeros(len(X), dtype=int)


class CountScaledMean:
    """A noisy mean of the target in [0, 1]. Correct: noisy sum over a noisy count (half the budget each).
    Leaky: Laplace noise of scale 1 / (n epsilon), the private count setting the scale."""

    def __init__(self, epsilon=1.0, broken=False):
        self.epsilon, self.broken = epsilon, broken

    def fit(self, X, y):
        y = np.clip(np.asarray(y, dtype=float), 0.0, 1.0)
        n = len(y)
        if self.broken:
            self.mean_ = (y.mean() if n else 0.5) + np.random.laplace(0.0, 1.0 / (max(n, 1) * self.epsilon))
        else:
            s = y.sum() + np.random.laplace(0.0, 2.0 / self.epsilon)
            c = n + np.random.laplace(0.0, 2.0 / self.epsilon)
            self.mean_ = s / max(c, 1.0)
        self.mean_ = float(np.clip(self.mean_, -2.0, 3.0))
        return self

    def predict(self, X):
        return np.full(len(X), self.mean_)


# --------------------------------------------------------------------------- float mechanisms
class RawFloatLaplace:
    """numpy's Laplace added to the raw float value (Mironov 2012's setting): epsilon-DP in real
    arithmetic only."""

    def __init__(self, epsilon=1.0):
        self.scale = 1.0 / epsilon

    def __call__(self, value, rng):
        return float(value + rng.laplace(0.0, self.scale))

    def batch(self, value, n, rng):
        return value + rng.laplace(0.0, self.scale, size=n)


class LatticeLaplace:
    """The lattice counterpart: ``grid * (round(v / grid) + two-sided geometric)`` (sensitivity 1 / grid
    steps): every output lies on the public grid."""

    def __init__(self, epsilon=1.0, grid=2.0 ** -5):
        self.grid = grid
        self.p = 1.0 - np.exp(-epsilon * grid)  # one grid step costs epsilon * grid

    def batch(self, value, n, rng):
        k = np.round(value / self.grid) + rng.geometric(self.p, n) - rng.geometric(self.p, n)
        return self.grid * k

    def __call__(self, value, rng):
        return float(self.batch(value, 1, rng)[0])


def _median_gaps(data):
    edges = np.concatenate(([0.0], np.sort(np.clip(np.asarray(data, dtype=float), 0.0, 1.0)), [1.0]))
    n = len(edges) - 2
    ranks = np.arange(n + 1)
    return edges, -np.abs(ranks - n / 2.0)


class GapUniformMedian:
    """Exponential-mechanism median on [0, 1] (McSherry-Talwar over the gaps between the sorted data,
    weight ``width * exp(epsilon u / 2)``), then numpy's uniform inside the chosen gap: the output lattice
    depends on the data."""

    def __init__(self, epsilon=1.0):
        self.epsilon = epsilon

    def __call__(self, data, rng):
        return float(self.batch(data, 1, rng)[0])

    def batch(self, data, n, rng):
        edges, u = _median_gaps(data)
        w = np.diff(edges) * np.exp(self.epsilon * u / 2.0)
        gap = rng.choice(len(w), size=n, p=w / w.sum())
        return edges[gap] + rng.random(n) * (edges[gap + 1] - edges[gap])


class GridMedian:
    """The same median over a public grid of 65 points in [0, 1]: the gap is chosen as above, then a
    grid point inside it; the weights count the grid points per gap, so the law on the grid is exact."""

    def __init__(self, epsilon=1.0, points=65):
        self.epsilon, self.grid = epsilon, np.linspace(0.0, 1.0, points)

    def __call__(self, data, rng):
        return float(self.batch(data, 1, rng)[0])

    def batch(self, data, n, rng):
        d = np.sort(np.clip(np.asarray(data, dtype=float), 0.0, 1.0))
        ranks = np.searchsorted(d, self.grid, side="left")  # records below each grid point
        u = -np.abs(ranks - len(d) / 2.0)
        w = np.exp(self.epsilon * u / 2.0)
        return self.grid[rng.choice(len(self.grid), size=n, p=w / w.sum())]


def median_pairs():
    """The pairs of the gap median: D = {0.9} and D plus 0.3, and one record versus two."""
    from audit.neighbours import NeighbourPair

    return [NeighbourPair((0.9,), (0.3, 0.9), "{0.9} vs {0.3, 0.9}"),
            NeighbourPair((0.5,), (0.2, 0.5), "{0.5} vs {0.2, 0.5}")]
