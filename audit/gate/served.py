"""What the objects within reach of a fitted model serve through their methods, read in a forked sandbox.

An adversary who holds a model calls methods, not only on the model but on everything it reaches: a running
``hashlib`` object's ``copy().hexdigest()`` is a digest of every record it was fed, a memo's ``cache_info()``
counts the calls the fit made, a helper object's ``summary()`` recomputes a table from two noisy attributes. Such
an object keeps its state in C or computes it on demand, so no walk of attributes shows it, and it may not pickle.
:mod:`audit.gate.behaviour` calls the model's own methods in the gate's process (a model may rely on them
changing its state: a cache, a lazy table). The objects beside it are read here, by one rule rather than a list of
known types: **every public method of the object that takes no argument is called**, however the object is built.

Calling arbitrary methods of arbitrary objects must not change anything the gate or the user relies on (a
``close()``, a ``clear()``, a ``Path``'s ``unlink()``), so the calls run in a child process forked for the
purpose (:func:`read`):

* every file descriptor of the child but the pipe to the gate is pointed at ``/dev/null`` first, so nothing it
  writes, flushes or sends reaches a file, a socket or the gate's console;
* an audit hook (:func:`sys.addaudithook`) refuses what acts on the world by path or process: opening a file for
  writing, removing, renaming, creating or changing one, starting a process, sending a signal, connecting a
  socket. A method that tries reads as the ``PermissionError`` it raised;
* each call has :data:`CPU_SECONDS` of CPU time (``ITIMER_PROF``: CPU, not wall, so the machine's load does not
  decide what is read); a call that runs out reads as ``TimeoutError``;
* the child ends with ``os._exit`` (no exit handler, no buffered write), and the gate waits at most
  :data:`WALL_SECONDS` for it: a method that blocks forever without using CPU (waiting on a lock another thread
  held at the fork) is the one case this cap decides, and the observation says it was read in part.

Each result is turned into observations in the child (the caller's ``observe(path, value)``: a returned object
need not pickle), and sent back one call at a time, so a call that never returns keeps what was read before it.
The paths read ``served PATH.NAME()`` (source ``served``): the object's own path, then the method.

Which objects: those :func:`eligible` accepts among the nodes a walk of the model and of its module's globals
passes, in walk order, at most :data:`MAX_OBJECTS`, at most :data:`MAX_METHODS` methods each, in name order.
Values read elsewhere are left out: leaves, containers, arrays and pandas objects (their methods compute from
what is already read), generators (the state probe reads kept randomness), modules, classes, code, and the
objects of the concurrency, I/O and logging modules and their subclasses elsewhere (a thread, a lock, a queue, a
pool, a socket, a file, a log handler or formatter, a context manager: their methods wait or act, they do not
compute). Where ``os.fork`` does not exist (Windows) nothing is read, and the observation says so.
"""
from __future__ import annotations

import contextlib
import gc
import inspect
import io
import logging
import os
import pickle
import random
import select
import signal
import struct
import sys
import threading
import time
import types

import numpy as np

from audit.gate.outcome import outcome_text

__all__ = ["eligible", "methods", "read", "MAX_OBJECTS", "MAX_METHODS", "MAX_CALLS", "MAX_SANDBOXES", "CPU_SECONDS",
           "WALL_SECONDS", "PREFIX"]

#: objects whose methods are called per observation, at most (in walk order)
MAX_OBJECTS = 24
#: methods called per object, at most (in name order)
MAX_METHODS = 16
#: calls per observation, at most
MAX_CALLS = 32
#: forked sandboxes per observation, at most (a fork costs about 5-15 ms): the last runs every call left
MAX_SANDBOXES = 4
#: CPU seconds each call may use in the sandbox
CPU_SECONDS = 2.0
#: seconds the gate waits for the sandbox as a whole (a call that blocks without using CPU)
WALL_SECONDS = 120.0
#: how a served value's path begins (its source, :func:`audit.gate.observe.source_of`)
PREFIX = "served "

#: modules whose objects wait or act rather than compute (threads, locks, queues, pools, sockets, processes, files)
_ACTING = ("threading", "_thread", "queue", "_queue", "multiprocessing", "concurrent", "asyncio", "socket",
           "_socket", "ssl", "_ssl", "selectors", "select", "subprocess", "signal", "io", "_io", "logging", "tempfile",
           "weakref", "_weakref", "_weakrefset", "sqlite3", "mmap", "ctypes", "_ctypes",
           "_pytest", "pytest", "pluggy", "execnet", "xdist")  # the test runner hosting the gate, and its log capture
