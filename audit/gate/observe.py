"""Everything a fit of an estimator lets its holder observe, as canonical values by path.

The gate's principle is that no trace of the data that the noise does not cover may survive in anything
the fit leaves behind. :func:`observe_fit` fits an estimator once *as it ships* (its constructor defaults and
the user's parameters exactly as given, no injected ``random_state``, seeded mode off) and turns every
observable into one canonical value per path:

* ``fit raised``: the exception's type and canonical message, when ``fit`` raises;
* ``warning[i]``, ``log[i]``, ``stdout``, ``stderr``, ``file PATH``, ``environ[NAME]``: the warnings, log
  records (from any logger), printed text, files written and environment variables set during ``fit`` and the
  calls below (:mod:`audit.gate.emissions`; a message with an exact count is as visible as the count);
* ``predict(grid)``, ``predict_proba(grid)``, ``predict_log_proba(grid)``, ``decision_function(grid)``,
  ``score_samples(grid)``, ``transform(grid)``, ``score(grid)``, ``release()``, ``repr()``, ``str()``: every
  public method's output on the public probe grid, a raised exception included;
* ``NAME()``, ``NAME(record i)``, ``NAME(records)``, ``NAME(grid)``: every other public method taking nothing or
  ``X``, and the methods above, asked at the pair's own records, the differing ones first
  (:mod:`audit.gate.behaviour`), called after everything else is read; what they emit as ``calls warning[i]``,
  ``calls stdout``, ...;
* ``model....``: the fitted object's whole graph (:func:`audit.gate.state.walk.walk`: attributes,
  ``__getstate__``, containers and their lengths, ``functools.partial`` and closure cells, what pickling
  carries for C objects), its leaves read as
  numbers, strings, bytes, ``Decimal``, complex, dates and durations, numpy arrays (by content) and pandas
  objects (values and index);
* ``model.NAME`` of every property (public, computed on access), ``type(model).NAME`` (attributes set on the
  class), ``module M.NAME`` (globals of the defining module and of the other imported modules of its package: a
  cache of the last fit; a weak dictionary's entry for the model as ``[model]``, a context variable's value in
  the current context as ``.get()``), ``fit()`` (what ``fit``
  returned, when not the model itself) and ``_repr_html_()``.
* ``served PATH.NAME()``: what every public method taking no argument returns, of each object the model's graph
  and its package's globals hold (a running digest, a memo's ``cache_info()``, a helper's ``table()``), called in
  a forked sandbox (:mod:`audit.gate.served`).

Memory addresses (``0x7f...``) are masked in every string, so a default ``repr`` does not differ between fits
for that reason alone, and so is an integer that is an address of the process (a registry keyed by ``id(self)``:
:mod:`audit.gate.addresses`). A value is a ``(key, shown)`` pair: ``key`` is compared across fits, ``shown`` is a
short text for the report.

Beside each whole value its *parts* are paths of their own, below the value's path and so from the same source
(:func:`source_of`): the number tokens of a string by their masked context (``stdout#num['fitted on _ records
(# positive) in _ ms']``), what a string or bytes decodes to (``#json``, ``#gzip``, ``#zlib``, ``#base64``,
``#pickle``, ``#text``, read as a small graph), the order of a dict's keys (``#order``: a dict filled in the
order of its exact counts) and the items of a dict keyed by identifiers by position
(``[#-1]``: the newest entry of a registry keyed by ``uuid4().hex``). A value that never repeats (it holds a
duration, a run id, a timestamp) may hold a part that does (:mod:`audit.gate.parts`).
"""
from __future__ import annotations

import __future__
import builtins
import collections
import contextlib
import datetime
import decimal
import fractions
import gc
import hashlib
import inspect
import re
import sys
import types

import numpy as np

