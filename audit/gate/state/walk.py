"""Walk everything a fitted object (or its pickle) holds, and recognise random state in it.

:func:`walk` visits an object graph breadth first and yields ``(path, node)`` pairs: attributes
(``__dict__``, ``__slots__`` including a single-string ``__slots__``, and the dict or tuple a custom
``__getstate__`` returns), dict keys and values, the items of lists, tuples, sets (sorted, so a member's path
does not depend on hashing), deques and the other
standard containers, object arrays, the ``__self__`` of bound methods (builtin ones included),
``functools.partial`` (``func``, ``args``, ``keywords``), the closure cells and defaults of Python
functions, the objects that bytes starting with a pickle header unpickle to, what compressed bytes decompress
to (``#gzip``, ``#zlib``, ``#bz2``, ``#xz``: a checkpoint kept compressed), an exception's arguments, cause,
context and traceback, down to the locals of the frames it passed through (``.__traceback__.tb_frame.f_locals``:
an error kept "to explain later" keeps the fit's variables alive), the frame of a generator or coroutine kept
live (``.gi_frame.f_locals``, ``.cr_frame``, ``.ag_frame``: a suspended minibatch stream holds the data), a deque's ``maxlen``, the
attributes of container and array subclasses (a masked array's mask), the entries of weak dictionaries and weak
sets (a key's ``repr`` in the path, addresses masked), a weak reference's live target (``()``), a context
variable's value in the current context (``.get()``), and, for an object that shows nothing
else (a C object: an iterator, ``range``, ``itertools.count``, ``array.array``), what its pickle carries
(``__reduce_ex__``: arguments, state and items). It never enters
modules, classes or a function's globals, nor the logging machinery a logger links to: a ``Logger``'s ``parent``
and ``manager`` (every logger of the process and the host's handlers, such as pytest's capture of every record)
and the ``LogRecord`` objects a handler keeps (what a fit logs is read where it is emitted,
:mod:`audit.gate.emissions`; a logger's own level, handlers and filters are walked). When ``max_nodes`` is
reached the walk stops and says so (``Walk.truncated``): no silent cap.

:func:`recognise` names a node that *is* random state: a generator object, a bit generator's state
dict, a ``RandomState.get_state()`` tuple, a ``random.Random().getstate()`` tuple, a string or bytes
spelling one of these states (JSON or ``repr``, :func:`audit.gate.state.codec.parse_text`), or a copy
of a known seed (an int, a float equal to it, a string containing it, two 32-bit words). Raw words (a
PCG64 ``[state, inc]`` pair, an MT19937 key) are ambiguous on their own: the state probe names them
only when they match a generator seeded with the fit's seed (:func:`audit.gate.state.codec.identify`).
"""
from __future__ import annotations

import collections
import contextvars
import functools
import inspect
import itertools
import logging
import pickle
import random
import re
import types
import weakref
from collections import deque

import numpy as np

from audit.gate.parts import COMPRESSED, decoded
from audit.gate.state.codec import parse_text

__all__ = ["Walk", "walk", "recognise", "GENERATOR_TYPES", "MAX_NODES", "LONG", "long_plain_data", "long_seed"]

#: the default node limit of a walk (hit: ``Walk.truncated``)
MAX_NODES = 2_000_000

GENERATOR_TYPES = (np.random.Generator, np.random.BitGenerator, np.random.SeedSequence, np.random.RandomState,
                   random.Random)
_SCALARS = (int, float, complex, str, bool, type(None), np.generic)
_PLAIN = frozenset({int, float, str, bool, type(None)})
#: not entered: a record's text was read when the fit emitted it; the registry of every logger is the process's
_LOGGING = (logging.LogRecord, logging.Manager, logging.PlaceHolder)


def _type_name(obj) -> str:
    for t in ("Generator", "BitGenerator", "SeedSequence", "RandomState"):
        if isinstance(obj, getattr(np.random, t)):
            return t
    return "Random"


