"""Outside-style classifiers that leave a deterministic trace of the data in what the fit leaves behind.

Each releases per-class counts with two-sided geometric noise (exactly epsilon-DP for counts under
add/remove: one record moves one count by one), predicts the noisy majority, and leaks in one ordinary
form: a default ``random_state=42``, a seed hashed from the data, exact counts in a pandas ``Series``,
a ``functools.partial`` used as ``decision_function``, a summary string, a ``__repr__``, a SHA-256 of the
training data, ``Decimal`` / complex / ``timedelta64`` values, a warning, a log record, a print, a
``score_samples`` method, an iterator, ``itertools.count``, ``array.array``, a ``deque``'s ``maxlen``, a
masked array's mask (the last ones C objects or attributes beside an array's values: read through what their
pickle carries), a library logger that does not propagate, a summary file, an environment variable, a
registry in a helper module of the package. ``Correct`` and ``CorrectWithPublicFacts`` are the controls: the second keeps
``n_features_in_``, the declared ``classes_``, a model card that names only public parameters, and a
warning whose text does not depend on the data. ``DoubleSpend`` spends 2 epsilon (its noise is half as
wide), with integer noise, so only its outputs show it.
"""
from __future__ import annotations

import array
import collections
import decimal
import functools
import hashlib
import io
import itertools
import json
import logging
import os
import tempfile
import warnings

import numpy as np
import pandas as pd

from .noisy_counts import two_sided_geometric

_LOG = logging.getLogger("shipped_leaks")


class Correct:
    """Noisy class counts, fresh entropy per fit; keeps nothing else."""

    def __init__(self, epsilon=1.0, classes=(0, 1), random_state=None):
        self.epsilon, self.classes, self.random_state = epsilon, classes, random_state

    def get_params(self, deep=True):
        return {"epsilon": self.epsilon, "classes": self.classes, "random_state": self.random_state}

    def set_params(self, **kw):
        for k, v in kw.items():
            setattr(self, k, v)
        return self

    def _rng(self, X, y):
        return np.random.default_rng(self.random_state)

    def _exact(self, y):
        y = np.asarray(y)
        return np.array([int(np.sum(y == c)) for c in self.classes])

    def _noise_scale(self):
        return self.epsilon

    def fit(self, X, y):
        rng = self._rng(X, y)
        exact = self._exact(y)
        self.counts_ = exact + two_sided_geometric(rng, self._noise_scale(), len(self.classes))
        self._after(X, y, exact)
        return self

    def _after(self, X, y, exact):
        pass

    def predict(self, X):
        return np.full(len(X), self.classes[int(np.argmax(self.counts_))])


class CorrectWithPublicFacts(Correct):
    """The control that keeps only public facts."""

    def _after(self, X, y, exact):
        self.n_features_in_ = np.asarray(X).shape[1]
        self.classes_ = np.asarray(self.classes)
        self.model_card_ = f"noisy majority classifier, epsilon={self.epsilon}, classes={list(self.classes)}"
        warnings.warn("the noisy counts are released with two-sided geometric noise", UserWarning)


class DoubleSpend(Correct):
    """Spends 2 epsilon: its noise is that of 2 epsilon."""

    def _noise_scale(self):
        return 2 * self.epsilon


class DefaultSeed42(Correct):
    """A constructor default of 42: every default fit adds the same noise."""

    def __init__(self, epsilon=1.0, classes=(0, 1), random_state=42):
        super().__init__(epsilon, classes, random_state)


class HashedSeed(Correct):
    """Without a seed, the seed is a hash of the data (reproducible runs, the author thought)."""

    def _rng(self, X, y):
        if self.random_state is not None:
            return np.random.default_rng(self.random_state)
        digest = hashlib.sha256(np.asarray(X, dtype=float).tobytes() + np.asarray(y).tobytes()).digest()
        return np.random.default_rng(int.from_bytes(digest[:8], "little"))


class SeriesCounts(Correct):
    """Exact counts kept in a pandas Series for a later report."""

    def _after(self, X, y, exact):
        self.class_counts_ = pd.Series(exact, index=[str(c) for c in self.classes])


class PartialDecision(Correct):
    """``decision_function`` is a partial over the exact counts."""

    def _after(self, X, y, exact):
        self.decision_function = functools.partial(_margin, exact.copy())


def _margin(counts, X):
    return np.full(len(X), float(counts[-1] - counts[0]))


class SummaryString(Correct):
    """A summary string with the exact counts."""

    def _after(self, X, y, exact):
        self.summary_ = f"trained on {len(y)} records: " + ", ".join(f"{c}: {n}" for c, n in zip(self.classes, exact))


class ReprCounts(Correct):
    """A ``__repr__`` that shows the exact counts."""

    def _after(self, X, y, exact):
        self._exact_counts = tuple(int(v) for v in exact)

    def __repr__(self):
        return f"ReprCounts(epsilon={self.epsilon}, counts={getattr(self, '_exact_counts', None)})"


class Provenance(Correct):
    """A SHA-256 of the training data kept as provenance."""

    def _after(self, X, y, exact):
        self.data_sha256_ = hashlib.sha256(np.asarray(X, dtype=float).tobytes()).hexdigest()


class DecimalCounts(Correct):
    """The exact share of class 1 as a ``Decimal``."""

    def _after(self, X, y, exact):
        self.share_ = decimal.Decimal(int(exact[-1])) / decimal.Decimal(max(1, int(exact.sum())))


class ComplexCounts(Correct):
    """The exact counts packed in a complex number."""

    def _after(self, X, y, exact):
        self.packed_ = complex(int(exact[0]), int(exact[-1]))