#: the acting classes' subclasses defined elsewhere (a test runner's log handler, a file-like object, a thread)
_ACTING_TYPES = (logging.Filterer, logging.Formatter, logging.LoggerAdapter, io.IOBase, threading.Thread,
                 contextlib.AbstractContextManager)
#: modules of leaves and containers (builtins, deques, arrays, numpy and pandas objects): read by the walk
_CONTAINERS = ("builtins", "collections", "array", "numpy", "pandas")
#: leaves, containers and values whose methods compute from what the walk already reads
_READ_ELSEWHERE = (int, float, complex, str, bytes, bytearray, bool, type(None), list, tuple, dict, set, frozenset,
                   np.ndarray, np.generic, np.random.Generator, np.random.BitGenerator, np.random.SeedSequence,
                   np.random.RandomState, types.ModuleType, type, types.FunctionType, types.BuiltinFunctionType,
                   types.MethodType, types.CodeType, types.FrameType, types.TracebackType, types.GeneratorType,
                   types.CoroutineType, types.AsyncGeneratorType, range, slice, memoryview, property, random.Random)
#: methods never called: fitting, configuring, and the ones whose answer is not the object's
_NEVER = frozenset({"fit", "partial_fit", "get_metadata_routing", "mro"})
_NEVER_PREFIXES = ("fit_", "set_", "partial_")
#: audit events that act on the world by path or process (refused in the sandbox)
_REFUSED = frozenset({
    "os.remove", "os.unlink", "os.rename", "os.replace", "os.rmdir", "os.removedirs", "os.mkdir", "os.makedirs",
    "os.chmod", "os.chown", "os.chflags", "os.lchown", "os.truncate", "os.utime", "os.symlink", "os.link",
    "os.mkfifo", "os.mknod", "os.putenv", "os.unsetenv", "os.system", "os.exec", "os.posix_spawn", "os.spawn",
    "os.fork", "os.forkpty", "os.kill", "os.killpg", "os.startfile", "os.setxattr", "os.removexattr",
    "shutil.rmtree", "shutil.copyfile", "shutil.copymode", "shutil.copystat", "shutil.copytree", "shutil.move",
    "shutil.chown", "shutil.make_archive", "shutil.unpack_archive", "subprocess.Popen", "pty.spawn",
    "socket.connect", "socket.bind", "socket.sendto", "socket.sendmsg", "webbrowser.open"})
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC


def eligible(node) -> bool:
    """Whether ``node`` is an object whose methods are read here (module docstring): not a leaf, a container,
    an array, a pandas object, a generator, code, a module or a class, nor an object of a concurrency or I/O
    module."""
    if isinstance(node, _READ_ELSEWHERE) or callable(getattr(node, "__func__", None)):
        return False
    top = (type(node).__module__ or "").split(".", 1)[0]
    return top not in _ACTING and top not in _CONTAINERS and not isinstance(node, _ACTING_TYPES)


def _arity_zero(fn) -> bool:
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):  # a C method without a signature: called, and a TypeError is its outcome
        return True
    return all(p.default is not inspect.Parameter.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
               for p in sig.parameters.values())


def methods(obj) -> list[str]:
    """The public methods of ``obj`` that take no required argument, in name order, at most
    :data:`MAX_METHODS` (fitting and setting methods never)."""
    found = []
    for name in sorted(dir(type(obj))):
        if name.startswith("_") or name in _NEVER or name.startswith(_NEVER_PREFIXES):
            continue
        try:
            attr = inspect.getattr_static(type(obj), name)
        except AttributeError:
            continue
        if isinstance(attr, (property, types.GetSetDescriptorType, types.MemberDescriptorType)):
            continue  # a value, not a call (the walk reads what it may)
        fn = getattr(obj, name, None)
        if callable(fn) and _arity_zero(fn):
            found.append(name)
            if len(found) >= MAX_METHODS:
                break
    return found


def _refuse(event: str, args) -> None:
    """The sandbox's audit hook: refuse what acts on the world (module docstring)."""
    if event in _REFUSED:
        raise PermissionError(f"the gate's sandbox refuses {event}")
    if event == "open" and len(args) >= 3:
        mode, flags = args[1], args[2]
        if (isinstance(mode, str) and any(c in mode for c in "wax+")) or \
                (isinstance(flags, int) and flags & _WRITE_FLAGS):
            raise PermissionError("the gate's sandbox refuses to open a file for writing")


def _on_cpu_limit(signum, frame):
    raise TimeoutError(f"a call used more than {CPU_SECONDS} s of CPU")


