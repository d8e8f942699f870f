"""What ``audit check`` releases from a fitted outside estimator, and how it is fitted.

:class:`EstimatorRelease` is a mechanism over ``data = (X, y)``: it builds a
fresh estimator (passing ``random_state`` through the constructor when the
constructor takes it, so code that reads it in ``__init__`` is seeded), fits
it, and returns one fixed-length float vector, a post-processing of the fitted
model (so a loss seen on it is a loss of the model):

* ``raised``: 0 when ``fit`` and the release succeeded, else a code (never 0) of the exception's type
  and canonical message (:data:`exception_code`): exceptions are outcomes, so an estimator that crashes
  on one input of a pair and not on the other is told apart by this coordinate (the per-coordinate
  threshold events read it whatever the other outputs are); the other coordinates are then 0.

By default (``release="auto"``) the vector holds everything the fitted model publishes, each
coordinate named:

* the estimator's own ``release()`` when it has one (``release()[i]`` and its length);
* the **predictions on a grid** covering the public domain, of ``predict`` (class labels as their
  index in the public classes) and of ``predict_proba`` when present;
* the **structure**, when its layout is recognised (scikit-learn's ``tree_``;
  nested node objects or dicts with ``feature``/``threshold`` and
  ``left``/``right`` or ``children``; lists of either, one per tree): node,
  leaf and depth counts, splits per feature, the smallest and largest threshold
  per feature, the node count and root value of the first trees, and the
  feature and value of the first tree's first nodes in breadth-first order;
* the **numbers the fitted model's pickle carries** (:mod:`audit.gate.state.model`), by attribute
  path (``model.tree_.nodes['n_node_samples'][3]``, ``model._secret[0]``): the coordinates are the
  union of the paths seen in :meth:`EstimatorRelease.calibrate` (a fit lacking one reads 0), at most
  :data:`MAX_ATTRIBUTES`, the rest counted in ``description``.

``release`` narrows this to some kinds (``"release"``, ``"predictions"``, ``"structure"``,
``"attributes"``) and may name fitted attributes (each as its length and its first values).
``description`` says which release was used.
"""
from __future__ import annotations

import contextlib
import inspect
import io
import itertools
import math
from collections import deque
from numbers import Real

import numpy as np

from audit.gate.state.model import ROOT, state_numbers


class _Silent(io.TextIOBase):
    """Where a sampled fit's printed text goes: nowhere (what a fit prints is read by the determinism probe,
    :mod:`audit.gate.emissions`, not by the sampling, whose tens of thousands of fits would flood the console)."""

    def write(self, text):
        return len(text)


_SILENT = _Silent()
from audit.gate.outcome import admit, outcome_code, refusal_text

__all__ = ["EstimatorRelease", "probe_grid", "tree_nodes", "exception_code", "release_spec", "is_state", "KINDS", "MAX_ATTRIBUTES"]


#: the ``raised`` coordinate of an exception: a 48-bit code (never 0) of its type and canonical message
#: (:func:`audit.gate.outcome.outcome_code`), so different refusals are different outcomes
exception_code = outcome_code

#: breadth-first nodes whose feature and value are released
BFS_NODES = 7
#: trees (of a per-tree list) whose node count and root value are released
PER_TREE = 4
#: values released per named attribute (after its length)
ATTR_VALUES = 32
#: probe points when the product grid would be larger
GRID_POINTS = 64


def probe_grid(bounds) -> np.ndarray:
    """Public probe points covering the domain: the product of 4 cell centres per feature when that is at
    most 64 points, else 64 points drawn with a fixed seed (public, data-independent)."""
    bounds = [(float(lo), float(hi)) for lo, hi in bounds]
    d = len(bounds)
    if 4 ** d <= GRID_POINTS:
        axes = [[lo + (hi - lo) * q for q in (0.125, 0.375, 0.625, 0.875)] for lo, hi in bounds]
        return np.array(list(itertools.product(*axes)), dtype=float)
    u = np.random.default_rng(20261123).random((GRID_POINTS, d))
    lo, hi = np.array([b[0] for b in bounds]), np.array([b[1] for b in bounds])
    return lo + u * (hi - lo)


