"""Candidates for ``python -m audit compare --reference NAME`` over every reference learner.

For each learner of :data:`audit.results.learner_references.LEARNERS` (hyphens in its name as underscores):

* ``Same_<name>``: a subclass that changes nothing (expected: no difference);
* ``Over_<name>``: a subclass whose ``fit`` runs at 1.5 times its declared ``epsilon`` (expected: rejected).
"""
from audit.results.learner_references import LEARNERS
from audit.oracle_learner_cases import ThresholdOffByOneBin


def _over(base):
    class Over(base):
        def fit(self, X, y):
            declared = self.epsilon
            self.epsilon = declared * 1.5
            try:
                return super().fit(X, y)
            finally:
                self.epsilon = declared

    return Over


for _name, _ref in LEARNERS.items():
    _base = _ref.load()
    _key = _name.replace("-", "_")
    globals()[f"Same_{_key}"] = type(f"Same_{_key}", (_base,), {"__module__": __name__})
    globals()[f"Over_{_key}"] = type(f"Over_{_key}", (_over(_base),), {"__module__": __name__})


class RenamedPrivaTree:
    """PrivaTree under other parameter names (``eps`` for ``epsilon``, ``depth`` for ``max_depth``): needs
    ``--param-map '{"epsilon": "eps", "max_depth": "depth"}'``."""

    def __init__(self, eps=1.0, depth=4, bounds=None, classes=None, binning="quantile", max_bins=10,
                 epsilon_shares="auto", random_state=None):
        self.eps, self.depth, self.random_state = eps, depth, random_state
        self.others = dict(bounds=bounds, classes=classes, binning=binning, max_bins=max_bins,
                           epsilon_shares=epsilon_shares)

    def fit(self, X, y):
        from reference.privatree import PrivaTreeClassifier

        self.tree_ = PrivaTreeClassifier(self.eps, self.depth, random_state=self.random_state, **self.others).fit(X, y)
        return self

    def release(self):
        return self.tree_.release()


class ThresholdOneBinRight(ThresholdOffByOneBin):
    """Wrong on purpose, visible with the noise off: numerical boundaries one bin to the right (the oracle's
    own learner case, under the name the tests use)."""
