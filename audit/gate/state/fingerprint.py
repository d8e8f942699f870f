"""A fitted model's fingerprint for the replay (:mod:`audit.gate.state.replay`): every numeric value its pickle
carries by path, the integers its texts spell, and exact comparison of two fingerprints.

* :func:`leaves` reads the fingerprint (ints, floats, numeric arrays, the fields of structured arrays, container
  lengths as ``path#len``, a long log of numbers as its length and content hash), skipping generator states and
  keeping fittable sub-objects and raw words apart.
* :func:`audit.gate.state.spelling.text_integers` reads the integers a text spells (decimal, hexadecimal, radix 36,
  base 32 and 64); :func:`emitted_integers` those of what a fit printed or logged.
* :func:`differing`, :func:`left_out`, :func:`excluded` and :func:`agree` compare two fingerprints path by path,
  leaving out given paths and everything below them.
"""
from __future__ import annotations

import contextlib
import datetime
import functools
import inspect
import io
import pickle
import sys
import warnings
from dataclasses import dataclass, field

import numpy as np

from audit.gate.behaviour import MAX_CALLS, public_methods, readable
from audit.gate.state import codec
from audit.gate.state.spelling import MAX_TOKENS, text_integers
from audit.gate.state.walk import MAX_NODES, long_plain_data, recognise, walk

__all__ = ["Leaves", "leaves", "beside", "served", "public_properties", "text_integers", "emitted_integers", "MAX_TOKENS", "BOUNDARY", "rebuilt", "same",
           "differing", "left_out", "excluded", "agree"]

#: the characters that end a path segment: a path below ``p`` starts with ``p`` and one of them
BOUNDARY = "[.#{"
_PY = frozenset({int, float, bool, complex})
#: the array kinds read as numbers: booleans, integers, floats, complex numbers, dates and durations
_NUMBERS = "biufcMm"
_WHEN = (datetime.date, datetime.time, datetime.timedelta)  # datetime.datetime is a date
_DESCRIPTORS = (property, classmethod, staticmethod, functools.cached_property)


def emitted_integers(emitted) -> dict:
    """:func:`text_integers` of what a fit emitted (an :class:`audit.gate.emissions.Emitted`): its printed text,
    log records, warnings, the environment variables it set and what the files it wrote hold (their first bytes,
    read as text: a checkpoint whose path the model keeps), by path under ``emitted``. Only candidates come from
    here: the replay compares models, not what they printed."""
    said = {"stdout": emitted.stdout, "stderr": emitted.stderr, "logs": list(emitted.logs),
            "warnings": list(emitted.warnings), "environ": {k: v for k, v in emitted.environ.items() if v},
            "files": [got[1].decode("utf-8", "replace") for _, got in sorted(emitted.files.items())
                      if got is not None and isinstance(got[1], (bytes, bytearray))]}
    return leaves(said, root="emitted").digits


def rebuilt(obj):
    """The object rebuilt from its pickle (``obj`` itself when it does not pickle)."""
    try:
        return pickle.loads(pickle.dumps(obj))
    except Exception:  # noqa: BLE001 - outside code
        return obj


@dataclass
class Leaves:
    """A model's fingerprint: numeric values and digit strings by path, fittable sub-objects by path."""

    numeric: dict = field(default_factory=dict)
    digits: dict = field(default_factory=dict)
    subs: dict = field(default_factory=dict)
    states: dict = field(default_factory=dict)
    words: dict = field(default_factory=dict)
    truncated: bool = False
    #: numbers the fit left beside the model (globals of the model's defining module), by path: read for the
    #: entropy map (:mod:`audit.gate.state.entropy`), never compared
    around: dict = field(default_factory=dict)


def leaves(obj, root: str = "model", max_nodes: int = MAX_NODES) -> Leaves:
    """The fingerprint of ``obj`` (see the module docstring); generator states are not entered."""
    out = Leaves()
    w = walk(obj, root, max_nodes)
    for path, node in w:
        if recognise(node, None) is not None:
            out.states[path] = node
            w.prune()
            continue
        if isinstance(node, (bool, int, float, complex)) or (isinstance(node, np.generic)
                                                             and node.dtype.kind in _NUMBERS):
            out.numeric[path] = node
        elif isinstance(node, _WHEN):  # a date, time or duration: a number of ticks (its pickle's bytes below)
            out.numeric[path] = node
        elif isinstance(node, np.ndarray):
            if node.dtype.names:
                for name in node.dtype.names:
                    if node.dtype[name].kind in _NUMBERS:
                        out.numeric[f"{path}[{name!r}]"] = node[name]
                    else:
                        _raw_entries(out, f"{path}[{name!r}]", node[name])
            elif node.dtype.kind in _NUMBERS:
                out.numeric[path] = node
                if codec.may_hold_words(node):
                    out.words[path] = node
            else:
                _raw_entries(out, path, node)
        elif isinstance(node, str):
            out.digits.update(text_integers(path, node))
        elif isinstance(node, (list, tuple, dict, set, frozenset)) or type(node).__name__ == "deque":
            out.numeric[path + "#len"] = len(node)
            if isinstance(node, (list, tuple)) and codec.may_hold_words(node):
                out.words[path] = node
            if long_plain_data(node, strings=False):  # a long log of numbers: one value, read at its length's cost
                out.numeric[path + "#content"] = hash(tuple(node))
                w.prune()
        elif isinstance(node, (bytes, bytearray)):
            if codec.may_hold_words(node):
                out.words[path] = node
        elif path != root and hasattr(node, "fit") and hasattr(node, "get_params"):
            out.subs[path] = node
    out.truncated = w.truncated
    return out


