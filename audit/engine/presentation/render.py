"""Outcomes written for a person: released trees as ``x0 <= b1 ? (leaf 1) : (leaf 0)``, not raw tuples.

The learners release trees as nested tuples (``("leaf", label)``, ``("node", feature, threshold, left,
right)``, ``("node", feature, left, right)`` for a split on a feature alone, a tuple threshold being a set
of categories), possibly beside the released bin edges (``((feature, edges), ...), tree``); anything else
is written as Python writes it, numbers as plain Python numbers.
"""
from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np

__all__ = ["compact", "json_ready", "plain"]


def plain(x) -> str:
    """A number as plain Python writes it (``2``, ``0.5``), never a numpy repr (``np.int64(2)``)."""
    if isinstance(x, bool):
        return str(x)
    if isinstance(x, Integral):
        return str(int(x))
    if isinstance(x, Real):
        return f"{float(x):.6g}"
    return repr(x)


def _is_tree(o) -> bool:
    return isinstance(o, tuple) and len(o) in (2, 4, 5) and o[0] in ("leaf", "node") and \
        (o[0] == "leaf") == (len(o) == 2)


def compact(o) -> str:
    """One outcome on one short line (trees in the ``?:`` form, tuples element by element)."""
    if _is_tree(o):
        if o[0] == "leaf":
            return f"leaf {compact(o[1])}"
        if len(o) == 4:
            _, j, left, right = o
            test = f"split on x{plain(j)}"
        else:
            _, j, t, left, right = o
            test = (f"x{plain(j)} in {{{', '.join(map(plain, t))}}}" if isinstance(t, tuple)
                    else f"x{plain(j)} <= b{plain(t)}")
        return f"{test} ? ({compact(left)}) : ({compact(right)})"
    if isinstance(o, tuple) and len(o) == 2 and _is_tree(o[1]) and isinstance(o[0], tuple) and \
            all(isinstance(e, tuple) and len(e) == 2 for e in o[0]):  # (released edges per feature, tree)
        edges = "; ".join(f"x{plain(j)} edges {compact(e)}" for j, e in o[0])
        return (f"[{edges}] " if edges else "") + compact(o[1])
    if isinstance(o, tuple):
        return "(" + ", ".join(compact(v) for v in o) + ("," if len(o) == 1 else "") + ")"
    if isinstance(o, (Real, Integral)):
        return plain(o)
    return repr(o)


def json_ready(obj):
    """``obj`` as ``json`` writes it: dict keys as strings, tuples as lists, numpy numbers as Python ones, and
    an infinite or missing float as the string ``"inf"``, ``"-inf"`` or ``"nan"`` (which JSON has no number for)."""
    if isinstance(obj, dict):
        return {str(k): json_ready(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_ready(v) for v in obj]
    if isinstance(obj, (np.bool_, bool)):
        return bool(obj)
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        f = float(obj)
        return f if math.isfinite(f) else ("inf" if f > 0 else "-inf" if f < 0 else "nan")
    return obj
