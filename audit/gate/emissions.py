"""What a call emits beside what it returns: warnings, log records, printed text, the files it writes and the
environment variables it sets.

:func:`captured` runs a block (a ``fit``, a ``predict``) and collects all of it into an :class:`Emitted`, which
:mod:`audit.gate.observe` turns into observations. A message, a file or a variable that carries an exact count
is as visible to whoever runs the code as the count itself.

* **Warnings**: every warning raised in the block (all filters set to ``"always"``).
* **Log records**: every record any logger hands to its handlers, whatever the handlers are and whether the
  record reaches the root logger (a library logger with its own handler and ``propagate = False`` included);
  the root logger is set to ``DEBUG`` for the block, so a record a user could switch on is created. A record is
  read whole: its message and every field the call added (``extra={"seed": ...}``, which a structured-log
  handler writes out).
* **Printed text**: ``sys.stdout`` and ``sys.stderr`` as the block finds them (text written to the process's
  file descriptors, by C code or through ``sys.__stderr__``, is not read).
* **Files**: every file the block opens for writing (Python's ``open`` audit event: ``open``, ``os.open``,
  ``numpy.save``, ``json.dump`` into a file, ``pandas.to_csv``), and every path the block renames a file to
  (``os.replace``, ``os.rename``, ``shutil.move``: a report written to a temporary file, then moved into place),
  read back after the block (its first :data:`FILE_BYTES` bytes and its size); bytecode caches
  (``__pycache__``) are left out. A file the process held open *before* the block (an audit trail or a log file
  opened at import) is read too: the bytes the block appended to it, under ``PATH (appended)`` (the regular files
  of ``/proc/self/fd``, on Linux; the block's writes reach the file when the handle is line-buffered or flushed).
* **Environment**: every variable of ``os.environ`` the block sets, changes or removes. :func:`kept_environment`
  puts the environment back after a fit and its calls, so every fit starts from the same one and a fit that
  sets a variable to what the last fit set still shows it.
* **The thread's name**: a block that renames the thread it runs on (``fit:MyModel:1234rows``, for the logs
  and for ``py-spy``) leaves that name for anyone who lists the process's threads; it is read, and put back.
* **Finalizers**: the function and arguments of every ``weakref.finalize`` the block registers (``finalizers``),
  read as data and left registered.
* **Exit handlers**: every ``atexit.register(func, *args)`` the block makes is kept (``at_exit``) and taken off
  the interpreter's list: what it would print when the process ends is observed by calling it
  (:mod:`audit.gate.observe`), not left to print at the gate's own exit.
"""
from __future__ import annotations

import atexit
import contextlib
import io
import logging
import os
import stat
import sys
import threading
import warnings
import weakref
from dataclasses import dataclass, field

try:  # POSIX: a descriptor's status flags (no /proc, and so no held files, elsewhere)
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None

__all__ = ["Emitted", "captured", "kept_environment", "FILE_BYTES"]

#: bytes of a written file read back (a larger file is read in part; its size is read whole)
FILE_BYTES = 8 * 2**20

#: the recorders of the blocks running (the innermost last): each a set of the paths opened for writing
_RECORDERS: list[set] = []
_HOOKED = False


@dataclass
class Emitted:
    """What one block emitted, in order: warnings and log records as text, the printed text, the files written
    (path -> ``(size, first bytes)``, or None when the block removed the file again) and the environment
    changes (name -> value, or None when removed)."""

    warnings: list = field(default_factory=list)
    logs: list = field(default_factory=list)
    stdout: str = ""
    stderr: str = ""
    files: dict = field(default_factory=dict)
    environ: dict = field(default_factory=dict)
    #: the thread's new name, when the block renamed it (put back after the block), else None
    thread_name: str | None = None
    #: ``(func, args, kwargs)`` of every exit handler the block registered (taken off the interpreter's list)
    at_exit: list = field(default_factory=list)
    #: ``(func, args, kwargs)`` of every ``weakref.finalize`` the block registered (left registered: calling one
    #: early would do its work, a temporary directory's removal, before its object dies)
    finalizers: list = field(default_factory=list)


def _writes(mode, flags) -> bool:
    if isinstance(mode, str):
        return any(c in mode for c in "wax+")
    if isinstance(flags, int):
        return bool(flags & (os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT))
    return False


def _audit(event: str, args) -> None:
    """The process's audit hook (:pep:`578`): while a block runs, note every path it opens for writing."""
    if event not in ("open", "os.rename") or not _RECORDERS:
        return
    path, mode, flags = (tuple(args) + (None, None, None))[:3]
    if event == "os.rename":  # os.replace and shutil.move too: the destination holds what the block wrote
        path, mode, flags = mode, "w", None
    if isinstance(path, (str, bytes, os.PathLike)) and _writes(mode, flags):
        text = os.fsdecode(path)
        if "__pycache__" not in text:
            _RECORDERS[-1].add(text)


def _hook() -> None:
    """Install :func:`_audit` once per process (an audit hook cannot be removed; it does nothing between blocks)."""
    global _HOOKED
    if not _HOOKED:
        sys.addaudithook(_audit)
        _HOOKED = True


