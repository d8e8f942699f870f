"""Resumable runs and progress bars.

While a :class:`Checkpoint` is active (``with checkpoint.active(path):``),
every pair estimate that :func:`audit.audit_pairs` finishes inside a named
``with checkpoint.scope(name):`` block is written to a JSON file at once,
atomically (a temporary file moved into place). A run interrupted at any
point keeps every finished estimate; run again with the same seed and the
same file, it reuses them and computes only the rest. Each estimate has its
own seed spawned from the run's seed, so a resumed run gives exactly the
numbers of an uninterrupted one.

Progress bars (tqdm) are shown only when enabled and stderr is a terminal.
"""
from __future__ import annotations

import contextlib
import contextvars
import fcntl
import json
import os
import sys
import tempfile
import time
from pathlib import Path

__all__ = ["Checkpoint", "ELAPSED_KEY", "last", "active", "scope", "lookup", "store", "progress_enabled",
           "set_progress", "progress"]

_CURRENT: contextvars.ContextVar["Checkpoint | None"] = contextvars.ContextVar("checkpoint", default=None)
_SCOPE: contextvars.ContextVar[str | None] = contextvars.ContextVar("checkpoint_scope", default=None)
_PROGRESS: contextvars.ContextVar[bool] = contextvars.ContextVar("progress", default=False)
_LAST: "Checkpoint | None" = None
#: the key under which an interrupted run's time so far is kept (never a scope key: those contain "|")
ELAPSED_KEY = "elapsed_s"


class Checkpoint:
    """Finished estimates, keyed by scope and pair, persisted as JSON."""

    def __init__(self, path: str | os.PathLike, resume: bool = True):
        self.path = Path(path)
        self.data: dict = {}
        if resume and self.path.exists():
            self.data = json.loads(self.path.read_text())
        elif not resume:  # a fresh run: nothing of an earlier one may be merged into this one's file (put)
            self.path.unlink(missing_ok=True)
        self._started = time.perf_counter()
        self._before = float(self.data.get(ELAPSED_KEY, 0.0))

    def elapsed_before(self) -> float:
        """Seconds the interrupted parts of this run took before this part (0 for a fresh run)."""
        return self._before

    def save_elapsed(self) -> None:
        """Record the time of every part so far, for the resumed run's report (call when interrupted)."""
        self.put(ELAPSED_KEY, self._before + time.perf_counter() - self._started)

    def n_saved(self) -> int:
        """Finished estimates stored."""
        return sum(k != ELAPSED_KEY for k in self.data)

    def get(self, key: str):
        return self.data.get(key)

    def put(self, key: str, value) -> None:
        """Store one value; what other processes of the run (:mod:`audit.engine.estimation.parts`) stored in the file
        meanwhile is kept (read and rewritten under an exclusive lock)."""
        self.data[key] = value
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path.with_name(self.path.name + ".lock"), "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                self.data = {**json.loads(self.path.read_text()), **self.data}
            except (OSError, ValueError):
                pass
            fd, tmp = tempfile.mkstemp(prefix=".ckpt-", dir=self.path.parent)
            with os.fdopen(fd, "w") as fh:
                json.dump(self.data, fh)
            os.replace(tmp, self.path)

    def discard(self) -> None:
        self.path.unlink(missing_ok=True)
        self.path.with_name(self.path.name + ".lock").unlink(missing_ok=True)


def last() -> "Checkpoint | None":
    """The checkpoint most recently made active (the one to name when a run is interrupted)."""
    return _LAST


@contextlib.contextmanager
def active(path, resume: bool = True):
    """Make a checkpoint file the active store for this block."""
    global _LAST
    ck = _LAST = Checkpoint(path, resume=resume)
    token = _CURRENT.set(ck)
    try:
        yield ck
    finally:
        _CURRENT.reset(token)


@contextlib.contextmanager
def scope(name: str):
    """Name the estimates made inside this block (one claim, say)."""
    token = _SCOPE.set(name)
    try:
        yield
    finally:
        _SCOPE.reset(token)


def _key(suffix: str) -> str | None:
    if _CURRENT.get() is None or _SCOPE.get() is None:
        return None
    return f"{_SCOPE.get()}|{suffix}"


def lookup(suffix: str):
    """The stored value for ``suffix`` in the current scope, or None."""
    key = _key(suffix)
    return None if key is None else _CURRENT.get().get(key)


def store(suffix: str, value) -> None:
    key = _key(suffix)
    if key is not None:
        _CURRENT.get().put(key, value)


def set_progress(enabled: bool) -> None:
    _PROGRESS.set(bool(enabled))


def progress_enabled() -> bool:
    return _PROGRESS.get() and sys.stderr.isatty()


def progress(iterable, **kwargs):
    """``tqdm(iterable)`` with a time-left estimate when enabled on a terminal, else the iterable."""
    if not progress_enabled():
        return iterable
    from tqdm import tqdm

    return tqdm(iterable, file=sys.stderr, leave=False, **kwargs)