def _call(index: int, where: str, obj, name: str, observe, fd: int) -> bool:  # pragma: no cover - sandbox
    """Call ``obj.name()`` and send ``index`` and what ``observe`` makes of its result (or of its exception)
    through ``fd``; True when the call returned something (a query), False when it returned None or raised (a
    command, or a failure: either may have changed the object)."""
    signal.setitimer(signal.ITIMER_PROF, CPU_SECONDS)
    query = True
    try:
        value = getattr(obj, name)()
        query = value is not None
    except BaseException as exc:  # noqa: BLE001 - SystemExit too: a method's outcome, read as text
        value, query = "raised " + outcome_text(exc), False
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
    try:
        blob = pickle.dumps((index, dict(observe(where, value))))
    except BaseException as exc:  # noqa: BLE001 - what cannot be observed is said so
        blob = pickle.dumps((index, {where: (("unreadable",), f"unreadable: {type(exc).__name__}")}))
    blob = struct.pack("<Q", len(blob)) + blob
    view = memoryview(blob)
    while view:
        view = view[os.write(fd, view):]
    return query


def _child(calls: list, start: int, observe, fd: int, last: bool) -> None:  # pragma: no cover - the child
    """The sandbox: cut off from the world (module docstring), then ``calls[start:]`` in order, until one
    returns None or raises: the calls after it run in a fresh sandbox (:func:`read`); in the ``last`` sandbox an
    observation may have (:data:`MAX_SANDBOXES`), all of them."""
    gc.disable()  # a collection would touch every object of the process, copying each page it lies on
    devnull = os.open(os.devnull, os.O_RDWR)
    try:
        fds = [int(f) for f in os.listdir("/proc/self/fd")]
    except OSError:
        fds = list(range(3))
    for other in fds:
        if other not in (fd, devnull):
            try:
                os.dup2(devnull, other)
            except OSError:
                pass
    sys.addaudithook(_refuse)
    signal.signal(signal.SIGPROF, _on_cpu_limit)
    for i in range(start, len(calls)):
        where, obj, name = calls[i]
        if not _call(i, where, obj, name, observe, fd) and not last:
            break


def read(targets: list, observe) -> tuple[dict, bool]:
    """Call every method of :func:`methods` on each ``(path, object)`` of ``targets`` in a forked sandbox
    (module docstring) and return ``(observations, complete)``: the union of ``observe(path, value)`` over the
    calls (a mapping made in the child) and whether every call was read (False when a sandbox was cut by
    :data:`WALL_SECONDS` or could not start, or ``os.fork`` is missing).

    The calls run in name order, each on the object as the fit left it: a sandbox runs them until one returns
    None or raises (a command, such as ``cache_clear()``, or a failure: either may have changed the object),
    and the next call starts a fresh sandbox, up to :data:`MAX_SANDBOXES` per observation (the last runs every
    call left, in order). A call that returns a value and also changes the object (a ``pop()``) is seen by the calls
    after it."""
    targets = [(p, o, m) for p, o in targets for m in [methods(o)] if m][:MAX_OBJECTS]
    calls = [(f"{PREFIX}{path}.{name}()", obj, name) for path, obj, names in targets for name in names][:MAX_CALLS]
    if not calls:
        return {}, True
    if not hasattr(os, "fork"):
        return {}, False
    got, start, complete = {}, 0, True
    deadline = time.monotonic() + WALL_SECONDS
    sandboxes = 0
    while start < len(calls) and complete:
        sandboxes += 1
        last, complete = _sandbox(calls, start, observe, got, deadline, sandboxes >= MAX_SANDBOXES)
        start = max(start, last) + 1
    return got, complete


def _sandbox(calls: list, start: int, observe, got: dict, deadline: float, final: bool) -> tuple[int, bool]:
    """Run ``calls[start:]`` in one forked sandbox, adding what it sends to ``got``; ``(the index of the last
    call it reported, whether it ended before the deadline)``."""
    r, w = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        os.close(r), os.close(w)
        return start, False
    if pid == 0:  # pragma: no cover - the child
        try:
            os.close(r)
            _child(calls, start, observe, w, final)
        finally:
            os._exit(0)
    os.close(w)
    buffer, last, complete = b"", start, True
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([r], [], [], left)[0]:
                complete = False
                break
            chunk = os.read(r, 1 << 16)
            if not chunk:
                break
            buffer += chunk
            while len(buffer) >= 8 and len(buffer) >= 8 + struct.unpack("<Q", buffer[:8])[0]:
                size = struct.unpack("<Q", buffer[:8])[0]
                last, values = pickle.loads(buffer[8:8 + size])
                for key, value in values.items():
                    got.setdefault(key, value)
                buffer = buffer[8 + size:]
    finally:
        os.close(r)
        if not complete:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        os.waitpid(pid, 0)
    return last, complete