#: the fields every log record has; any other was added by the call (``extra=``)
_RECORD_FIELDS = frozenset(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {"message", "asctime"}


def _record_text(record: logging.LogRecord) -> str:
    try:
        text = f"{record.name} {record.levelname}: {record.getMessage()}"
    except Exception:  # noqa: BLE001 - a record whose message cannot be formatted
        text = f"{record.name} {record.levelname}: <unformattable>"
    extra = sorted(((k, v) for k, v in vars(record).items() if k not in _RECORD_FIELDS), key=lambda kv: kv[0])
    return text + "".join(f" {k}={_shown(v)}" for k, v in extra)


def _shown(value) -> str:
    try:
        return repr(value)
    except Exception:  # noqa: BLE001 - outside code
        return f"<{type(value).__name__}>"


def _read_back(path: str):
    try:
        with open(path, "rb") as f:
            head = f.read(FILE_BYTES)
        return os.path.getsize(path), head
    except FileNotFoundError:
        return None
    except OSError as exc:  # a directory, a pipe, a file we may not read
        return 0, f"<unreadable: {type(exc).__name__}>".encode()


def _held_open() -> dict:
    """The regular files this process holds open for writing, path -> size (``/proc/self/fd``; empty where there
    is none). The standard streams are left out, and any file one of them is (a console log the process's output
    is redirected to: other processes write there too, and what the fit prints is read as printed text).

    Called around every fit, so it asks the kernel the cheap questions first: ``fstat`` (a regular file?) and the
    descriptor's status flags (``fcntl F_GETFL``: open for writing?); only a descriptor that passes both has its
    path read."""
    held, streams = {}, set()
    for fd in (0, 1, 2):
        try:
            st = os.fstat(fd)
            streams.add((st.st_dev, st.st_ino))
        except OSError:
            pass
    try:
        fds = os.listdir("/proc/self/fd") if fcntl is not None else []
    except OSError:
        return held
    for fd in fds:
        try:
            n = int(fd)
            if n <= 2:
                continue
            st = os.fstat(n)
            if not stat.S_ISREG(st.st_mode) or (st.st_dev, st.st_ino) in streams \
                    or not fcntl.fcntl(n, fcntl.F_GETFL) & (os.O_WRONLY | os.O_RDWR | os.O_APPEND):
                continue
            path = os.readlink(f"/proc/self/fd/{fd}")
        except (OSError, ValueError):
            continue
        if path.startswith("/") and "__pycache__" not in path:
            held[path] = max(held.get(path, 0), st.st_size)
    return held


def _appended(path: str, size: int):
    """``(bytes appended, their first FILE_BYTES)`` to ``path`` past ``size``, or None when it did not grow."""
    try:
        now = os.path.getsize(path)
        if now <= size:
            return None
        with open(path, "rb") as f:
            f.seek(size)
            return now - size, f.read(FILE_BYTES)
    except OSError:
        return None


def _environ() -> dict:
    """A copy of ``os.environ``, taken around every fit: its encoded mapping where there is one (copied without
    decoding every variable), else the mapping itself."""
    data = getattr(os.environ, "_data", None)
    return dict(data) if isinstance(data, dict) else dict(os.environ)


def _text(value):
    return os.fsdecode(value) if isinstance(value, bytes) else value


def _changed(before: dict, now: dict) -> dict:
    """The variables set or changed (name -> new value) and removed (name -> None) between two :func:`_environ`
    copies, in name order, decoded as ``os.environ`` shows them."""
    if before == now:
        return {}
    keys = sorted(k for k in set(before) | set(now) if before.get(k) != now.get(k))
    return {_text(k): None if k not in now else _text(now[k]) for k in keys}


@contextlib.contextmanager
def captured():
    """Run the block and collect what it emits (module docstring) into the :class:`Emitted` it yields; the
    result is complete when the block ends, whether it returned or raised."""
    _hook()
    out = Emitted()
    root, records, paths = logging.getLogger(), [], set()
    level, call_handlers = root.level, logging.Logger.callHandlers
    environ = _environ()
    stdout, stderr = io.StringIO(), io.StringIO()

    def call(logger, record):  # every logger's records, before its handlers (and the hierarchy's) see them
        records.append(_record_text(record))
        return call_handlers(logger, record)

    logging.Logger.callHandlers = call
    root.setLevel(logging.DEBUG)
    _RECORDERS.append(paths)
    caught, thread, register = [], threading.current_thread(), atexit.register
    name = thread.name

    def registering(func, *args, **kwargs):  # kept, and taken off again after the block
        out.at_exit.append((func, args, kwargs))
        return register(func, *args, **kwargs)

    atexit.register = registering
    finalizers = set(weakref.finalize._registry)
    held = _held_open()
    try:
        with warnings.catch_warnings(record=True) as seen, contextlib.redirect_stdout(stdout), \
                contextlib.redirect_stderr(stderr):
            warnings.simplefilter("always")
            caught = seen
            yield out
    finally:
        atexit.register = register
        for func, _, _ in out.at_exit:
            atexit.unregister(func)
        for f, info in list(weakref.finalize._registry.items()):
            if f not in finalizers:
                out.finalizers.append((info.func, info.args, info.kwargs))
        if thread.name != name:
            out.thread_name, thread.name = thread.name, name
        _RECORDERS.pop()
        logging.Logger.callHandlers = call_handlers
        root.setLevel(level)
        out.warnings = [f"{w.category.__name__}: {w.message}" for w in caught]
        out.logs = records
        out.stdout, out.stderr = stdout.getvalue(), stderr.getvalue()
        out.files = {path: _read_back(path) for path in sorted(paths)}
        for path, size in sorted(held.items()):
            if path not in paths:
                got = _appended(path, size)
                if got is not None:
                    out.files[f"{path} (appended)"] = got
        out.environ = _changed(environ, _environ())


@contextlib.contextmanager
def kept_environment():
    """Run the block and put back every variable of ``os.environ`` it set, changed or removed."""
    before = _environ()
    try:
        yield
    finally:
        for key in _changed(before, _environ()):
            old = os.environ.encodekey(key) if hasattr(os.environ, "encodekey") else key
            if old in before:
                os.environ[key] = _text(before[old])
            else:
                del os.environ[key]
