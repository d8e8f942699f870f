"""The numbers a fitted model's pickle carries, by attribute path.

Publishing a fitted model publishes its pickle: every fitted attribute, private ones too, and
whatever nested objects hold (scikit-learn's ``Tree`` keeps ``n_node_samples`` per node, exact).
:func:`state_numbers` walks what pickle would save (``__getstate__()`` when the object defines
it, else ``__dict__`` and ``__slots__``), recursively through dicts, lists, tuples, sets, numpy
arrays (structured arrays field by field) and nested objects, and returns every real number it
meets with its path, e.g. ``model.tree_.nodes['n_node_samples'][3]``, ``model.count_``,
``model._secret[0]``. Containers also give their length (``len(model.trees_)``), so a length that
depends on the data is a coordinate of its own.

Left out: the constructor parameters of the top-level estimator (``get_params(deep=False)``
keys: public and constant), random generator objects (the state probe,
:mod:`audit.gate.state.probe`, reports those), strings, functions, modules and classes.
"""
from __future__ import annotations

import functools
import inspect
from numbers import Real

import numpy as np

from audit.gate.state.walk import GENERATOR_TYPES

__all__ = ["state_numbers", "constructor_keys", "MAX_ITEMS", "ROOT"]

#: values read per array, list, tuple, dict or set (a longer one is cut; ``truncated`` says so)
MAX_ITEMS = 256
#: how deep nested objects are followed
MAX_DEPTH = 12
#: the name of the fitted estimator in the paths
ROOT = "model"

_OPAQUE = (str, bytes, bytearray, type(None), type, complex)


def constructor_keys(est) -> set[str]:
    """The top-level constructor parameters: ``get_params(deep=False)``'s keys, else ``__init__``'s names.

    A scikit-learn ``get_params`` (``BaseEstimator``'s own) reads the class's ``__init__`` signature on every call,
    and the fallback reads it too: both are the class's, so they are read once per class (the audit calls this on
    every fit). Any other ``get_params`` is asked each time."""
    cls = type(est)
    if getattr(getattr(cls, "get_params", None), "__qualname__", "") == "BaseEstimator.get_params" and \
            callable(getattr(cls, "_get_param_names", None)):
        try:
            return set(_class_param_names(cls))
        except Exception:
            pass
    try:
        return set(est.get_params(deep=False))
    except Exception:
        try:
            return set(_init_names(cls))
        except (TypeError, ValueError):
            return set()


@functools.lru_cache(maxsize=256)
def _class_param_names(cls) -> tuple:
    return tuple(cls._get_param_names())


@functools.lru_cache(maxsize=256)
def _init_names(cls) -> tuple:
    return tuple(n for n in inspect.signature(cls).parameters if n != "self")


def _state(obj):
    """What pickle saves of ``obj`` as a dict of attributes, or None when it saves nothing walkable."""
    getstate = getattr(obj, "__getstate__", None)
    state = None
    if callable(getstate):
        try:
            state = getstate()
        except Exception:
            state = None
    if state is None and hasattr(obj, "__dict__"):
        state = vars(obj)
    if isinstance(state, tuple) and len(state) == 2 and all(s is None or isinstance(s, dict) for s in state):
        state = {**(state[0] or {}), **(state[1] or {})}  # (__dict__, __slots__) of a slotted class
    if state is None and hasattr(type(obj), "__slots__"):
        slots = type(obj).__slots__
        slots = [slots] if isinstance(slots, str) else slots
        state = {s: getattr(obj, s) for s in slots if hasattr(obj, s)}
    return state if isinstance(state, dict) else None


@functools.lru_cache(maxsize=4096)
def _index_names(path: str, shape: tuple, size: int) -> tuple:
    """The paths of an array's first ``size`` values (``path[i]``, or ``path[i, j]`` beyond one dimension),
    written once per path and shape: every fit of a model has the same attribute paths."""
    if len(shape) <= 1:
        return tuple(f"{path}[{i}]" for i in range(size))
    return tuple(f"{path}[{', '.join(map(str, ix))}]" for ix in zip(*np.unravel_index(np.arange(size), shape)))


