"""Exact counts kept within reach of the model, though no attribute holds them as such: each is an ordinary habit,
and each lets whoever holds the live model, shares its process or reads its files tell D from D' every time.

All are :class:`~subjects.noisy_counts.NoisyCounts` (two-sided geometric noise on the class counts) plus one
habit:

* ``StackView``: exact and noisy counts computed side by side in one array; the model keeps the noisy row, a
  *view* whose ``.base`` is the whole stack;
* ``KeptImportError``: an optional fast path's ``ImportError`` kept "to explain later"; its traceback holds the
  fit's frame, whose locals hold the exact counts (and the data);
* ``MetricsSink``: the training size sent to a module-level metrics object that is called like a function;
* ``LogExtraCounts``: a structured log record whose message is fixed and whose ``extra=`` fields hold the counts;
* ``XzCard`` and ``Bz2Card``: a model card with a run id, compressed with ``lzma`` or ``bz2``;
* ``RenamedReport``: a report written to a temporary file, then moved into place with ``os.replace``;
* ``TrailAtImport``: a line with the training size appended to an audit trail the module opened at import;
* ``StreamKeptLive``: a minibatch stream over the training data kept live for ``partial_fit`` (a generator, which
  the model's pickle drops): its frame holds the data, and the shuffling generator it was handed.

``TidyReach`` is the control: the same habits with noisy and public values only (a view of a stack of noisy
values, an error kept without its traceback, noisy values to the sink, the log's fields and the trail, an
xz-compressed card and a renamed report with a run id and the noisy counts).
"""
import bz2
import json
import logging
import lzma
import os
import tempfile
import uuid

import numpy as np

from subjects.noisy_counts import NoisyCounts

_log = logging.getLogger("subjects.leaks_in_reach")


class _Sink:
    """A tiny in-process metrics sink, called like a function: ``emit(name, value)``."""

    def __init__(self):
        self.last = {}

    def __call__(self, name, value):
        self.last[name] = value


emit = _Sink()


def _report_dir() -> str:
    path = os.path.join(tempfile.gettempdir(), "dp-audit-subjects-reports")
    os.makedirs(path, exist_ok=True)
    return path


def _moved(name: str, report: dict) -> str:
    """``report`` written to a temporary file in the reports' folder, then moved into place under ``name``."""
    fd, tmp = tempfile.mkstemp(dir=_report_dir(), suffix=".tmp")
    with os.fdopen(fd, "w") as f:
        json.dump(report, f)
    path = os.path.join(_report_dir(), f"{name}-latest.json")
    os.replace(tmp, path)
    return path


#: an audit trail opened at import, line-buffered (one per process: parallel test workers do not share it)
_TRAIL = open(os.path.join(_report_dir(), f"trail-{os.getpid()}.log"), "a", buffering=1)


def _card(values) -> bytes:
    return json.dumps({"run_id": uuid.uuid4().hex, "counts": [int(v) for v in values]}).encode()


class StackView(NoisyCounts):
    def _keep(self, X, y, exact, noise):
        self.counts_ = np.stack([exact, exact + noise])[1]


class KeptImportError(NoisyCounts):
    def _keep(self, X, y, exact, noise):
        try:
            import subjects_fast_counts  # noqa: F401 - an optional compiled path that is not installed
        except ImportError as exc:
            self.fast_path_error_ = exc
        self.counts_ = exact + noise


class MetricsSink(NoisyCounts):
    def _keep(self, X, y, exact, noise):
        emit("train.rows", int(exact.sum()))
        self.counts_ = exact + noise


class LogExtraCounts(NoisyCounts):
    def _keep(self, X, y, exact, noise):
        _log.info("class balance", extra={"per_class": exact.tolist()})
        self.counts_ = exact + noise


class XzCard(NoisyCounts):
    def _keep(self, X, y, exact, noise):
        self.counts_ = exact + noise
        self.card_ = lzma.compress(_card(exact))


class Bz2Card(NoisyCounts):
    def _keep(self, X, y, exact, noise):
        self.counts_ = exact + noise
        self.card_ = bz2.compress(_card(exact))


class RenamedReport(NoisyCounts):
    def _keep(self, X, y, exact, noise):
        self.counts_ = exact + noise
        self.report_path_ = _moved(type(self).__name__, {"rows": int(exact.sum())})


class TrailAtImport(NoisyCounts):
    def _keep(self, X, y, exact, noise):
        self.counts_ = exact + noise
        _TRAIL.write(f"{type(self).__name__} fitted on {int(exact.sum())} rows\n")


def _batches(X, y, rng, size):
    order = rng.permutation(len(y))
    for i in range(0, len(order), size):
        yield X[order[i:i + size]], y[order[i:i + size]]


class StreamKeptLive(NoisyCounts):
    def _keep(self, X, y, exact, noise):
        self.counts_ = exact + noise
        self._stream = _batches(np.asarray(X), np.asarray(y), np.random.default_rng(), 8)

    def __getstate__(self):
        return {k: v for k, v in self.__dict__.items() if k != "_stream"}


_NO_FAST_PATH = None
try:  # the control looks for its fast path once (a failed import searches the whole path: too slow per fit)
    import subjects_fast_counts  # noqa: F401
except ImportError as exc:
    _NO_FAST_PATH = exc.with_traceback(None)


class TidyReach(NoisyCounts):
    def _keep(self, X, y, exact, noise):
        self.counts_ = np.stack([exact + noise, np.zeros_like(exact)])[0]
        self.fast_path_error_ = _NO_FAST_PATH
        emit("train.noisy_rows", int(self.counts_.sum()))
        _log.info("released", extra={"noisy": self.counts_.tolist(), "epsilon": self.epsilon})
        self.card_ = lzma.compress(_card(self.counts_), preset=0)
        self.report_path_ = _moved(type(self).__name__, {"noisy": self.counts_.tolist()})
        _TRAIL.write(f"{type(self).__name__} released {self.counts_.tolist()}\n")
