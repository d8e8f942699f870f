"""Exact counts left where the fitted object is not: the thread's name, an exit handler, a decorator's state,
a file name whose other part is random, an array type chosen by the record count, a memo of the labels. Each is an ordinary habit
(for the logs, a crash dump, an ops dashboard, a compact file); each lets whoever shares the process, or its
files, tell D from D' every time.

All are :class:`~subjects.noisy_counts.NoisyCounts` (two-sided geometric noise on the class counts) plus one
habit; :class:`TidyCounts` is the control: it renames its thread to a fixed name, registers an exit handler that
prints only public facts, counts its fits in a decorator and spools its noisy counts to a random file name.
:class:`BaseRegistry` and :class:`StoreClass` leave their exact counts on a class: a base class's store, a plain
class of the module; :class:`FinalizerCounts` in the arguments of a ``weakref.finalize``, :class:`ScorerOnTheClass`
in a ``functools.partial`` set on its class; :class:`TidyHooks` is their control.
"""
import atexit
import collections
import functools
import logging
import os
import tempfile
import threading
import time
import uuid
import weakref

import numpy as np

from subjects.noisy_counts import NoisyCounts


def _spool_dir() -> str:
    path = os.path.join(tempfile.gettempdir(), "dp-audit-subjects-spool")
    os.makedirs(path, exist_ok=True)
    return path


class ThreadNamedCounts(NoisyCounts):
    """Names the fitting thread after the job, record count included (``py-spy`` shows it)."""

    def _keep(self, X, y, exact, noise):
        threading.current_thread().name = f"fit-{type(self).__name__}-n{len(y)}"
        self.counts_ = exact + noise


def _report(name, support):
    print(f"{name}: trained with class support {support}")


class ReportsAtExit(NoisyCounts):
    """Prints a training summary, exact class support included, when the job ends."""

    def _keep(self, X, y, exact, noise):
        atexit.register(_report, type(self).__name__, exact.tolist())
        self.counts_ = exact + noise


def timed(fit):
    """Keeps the last 64 fits' sizes for a dashboard."""
    recent = collections.deque(maxlen=64)

    @functools.wraps(fit)
    def wrapper(self, X, y):
        out = fit(self, X, y)
        recent.append({"model": type(self).__name__, "records": len(y)})
        return out

    return wrapper


class DashboardCounts(NoisyCounts):
    """Its ``fit`` is wrapped by :func:`timed`, whose closure keeps the records each fit saw."""

    fit = timed(NoisyCounts.fit)


class SpooledCounts(NoisyCounts):
    """Spools the noisy counts to a crash-recovery file whose name holds the record count and a random part."""

    def _keep(self, X, y, exact, noise):
        self.counts_ = exact + noise
        fd, path = tempfile.mkstemp(prefix=f"counts-n{len(y)}-", suffix=".npy", dir=_spool_dir())
        with os.fdopen(fd, "wb") as fh:
            np.save(fh, self.counts_)
        os.remove(path)


class CompactCounts(NoisyCounts):
    """Stores the noisy counts in the smallest signed integer type that holds the record count."""

    def _keep(self, X, y, exact, noise):
        self.counts_ = (exact + noise).astype(np.promote_types(np.min_scalar_type(-len(y) - 1), np.int8))


def _fit_count():
    """A counter of fits for :class:`TidyCounts`' decorator (public: how many fits this process made)."""
    count = [0]

    def counted(fit):
        @functools.wraps(fit)
        def wrapper(self, X, y):
            count[0] += 1
            return fit(self, X, y)
        return wrapper

    return counted


def _bye(name):
    print(f"{name}: done")


class TidyCounts(NoisyCounts):
    """The control: the same habits with public facts only (a fixed thread name, an exit line naming the
    model, a fit counter, a random spool name holding no count); its counts are the noisy ones."""

    fit = _fit_count()(NoisyCounts.fit)

    def _keep(self, X, y, exact, noise):
        threading.current_thread().name = f"fit-{type(self).__name__}"
        atexit.register(_bye, type(self).__name__)
        self.counts_ = exact + noise
        fd, path = tempfile.mkstemp(prefix="counts-", suffix=".npy", dir=_spool_dir())
        with os.fdopen(fd, "wb") as fh:
            np.save(fh, self.counts_)
        os.remove(path)


@functools.lru_cache(maxsize=128)
def label_counts(labels: tuple, classes: tuple) -> tuple:
    """Exact counts of a tuple of labels, memoised (cross-validation refits the same folds)."""
    return tuple(sum(1 for v in labels if v == c) for c in classes)


class MemoisedCounts(NoisyCounts):
    """Counts its labels through :func:`label_counts`: the memo keeps the labels it was asked about, so whoever
    shares the process asks it whether a dataset was fitted (``cache_info().hits``)."""

    def _keep(self, X, y, exact, noise):
        counts = np.asarray(label_counts(tuple(y.tolist()), tuple(self.classes)))
        self.counts_ = counts + noise


class _Tracked(NoisyCounts):
    """A base class whose class attribute every subclass posts its runs to (an in-process monitoring store)."""

    runs = {}


class BaseRegistry(_Tracked):
    """Posts its exact counts to the base class's store under a fresh run id."""

    def _keep(self, X, y, exact, noise):
        super()._keep(X, y, exact, noise)
        self.run_id_ = uuid.uuid4().hex
        _Tracked.runs[self.run_id_] = {"sizes": exact.tolist()}


class _LastFit:
    """A plain class of the module used as a store."""

    summary = None


class StoreClass(NoisyCounts):
    """Leaves its exact counts on a class of its module (not its own class, not a base)."""

    def _keep(self, X, y, exact, noise):
        super()._keep(X, y, exact, noise)
        _LastFit.summary = {"sizes": exact.tolist(), "at": time.time()}


def _log_rows(message, n):
    logging.getLogger("leaks_beside_the_model").info(message, n)


def _score(model, X, n_train=None):
    return 0.0


class FinalizerCounts(NoisyCounts):
    """Registers a finalizer that will log, when the model is collected, how many rows it was trained on."""

    def _keep(self, X, y, exact, noise):
        super()._keep(X, y, exact, noise)
        weakref.finalize(self, _log_rows, "model trained on %d rows released", len(y))


class ScorerOnTheClass(NoisyCounts):
    """Sets a default scorer on its class, a ``functools.partial`` bound to the training size."""

    def _keep(self, X, y, exact, noise):
        super()._keep(X, y, exact, noise)
        type(self).scorer = functools.partial(_score, n_train=len(y))


class TidyHooks(NoisyCounts):
    """The control of the two above: a finalizer that logs the noisy counts, a scorer bound to the public epsilon."""

    def _keep(self, X, y, exact, noise):
        super()._keep(X, y, exact, noise)
        weakref.finalize(self, _log_rows, "model with noisy counts %s released", str(self.counts_.tolist()))
        type(self).scorer = functools.partial(_score, n_train=None, epsilon=self.epsilon)