# --------------------------------------------------------------------------- structure layouts
def _as_float(v) -> float:
    try:
        arr = np.asarray(v, dtype=float).ravel()
    except (TypeError, ValueError):
        return math.nan
    if arr.size == 0:
        return math.nan
    if arr.size == 1:
        return float(arr[0])
    return float(np.argmax(arr))  # class counts or probabilities: the majority class


def _sklearn_nodes(tree):
    left, right = np.asarray(tree.children_left), np.asarray(tree.children_right)
    feature, threshold = np.asarray(tree.feature), np.asarray(tree.threshold)
    value = getattr(tree, "value", None)
    out, queue = [], deque([(0, 0)])
    while queue:
        i, depth = queue.popleft()
        leaf = left[i] == right[i]
        out.append((depth, -1 if leaf else int(feature[i]), math.nan if leaf else float(threshold[i]),
                    math.nan if value is None else _as_float(value[i])))
        if not leaf:
            queue.extend(((int(left[i]), depth + 1), (int(right[i]), depth + 1)))
    return out


def _get(node, *names):
    for name in names:
        value = node.get(name) if isinstance(node, dict) else getattr(node, name, None)
        if value is not None:
            return value
    return None


def _is_node(obj) -> bool:
    if obj is None or isinstance(obj, (str, bytes, Real, np.ndarray)):
        return False
    has = _get(obj, "feature", "feature_index", "split_feature", "attribute") is not None or \
        _get(obj, "left", "children", "left_child") is not None
    keys = ("feature", "threshold", "left", "right", "children", "value", "label", "prediction", "is_leaf", "leaf")
    return has or any(_get(obj, k) is not None for k in keys) and (isinstance(obj, dict) or hasattr(obj, "__dict__"))


def _children(node):
    kids = _get(node, "children")
    if isinstance(kids, dict):
        kids = list(kids.values())
    if isinstance(kids, (list, tuple)):
        return [k for k in kids if k is not None]
    left, right = _get(node, "left", "left_child"), _get(node, "right", "right_child")
    return [k for k in (left, right) if k is not None]


def _nested_nodes(root):
    out, queue = [], deque([(root, 0)])
    while queue and len(out) < 10_000:
        node, depth = queue.popleft()
        kids = _children(node)
        feature = _get(node, "feature", "feature_index", "split_feature", "attribute")
        threshold = _get(node, "threshold", "split_value", "value_split")
        leaf = not kids
        value = _get(node, "value", "label", "prediction", "leaf_value")
        out.append((depth, -1 if leaf or feature is None else int(feature),
                    math.nan if leaf or threshold is None else _as_float(threshold),
                    math.nan if value is None else _as_float(value)))
        queue.extend((k, depth + 1) for k in kids)
    return out


def tree_nodes(est, hint: str | None = None):
    """``(layout, [nodes of tree 0, tree 1, ...])`` for a recognised fitted structure, else ``(None, [])``;
    a node is ``(depth, feature or -1 for a leaf, threshold or nan, value or nan)`` in breadth-first order."""
    if hasattr(getattr(est, "tree_", None), "children_left"):
        return "tree_ (scikit-learn layout)", [_sklearn_nodes(est.tree_)]
    items = sorted(vars(est).items()) if hasattr(est, "__dict__") else []
    if hint is not None and hint in dict(items):  # the attribute recognised on an earlier fit first
        items = [(hint, dict(items)[hint])] + items
    for name, value in items:
        if not name.endswith("_") or name.startswith("__"):
            continue
        if _is_node(value) and _children(value) is not None and (
                _get(value, "feature", "threshold", "left", "children", "value", "label") is not None):
            return f"{name} (nested nodes)", [_nested_nodes(value)]
        if isinstance(value, (list, tuple)) and value:
            trees = []
            for item in value:
                if hasattr(getattr(item, "tree_", None), "children_left"):
                    trees.append(_sklearn_nodes(item.tree_))
                elif _is_node(item):
                    trees.append(_nested_nodes(item))
                else:
                    trees = []
                    break
            if trees:
                return f"{name} (per-tree list of {len(trees)})", trees
    return None, []


def _structure_names(d: int) -> list[str]:
    """What each number of :func:`_structure_features` is, in its order."""
    names = ["node count", "leaf count", "depth"]
    for j in range(d):
        names += [f"splits on x{j}", f"lowest threshold on x{j}", f"highest threshold on x{j}"]
    for t in range(PER_TREE):
        names += [f"tree {t} node count", f"tree {t} root value"]
    for k in range(BFS_NODES):
        names += [f"node {k} feature (breadth-first, tree 0; -1 leaf)", f"node {k} value (breadth-first, tree 0)"]
    return names