def _key(k) -> str:
    return repr(k) if isinstance(k, str) else repr(k.item() if isinstance(k, np.generic) else k)


class _Walk:
    def __init__(self, skip_root: set[str]):
        self.out: dict[str, float] = {}
        self.truncated: list[str] = []
        self.skip_root = skip_root
        self.active: set[int] = set()

    def number(self, path, v):
        self.out[path] = float(v)

    def array(self, path, arr: np.ndarray, depth: int, length: bool = True):
        if arr.dtype.names:  # structured: one sub-array per field (their length is the array's)
            self.number(f"len({path})", arr.size)
            for name in arr.dtype.names:
                self.array(f"{path}[{name!r}]", arr[name], depth, length=False)
            return
        if length:
            self.number(f"len({path})", arr.shape[0] if arr.ndim else 1)
        flat = arr.reshape(-1)
        if flat.size > MAX_ITEMS:
            self.truncated.append(f"{path} ({flat.size:,} values, first {MAX_ITEMS} read)")
            flat = flat[:MAX_ITEMS]
        names = _index_names(path, arr.shape, flat.size)
        if arr.dtype.kind in "biuf":
            self.out.update(zip(names, map(float, flat.tolist())))
        elif arr.dtype.kind == "O":
            for name, v in zip(names, flat.tolist()):
                self.value(name, v, depth + 1)

    def sequence(self, path, items, depth: int):
        self.number(f"len({path})", len(items))
        if len(items) > MAX_ITEMS:
            self.truncated.append(f"{path} ({len(items):,} items, first {MAX_ITEMS} read)")
        for i, v in enumerate(items[:MAX_ITEMS]):
            self.value(f"{path}[{i}]", v, depth + 1)

    def mapping(self, path, d: dict, depth: int, attributes: bool):
        if not attributes:  # an object's attributes are fixed by its code; a dict's keys may follow the data
            self.number(f"len({path})", len(d))
        for n, (k, v) in enumerate(d.items()):
            if n >= MAX_ITEMS:
                self.truncated.append(f"{path} ({len(d):,} items, first {MAX_ITEMS} read)")
                break
            if attributes and isinstance(k, str):
                self.value(f"{path}.{k}", v, depth + 1)
            else:
                self.value(f"{path}[{_key(k)}]", v, depth + 1)

    def value(self, path: str, v, depth: int):
        if isinstance(v, _OPAQUE) or isinstance(v, GENERATOR_TYPES) or depth > MAX_DEPTH:
            return
        if isinstance(v, (bool, np.bool_, Real, np.number)):
            if isinstance(v, (np.complexfloating,)):
                return
            self.number(path, v)
            return
        if id(v) in self.active:  # a cycle (a node pointing back to its parent)
            return
        self.active.add(id(v))
        try:
            if isinstance(v, np.ndarray):
                self.array(path, v, depth)
            elif isinstance(v, dict):
                self.mapping(path, v, depth, attributes=False)
            elif isinstance(v, (list, tuple)):
                self.sequence(path, list(v), depth)
            elif isinstance(v, (set, frozenset)):
                try:
                    self.sequence(path, sorted(v), depth)
                except TypeError:
                    self.number(f"len({path})", len(v))
            elif callable(v) and not hasattr(v, "__dict__") or inspect.isroutine(v) or inspect.ismodule(v):
                return
            else:
                state = _state(v)
                if state is not None:
                    self.mapping(path, state, depth, attributes=True)
        finally:
            self.active.discard(id(v))


def state_numbers(est, skip: set[str] | None = None) -> tuple[dict[str, float], list[str]]:
    """``(numbers, truncated)``: every real number the fitted ``est``'s pickle carries, by attribute path
    (insertion order: the walk's), and the containers cut at :data:`MAX_ITEMS` values.

    Parameters
    ----------
    est : a fitted estimator
    skip : top-level attribute names left out (default: :func:`constructor_keys`)
    """
    walk = _Walk(constructor_keys(est) if skip is None else set(skip))
    state = _state(est) or {}
    walk.active.add(id(est))
    for name, v in state.items():
        if isinstance(name, str) and name not in walk.skip_root:
            walk.value(f"{ROOT}.{name}", v, 1)
    return walk.out, walk.truncated
