"""What a fitted model serves through Python's protocols and to public arguments, beside its public methods.

Whoever holds a model can do more with it than call ``predict``: take its length, iterate it, index it, call it,
ask whether something is in it, convert it to a number or an array, hash it, and call its methods with any
argument a public fact fills. A model whose storage the walk cannot read (a SQLite table in memory, a C object)
serves its exact counts this way as surely as through an attribute. The determinism probe makes these calls
(:mod:`audit.gate.behaviour` adds them to the rest):

* :func:`protocol_calls`: every protocol operation the model's class defines itself (a class of the MRO other
  than ``object`` and the built-in types): ``len()``, ``iter()`` (the first :data:`MAX_ITEMS` items),
  ``reversed()``, ``bool()``, ``int()``, ``float()``, ``index()``, ``complex()``, ``array()`` (``np.asarray``),
  ``hash()``, ``format()``, ``dir()``, and with an argument ``call(X)`` (``model(X)``) at the query points and on
  the grid, ``getitem(a)`` (``model[a]``) and ``contains(a)`` (``a in model``) at the public scalars; a
  ``__getattr__`` is asked for the names its own code spells (a prefix such as ``"n_class_"`` completed with each
  public scalar) and the names ``__dir__`` announces.
* :func:`scalar_arguments`: the public scalars a method taking one argument is also given, beside ``X``: each
  class label, the small integers ``0 .. MAX_INT`` (an index, a count an adversary guesses) and each differing
  record as a flat row (``predict_one(x)``, ``x in model``).
* :func:`flag_variants`: a method whose keyword parameters default to ``True`` or ``False`` is also called with
  all of them turned (``summary(exact=True)``): a flag is a public fact.
* :func:`consumed`: what a method returns as an iterator or generator is read as the list of its first
  :data:`MAX_ITEMS` items.

Each call's path names the operation (``len()``, ``getitem(label 1)``, ``count_for(2)``), so it is its own source
(:func:`audit.gate.observe.source_of`) and confirmation reads it again.
"""
from __future__ import annotations

import builtins
import collections.abc
import inspect
import itertools
import types

import numpy as np

__all__ = ["protocol_calls", "scalar_arguments", "flag_variants", "consumed", "MAX_ITEMS", "MAX_INT",
           "MAX_NAMES"]

#: items read from an iterator the model serves
MAX_ITEMS = 64
#: the small integers a one-argument method is given: 0 .. MAX_INT
MAX_INT = 8
#: names at most a ``__getattr__`` is asked for
MAX_NAMES = 32

#: protocol operations taking no argument: (dunder, path name, how to call it)
_NULLARY = (
    ("__len__", "len", len),
    ("__iter__", "iter", lambda m: list(itertools.islice(iter(m), MAX_ITEMS))),
    ("__reversed__", "reversed", lambda m: list(itertools.islice(reversed(m), MAX_ITEMS))),
    ("__bool__", "bool", bool),
    ("__int__", "int", int),
    ("__float__", "float", float),
    ("__index__", "index", lambda m: m.__index__()),
    ("__complex__", "complex", complex),
    ("__array__", "array", np.asarray),
    ("__hash__", "hash", hash),
    ("__format__", "format", lambda m: format(m, "")),
    ("__dir__", "dir", lambda m: sorted(dir(m))),
)
_BUILTIN_TYPES = frozenset(v for v in vars(builtins).values() if isinstance(v, type))


def _defines(cls, dunder: str) -> bool:
    """Whether a class of ``cls``'s MRO other than ``object`` and the built-in types defines ``dunder`` (to
    something other than None: a class defining ``__eq__`` sets ``__hash__`` to None)."""
    for base in cls.__mro__:
        if dunder in vars(base):
            return base not in _BUILTIN_TYPES and vars(base)[dunder] is not None
    return False


def _label(value) -> str:
    return f"label {value!r}" if not isinstance(value, (int, np.integer)) or isinstance(value, bool) else repr(value)