def _point(p) -> str:
    return "(" + ", ".join(f"{float(v):.4g}" for v in p) + ")"


def _structure_features(trees, d: int) -> list[float]:
    nodes = [n for t in trees for n in t]
    splits = [n for n in nodes if n[1] >= 0]
    feats = [float(len(nodes)), float(len(nodes) - len(splits)), float(max((n[0] for n in nodes), default=0))]
    for j in range(d):
        th = [n[2] for n in splits if n[1] == j and not math.isnan(n[2])]
        feats += [float(sum(n[1] == j for n in splits)), min(th, default=0.0), max(th, default=0.0)]
    for t in range(PER_TREE):
        tree = trees[t] if t < len(trees) else []
        feats += [float(len(tree)), tree[0][3] if tree and not math.isnan(tree[0][3]) else 0.0]
    first = trees[0] if trees else []
    for k in range(BFS_NODES):
        node = first[k] if k < len(first) else (-1, -2, math.nan, math.nan)
        feats += [float(node[1]), 0.0 if math.isnan(node[3]) else node[3]]
    return feats


def _numbers(value) -> list[float]:
    if callable(value):
        value = value()
    try:
        arr = np.asarray(value, dtype=float).ravel()
    except (TypeError, ValueError):
        flat = []
        for v in (value if isinstance(value, (list, tuple)) else [value]):
            flat += _numbers(v) if isinstance(v, (list, tuple, np.ndarray)) else [_as_float(v)]
        arr = np.asarray(flat, dtype=float)
    return arr.tolist()


#: the kinds of published numbers ``release`` may name (``"auto"``: all of them)
KINDS = ("release", "predictions", "structure", "attributes")
#: coordinates read from the fitted model's state at most (the first in walk order; the rest are counted)
MAX_ATTRIBUTES = 1024


def release_spec(release) -> tuple[frozenset, list]:
    """``(kinds, attribute names)`` of a ``release`` value: ``"auto"`` is every kind, a kind is itself, a
    list (or comma text) mixes kinds and fitted attribute names."""
    if release == "auto":
        return frozenset(KINDS), []
    items = release.split(",") if isinstance(release, str) else list(release)
    items = [str(i).strip() for i in items if str(i).strip()]
    if "auto" in items:
        return frozenset(KINDS), [i for i in items if i not in KINDS and i != "auto"]
    return frozenset(i for i in items if i in KINDS), [i for i in items if i not in KINDS]


def is_state(name: str) -> bool:
    """Whether a coordinate's name is a number of the fitted model's state (an attribute path), not a method's
    answer."""
    return name.startswith((f"{ROOT}.", f"len({ROOT}."))


def _release_numbers(value) -> dict:
    vals = _numbers(value)
    out = {"len(release())": float(len(vals))}
    out.update((f"release()[{i}]", v) for i, v in enumerate(vals))
    return out


def _takes(cls, name: str) -> bool:
    try:
        params = inspect.signature(cls).parameters
    except (TypeError, ValueError):
        return False
    return name in params or any(p.kind is p.VAR_KEYWORD for p in params.values())