def _raw_entries(out: Leaves, path: str, arr: np.ndarray, most: int = MAX_TOKENS) -> None:
    """The first entries of an array of raw bytes (``V``, ``S``: each its bytes) or of text (``U``: the integers
    it spells), by ``path[i]``: a seed's bytes kept in a structured array's ``V16`` field."""
    if arr.dtype.kind not in "VSU":
        return
    for i, entry in enumerate(arr.ravel()[:most].tolist()):
        if isinstance(entry, str):
            out.digits.update(text_integers(f"{path}[{i}]", entry))
        elif isinstance(entry, (bytes, bytearray, memoryview)):
            out.numeric[f"{path}[{i}]"] = bytes(entry)


def beside(est, max_nodes: int = 2_000) -> dict:
    """The numbers and digit strings held by the plain-data globals of ``est``'s defining module (a registry of
    the last fit, a cache), by path ``module M.NAME...``, and by the plain-data attributes of its class and their
    bases (a fit that sets ``type(self).last = ...``), by path ``type(model).NAME...``: modules, classes,
    functions, descriptors and dunder names left out. The class and its module ship with the model."""
    module = sys.modules.get(type(est).__module__)
    out = {}
    for name, value in list(getattr(module, "__dict__", {}).items()):
        if readable(name, value):
            out.update(_numbers(leaves(value, root=f"module {module.__name__}.{name}", max_nodes=max_nodes)))
    for cls in type(est).__mro__[:-1]:
        for name, value in list(vars(cls).items()):
            if readable(name, value) and not isinstance(value, _DESCRIPTORS):
                out.update(_numbers(leaves(value, root=f"type(model).{name}", max_nodes=max_nodes)))
    return out


def served(copy, max_nodes: int = 2_000) -> dict:
    """The numbers and digit strings a fitted model serves: what each public method that takes no argument
    returns (``model.card()...``, at most :data:`audit.gate.behaviour.MAX_CALLS` methods, the determinism probe's
    list), what each public property computes (``model.NAME``, :func:`public_properties`) and its ``repr``
    (``repr(model)``), with their printing and warnings silenced; one that raises serves nothing. Call it on a
    copy (:func:`rebuilt`), after reading what else the copy holds: a method may change the model it runs on."""
    out = {}
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()), \
            warnings.catch_warnings():
        warnings.simplefilter("ignore")
        named = [("repr(model)", lambda: repr(copy))] + \
            [(f"model.{name}()", getattr(copy, name)) for name, arity in public_methods(copy) if arity == 0] + \
            [(f"model.{name}", functools.partial(getattr, copy, name)) for name in public_properties(copy)]
        for path, fn in named:
            try:
                value = fn()
            except Exception:  # noqa: BLE001 - outside code; a method that raises serves nothing
                continue
            if value is not copy:
                out.update(_numbers(leaves(value, root=path, max_nodes=max_nodes)))
    return out


def public_properties(est, limit: int = MAX_CALLS) -> list[str]:
    """The public properties of ``est``'s class (``property``, ``functools.cached_property`` and other computed
    attributes that are not methods), in name order, at most ``limit``: what reading ``model.NAME`` computes."""
    found = []
    for name in sorted(dir(type(est))):
        if name.startswith("_"):
            continue
        try:
            attr = inspect.getattr_static(type(est), name)
        except AttributeError:
            continue
        if isinstance(attr, (property, functools.cached_property)):
            found.append(name)
        if len(found) >= limit:
            break
    return found


def _numbers(lv: "Leaves") -> dict:
    return {**lv.numeric, **lv.digits, **lv.words}


def same(a, b) -> bool:
    """Exact equality of two numeric values or arrays, NaN equal to NaN."""
    if type(a) in _PY and type(b) in _PY:
        return a == b or (a != a and b != b)
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        return False
    try:
        if a.dtype.kind in "fc" or b.dtype.kind in "fc":
            return bool(np.array_equal(a, b, equal_nan=True))
        return bool(np.array_equal(a, b))
    except TypeError:
        return False


def differing(fa: dict, fb: dict) -> set:
    """The paths whose values differ, or that one fingerprint lacks."""
    keys = set(fa) | set(fb)
    return {k for k in keys if k not in fa or k not in fb or not same(fa[k], fb[k])}


def left_out(paths) -> set:
    """Paths to leave out: a differing container length leaves out the whole container."""
    return {p[:-4] if p.endswith("#len") else p for p in paths}


def excluded(path: str, prefixes) -> bool:
    """Whether ``path`` is one of ``prefixes`` or lies below one."""
    return any(path == q or (path.startswith(q) and path[len(q)] in BOUNDARY) for q in prefixes)


def agree(fa: dict, fb: dict, prefixes) -> bool:
    """Whether two fingerprints hold the same paths and values outside ``prefixes``."""
    ka = {k for k in fa if not excluded(k, prefixes)}
    kb = {k for k in fb if not excluded(k, prefixes)}
    return ka == kb and all(same(fa[k], fb[k]) for k in ka)
