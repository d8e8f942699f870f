"""Outside-style classifiers whose exact table is *served*, not stored where a walk of the model reads it.

Each keeps per-class counts with two-sided geometric noise (fresh entropy per fit, exactly epsilon-DP for
counts under add/remove), predicts the noisy majority, and leaks in one ordinary form that reading the fitted
object's storage misses:

* ``MethodTable``: the noise is kept split in two attributes (``a_ = exact + noise``, ``b_ = noise``), each
  different on every fit; a public ``class_counts()`` returns ``a_ - b_``, the exact counts.
* ``WeakRegistry``: a module-level ``weakref.WeakKeyDictionary`` maps the fitted model to its exact counts.
* ``ContextCounts``: a module-level ``contextvars.ContextVar`` is set to the exact counts in ``fit``.
* ``OtherModule``: the exact counts are set as an attribute of another package's module.
* ``Memoriser``: ``predict_proba`` answers 1.0 for its label at a row it was trained on, the noisy majority
  share elsewhere: a membership attacker asking at the differing record learns whether it was in the data.
  The rows are kept in a Bloom filter under a fresh salt, so nothing stored repeats from fit to fit.
* ``CorrectWithMethods``: the control: public methods that return only public parameters (``describe()``,
  ``get_params()``), the noisy counts (``noisy_counts()``, different on every fit) or a probability from them,
  and a ``fitted_at_`` time stamp.
"""
from __future__ import annotations

import colorsys
import contextvars
import hashlib
import time
import weakref

import numpy as np

from .noisy_counts import NoisyCounts

#: the exact counts of each fitted ``WeakRegistry`` model, keyed by the model (module-level, weak)
FITTED = weakref.WeakKeyDictionary()
#: the exact counts of the last ``ContextCounts`` fit in this context
LAST_COUNTS = contextvars.ContextVar("last_counts")


class _Noisy(NoisyCounts):
    """Noisy class counts from fresh entropy; a subclass decides what else the fit keeps or serves."""

    def _share(self, counts):
        counts = np.clip(np.asarray(counts, dtype=float), 0.0, None) + 1.0
        return counts / counts.sum()


class MethodTable(_Noisy):
    """Stores the noise split in two attributes; ``class_counts()`` serves the exact table."""

    def _keep(self, X, y, exact, noise):
        self.a_, self.b_ = exact + noise, noise
        self.counts_ = self.a_

    def class_counts(self):
        return self.a_ - self.b_


class WeakRegistry(_Noisy):
    """Registers its exact counts in a module-level weak dictionary keyed by the model."""

    def _keep(self, X, y, exact, noise):
        super()._keep(X, y, exact, noise)
        FITTED[self] = exact


class ContextCounts(_Noisy):
    """Sets a module-level context variable to its exact counts."""

    def _keep(self, X, y, exact, noise):
        super()._keep(X, y, exact, noise)
        LAST_COUNTS.set(tuple(exact.tolist()))


class OtherModule(_Noisy):
    """Notes its exact counts on a module of another package (the standard library's ``colorsys``)."""

    def _keep(self, X, y, exact, noise):
        super()._keep(X, y, exact, noise)
        colorsys.last_class_counts = tuple(exact.tolist())


class Memoriser(_Noisy):
    """Answers 1.0 for the trained label at a training row, the noisy shares elsewhere. The rows are kept in a
    Bloom filter of fixed size under a fresh salt: what is stored differs on every fit and has the same size
    whatever the data."""

    BITS = 4096

    def _keep(self, X, y, exact, noise):
        super()._keep(X, y, exact, noise)
        self._salt = np.random.default_rng().bytes(16)
        self._bits = np.zeros(self.BITS, dtype=bool)
        for row, label in zip(X, y):
            self._bits[self._positions(row, label)] = True

    def _positions(self, row, label):
        data = np.asarray(row, dtype=float).tobytes() + str(label).encode()
        digest = hashlib.blake2b(data, key=self._salt, digest_size=12).digest()
        return [int.from_bytes(digest[i:i + 4], "little") % self.BITS for i in (0, 4, 8)]

    def _trained_label(self, row):
        return next((c for c in self.classes if self._bits[self._positions(row, c)].all()), None)

    def predict_proba(self, X):
        out = np.tile(self._share(self.counts_), (len(X), 1))
        for i, row in enumerate(np.asarray(X, dtype=float)):
            label = self._trained_label(row)
            if label is not None:
                out[i] = np.asarray(self.classes) == label
        return out


class CorrectWithMethods(_Noisy):
    """The control: extra public methods that serve only public parameters and noisy values."""

    def _keep(self, X, y, exact, noise):
        super()._keep(X, y, exact, noise)
        self.fitted_at_ = time.time()

    def describe(self):
        return f"noisy class counts, epsilon={self.epsilon}, classes={list(self.classes)}"

    def noisy_counts(self):
        return self.counts_.copy()

    def predict_proba(self, X):
        return np.tile(self._share(self.counts_), (len(X), 1))

    def explain(self, X):
        return {"classes": list(self.classes), "rows": len(X)}
