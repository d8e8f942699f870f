"""Which calls the determinism probe makes on a fitted model, and at which points: behaviour, not only storage.

Reading what a fitted model stores misses what it *serves*: an exact table recomputed by a public method from
two noisy attributes (``a_ - b_``), state held where no walk reaches (a closure, a C object, a module-level
weak dictionary keyed by the model), a model that answers differently at the rows it was trained on. So the
probe also calls the model's public methods and asks them about the pair's own records:

* :func:`public_methods`: every public method that takes no required argument (called as ``name()``) or one
  (``X``, called on the query points), at most :data:`MAX_CALLS` of them, in name order. Fitting and setting
  methods (``fit``, ``fit_*``, ``partial_fit``, ``set_*``) are never called, nor the ones read elsewhere.
* :func:`query_points`: the records of a neighbouring pair, the record that differs first (for an add/remove
  pair the one in a single dataset), then the other records of D and D' in a fixed order: a function of the
  pair, so both datasets are asked the same questions. A membership attacker always asks these.
* :func:`calls`: the ``(path, function, arguments)`` to make: ``name()``, ``name(records)`` and
  ``name(grid)``; the paths name their method (``summary()`` comes from the source ``summary``), so
  confirmation reads them again.
* :func:`model_view`: what a module global holds *for this model*: a weak dictionary's entry keyed by the
  model reads as ``[model]``, a weak reference to it or its place in a weak set as ``the model``. Past
  models of the same class that are still alive are not read (their entries are the past fits').

* :func:`module_sizes` and :func:`added_globals`: a global that a fit adds to *any* imported module (an
  attribute set on another package's module) is found by the size of each module's namespace before and after
  the fit (new names come last in a dict), and read on every later observation of the process. A global that
  existed before and is rebound is not seen this way.

A method runs to completion: the gate cannot stop one that never returns (a thread cannot be cancelled and a
wall-clock cap would make the verdict depend on the machine's load), so a method that hangs hangs the probe.
A method that raises is an outcome like any other. Functions wrapped in :func:`functools.lru_cache` keep
their cache in C and show only counts: they are read through the methods that call them.
"""
from __future__ import annotations

import functools
import inspect
import sys
import types
import weakref
from typing import NamedTuple

import numpy as np

from audit.gate.protocol import consumed, flag_variants, protocol_calls, scalar_arguments

__all__ = ["MAX_CALLS", "MAX_RECORDS", "Queries", "public_methods", "query_points", "calls", "model_view",
           "THE_MODEL", "module_sizes", "added_globals", "MAX_ADDED", "readable"]

#: public methods called per fitted model, at most (beside the fixed list the observation always reads)
MAX_CALLS = 32
#: records of a pair the methods are asked about, at most (the differing record first)
MAX_RECORDS = 256
#: what a reference to the fitted model itself reads as
THE_MODEL = "(the model)"
#: globals added by fits to modules outside the estimator's package, remembered per process, at most
MAX_ADDED = 64
#: ``(module, name)`` of the globals a fit was seen to add to a module (read on every later observation)
_ADDED: dict = {}
#: the imported modules, recomputed when ``sys.modules`` changes size
_MODULES: dict = {"count": -1, "list": [], "dicts": []}
#: methods that fit or configure: never called
_NEVER = frozenset({"fit", "partial_fit", "get_metadata_routing"})
_NEVER_PREFIXES = ("fit_", "set_", "partial_")