def recognise(node, seed: int | None):
    """``(kind, type_name)`` when ``node`` is random state, else ``None``.

    Kinds: ``"generator"`` (a generator object), ``"state"`` (a generator's state in plain data, or a
    string spelling it: type name such as ``"PCG64 state as JSON string"``) and ``"seed"`` (a copy of
    ``seed``).
    """
    if type(node) in (str, bytes, bytearray):
        spelt = parse_text(node)
        if spelt is not None:
            st, how = spelt
            family = st["bit_generator"] if isinstance(st, dict) else "MT19937"
            return "state", f"{family} state as {how} {'string' if isinstance(node, str) else 'bytes'}"
    if type(node) in _PLAIN:  # fast path: most nodes are plain scalars
        return ("seed", type(node).__name__) if seed is not None and _is_seed(node, seed) else None
    if isinstance(node, GENERATOR_TYPES):
        return "generator", _type_name(node)
    if isinstance(node, dict) and "bit_generator" in node and "state" in node:
        return "state", "bit_generator.state"
    if isinstance(node, (tuple, list)) and len(node) >= 3:
        if isinstance(node[0], str) and node[0] == "MT19937" and np.size(node[1]) == 624:
            return "state", "RandomState.get_state()"
        if type(node[0]) is int and node[0] == 3 and isinstance(node[1], tuple) and len(node[1]) == 625:
            return "state", "random.Random.getstate()"
    if seed is not None and _is_seed(node, seed):
        return "seed", type(node).__name__
    return None


def _words(seed: int):
    return seed >> 32, seed & 0xFFFFFFFF


def _is_seed(value, seed: int) -> bool:
    if isinstance(value, (bool, np.bool_)):
        return False
    if isinstance(value, (int, np.integer)):
        return int(value) == seed
    if isinstance(value, (float, np.floating)):
        return float(value) == float(seed)
    if isinstance(value, str):
        return str(seed) in value
    if isinstance(value, (tuple, list)) and 0 < len(value) <= 10 ** 5 and all(
            isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in value):
        value = np.asarray([int(v) for v in value], dtype=object)
    if isinstance(value, np.ndarray) and value.dtype.kind in "iuO" and 0 < value.size <= 10 ** 6:
        flat = value.ravel()
        try:
            if np.any(flat == seed):
                return True
            hi, lo = _words(seed)
            return flat.size >= 2 and bool(np.any(((flat[:-1] == hi) & (flat[1:] == lo))
                                                  | ((flat[:-1] == lo) & (flat[1:] == hi))))
        except (OverflowError, TypeError):
            return False
    return False


class Walk:
    """A breadth-first walk of an object graph; iterate it for ``(path, node)`` pairs.

    Parameters
    ----------
    obj : object
        The root.
    root : str
        The root's name in the paths.
    max_nodes : int
        Visit at most this many nodes; ``truncated`` is set when the limit stopped the walk.
    stop : callable, optional
        ``stop(node) -> bool``: yield the node but do not enter it (e.g. a recognised generator).
        A caller that has judged the node itself may call :meth:`prune` instead, before asking for
        the next pair.
    """

    def __init__(self, obj, root: str = "model", max_nodes: int = MAX_NODES, stop=None):
        self.obj, self.root, self.max_nodes, self.stop = obj, root, max_nodes, stop
        self.truncated = False
        self.visited = 0
        self._pruned = False

    def prune(self):
        """Do not enter the node just yielded."""
        self._pruned = True

    def __iter__(self):
        seen = {}  # id -> object: holding the object keeps temporaries (unpickled, __getstate__) from reusing an id
        queue = deque([(self.root, self.obj)])
        while queue:
            if self.visited >= self.max_nodes:
                self.truncated = True
                return
            path, cur = queue.popleft()
            if not isinstance(cur, _SCALARS):
                if id(cur) in seen:
                    continue
                seen[id(cur)] = cur
            self.visited += 1
            self._pruned = False
            yield path, cur
            if self._pruned or type(cur) in _PLAIN or (self.stop is not None and self.stop(cur)):
                continue
            queue.extend((path + suffix, child) for suffix, child in children(cur))


#: a list or tuple longer than this whose items are plain data is read whole (:func:`long_plain_data`)
LONG = 1_024
_PLAIN_KINDS = frozenset({bool, int, float, str, type(None)})


def long_plain_data(node, strings: bool = True) -> bool:
    """A list or tuple of more than :data:`LONG` items, each a number, string or None, or a tuple of them: a log
    every fit appends to (diffprivlib's process-wide budget accountant). Its readers take it whole (its length and
    the hash of its content; seeds among its numbers, :func:`long_seed`) instead of a path per item, so a read
    costs what the list costs, not what the process fitted before. Type checks run in C. ``strings=False``:
    numbers only (a string may spell a generator's state, which the state probe reads item by item)."""
    if not isinstance(node, (list, tuple)) or len(node) <= LONG:
        return False
    plain = _PLAIN_KINDS if strings else _PLAIN_KINDS - {str}
    kinds = set(map(type, node))
    if not kinds <= plain | {tuple}:
        return False
    if tuple not in kinds:
        return True
    tuples = node if kinds == {tuple} else [x for x in node if type(x) is tuple]
    return set(map(type, itertools.chain.from_iterable(tuples))) <= plain


