"""Candidates for the oracle's tie handling and wiring checks (tests/test_compare_reach.py)."""
import numpy as np

from reference.privatree import PrivaTreeClassifier


class FirstMaxLeaves(PrivaTreeClassifier):
    """Wrong on purpose: every leaf labelled by the first class of most records (the reference draws uniformly
    among them with the noise off): inside the tie set, but not its split."""

    def fit(self, X, y):
        super().fit(X, y)
        bins = self._bins_for_predict(X)
        index = {c: k for k, c in enumerate(self.classes_.tolist())}
        yk = np.array([index[v] for v in np.asarray(y).tolist()])
        K = self.classes_.size

        def walk(node, idx):
            if node.is_leaf:
                node.value = int(np.argmax(np.bincount(yk[idx], minlength=K)))
                return
            go = np.isin(bins[idx, node.feature], list(node.left_categories))
            walk(node.left, idx[go])
            walk(node.right, idx[~go])

        walk(self.tree_, np.arange(len(yk)))
        return self

    def batched_release_sampler(self, edges=None):
        return None


class Crashing(PrivaTreeClassifier):
    """Raises on two records in one bin, as the authors' paper-era code did (UnboundLocalError)."""

    def fit(self, X, y):
        if len(np.unique(np.asarray(X)[:, 0])) < len(X):
            raise UnboundLocalError("local variable 'best_bin_order' referenced before assignment")
        return super().fit(X, y)

    def batched_release_sampler(self, edges=None):
        return None


class NoRelease:
    """A PrivaTree-like candidate with predict() only."""

    def __init__(self, **params):
        self.est = PrivaTreeClassifier(**params)

    def fit(self, X, y):
        self.est.fit(X, y)
        return self

    def predict(self, X):
        return self.est.predict(X)


class SeedInInit(PrivaTreeClassifier):
    """Reads ``random_state`` in ``__init__`` (as some outside estimators do): a seed set afterwards is ignored."""

    def __init__(self, epsilon=1.0, max_depth=4, *, bounds=None, classes=None, binning="quantile", max_bins=10,
                 epsilon_shares="auto", random_state=None):
        super().__init__(epsilon, max_depth, bounds=bounds, classes=classes, binning=binning, max_bins=max_bins,
                         epsilon_shares=epsilon_shares, random_state=random_state)
        self._seed_at_init = random_state

    def fit(self, X, y):
        self.random_state = self._seed_at_init
        return super().fit(X, y)

    def batched_release_sampler(self, edges=None):
        return None


def extra_inputs():
    """Two more inputs for --inputs MODULE:FUNCTION."""
    X = np.array([[0.05, 0.95], [0.95, 0.05]])
    return [("2 records at the corners", (X, np.array([0, 1]))), (X[:1], np.array([2]))]
