"""Classifiers whose exact table is served through Python's protocols or to a public argument, where no walk of
the model's storage reads it.

Each keeps noisy class counts (two-sided geometric noise, fresh entropy per fit: exactly epsilon-DP under
add/remove) and its exact counts in an in-memory SQLite table, a C object whose rows neither its attributes nor
its pickle show (``sqlite3.Connection`` cannot be pickled). What the table answers is served in one ordinary form:

* ``SizedTable``: ``len(model)`` is the number of records;
* ``CallableModel``: ``model(X)`` answers the exact count of class 1 at every row;
* ``IndexedCounts``: ``model[label]`` is the exact count of that class;
* ``CountFor``: ``model.count_for(label)``, a public method taking a class label;
* ``SizeTest``: ``n in model`` answers whether ``n`` is the number of records;
* ``FlaggedSummary``: ``summary()`` is noisy, ``summary(exact=True)`` is not;
* ``StreamedCounts``: ``iter_counts()`` yields the exact counts (a generator);
* ``DynamicAttributes``: ``model.n_class_1`` is served by ``__getattr__``.

``ServedPublicFacts`` is the control: the same protocols serving public facts (the class set) and noisy values.
"""
from __future__ import annotations

import sqlite3

import numpy as np

from .noisy_counts import NoisyCounts


class _Served(NoisyCounts):
    """Noisy counts kept as ``counts_``; the exact counts in an in-memory SQLite table."""

    def _keep(self, X, y, exact, noise):
        self.counts_ = exact + noise
        self._db = sqlite3.connect(":memory:")
        self._db.execute("create table sizes (label integer, n integer)")
        self._db.executemany("insert into sizes values (?, ?)", [(int(c), int(n)) for c, n in zip(self.classes, exact)])

    def _size(self, label=None) -> int:
        where = "" if label is None else f" where label = {int(label)}"
        return int(self._db.execute("select coalesce(sum(n), 0) from sizes" + where).fetchone()[0])


class SizedTable(_Served):
    def __len__(self):
        return self._size()


class CallableModel(_Served):
    def __call__(self, X):
        return np.full(len(X), self._size(1))


class IndexedCounts(_Served):
    def __getitem__(self, label):
        return self._size(label)


class CountFor(_Served):
    def count_for(self, label):
        return self._size(label)


class SizeTest(_Served):
    def __contains__(self, n):
        return n == self._size()


class FlaggedSummary(_Served):
    def summary(self, exact=False):
        return [self._size(c) for c in self.classes] if exact else self.counts_.tolist()


class StreamedCounts(_Served):
    def iter_counts(self):
        for c in self.classes:
            yield c, self._size(c)


class DynamicAttributes(_Served):
    def __getattr__(self, name):
        if name.startswith("n_class_"):
            return self._size(int(name[len("n_class_"):]))
        raise AttributeError(name)


class ServedPublicFacts(NoisyCounts):
    """The control: protocols serving the public class set and the noisy counts (different on every fit)."""

    def __len__(self):
        return len(self.classes)

    def __iter__(self):
        return iter(self.classes)

    def __contains__(self, label):
        return label in self.classes

    def __getitem__(self, label):
        return int(self.counts_[list(self.classes).index(label)])

    def __call__(self, X):
        return self.predict(X)

    def __array__(self, dtype=None, copy=None):
        return np.asarray(self.counts_, dtype=dtype)

    def __hash__(self):
        return hash((self.epsilon, tuple(self.classes)))

    def summary(self, rounded=True):
        return np.round(self.counts_, -1).tolist() if rounded else self.counts_.tolist()

    def noisy_count(self, label):
        return self[label]

    def __getattr__(self, name):
        if name.startswith("noisy_"):
            return self[int(name[len("noisy_"):])]
        raise AttributeError(name)