def long_seed(node, seed: int | None) -> bool:
    """Whether a :func:`long_plain_data` sequence of numbers holds a copy of ``seed`` (an int or a float equal to
    it, two 32-bit words side by side), its tuples read item by item."""
    if seed is None:
        return False
    flat = list(itertools.chain.from_iterable(x if type(x) is tuple else (x,) for x in node))
    numbers = [int(v) for v in flat if type(v) is int or (type(v) is float and v.is_integer())]
    return bool(numbers) and _is_seed(np.asarray(numbers, dtype=object), seed)


def walk(obj, root: str = "model", max_nodes: int = MAX_NODES, stop=None) -> Walk:
    """A :class:`Walk` of ``obj`` (iterate it; read ``truncated`` afterwards)."""
    return Walk(obj, root, max_nodes, stop)


def _slot_names(cls):
    slots = cls.__dict__.get("__slots__", ())
    return (slots,) if isinstance(slots, str) else tuple(slots)


def _object_children(obj):
    out, names = [], set()
    d = getattr(obj, "__dict__", None)
    if isinstance(d, dict):
        out.extend((f".{k}", v) for k, v in d.items())
        names.update(d)
    for cls in type(obj).__mro__:
        for name in _slot_names(cls):
            if name not in ("__dict__", "__weakref__") and name not in names and hasattr(obj, name):
                names.add(name)
                out.append((f".{name}", getattr(obj, name)))
    getstate = getattr(type(obj), "__getstate__", None)
    if getstate is not None and getstate is not getattr(object, "__getstate__", None):
        try:
            state = obj.__getstate__()
        except Exception:  # noqa: BLE001 - outside code
            return out
        parts = state if isinstance(state, tuple) and all(isinstance(s, (dict, type(None))) for s in state) \
            else (state,)
        for part in parts:
            if isinstance(part, dict):
                out.extend((f".{k}", v) for k, v in part.items()
                           if not (k in names and d is not None and d.get(k) is v))
            elif part is not None:
                out.append((".__getstate__()", part))
    return out


def children(obj):
    """``(suffix, child)`` pairs of what ``obj`` holds (see the module docstring)."""
    if isinstance(obj, (dict, list, tuple, deque, set, frozenset)):
        return _container_children(obj) + (_object_children(obj) if type(obj) not in _CONTAINERS else [])
    if isinstance(obj, collections.ChainMap):
        return [(f".maps[{i}]", m) for i, m in enumerate(obj.maps)]
    if isinstance(obj, _WEAK):
        return _weak_children(obj)
    if isinstance(obj, np.ndarray):  # a subclass (a masked array's mask) holds attributes beside the values
        return ([(f"[{i}]", v) for i, v in enumerate(obj.ravel().tolist())] if obj.dtype == object else []) + \
            (_object_children(obj) if type(obj) is not np.ndarray else [])
    if isinstance(obj, (bytes, bytearray)):
        if obj[:1] == b"\x80":
            try:
                return [(".<unpickled>", pickle.loads(bytes(obj)))]
            except Exception:  # noqa: BLE001 - not a pickle after all
                return []
        return [(suffix, inner) for suffix, inner in decoded(obj) if suffix in COMPRESSED]
    if isinstance(obj, _SCALARS) or inspect.isclass(obj) or inspect.ismodule(obj) or isinstance(obj, _LOGGING):
        return []
    if isinstance(obj, BaseException):
        return [(f".{k}", v) for k, v in (("args", obj.args), ("__traceback__", obj.__traceback__),
                                          ("__cause__", obj.__cause__), ("__context__", obj.__context__))
                if v is not None] + _object_children(obj)
    if isinstance(obj, types.TracebackType):  # the frames the exception passed through, not their callers
        return [(f".{k}", v) for k, v in (("tb_frame", obj.tb_frame), ("tb_next", obj.tb_next)) if v is not None]
    if isinstance(obj, types.FrameType):
        return [(".f_locals", dict(obj.f_locals))]
    if isinstance(obj, _SUSPENDED):  # a generator or coroutine kept live: its frame's locals (the data it iterates)
        return [(f".{k}", f) for k in ("gi_frame", "cr_frame", "ag_frame") if (f := getattr(obj, k, None)) is not None]
    if isinstance(obj, logging.Logger):  # its own level, handlers and filters; not the process's other loggers
        return [(f".{k}", v) for k, v in vars(obj).items() if k not in ("parent", "manager")]
    if isinstance(obj, functools.partial):
        return [(".func", obj.func), (".args", obj.args), (".keywords", obj.keywords)]
    if isinstance(obj, types.FunctionType):
        cells = [(f".__closure__[{i}]", c.cell_contents) for i, c in enumerate(obj.__closure__ or ())
                 if _cell_full(c)]
        return cells + [(".__defaults__", obj.__defaults__ or ()), (".__kwdefaults__", obj.__kwdefaults__ or {})]
    if isinstance(obj, (types.MethodType, types.BuiltinMethodType, types.MethodWrapperType)):
        owner = getattr(obj, "__self__", None)
        out = [] if owner is None or inspect.ismodule(owner) else [(".__self__", owner)]
        return out + ([(".__func__", obj.__func__)] if isinstance(obj, types.MethodType) else [])
    if inspect.isroutine(obj) or isinstance(obj, np.dtype):
        return []
    return _object_children(obj) or _reduced(obj)