class EstimatorRelease:
    """A mechanism ``m((X, y), rng)`` fitting ``cls(**params)`` and releasing one float vector.

    Parameters
    ----------
    cls : a class (or factory) with ``fit``
    params : dict of constructor arguments
    bounds : public ``(low, high)`` per feature: the probe grid covers them
    classes : public class labels (predictions are released as their index)
    release : ``"auto"`` (everything published: ``release()`` when present, the grid predictions of
        ``predict`` and ``predict_proba``, the fitted structure when recognised and the numbers of the
        fitted model's state), one of the kinds ``"release"``, ``"predictions"``, ``"structure"``,
        ``"attributes"``, or a list of kinds and fitted attribute names (each named attribute as its
        length and first values)
    exceptions : bool
        Exceptions in ``fit`` or the release are outcomes (the ``raised`` coordinate), not errors.
    """

    def __init__(self, cls, params, *, bounds, classes, release="auto", exceptions: bool = True):
        self.cls, self.params = cls, dict(params)
        self.bounds, self.classes = list(bounds), list(classes)
        self.grid = probe_grid(bounds)
        self.release = release
        self.kinds, self.attrs = release_spec(release)
        self.exceptions = exceptions
        self.seed_through_constructor = _takes(cls, "random_state") and "random_state" not in self.params
        self.layout = None
        self.length = None
        self.description = ""
        self.discrete = False
        #: what each coordinate of the released vector is (set by :meth:`calibrate`), and whether every
        #: calibration fit's predictions were public classes (released as their index)
        self.names = ["raised"]
        self._index = {}
        self._as_classes = True
        self._mapped = True
        #: containers of the model's state cut at :data:`model_state.MAX_ITEMS` values, and the state
        #: coordinates left out by :data:`MAX_ATTRIBUTES` (both said in ``description``)
        self.truncated = []
        self.dropped = 0
        #: ``exception_code`` -> ``Type('message')``, for every refusal seen in calibration
        self.raised_types = {}

    # ------------------------------------------------------------------ fitting
    def fit(self, data, seed: int):
        X, y = data
        if self.seed_through_constructor:
            est = self.cls(**self.params, random_state=seed)
        else:
            est = self.cls(**self.params)
            if hasattr(est, "random_state") and "random_state" not in self.params:
                est.random_state = seed
        # a printed line per fit would flood the console; a warning shows once (audit.gate.run.audit_subject)
        with contextlib.redirect_stdout(_SILENT):
            est.fit(np.asarray(X, dtype=float).reshape(-1, len(self.bounds)), np.asarray(y))
        return est

    def _predictions(self, est) -> list[float]:
        pred = np.asarray(est.predict(self.grid)).ravel().tolist()
        index = {c: i for i, c in enumerate(self.classes)}
        self._mapped = all(p in index for p in pred)
        if self._mapped:
            return [float(index[p]) for p in pred]
        return [_as_float(p) for p in pred]

    def features(self, est):
        """The released numbers of a fitted estimator (without the ``raised`` flag): a list in release order
        before calibration, an array in the order of ``names[1:]`` after it (coordinates this fit lacks read
        0)."""
        parts = self._features(est)
        if not self._index:
            return list(parts.values())
        keys = tuple(parts)
        placed = self.__dict__.get("_placed")
        if placed is None or placed[1] is not self._index or placed[0] != keys:  # names placed once per layout
            take = [k for k, name in enumerate(keys) if name in self._index]
            placed = self._placed = (keys, self._index, take, [self._index[keys[k]] - 1 for k in take])
        values = list(parts.values())
        out = np.zeros(len(self.names) - 1)
        out[placed[3]] = [values[k] for k in placed[2]]
        return out

    def _points(self) -> list[str]:
        """The grid's points in words (every fit's predictions are named by them)."""
        return self._names("{p}")

    def _names(self, pattern: str, columns: int = 0) -> list[str]:
        """The coordinates' names ``pattern`` gives the grid's points in words (and ``columns`` columns per point,
        row by row), written once per grid and shape: every fit's release is named by them."""
        cache = getattr(self, "_name_cache", None)
        if cache is None or cache[0] is not self.grid:
            cache = self._name_cache = (self.grid, {})
        key = (pattern, columns)
        if key not in cache[1]:
            words = [_point(p) for p in self.grid]
            cache[1][key] = [pattern.format(p=p) for p in words] if not columns else \
                [pattern.format(p=p, k=k) for p in words for k in range(columns)]
        return cache[1][key]

    def _features(self, est) -> dict:
        """The released numbers by name (the events' words for their coordinates), in release order."""
        out = {}
        for name in self.attrs:
            if not hasattr(est, name):
                raise AttributeError(f"the fitted estimator has no attribute {name!r} (--release)")
            vals = _numbers(getattr(est, name))
            out[f"len({name})"] = float(len(vals))
            out.update((f"{name}[{i}]", v) for i, v in enumerate((vals + [0.0] * ATTR_VALUES)[:ATTR_VALUES]))
        if "release" in self.kinds and callable(getattr(est, "release", None)):
            out.update(_release_numbers(est.release()))
        if "predictions" in self.kinds:
            if callable(getattr(est, "predict", None)):
                out.update(zip(self._names("prediction at {p}"), self._predictions(est)))
            if callable(getattr(est, "predict_proba", None)):
                proba = np.asarray(est.predict_proba(self.grid), dtype=float).reshape(len(self.grid), -1)
                out.update(zip(self._names("predict_proba at {p}[{k}]", proba.shape[1]), proba.ravel().tolist()))
        if "structure" in self.kinds:
            layout, trees = tree_nodes(est, self.layout)
            if trees:
                self.layout = layout.split(" ")[0]
                out.update(zip(_structure_names(len(self.bounds)), _structure_features(trees, len(self.bounds))))
        if "attributes" in self.kinds:
            values, truncated = state_numbers(est)
            self._last_truncated = truncated
            out.update(values)
        return out

    def describe(self, est) -> str:
        parts = []
        if self.attrs:
            parts.append(f"fitted attributes {', '.join(self.attrs)} (length and first {ATTR_VALUES} values each)")
        if "release" in self.kinds and callable(getattr(est, "release", None)):
            parts.append("the estimator's release()")
        if "predictions" in self.kinds:
            methods = [m for m in ("predict", "predict_proba") if callable(getattr(est, m, None))]
            if methods == ["predict"]:
                parts.append(f"predictions on a {len(self.grid)}-point grid over the public domain")
            elif methods:
                parts.append(f"predictions ({' and '.join(methods)}) on a {len(self.grid)}-point grid over the "
                             "public domain")
        if "structure" in self.kinds:
            layout, trees = tree_nodes(est)
            if trees:
                parts.append(f"fitted structure from {layout}")
        return " + ".join(parts) or "nothing recognised"

    def _describe_state(self) -> str:
        n = sum(1 for name in self.names if is_state(name))
        text = f"{n} numbers of the fitted model's state (what its pickle carries: every fitted attribute, " \
               "private ones too, by attribute path; constructor parameters and random generators left out)"
        if self.dropped:
            text += f"; {self.dropped} more state coordinates dropped by the cap of {MAX_ATTRIBUTES}"
        if self.truncated:
            text += f"; containers read in part: {', '.join(self.truncated[:3])}" + \
                (f" and {len(self.truncated) - 3} more" if len(self.truncated) > 3 else "")
        return text

    # ------------------------------------------------------------------ the mechanism
    def calibrate(self, datasets, seed: int = 0):
        """Fit once on each dataset to fix the release's coordinates (the union of the names seen; a fit
        lacking one reads 0); returns the exceptions seen, and records in ``raised_on`` (dataset key ->
        ``"Type('message')"``) the datasets on which ``fit`` raised."""
        from audit.gate.search import data_key

        rng = np.random.default_rng(seed)
        errors, seen = [], 0
        self.raised_on = {}
        self.description = ""  # said again by this calibration
        names, state, truncated = {}, {}, {}
        for data in datasets:
            try:
                est = self.fit(data, int(rng.integers(0, 2**31 - 1)))
                self._mapped = True
                self._last_truncated = []
                values = self._features(est)
                self._as_classes = self._as_classes and self._mapped  # read in calibration only
                seen += 1
                for name in values:
                    (state if is_state(name) else names).setdefault(name, None)
                truncated.update(dict.fromkeys(self._last_truncated))
                if not self.description:
                    self.description = self.describe(est)
            except BaseException as exc:  # noqa: BLE001 - every exception of the subject is an outcome (admit)
                errors.append(admit(exc, data))
                self.raised_on[data_key(data)] = refusal_text(exc)
                self.raised_types[exception_code(exc)] = refusal_text(exc, 60)
        if not seen:
            raise errors[0]
        state = list(state)
        self.dropped = max(0, len(state) - MAX_ATTRIBUTES)
        self.truncated = list(truncated)
        self.names = ["raised"] + list(names) + state[:MAX_ATTRIBUTES]
        self._index = {name: j for j, name in enumerate(self.names) if j}
        if "attributes" in self.kinds:
            self.description = " + ".join(p for p in (self.description.replace("nothing recognised", ""),
                                                      self._describe_state()) if p)
        self.length = len(self.names) - 1
        return errors

    # ------------------------------------------------------------------ words for the events
    def coordinates(self):
        """How the events name this release's coordinates (:class:`audit.engine.estimation.events.NamedCoordinates`):
        ``raised`` (the exception flag: "fit raised ValueError"), ``prediction at (0.125, 0.375)`` (a class
        among the public ones when the predictions are classes), the fitted structure's counts, ..."""
        from audit.engine.estimation.events import NamedCoordinates

        return NamedCoordinates(self.names, self._words)

    def _class_set(self, op: str, t: float) -> str | None:
        chosen = [c for i, c in enumerate(self.classes) if (i >= t if op == ">=" else i <= t if op == "<=" else i == t)]
        if not chosen:
            return "no class"
        return f"is {chosen[0]!r}" if len(chosen) == 1 else "in {" + ", ".join(map(repr, chosen)) + "}"

    def _words(self, j: int, op: str, t: float) -> str | None:
        if j == 0:  # 0: fit succeeded; a code: it raised that exception (type and message)
            def types(keep):
                seen = sorted({name for code, name in self.raised_types.items() if keep(code)})
                return " or ".join(seen)

            if op == "=":
                return "fit succeeded" if t == 0 else f"fit raised {types(lambda c: c == t) or 'an exception'}"
            exact = f" [raised {op} {t:.6g}]"
            if op == ">=":
                if t <= 0:
                    return None
                named = types(lambda c: c >= t)
                return ("fit raised" + (" (any exception)" if t <= 1 else f" {named or 'an exception'}") + exact)
            if t < 1:
                return "fit succeeded" + exact
            named = types(lambda c: c <= t)
            return f"fit succeeded or raised {named or 'an exception'}" + exact
        if self._as_classes and j < len(self.names) and self.names[j].startswith("prediction at "):
            return f"{self.names[j]} {self._class_set(op, t)}"
        return None

    def __call__(self, data, rng):
        seed = int(rng.integers(0, 2**31 - 1))
        try:
            vals = self.features(self.fit(data, seed))
        except BaseException as exc:  # noqa: BLE001 - see calibrate
            admit(exc, data)
            if not self.exceptions:
                raise
            out = np.zeros(1 + self.length)
            out[0] = float(exception_code(exc))  # a failed fit is an outcome of its own (type and message)
            return out
        if isinstance(vals, np.ndarray) and len(vals) == self.length:
            out = np.concatenate(([0.0], vals))
        else:
            out = np.asarray([0.0] + (list(vals) + [0.0] * self.length)[:self.length], dtype=float)
        out[~np.isfinite(out)] = 0.0
        return out

    def _sampler(self):
        """The estimator's declared batched sampler of ``release()`` (:mod:`reference.fast_path`), or None.

        Used only when the release read is the estimator's own ``release()`` alone (``release="release"``;
        the default ``"auto"`` also reads the predictions and the model's state, which only a fit gives): the
        sampler then draws releases with the law of fitting once per draw, and the vector built from each
        is the one :meth:`__call__` builds. A sampler that refuses the class (a subclass that changes a
        step of the algorithm) returns None, and the estimator is fitted once per draw.
        """
        if not hasattr(self, "_fast"):
            self._fast = None
            if self.kinds == {"release"} and not self.attrs and callable(getattr(self.cls, "release", None)):
                from reference.fast_path import batched_sampler

                try:
                    self._fast = batched_sampler(self.cls(**self.params))
                except Exception:  # no fast path for these parameters: fit per draw
                    self._fast = None
        return self._fast

    @property
    def batch(self):
        """``batch(data, n, rng)``: ``n`` outputs through the declared batched sampler, or None (one fit per
        draw). Same law as :meth:`__call__`, another random stream."""
        sampler = self._sampler()
        if sampler is None or self.length is None:
            return None

        def draw(data, n, rng):
            X, y = data
            data = (np.asarray(X, dtype=float).reshape(-1, len(self.bounds)), np.asarray(y))
            out = np.zeros((n, 1 + self.length))
            for i, r in enumerate(sampler.batch(data, n, rng)):
                for name, v in _release_numbers(r).items():
                    j = self._index.get(name)
                    if j is not None:
                        out[i, j] = v
            out[~np.isfinite(out)] = 0.0
            return out

        return draw

    def outputs(self, data, seed: int, n: int = 3) -> list:
        """``n`` releases drawn with the generator of ``seed`` (for the pre-flight check)."""
        rng = np.random.default_rng(seed)
        from audit.engine.estimation.sampling import reseed_globals

        reseed_globals(rng)
        return [self(data, rng).tolist() for _ in range(n)]
