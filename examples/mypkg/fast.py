"""A stand-in for a user's faster PrivaTree, as the README's "Check your fast implementation" uses it.

Its parameters are the reference's except ``eps`` for ``epsilon``. Its "fast" side is the project's own
batched path, declared through the fast-path protocol (``batched_release_sampler``), so
``python -m audit compare mypkg.fast:MyPrivaTree --reference self --inputs-of privatree`` checks the declared
sampler against this class's one-fit-per-draw path. Replace the bodies with your own code.
"""
from sklearn.base import BaseEstimator, ClassifierMixin

from reference.privatree import PrivaTreeClassifier
from reference.privatree_batch import PrivaTreeBatch


class MyPrivaTree(ClassifierMixin, BaseEstimator):
    def __init__(self, eps=1.0, max_depth=4, *, bounds=None, categories=None, classes=None, n_public=None,
                 max_bins=10, epsilon_shares="auto", binning="quantile", random_state=None):
        self.eps = eps
        self.max_depth = max_depth
        self.bounds = bounds
        self.categories = categories
        self.classes = classes
        self.n_public = n_public
        self.max_bins = max_bins
        self.epsilon_shares = epsilon_shares
        self.binning = binning
        self.random_state = random_state

    def _reference_params(self):
        params = self.get_params(deep=False)
        params["epsilon"] = params.pop("eps")
        params.pop("random_state")
        return params

    def fit(self, X, y):
        self.model_ = PrivaTreeClassifier(**self._reference_params(), random_state=self.random_state).fit(X, y)
        self.classes_ = self.model_.classes_
        return self

    def predict(self, X):
        return self.model_.predict(X)

    def release(self, edges=None):
        return self.model_.release(edges)

    def batched_release_sampler(self, edges=None):
        """Many releases at once, each with the law of ``fit(X, y).release(edges)``."""
        return PrivaTreeBatch(edges=edges, **self._reference_params())