def _arity(fn) -> int | None:
    """0 or 1: the required positional parameters of the bound method ``fn``; None when it needs more, or a
    keyword-only argument, or has no signature."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    required = [p for p in sig.parameters.values() if p.default is inspect.Parameter.empty
                and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    if any(p.kind is p.KEYWORD_ONLY for p in required) or len(required) > 1:
        return None
    return len(required)


def _is_method(cls, name: str) -> bool:
    """Whether ``name`` is a method defined on ``cls`` (a function, static or class method), not a property or a
    data attribute."""
    try:
        attr = inspect.getattr_static(cls, name)
    except AttributeError:
        return False
    return isinstance(attr, (staticmethod, classmethod)) or inspect.isfunction(attr) or \
        inspect.ismethoddescriptor(attr) and not inspect.isdatadescriptor(attr)


def public_methods(est, skip=(), limit: int = MAX_CALLS) -> list[tuple[str, int]]:
    """``(name, arity)`` of the public methods of ``est`` to call, in name order, at most ``limit``.

    Parameters
    ----------
    est : object
        The fitted model.
    skip : iterable of str
        Names read elsewhere (the fixed list, ``score``, ``release``).
    limit : int
        Methods at most.

    Returns
    -------
    list of (str, int)
        The name and the required positional arguments (0: ``name()``; 1: ``name(X)``).
    """
    key = (type(est), len(vars(type(est))), frozenset(skip), limit)  # a class a fit adds a method to: listed again
    found = _PUBLIC.get(key)
    if found is None or set(getattr(est, "__dict__", ())) & {name for name, _ in found}:
        found = _public_methods(est, set(skip), limit)
        if len(_PUBLIC) > 256:
            _PUBLIC.clear()
        _PUBLIC[key] = found
    return list(found)


#: the public methods by (class, its namespace's size, names skipped, limit): a class's methods and their
#: signatures, listed once (again for an instance whose own attributes shadow one of them)
_PUBLIC: dict = {}


def _public_methods(est, skip: set, limit: int) -> list:
    found = []
    for name in sorted(dir(type(est))):
        if name.startswith("_") or name in skip or name in _NEVER or name.startswith(_NEVER_PREFIXES):
            continue
        if not _is_method(type(est), name):
            continue
        arity = _arity(getattr(est, name, None))
        if arity is not None:
            found.append((name, arity))
        if len(found) >= limit:
            break
    return found


def _rows(X, d: int) -> np.ndarray:
    return np.asarray(X, dtype=float).reshape(len(X), d) if len(X) else np.empty((0, d))


def _differing(X0: np.ndarray, X1: np.ndarray) -> list:
    """The rows of the one dataset that the other lacks (as a multiset), the first dataset's first."""
    out = []
    for mine, theirs in ((X0, X1), (X1, X0)):
        left = [r.tobytes() for r in theirs]
        for row in mine:
            key = row.tobytes()
            if key in left:
                left.remove(key)
            else:
                out.append(row)
    return out


class Queries(NamedTuple):
    """The records a pair's fits are asked about: ``records`` (2-D float, shaped like the training ``X``), its
    first ``differing`` rows the records that differ between D and D'."""

    records: np.ndarray
    differing: int

    def key(self) -> tuple:
        """A hashable identity (the fits of one dataset asked other questions are other observations)."""
        return self.records.shape, self.records.tobytes(), self.differing


def query_points(pair, columns: int | None = None) -> Queries | None:
    """The records of ``pair`` the methods are asked about: the differing records first, then the records of
    D and of D' in order, each row once, at most :data:`MAX_RECORDS`, as a 2-D float array shaped like the
    training ``X`` (``columns`` features). None when the pair's ``X`` is not a table of ``columns`` numbers."""
    try:
        X0, X1 = np.asarray(pair.d0[0], dtype=float), np.asarray(pair.d1[0], dtype=float)
        d = columns if columns is not None else (X0.shape[1] if X0.ndim == 2 else X1.shape[1])
        X0, X1 = _rows(X0, d), _rows(X1, d)
    except (TypeError, ValueError, IndexError):
        return None
    rows, seen, differing = [], set(), _differing(X0, X1)
    for row in [*differing, *X0, *X1]:
        if row.tobytes() not in seen:
            seen.add(row.tobytes())
            rows.append(row)
    if not rows:
        return None
    first = len({r.tobytes() for r in differing})
    return Queries(np.array(rows[:MAX_RECORDS], dtype=float).reshape(-1, d), min(first, MAX_RECORDS))


def _points(queries) -> list:
    """``(where, X)``: each differing record alone (``record 0``, ...), then all the records (``records``)."""
    if queries is None:
        return []
    rows = queries.records
    return [(f"record {i}", rows[i:i + 1]) for i in range(queries.differing)] + [("records", rows)]