class TimedeltaCounts(Correct):
    """The exact count as a ``timedelta64`` (one second per record)."""

    def _after(self, X, y, exact):
        self.elapsed_ = np.timedelta64(int(exact.sum()), "s")


class WarnsCount(Correct):
    """A warning that names the exact count of the last class."""

    def _after(self, X, y, exact):
        warnings.warn(f"only {int(exact[-1])} records of class {self.classes[-1]}: the estimate is rough")


class LogsCount(Correct):
    """A log record with the exact record count."""

    def _after(self, X, y, exact):
        _LOG.info("fitted on %d records (%d of class %s)", len(y), int(exact[-1]), self.classes[-1])


class PrintsCount(Correct):
    """A progress line printed with the exact counts."""

    def _after(self, X, y, exact):
        print(f"class counts: {exact.tolist()}")


class ScoreSamples(Correct):
    """``score_samples`` reads the exact counts kept in a closure."""

    def _after(self, X, y, exact):
        kept = exact.copy()
        self.score_samples = lambda Z: np.full(len(Z), float(kept[0]))


class RecordCount(Correct):
    """Keeps the number of records seen (public under substitution, private under add/remove)."""

    def _after(self, X, y, exact):
        self.n_samples_seen_ = len(y)


class ClassAttribute(Correct):
    """The last fit's exact counts kept on the class (every instance, and its holder, sees them)."""

    def _after(self, X, y, exact):
        type(self).last_counts = tuple(int(v) for v in exact)


#: the last fit's exact count of the last class, cached by :class:`ModuleCache`
LAST_FIT = {}


class ModuleCache(Correct):
    """Caches the last fit's exact count of the last class in a module global."""

    def _after(self, X, y, exact):
        LAST_FIT["class 1"] = int(exact[-1])


class PropertyCounts(Correct):
    """A public property computed on access from a private attribute holding the exact counts."""

    def _after(self, X, y, exact):
        self._exact = exact.copy()

    @property
    def support_(self):
        return {str(c): int(n) for c, n in zip(self.classes, getattr(self, "_exact", []))}


class FitReturnsSummary(Correct):
    """``fit`` returns a summary of the exact counts instead of the model."""

    def fit(self, X, y):
        super().fit(X, y)
        return {"records": len(y), "counts": self._exact(y).tolist()}


class BatchIterator(Correct):
    """An iterator over as many batches as the exact count of the last class (a C object: its pickle carries the
    range and the position)."""

    def _after(self, X, y, exact):
        self.batches_ = iter(range(int(exact[-1])))


class IdCounter(Correct):
    """``itertools.count`` started at the exact count of the last class."""

    def _after(self, X, y, exact):
        self.ids_ = itertools.count(int(exact[-1]))


class StdlibArray(Correct):
    """The exact counts in a standard-library ``array.array``."""

    def _after(self, X, y, exact):
        self.raw_ = array.array("d", [float(v) for v in exact])


class BoundedHistory(Correct):
    """An empty ``deque`` whose ``maxlen`` is the exact count of the last class plus one."""

    def _after(self, X, y, exact):
        self.recent_ = collections.deque([], maxlen=int(exact[-1]) + 1)


class MaskedCounts(Correct):
    """A masked array of zeros whose mask marks as many cells as the exact count of the last class (up to 4)."""

    def _after(self, X, y, exact):
        mask = np.zeros(4, dtype=bool)
        mask[:min(int(exact[-1]), 4)] = True
        self.masked_ = np.ma.masked_array(np.zeros(4), mask=mask)


#: a library logger with its own handler that does not propagate to the root logger (its stream a buffer here,
#: a console or a file in the wild)
_LIBRARY_LOG = logging.getLogger("shipped_leaks.library")
_LIBRARY_LOG.propagate = False
_LIBRARY_LOG.addHandler(logging.StreamHandler(io.StringIO()))
_LIBRARY_LOG.setLevel(logging.INFO)
#: where :class:`SummaryFile` writes (one file per process, so parallel test workers do not share it)
SUMMARY_FILE = os.path.join(tempfile.gettempdir(), f"shipped_leaks_summary_{os.getpid()}.json")


class LibraryLogger(Correct):
    """Logs the exact count of the last class through a library logger that never reaches the root logger."""

    def _after(self, X, y, exact):
        _LIBRARY_LOG.info("fitted with %d records of class 1", int(exact[-1]))


class SummaryFile(Correct):
    """Writes a training summary with the exact counts to a JSON file."""

    def _after(self, X, y, exact):
        with open(SUMMARY_FILE, "w") as f:
            json.dump({"counts": [int(v) for v in exact]}, f)


class EnvironmentNote(Correct):
    """Leaves the exact count of the last class in an environment variable."""

    def _after(self, X, y, exact):
        os.environ["SHIPPED_LEAKS_CLASS_1"] = str(int(exact[-1]))


class HelperRegistry(Correct):
    """Records the last fit's exact count of the last class in a registry kept by a helper module of its package
    (:mod:`subjects.registry`), not in the module that defines it."""

    def _after(self, X, y, exact):
        from subjects import registry

        registry.FITTED[type(self).__name__] = {"class 1": int(exact[-1])}


#: the entropy of :class:`SharedSource` fits (a test seeds it, so its runs are reproducible)
SOURCE = {"rng": np.random.default_rng(0)}


class SharedSource(Correct):
    """Correct, with a tiny output support (two labels that repeat by chance from fit to fit); its noise comes
    from the module's :data:`SOURCE`, so a test that seeds it is reproducible."""

    def _rng(self, X, y):
        return SOURCE["rng"]