def scalar_arguments(classes=None, queries=None) -> list[tuple[str, object]]:
    """``(where, value)`` of the public scalars a one-argument method is given: the class labels (``label 'a'``;
    an integer label is the integer), the integers ``0 .. MAX_INT`` and each differing record of ``queries`` as
    a flat row (``row 0``), each value once."""
    out, seen = [], set()
    for value in [*(classes or ()), *range(MAX_INT + 1)]:
        key = (type(value).__name__, repr(value))
        if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
            value, key = int(value), ("int", repr(int(value)))
        if key not in seen:
            seen.add(key)
            out.append((_label(value), value))
    if queries is not None:
        out.extend((f"row {i}", queries.records[i].copy()) for i in range(queries.differing))
    return out


def flag_variants(fn) -> dict:
    """The keyword arguments turning every parameter of ``fn`` that defaults to ``True`` or ``False`` (a method's
    ``exact=False``, ``verbose=False``); empty when it has none."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return {}
    return {p.name: not p.default for p in params if isinstance(p.default, bool)
            and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}


def consumed(value):
    """``value``, or the list of its first :data:`MAX_ITEMS` items when it is an iterator or a generator (what a
    method yields is what it serves)."""
    if isinstance(value, collections.abc.Iterator):
        return list(itertools.islice(value, MAX_ITEMS))
    return value


def _spelled_names(cls, classes) -> list[str]:
    """The attribute names a ``__getattr__`` of ``cls`` spells in its own code (string constants that are
    identifiers, a prefix ending in ``_`` completed with each public scalar), and no name the class already
    resolves."""
    fn = next((vars(b)["__getattr__"] for b in cls.__mro__ if "__getattr__" in vars(b)), None)
    code = getattr(fn, "__code__", None)
    if code is None:
        return []
    words, codes = [], [code]
    while codes:
        c = codes.pop()
        words += [w for w in c.co_consts if isinstance(w, str) and w.isidentifier() and not w.startswith("__")]
        codes.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
    scalars = [str(v) for _, v in scalar_arguments(classes) if not isinstance(v, np.ndarray)]
    names = []
    for w in dict.fromkeys(words):
        names += [w] + ([w + s for s in scalars] if w.endswith("_") else [])
    return [n for n in dict.fromkeys(names) if not _resolves(cls, n)][:MAX_NAMES]


def _resolves(cls, name: str) -> bool:
    try:
        inspect.getattr_static(cls, name)
        return True
    except AttributeError:
        return False


def _announced(est) -> list[str]:
    """The names a model's own ``__dir__`` announces that neither its instance dict nor its class resolves."""
    try:
        names = [n for n in dir(est) if isinstance(n, str)]
    except Exception:  # noqa: BLE001 - outside code
        return []
    own = getattr(est, "__dict__", {})
    return [n for n in names if n not in own and not _resolves(type(est), n)][:MAX_NAMES]


def protocol_calls(est, grid, points, classes=None, queries=None, wanted=lambda source: True) -> list:
    """``(path, function, arguments)`` of the protocol operations ``est``'s class defines (module docstring);
    ``points``: ``(where, X)`` of the query points (:func:`audit.gate.behaviour.calls`), the grid added."""
    cls, out = type(est), []
    for dunder, name, op in _NULLARY:
        if _defines(cls, dunder) and wanted(name):
            out.append((f"{name}()", op, (est,)))
    if _defines(cls, "__call__") and wanted("call"):
        out.extend((f"call({where})", est, (X,)) for where, X in [*points, ("grid", grid)])
    scalars = scalar_arguments(classes, queries)
    for dunder, name, op in (("__getitem__", "getitem", lambda m, a: m[a]),
                             ("__contains__", "contains", lambda m, a: a in m)):
        if _defines(cls, dunder) and wanted(name):
            out.extend((f"{name}({where})", op, (est, a)) for where, a in scalars)
    if _defines(cls, "__getattr__") or _defines(cls, "__dir__"):
        names = _spelled_names(cls, classes) if _defines(cls, "__getattr__") else []
        names += _announced(est) if _defines(cls, "__dir__") else []
        if wanted("getattr"):
            out.extend((f"getattr({n!r})", getattr, (est, n)) for n in dict.fromkeys(names))
    return out