from audit.gate.addresses import is_address, refresh as refresh_addresses
from audit.gate.behaviour import added_globals, calls, model_view, module_sizes
from audit.gate.emissions import captured, kept_environment
from audit.gate.outcome import outcome_text
from audit.gate.parts import (MAX_DEPTH, PART_NODES, decoded, float_parts, number_parts, pandas_parts,
                              position_parts, positions)
from audit.gate import served
from audit.gate.state.walk import long_plain_data, walk

__all__ = ["observe_fit", "observe_model", "canonical", "source_of", "METHODS", "MAX_NODES", "ABSENT"]

#: the public methods whose output on the probe grid is observed (``release`` and ``score`` apart)
METHODS = ("predict", "predict_proba", "predict_log_proba", "decision_function", "score_samples", "transform")
#: nodes of the fitted object's graph read per fit (a larger model is read in part; ``truncated`` says so)
MAX_NODES = 20_000
#: characters of a string kept for the report
SHOWN = 60
#: the value of a path that one observation lacks
ABSENT = ("absent", "(absent)")

_ADDRESS = re.compile(r"0x[0-9a-fA-F]{6,}")
#: a run of decimal digits in a file's path (read by position from both ends: random parts take the middle)
_DIGIT_RUN = re.compile(r"[0-9]+")
_TEXTUAL = (str, bytes, bytearray)
_SCALAR = (bool, int, float, complex, str, bytes, bytearray, type(None), decimal.Decimal, fractions.Fraction,
           datetime.date, datetime.time, datetime.timedelta, np.generic)


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def _shown(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= SHOWN else text[:SHOWN - 1] + "…"


def _pandas(value):
    """``(key, shown)`` of a pandas Series, DataFrame or Index (values and index), or None for other objects."""
    module = type(value).__module__
    if not module.startswith("pandas"):
        return None
    try:
        import pandas as pd
    except ImportError:  # pragma: no cover - pandas is a dependency
        return None
    if isinstance(value, (pd.Series, pd.DataFrame, pd.Index)):
        text = value.to_json(orient="split", double_precision=15, default_handler=str) \
            if not isinstance(value, pd.Index) else repr(value.tolist())
        return ("pandas", type(value).__name__, _digest(text.encode())), _shown(f"{type(value).__name__} {text}")
    return None


def canonical(value):
    """``(key, shown)`` of a leaf value, or None when ``value`` is a container or object to walk into.

    Numbers keep their type's exact value (``repr`` of a float), strings are compared with memory addresses
    masked, an integer that is an address of this process (``id()``) is masked too
    (:func:`audit.gate.addresses.is_address`), arrays and bytes by a digest of their content, dtype and shape.
    """
    if isinstance(value, str):
        text = _ADDRESS.sub("0x…", value)
        return ("str", text if len(text) <= 256 else _digest(text.encode())), _shown(repr(text))
    if isinstance(value, (bytes, bytearray)):
        return ("bytes", len(value), _digest(bytes(value))), f"{len(value)} bytes, sha256 {_digest(bytes(value))}"
    if isinstance(value, np.ndarray):
        if value.dtype.kind == "O":
            return None
        data = np.ascontiguousarray(value)
        key = ("array", data.dtype.str, data.shape, _digest(data.tobytes()))
        flat = data.ravel()
        head = ", ".join(map(str, flat[:4].tolist())) + (", …" if flat.size > 4 else "")
        return key, f"array{list(data.shape)} [{head}]"
    if isinstance(value, np.generic):
        value = value.item() if value.dtype.kind not in "mM" else value
    if isinstance(value, (np.datetime64, np.timedelta64)):
        return (type(value).__name__, str(value)), str(value)
    if isinstance(value, int) and not isinstance(value, bool) and is_address(value):
        return ("address",), "an object's address (id), masked"
    if isinstance(value, (bool, int, type(None))):
        return (type(value).__name__, value), repr(value)
    if isinstance(value, float):
        return ("float", repr(value)), repr(value)
    if isinstance(value, complex):
        return ("complex", repr(value)), repr(value)
    if isinstance(value, (decimal.Decimal, fractions.Fraction, datetime.date, datetime.time, datetime.timedelta)):
        return (type(value).__name__, str(value)), _shown(repr(value))
    return _pandas(value)


def _base_beyond(arr):
    """The memory an array is a view of (the end of its ``.base`` chain: an array, bytes, a buffer), when that
    holds more bytes than the view shows, else None."""
    if not isinstance(arr, np.ndarray) or arr.base is None:
        return None
    base = arr.base
    while isinstance(base, np.ndarray) and base.base is not None:
        base = base.base
    if isinstance(base, memoryview):
        base = base.obj if isinstance(base.obj, (bytes, bytearray, np.ndarray)) else bytes(base)
    if isinstance(base, (bytes, bytearray)):
        return base if len(base) > arr.nbytes else None
    return base if isinstance(base, np.ndarray) and base.nbytes > arr.nbytes else None


#: dicts of at most this many plain keys show their keys' order as a part (``#order``)
MAX_ORDER = 64
_KEYS = frozenset({int, float, str, bool, bytes, np.int64, np.int32, np.str_})


class Observation(dict):
    """Path -> ``(key, shown)`` for one fit; ``truncated`` is set when the object graph was read in part."""

    truncated = False


def _walk_into(obs: Observation, obj, root: str, max_nodes: int, depth: int = 0, newest: bool = False,
               known: dict | None = None, collect: bool = False) -> None:
    """Read ``obj``'s graph into ``obs``, with the parts of its leaves and of its dicts keyed by identifiers
    (:func:`_parts`, :func:`audit.gate.parts.positions`). A long sequence of plain data (more than :data:`LONG`
    items, such as a log every fit appends to: diffprivlib's global budget accountant) is one value, its length
    and the hash of its whole content, instead of a path per item: read whole and cheaply, whatever the process
    fitted before. An array's or numpy number's type is a part of its own (``#dtype``: a dtype chosen by the
    record count is seen though the values are noisy). ``newest``: state that outlives the fit (a module's, a
    class's, a closure's), where a list or deque every fit appends to also shows its last item as ``[#-1]``
    (this fit's: its index grows with the process's history). ``known``: with ``collect``, filled with the
    objects and containers the walk passes (``id -> (node, path)``); without, a node found in it reads as a
    reference to the model's own part (``the model's model.estimators_[0]``: an ensemble's ``iter()``), not
    entered again."""
    w = walk(obj, root, max_nodes)
    for path, node in w:
        got = canonical(node)
        if known is not None and got is None:
            if collect:
                known.setdefault(id(node), (node, path))
            elif known.get(id(node), (None,))[0] is node:
                where = known[id(node)][1]
                obs.setdefault(path, (("ref", where), f"the model's {where}"))
                w.prune()
                continue
        if got is not None:
            if path not in obs:
                obs[path] = got
                if isinstance(node, _TEXTUAL) or type(node).__module__.startswith("pandas"):
                    _parts(obs, path, node, depth)  # text, bytes and pandas objects have parts
                elif isinstance(node, (np.ndarray, np.generic)):
                    obs.setdefault(path + "#dtype", (("dtype", node.dtype.str), str(node.dtype)))
                    base = _base_beyond(node)
                    if base is not None and depth < MAX_DEPTH:  # whole, and entry by entry from each end
                        _walk_into(obs, base, path + "#base", PART_NODES, depth + 1, newest)
                        if isinstance(base, np.ndarray):
                            for suffix, entry in position_parts(base.ravel()):
                                obs.setdefault(f"{path}#base{suffix}", canonical(entry))
                for marker, key, shown in float_parts(node):  # the low bits noise above them leaves exact
                    obs.setdefault(path + marker, (key, shown))
            if not isinstance(node, np.ndarray) or type(node) is np.ndarray:
                w.prune()  # an array subclass is entered too: its attributes (a masked array's mask)
        elif isinstance(node, (list, tuple, dict, set, frozenset)):
            obs.setdefault(path + "#len", (("int", len(node)), str(len(node))))
            if isinstance(node, dict) and 1 < len(node) <= MAX_ORDER and all(type(k) in _KEYS for k in node):
                # the order of a dict's keys is part of what it shows (insertion order: keys sorted by a count)
                obs.setdefault(path + "#order", (("order", tuple(map(repr, node))), ", ".join(map(repr, node))[:80]))
            if long_plain_data(node):
                # compared between fits of one run only (a str's hash is salted per process; never reported)
                obs.setdefault(path + "#content", (("plain data", len(node), hash(tuple(node))),
                                                   f"{len(node):,} items of plain data"))
                w.prune()
            elif isinstance(node, dict) and depth < MAX_DEPTH:
                for suffix, item in positions(node):
                    _walk_into(obs, item, path + suffix, PART_NODES, depth + 1, newest)
            elif newest and isinstance(node, list) and len(node) > 1 and depth < MAX_DEPTH:
                _walk_into(obs, node[-1], path + "[#-1]", PART_NODES, depth + 1, newest)
        elif newest and isinstance(node, collections.deque) and len(node) > 1 and depth < MAX_DEPTH:
            _walk_into(obs, node[-1], path + "[#-1]", PART_NODES, depth + 1, newest)
    obs.truncated = obs.truncated or w.truncated


def _parts(obs: Observation, path: str, value, depth: int = 0) -> None:
    """The parts of a leaf (:mod:`audit.gate.parts`) join ``obs`` below its path: the number tokens of a string
    by their context, its words and a bytes value's bytes by position, a pandas object's index, columns and items,
    and what a string or bytes decodes to, read as a small graph (a few levels deep)."""
    if depth >= MAX_DEPTH:
        return
    if isinstance(value, str):
        for suffix, number in number_parts(value):
            obs.setdefault(path + suffix, canonical(number))
    for suffix, part in position_parts(value) + pandas_parts(value):
        got = (("order", part), ", ".join(part)[:80]) if isinstance(part, tuple) else canonical(part)
        if got is not None:
            obs.setdefault(path + suffix, got)
    for suffix, inner in decoded(value):
        _walk_into(obs, inner, path + suffix, PART_NODES, depth + 1)


def _set(obs: Observation, path: str, value) -> None:
    """``obs[path]`` is the leaf ``value``, with its parts."""
    obs[path] = canonical(value)
    _parts(obs, path, value)


@contextlib.contextmanager
def _captured(obs: Observation, prefix: str = ""):
    """What the block emits (:func:`audit.gate.emissions.captured`) joins ``obs``: ``warning[i]``, ``log[i]``,
    ``stdout``, ``stderr``, ``file PATH`` (size and content) and ``environ[NAME]``, each after ``prefix``."""
    try:
        with captured() as out:
            yield
    finally:
        _join(obs, out, prefix)


def _join(obs: Observation, out, prefix: str = "") -> None:
    for i, text in enumerate(out.warnings):
        _set(obs, f"{prefix}warning[{i}]", text)
    for i, text in enumerate(out.logs):
        _set(obs, f"{prefix}log[{i}]", text)
    for name in ("stdout", "stderr"):
        if getattr(out, name):
            _set(obs, prefix + name, getattr(out, name))
    for path, got in out.files.items():
        if got is None:
            obs[f"{prefix}file {path}"] = canonical("(removed again)")
            continue
        key, shown = canonical(got[1])
        obs[f"{prefix}file {path}"] = ("file", got[0], key), f"{got[0]:,} bytes: {shown}"
        _parts(obs, f"{prefix}file {path}", got[1])
    for name, value in out.environ.items():
        _set(obs, f"{prefix}environ[{name}]", "(removed)" if value is None else value)
    if out.files:  # the names themselves: a count in a file name whose other part is random (mkstemp)
        runs = [[int(r) for r in _DIGIT_RUN.findall(path)] for path in out.files]
        for k in (0, 1, 2, -1, -2, -3):
            got = tuple(sorted(r[k] for r in runs if -len(r) <= k < len(r)))
            if got:
                obs[f"{prefix}files written: digits[#{k}]"] = ("digits", got), f"{', '.join(map(str, got))}"
    if out.thread_name is not None:
        _set(obs, f"{prefix}thread name", out.thread_name)
    for i, (func, args, kwargs) in enumerate(out.finalizers):  # what a finalizer of the model will be called with
        _walk_into(obs, {"func": getattr(func, "__qualname__", type(func).__name__), "args": list(args),
                         "kwargs": dict(kwargs or {})}, f"{prefix}finalizer[{i}]", PART_NODES)
    for i, (func, args, kwargs) in enumerate(out.at_exit):  # what the process would print when it ends
        with _captured(obs, f"{prefix}at exit[{i}] "):
            _call(obs, f"{prefix}at exit[{i}]", lambda: func(*args, **kwargs), max_nodes=PART_NODES)


def _call(obs: Observation, path: str, fn, *args, max_nodes: int, known: dict | None = None) -> None:
    try:
        value = fn(*args)
    except Exception as exc:  # noqa: BLE001 - a method that raises is an outcome too
        _set(obs, path, "raised " + outcome_text(exc))
        return
    if canonical(value) is not None:
        _set(obs, path, value)
    else:
        _walk_into(obs, value, path, max_nodes, known=known)


_SOURCE = re.compile(r"[A-Za-z_]+")
#: sources whose values any method call may emit (asking for one of them reads everything)
_EMITTED = frozenset({"warning", "log", "stdout", "stderr", "file", "environ", "calls"})


def source_of(path: str) -> str:
    """The source an observation path comes from: a method name (``predict_proba``, ``release``, ``repr``, ``score``),
    ``model`` (the object's graph and properties), ``type`` (class attributes), ``module`` (the globals of the
    defining module's package), ``fit`` (the fit's emissions, return value and exception), or an emission of the
    later calls (``warning``, ``log``, ``stdout``, ``stderr``, ``file``, ``environ``)."""
    m = _SOURCE.match(path)
    return m.group() if m else path


def observe_model(est, grid, classes=None, max_nodes: int = MAX_NODES, want=None, records=None,
                  serve: bool = True) -> Observation:
    """Every observable of the fitted ``est`` (module docstring), without the fit's own emissions; ``want``: the
    sources to read (:func:`source_of`; None: all); ``records``: the pair's records the methods are also asked
    about (:class:`audit.gate.behaviour.Queries`, :func:`audit.gate.behaviour.query_points`); ``serve``: whether
    the objects in reach are asked what they serve (:mod:`audit.gate.served`, one forked process per
    observation; the switch scan, which reads structure, does not ask)."""
    if want is not None and _EMITTED & set(want):
        want = None

    def wanted(source):
        return (want is None or source in want) and (serve or source != "served")

    obs = Observation()
    refresh_addresses()
    with _captured(obs):
        for name in METHODS:
            fn = getattr(est, name, None)
            if callable(fn) and wanted(name):
                _call(obs, f"{name}(grid)", fn, grid, max_nodes=max_nodes)
        if callable(getattr(est, "score", None)) and wanted("score"):
            labels = np.resize(np.asarray(list(classes) if classes else [0.0], dtype=object), len(grid))
            _call(obs, "score(grid)", est.score, grid, labels, max_nodes=max_nodes)
        if callable(getattr(est, "release", None)) and wanted("release"):
            _call(obs, "release()", est.release, max_nodes=max_nodes)
        if wanted("repr"):
            _call(obs, "repr()", lambda: repr(est), max_nodes=max_nodes)
        if callable(getattr(est, "_repr_html_", None)) and wanted("_repr_html_"):
            _call(obs, "_repr_html_()", est._repr_html_, max_nodes=max_nodes)
        if wanted("str"):
            _call(obs, "str()", lambda: str(est), max_nodes=max_nodes)
    known: dict = {}  # the model's own objects, by id: what a method returns of them reads as a reference
    reach: dict = {}  # objects beside the model (module globals), by id: what their methods serve is read too
    if wanted("model") or wanted("served"):
        _walk_into(obs if wanted("model") else Observation(), est, "model", max_nodes, known=known, collect=True)
    _around(obs, est, max_nodes, lambda s: wanted(s) or wanted("served") and s == "module", reach)
    _behaviour(obs, est, grid, records, max_nodes, wanted, classes, known)
    if wanted("served"):
        targets = [(path, node) for node, path in list(known.values()) + list(reach.values())
                   if node is not est and served.eligible(node)]
        got, complete = served.read(targets, _observed)
        for path, value in got.items():
            obs.setdefault(path, value)
        obs.truncated = obs.truncated or not complete
    return obs


def _observed(path: str, value) -> Observation:
    """``value`` as observations below ``path`` (what a served method returned, read in the sandbox)."""
    out = Observation()
    _call(out, path, lambda: value, max_nodes=PART_NODES)
    return out


def _behaviour(obs: Observation, est, grid, records, max_nodes: int, wanted, classes=None, known=None) -> None:
    """Every other public method taking nothing or ``X`` (:func:`audit.gate.behaviour.calls`), called after the
    storage is read (a method may change it), its emissions as ``calls warning[i]``, ``calls stdout``, ...."""
    with _captured(obs, "calls "):
        for path, fn, args in calls(est, grid, records, fixed=METHODS, skip=("score", "release"), wanted=wanted,
                                     classes=classes):
            _call(obs, path, fn, *args, max_nodes=max_nodes, known=known)


def _not_the_model(value, est):
    """A property's value, or the method's name when it is a method bound to the model itself (scikit-learn's
    ``_repr_html_``): walking its ``__self__`` would read the whole model again under another path, and what the
    method returns is observed on its own (``_repr_html_()``)."""
    if getattr(value, "__self__", None) is est and callable(value):
        return f"bound method {getattr(value, '__name__', '')} of the model"
    return value


def _package_modules(cls) -> list[str]:
    """The module defining ``cls`` and the modules of its package that it reaches: where a fit's cache may live
    (a registry in a helper module beside the estimator's must be imported, directly or through another module
    of the package, by the estimator's module or a base class's). The reach follows the globals of each module
    (a module of the package, or a function or class defined in one), the names the code of its functions and
    classes imports inside functions (:func:`_code_names`), and the class's bases; modules of the
    package nobody reaches (a test suite's other subjects) are not read. A top-level module has no package:
    itself alone. Cached while ``sys.modules`` keeps its size."""
    name = cls.__module__
    if "." not in name:
        return [name]
    key = (name, tuple(getattr(b, "__module__", "") for b in cls.__mro__), len(sys.modules))
    if key not in _REACH:
        if len(_REACH) > 256:
            _REACH.clear()
        package = name.rsplit(".", 1)[0]

        def inside(m) -> bool:
            return isinstance(m, str) and (m == package or m.startswith(package + ".")) and \
                sys.modules.get(m) is not None

        todo = [name] + [b.__module__ for b in cls.__mro__ if inside(getattr(b, "__module__", None))]
        seen: list = []
        while todo:
            m = todo.pop(0)
            if m in seen:
                continue
            seen.append(m)
            for value in list(vars(sys.modules[m]).values()):
                if isinstance(value, types.ModuleType):
                    found = [value.__name__]
                elif isinstance(value, (type, types.FunctionType)):
                    found = [getattr(value, "__module__", None)]
                    if getattr(value, "__module__", None) == m:  # what its code imports inside functions
                        found += [n for word in _code_names(value) for n in (word, f"{package}.{word}")]
                else:
                    continue
                todo.extend(f for f in found if inside(f) and f not in seen)
        _REACH[key] = [name] + sorted(m for m in seen if m != name)
    return _REACH[key]


#: the modules each estimator class reaches (:func:`_package_modules`)
_REACH: dict = {}


def _code_names(obj) -> set:
    """The names the code of a function, or of a class's methods, uses (``co_names``, nested code included): a
    function-level ``from package import helper`` names ``helper`` there."""
    codes = [obj.__code__] if isinstance(obj, types.FunctionType) else \
        [f.__code__ for f in vars(obj).values() if isinstance(f, types.FunctionType)]
    names: set = set()
    while codes:
        code = codes.pop()
        names.update(code.co_names)
        codes.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
    return names


def _around(obs: Observation, est, max_nodes: int, wanted=lambda source: True, reach: dict | None = None) -> None:
    """What the fit may leave beside the object: properties (public, computed on access), attributes set on
    the class and on its base classes (``class M.Base.NAME``: a registry every subclass posts to; the libraries'
    own bases apart), the globals of the module that defines it and of the other imported modules of its package
    (a cache of the last fit, a metrics sink called like a function), and the attributes of the classes those
    modules define (``module M.Store.NAME``). Modules, classes, functions, methods and dunder names are not
    read. ``reach``: filled with the objects these walks pass and the memos they find (``id -> (node, path)``),
    whose methods :mod:`audit.gate.served` calls."""
    cls = type(est)
    for name, attr in inspect.getmembers(cls, lambda a: isinstance(a, property)):
        if not name.startswith("__") and wanted("model"):
            _call(obs, f"model.{name}", lambda name=name: _not_the_model(getattr(est, name), est),
                  max_nodes=max_nodes)
    modules = [(f"module {m}", vars(sys.modules.get(m, object))) for m in _package_modules(cls)]
    bases = [(f"class {b.__module__}.{b.__qualname__}", vars(b)) for b in cls.__mro__[1:]
             if b not in _BUILTIN_TYPES and not b.__module__.startswith(_LIBRARIES)]
    classes = [(f"{where}.{name}", vars(value)) for where, namespace in modules for name, value in
               list(namespace.items()) if isinstance(value, type) and value not in cls.__mro__
               and value.__module__ == where[len("module "):]]
    for where, namespace in [("type(model)", vars(cls))] + bases + modules + classes:
        if not wanted(source_of(where)):
            continue
        for name, value in list(namespace.items()):
            if callable(value) and hasattr(value, "cache_info") and hasattr(value, "__wrapped__"):
                if reach is not None:
                    reach.setdefault(id(value), (value, f"{where}.{name}"))
                memo = _memo(value)  # functools.lru_cache / cache: what it was asked, what it answered
                if memo:
                    _walk_into(obs, memo, f"{where}.{name}.cache", max_nodes // 4, newest=True)
                continue
            if isinstance(value, types.FunctionType) and value.__closure__ and not name.startswith("__"):
                kept = _closure_state(value)  # a decorator's state: the fits it counted, the records it saw
                if kept:
                    _walk_into(obs, kept, f"{where}.{name}.__closure__", max_nodes // 4, newest=True)
                continue
            if name.startswith("__") or isinstance(value, (types.ModuleType, type, property, staticmethod,
                                                           classmethod, __future__._Feature, np.ufunc)) or \
                    inspect.isroutine(value):
                continue  # code is not read; a callable object's state is (a metrics sink called like a function)
            _walk_into(obs, model_view(value, est), f"{where}.{name}", max_nodes // 4, newest=True, known=reach,
                       collect=reach is not None)


#: the classes of the language itself, whose attributes no fit changes
_BUILTIN_TYPES = frozenset(v for v in vars(builtins).values() if isinstance(v, type))
#: libraries whose base classes' attributes are their own configuration (scikit-learn's estimator tags), not a fit's
_LIBRARIES = ("sklearn.", "numpy.", "scipy.", "pandas.", "abc", "typing", "collections", "enum")


def _memo(fn) -> list:
    """The entries of a ``functools.lru_cache`` memo, oldest first (at most the newest 16): each its key's hash
    (a call's arguments: the labels a fit counted; the processes of one run share a hash secret) and its result
    where the cache keeps it reachable (an unbounded cache), else None. Read through the garbage collector's
    view of the wrapper, as a debugger would; an adversary in the process asks the cache itself
    (``cache_info().hits`` after a call with the arguments they suspect)."""
    for ref in gc.get_referents(fn):
        if isinstance(ref, dict) and "__wrapped__" not in ref and ref:
            return [(hash(k), None if type(v).__name__ == "_lru_list_elem" else v) for k, v in list(ref.items())[-16:]]
    return []


def _closure_state(fn) -> dict:
    """The data a function's closure holds (a decorator's deque of past calls, a counter), by variable name:
    its cells that are not code, classes or modules, through ``__wrapped__`` chains."""
    kept, seen = {}, set()
    while isinstance(fn, types.FunctionType) and id(fn) not in seen:
        seen.add(id(fn))
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
            try:
                value = cell.cell_contents
            except ValueError:  # an empty cell
                continue
            if not isinstance(value, (types.FunctionType, types.ModuleType, type, types.BuiltinFunctionType)):
                kept.setdefault(name, value)
        fn = getattr(fn, "__wrapped__", None)
    return kept


def observe_fit(make_estimator, data, grid, classes=None, max_nodes: int = MAX_NODES, want=None,
                records=None, serve: bool = True) -> Observation:
    """Build a fresh estimator with ``make_estimator()``, fit it on ``data = (X, y)`` as it ships, and observe
    everything (module docstring), or the sources in ``want`` (:func:`source_of`) and the fit's own emissions
    (``fit warning[i]``, ``fit log[i]``, ``fit stdout``, ``fit stderr``). An exception in ``fit`` is the
    observation ``fit raised``; ``SystemExit`` and ``KeyboardInterrupt`` propagate. ``records``: the points shaped
    like ``X`` that the methods are asked about beside ``grid`` (:class:`audit.gate.behaviour.Queries`: the pair's
    own records); ``serve``: as :func:`observe_model`'s."""
    with kept_environment():  # every fit starts from the same environment variables
        return _observe_fit(make_estimator, data, grid, classes, max_nodes, want, records, serve)


def _observe_fit(make_estimator, data, grid, classes, max_nodes: int, want, records=None,
                 serve: bool = True) -> Observation:
    X, y = data
    emitted = Observation()
    est = returned = raised = None
    with _captured(emitted):
        try:
            est = make_estimator()
            sizes = module_sizes() if want is None or "module" in want else None
            returned = est.fit(X, y)
        except Exception as exc:  # noqa: BLE001 - a refusal is an outcome
            raised, est = canonical(outcome_text(exc)), None
    obs = Observation()
    if raised is not None:
        obs["fit raised"] = raised  # whole: a refusal is judged as an outcome (audit.gate.refusals)
    obs.update({f"fit {k}": v for k, v in emitted.items()})
    if est is not None:
        if returned is not est and returned is not None:  # fit returned something else than the model
            _walk_into(obs, returned, "fit()", max_nodes)
        after = observe_model(est, grid, classes, max_nodes, want, records, serve)
        if sizes is not None:
            for module, name, value in added_globals(sizes):  # set by a fit on another package's module
                _walk_into(after, model_view(value, est), f"module {module}.{name}", max_nodes // 4)
        obs.update(after)
        obs.truncated = obs.truncated or after.truncated
    return obs
