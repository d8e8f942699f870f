"""Noisy per-class counts on the integer lattice: a classifier that is ε-DP under add/remove, and its twin that
spends 2ε (the noise scale halved). The noise is the two-sided geometric mechanism
(``reference.mechanisms.TwoSidedGeometric``; Ghosh, Roughgarden and Sundararajan 2009), so the released counts
are integers and no floating-point pattern tells the datasets apart (Mironov 2012): only the privacy loss does.

Adding or removing one record changes one class's count by one, so the count vector has L1 sensitivity 1 and
geometric noise of parameter ``exp(-ε)`` on each count keeps ε-DP (the ``spends`` factor 2 makes it 2ε).
"""
from __future__ import annotations

import numpy as np

from reference.mechanisms import TwoSidedGeometric
from reference.randomness import fit_rng


class LatticeCounts:
    """Noisy count of each declared class; predicts the class with the largest noisy count."""

    #: the privacy spent, as a multiple of ``epsilon`` (the correct twin: 1)
    spends = 1.0

    def __init__(self, epsilon=1.0, classes=(0, 1), random_state=None):
        self.epsilon, self.classes, self.random_state = epsilon, classes, random_state

    def get_params(self, deep=False):
        return {"epsilon": self.epsilon, "classes": self.classes, "random_state": self.random_state}

    def set_params(self, **params):
        for k, v in params.items():
            setattr(self, k, v)
        return self

    def fit(self, X, y):
        rng = fit_rng(self.random_state, self)
        y = np.asarray(y)
        exact = np.array([int(np.sum(y == c)) for c in self.classes], dtype=np.int64)
        self.classes_ = np.asarray(self.classes)
        self.counts_ = TwoSidedGeometric(self.spends * self.epsilon).batch(exact, 1, rng)[0]
        return self

    def predict(self, X):
        return np.full(len(np.asarray(X)), self.classes_[int(np.argmax(self.counts_))])


class LatticeCountsTwice(LatticeCounts):
    """:class:`LatticeCounts` with its noise scale halved: it spends 2ε while claiming ε."""

    spends = 2.0
