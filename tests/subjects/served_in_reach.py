"""Exact functions of the data that an object beside the model serves only when a method of it is called: no
attribute holds them, the object keeps them in C or computes them on demand, and some of these objects do not
pickle. Each is an ordinary habit, and each lets whoever holds the live model tell D from D' every time.

All are :class:`~subjects.noisy_counts.NoisyCounts` plus one habit:

* ``RunningDigest``: a ``hashlib`` object fed every label, kept live "for the data lineage" (``.hexdigest()``);
* ``MemoPerFit``: a per-fit ``functools.lru_cache`` of the class weight, called once per record
  (``.cache_info()`` counts the calls: the training size);
* ``HelperSummary``: a small report object the model keeps, whose ``table()`` recomputes the exact counts from the
  noisy counts and the noise it also keeps, in two attributes of two objects;

``TidyServed`` is the control: the same objects fed only public or noisy values (the digest of the parameters,
a memo called once per class, a summary of the noisy counts alone).
"""
import functools
import hashlib

import numpy as np

from subjects.noisy_counts import NoisyCounts


class RunningDigest(NoisyCounts):
    def _keep(self, X, y, exact, noise):
        super()._keep(X, y, exact, noise)
        self._lineage = hashlib.sha256()
        for label in y:
            self._lineage.update(int(label).to_bytes(1, "little"))


class MemoPerFit(NoisyCounts):
    def _keep(self, X, y, exact, noise):
        super()._keep(X, y, exact, noise)
        self._weight = functools.lru_cache(maxsize=None)(lambda label: 1.0)
        for label in y:
            self._weight(int(label))


class _Summary:
    def __init__(self, counts, noise):
        self._counts, self._noise = counts, noise

    def table(self):
        return {"counts": [int(c) for c in self._counts - self._noise]}


class HelperSummary(NoisyCounts):
    def _keep(self, X, y, exact, noise):
        super()._keep(X, y, exact, noise)
        self._summary = _Summary(self.counts_, noise)


class TidyServed(NoisyCounts):
    def _keep(self, X, y, exact, noise):
        super()._keep(X, y, exact, noise)
        self._lineage = hashlib.sha256(repr(sorted(self.get_params().items())).encode())
        self._weight = functools.lru_cache(maxsize=None)(lambda label: 1.0)
        for label in self.classes:
            self._weight(label)
        self._summary = _Summary(self.counts_, np.zeros_like(noise))