#: suspended code kept live: generators, coroutines and async generators (a pickle drops them; their frames hold the
#: locals of the function that made them)
_SUSPENDED = (types.GeneratorType, types.CoroutineType, types.AsyncGeneratorType)
#: the builtin containers whose items are all they hold (a subclass may add attributes)
_CONTAINERS = frozenset({dict, list, tuple, deque, set, frozenset, collections.OrderedDict,
                         collections.defaultdict})
#: items of a reduction's list or dict iterator read at most (a larger one is cut, like any long walk)
_REDUCED_ITEMS = 10_000


def _container_children(obj):
    if isinstance(obj, dict):
        return [(f".keys()[{i}]", k) for i, k in enumerate(obj)] + [(f"[{k!r}]", v) for k, v in obj.items()]
    if isinstance(obj, (set, frozenset)):
        return [(f"{{{i}}}", v) for i, v in enumerate(_canonical(obj))]
    items = [(f"[{i}]", v) for i, v in enumerate(obj)]
    return items + ([(".maxlen", obj.maxlen)] if isinstance(obj, deque) and obj.maxlen is not None else [])


def _canonical(members) -> list:
    """A set's members in an order that does not depend on hashing (sorted; by ``repr`` when they do not
    compare): the same members are at the same paths in every fit, whatever the other members are."""
    try:
        return sorted(members)
    except TypeError:
        return sorted(members, key=repr)


_WEAK = (weakref.WeakKeyDictionary, weakref.WeakValueDictionary, weakref.WeakSet, weakref.ref,
         contextvars.ContextVar)
_ADDRESS = re.compile(r"0x[0-9a-fA-F]{6,}")
_UNSET = object()


def _weak_children(obj):
    """What a weak container, a weak reference or a context variable holds: the entries of a weak dictionary
    (a key's ``repr`` in the path, memory addresses masked), the members of a weak set, a reference's live
    target (``()``) and a context variable's value in the current context (``.get()``)."""
    if isinstance(obj, contextvars.ContextVar):
        value = obj.get(_UNSET)
        return [] if value is _UNSET else [(".get()", value)]
    if isinstance(obj, weakref.ref):
        target = obj()
        return [] if target is None else [("()", target)]
    if isinstance(obj, weakref.WeakSet):
        return [(f"{{{i}}}", v) for i, v in enumerate(list(obj))]
    return [(f"[{_ADDRESS.sub('0x…', repr(k))}]", v) for k, v in list(obj.items())]


def _reduced(obj):
    """What pickling ``obj`` carries, for an object that shows nothing else (no ``__dict__``, slots or
    ``__getstate__``: a C-implemented object such as an iterator, ``range``, ``itertools.count``,
    ``array.array`` or a compiled pattern): the arguments, state and items of ``obj.__reduce_ex__(4)``, the
    reconstructing callable left out. An object that cannot be pickled shows nothing."""
    try:
        reduced = obj.__reduce_ex__(4)
    except Exception:  # noqa: BLE001 - outside code; not picklable
        return []
    if not isinstance(reduced, tuple) or len(reduced) < 2:
        return []
    out = [(".__reduce__()[1]", reduced[1])]
    if len(reduced) > 2 and reduced[2] is not None:
        out.append((".__reduce__()[2]", reduced[2]))
    for k, what in ((3, "list"), (4, "dict")):
        if len(reduced) > k and reduced[k] is not None:
            try:
                items = list(itertools.islice(reduced[k], _REDUCED_ITEMS))
            except Exception:  # noqa: BLE001 - outside code
                continue
            out.append((f".__reduce__()[{k}]", dict(items) if what == "dict" else items))
    return out


def _cell_full(cell) -> bool:
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True