def calls(est, grid, queries=None, fixed=(), skip=(), wanted=lambda source: True, classes=None) -> list:
    """``(path, function, arguments)`` of the calls to make on the fitted ``est``.

    The ``fixed`` methods (already called on the grid) are called at the ``queries`` (:class:`Queries`: each
    differing record alone, then all the records); every other public method (:func:`public_methods`, ``skip``
    left out) as ``name()``, or at the queries, on ``grid`` and at the public scalars (each of ``classes``, small
    integers, each differing record as a flat row: :func:`audit.gate.protocol.scalar_arguments`), and once more
    with its boolean flags turned (:func:`audit.gate.protocol.flag_variants`); then the protocol operations the
    model's class defines (``len()``, ``iter()``, ``call(X)``, ``getitem(a)``, ...:
    :func:`audit.gate.protocol.protocol_calls`). ``wanted``: whether a method's name is a source to read. A
    differing record alone is what a memorising model answers exactly (1.0 at a training row) while its answers
    elsewhere are noisy. What a call returns as an iterator is read as its first items."""
    out = []
    points = _points(queries)
    for name in fixed:
        fn = getattr(est, name, None)
        if callable(fn) and wanted(name):
            out.extend((f"{name}({where})", fn, (X,)) for where, X in points)
    scalars = scalar_arguments(classes, queries)
    for name, arity in public_methods(est, skip=set(skip) | set(fixed)):
        if not wanted(name):
            continue
        fn = getattr(est, name)
        args = [("", ())] if arity == 0 else [(where, (X,)) for where, X in [*points, ("grid", grid)]] + \
            [(where, (a,)) for where, a in scalars]
        out.extend((f"{name}({where})", _returned(fn, est), a) for where, a in args)
        flags = flag_variants(fn)
        if flags:
            turned = ", ".join(f"{k}={v}" for k, v in flags.items())
            flagged = _returned(functools.partial(fn, **flags), est)
            if arity == 0:
                out.append((f"{name}({turned})", flagged, ()))
            else:
                out.extend((f"{name}({where}, {turned})", flagged, (X,)) for where, X in [*points[-1:], ("grid", grid)])
    out.extend((path, _returned(fn, est), args) for path, fn, args in
               protocol_calls(est, grid, points, classes, queries, wanted))
    return out


def _returned(fn, est):
    """``fn`` whose result reads :data:`THE_MODEL` when it is the model itself (``set_params()`` style): the model
    is read once, under ``model``; an iterator it returns reads as its first items
    (:func:`audit.gate.protocol.consumed`)."""
    def call(*args):
        value = consumed(fn(*args))
        return THE_MODEL if value is est else value
    return call


def model_view(value, est):
    """What a module global ``value`` holds for the fitted ``est``: a weak dictionary or set, or a weak
    reference, as plain data with the model named (:data:`THE_MODEL`, ``"model"`` keys); entries of other live
    objects of the model's class left out. Any other value is returned as it is."""
    own = type(est)
    if isinstance(value, weakref.WeakKeyDictionary):
        return {("model" if k is est else k): v for k, v in list(value.items()) if k is est or type(k) is not own}
    if isinstance(value, weakref.WeakValueDictionary):
        return {k: (THE_MODEL if v is est else v) for k, v in list(value.items()) if v is est or type(v) is not own}
    if isinstance(value, weakref.WeakSet):
        return [THE_MODEL if v is est else v for v in list(value) if v is est or type(v) is not own]
    if isinstance(value, weakref.ref) and not isinstance(value, weakref.ProxyTypes):
        target = value()
        return THE_MODEL if target is est else None if type(target) is own else target
    return value


def _modules() -> tuple:
    """The imported modules and their namespaces (recomputed only when ``sys.modules`` changed size)."""
    if _MODULES["count"] != len(sys.modules):
        _MODULES["count"] = len(sys.modules)
        _MODULES["list"] = [m for m in sys.modules.copy().values() if type(m) is types.ModuleType]
        _MODULES["dicts"] = [vars(m) for m in _MODULES["list"]]
    return _MODULES["list"], _MODULES["dicts"]


def module_sizes() -> tuple:
    """``(modules, sizes)``: the imported modules and the number of globals of each (counted in C over the
    namespaces kept from the last listing: tens of microseconds for a thousand modules)."""
    modules, namespaces = _modules()
    return modules, list(map(len, namespaces))


def readable(name: str, value) -> bool:
    """Whether the module global ``name`` is plain data: not a module, a class, a function or a dunder name."""
    return not name.startswith("__") and not isinstance(value, (types.ModuleType, type)) and not callable(value)


def added_globals(before: tuple) -> list:
    """``(module, name, value)`` of the globals fits were seen to add to modules imported ``before``
    (:func:`module_sizes`; the newest names of a namespace that grew: dict order is insertion order), and of
    those seen by earlier fits, in the order first seen; modules, classes, functions and dunder names left out."""
    modules, sizes = before
    listed, namespaces = _modules()
    now = list(map(len, namespaces)) if listed is modules else list(map(len, map(vars, modules)))
    if now != sizes:
        for module, old, new in zip(modules, sizes, now):
            if new > old and len(_ADDED) < MAX_ADDED:
                for key in list(vars(module))[old - new:]:
                    _ADDED.setdefault((module.__name__, key), None)
    out = []
    for module, key in _ADDED:
        namespace = getattr(sys.modules.get(module), "__dict__", {})
        if key in namespace and readable(key, namespace[key]):
            out.append((module, key, namespace[key]))
    return out
