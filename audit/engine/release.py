"""What ``audit check`` releases from a fitted outside estimator, and how it is fitted.

:class:`EstimatorRelease` is a mechanism over ``data = (X, y)``: it builds a
fresh estimator (passing ``random_state`` through the constructor when the
constructor takes it, so code that reads it in ``__init__`` is seeded), fits
it, and returns one fixed-length float vector, a post-processing of the fitted
model (so a loss seen on it is a loss of the model):

* ``raised``: 0 when ``fit`` and the release succeeded, else ``1 + k`` with ``k`` a code of the
  exception's type (:func:`exception_code`): exceptions are outcomes, so an estimator that crashes
  on one input of a pair and not on the other is told apart by this coordinate (the per-coordinate
  threshold events read it whatever the other outputs are); the other coordinates are then 0;
* the **structure**, when its layout is recognised (scikit-learn's ``tree_``;
  nested node objects or dicts with ``feature``/``threshold`` and
  ``left``/``right`` or ``children``; lists of either, one per tree): node,
  leaf and depth counts, splits per feature, the smallest and largest threshold
  per feature, the node count and root value of the first trees, and the
  feature and value of the first tree's first nodes in breadth-first order;
* the **predictions on a grid** covering the public domain (class labels as
  their index in the public classes);
* or, with ``attrs``, the named fitted attributes (each as its length and its
  first values), or the estimator's own ``release()`` when it has one.

``description`` says which release was used.
"""
from __future__ import annotations

import inspect
import itertools
import math
from collections import deque
from numbers import Real

import numpy as np

from audit.engine.outcome import canonical_message, catchable, subject_exit

__all__ = ["EstimatorRelease", "probe_grid", "tree_nodes", "exception_code"]


def exception_code(exc: BaseException) -> int:
    """The ``raised`` coordinate of an exception: ``1 +`` a 48-bit code of its type and canonical message
    (:func:`audit.engine.outcome.outcome_code`), so different refusals are different outcomes."""
    from audit.engine.outcome import outcome_code

    return outcome_code(exc)

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
    release : ``"auto"`` (``release()`` if the estimator has one, else the structure when recognised plus the
        grid predictions), ``"predictions"``, ``"structure"`` or a list of fitted attribute names
    exceptions : bool
        Exceptions in ``fit`` or the release are outcomes (the ``raised`` coordinate), not errors.
    """

    def __init__(self, cls, params, *, bounds, classes, release="auto", exceptions: bool = True):
        self.cls, self.params = cls, dict(params)
        self.bounds, self.classes = list(bounds), list(classes)
        self.grid = probe_grid(bounds)
        self.release = release
        self.exceptions = exceptions
        self.seed_through_constructor = _takes(cls, "random_state") and "random_state" not in self.params
        self.layout = None
        self.length = None
        self.description = ""
        self.discrete = False
        #: what each coordinate of the released vector is (set by :meth:`calibrate`), and whether every
        #: calibration fit's predictions were public classes (released as their index)
        self.names = ["raised"]
        self._as_classes = True
        self._mapped = True
        self._first_prediction = None
        #: ``1 + exception_code`` -> the exception type's name, for every refusal seen in calibration
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
        est.fit(np.asarray(X, dtype=float).reshape(-1, len(self.bounds)), np.asarray(y))
        return est

    def _predictions(self, est) -> list[float]:
        pred = np.asarray(est.predict(self.grid)).ravel().tolist()
        index = {c: i for i, c in enumerate(self.classes)}
        self._mapped = all(p in index for p in pred)
        if self._mapped:
            return [float(index[p]) for p in pred]
        return [_as_float(p) for p in pred]

    def features(self, est) -> list[float]:
        """The released numbers of a fitted estimator (without the ``raised`` flag)."""
        return self._features(est)[0]

    def _features(self, est) -> tuple[list[float], list[str]]:
        """The released numbers and what each one is (``names``: the events' words for its coordinates)."""
        if isinstance(self.release, (list, tuple)):
            out, names = [], []
            for name in self.release:
                if not hasattr(est, name):
                    raise AttributeError(f"the fitted estimator has no attribute {name!r} (--release)")
                vals = _numbers(getattr(est, name))
                out += [float(len(vals))] + (vals + [0.0] * ATTR_VALUES)[:ATTR_VALUES]
                names += [f"len({name})"] + [f"{name}[{i}]" for i in range(ATTR_VALUES)]
            return out, names
        if self.release == "auto" and callable(getattr(est, "release", None)):
            out = _numbers(est.release())
            return out, [f"release()[{i}] (flattened)" for i in range(len(out))]
        out, names = [], []
        if self.release in ("auto", "structure"):
            layout, trees = tree_nodes(est, self.layout)
            if trees:
                self.layout = layout.split(" ")[0]
                out += _structure_features(trees, len(self.bounds))
                names += _structure_names(len(self.bounds))
        if self.release in ("auto", "predictions"):
            self._first_prediction = len(out) + 1  # in the released vector, after the raised flag
            out += self._predictions(est)
            names += [f"prediction at {_point(p)}" for p in self.grid]
        return out, names

    def describe(self, est) -> str:
        if isinstance(self.release, (list, tuple)):
            return f"fitted attributes {', '.join(self.release)} (length and first {ATTR_VALUES} values each)"
        if self.release == "auto" and callable(getattr(est, "release", None)):
            return "the estimator's release()"
        parts = []
        if self.release in ("auto", "structure"):
            layout, trees = tree_nodes(est)
            if trees:
                parts.append(f"fitted structure from {layout}")
        if self.release in ("auto", "predictions"):
            parts.append(f"predictions on a {len(self.grid)}-point grid over the public domain")
        return " + ".join(parts) or "nothing recognised"

    # ------------------------------------------------------------------ the mechanism
    def calibrate(self, datasets, seed: int = 0):
        """Fit once on each dataset to fix the release's length; returns the exceptions seen, and records
        in ``raised_on`` (dataset key -> ``"Type('message')"``) the datasets on which ``fit`` raised."""
        from audit.engine.search import data_key

        rng = np.random.default_rng(seed)
        errors, lengths = [], []
        self.raised_on = {}
        names = []
        for data in datasets:
            try:
                est = self.fit(data, int(rng.integers(0, 2**31 - 1)))
                self._mapped = True
                values, these = self._features(est)
                self._as_classes = self._as_classes and self._mapped  # read in calibration only
                lengths.append(len(values))
                names = these if len(these) > len(names) else names
                if not self.description:
                    self.description = self.describe(est)
            except BaseException as exc:  # noqa: BLE001 - every exception of the subject is an outcome ...
                if isinstance(exc, SystemExit):  # ... but ending the process, which is an error of its own
                    raise subject_exit(exc, data) from None
                if not catchable(exc):
                    raise
                errors.append(exc)
                self.raised_on[data_key(data)] = f"{type(exc).__name__}({canonical_message(exc)[:80]!r})"
                self.raised_types[exception_code(exc)] = f"{type(exc).__name__}({canonical_message(exc)[:60]!r})"
        self.names = ["raised"] + names
        if not lengths:
            raise errors[0]
        if len(set(lengths)) > 1 and not isinstance(self.release, (list, tuple)):
            raise ValueError(f"the release's length changes between datasets ({sorted(set(lengths))}); "
                             "name fixed-size fitted attributes with --release ATTR[,ATTR]")
        self.length = max(lengths)
        return errors

    # ------------------------------------------------------------------ words for the events
    def coordinates(self):
        """How the events name this release's coordinates (:class:`audit.engine.events.NamedCoordinates`):
        ``raised`` (the exception flag: "fit raised ValueError"), ``prediction at (0.125, 0.375)`` (a class
        among the public ones when the predictions are classes), the fitted structure's counts, ..."""
        from audit.engine.events import NamedCoordinates

        return NamedCoordinates(self.names, self._words)

    def _class_set(self, op: str, t: float) -> str | None:
        chosen = [c for i, c in enumerate(self.classes) if (i >= t if op == ">=" else i <= t if op == "<=" else i == t)]
        if not chosen:
            return "no class"
        return f"is {chosen[0]!r}" if len(chosen) == 1 else "in {" + ", ".join(map(repr, chosen)) + "}"

    def _words(self, j: int, op: str, t: float) -> str | None:
        if j == 0:  # 0: fit succeeded; 1 + code: it raised an exception of that type
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
        first = self._first_prediction
        if first is not None and self._as_classes and j >= first and j < first + len(self.grid):
            return f"{self.names[j]} {self._class_set(op, t)}"
        return None

    def __call__(self, data, rng):
        seed = int(rng.integers(0, 2**31 - 1))
        try:
            vals = self.features(self.fit(data, seed))
        except BaseException as exc:  # noqa: BLE001 - see calibrate
            if isinstance(exc, SystemExit):
                raise subject_exit(exc, data) from None
            if not self.exceptions or not catchable(exc):
                raise
            out = np.zeros(1 + self.length)
            out[0] = float(exception_code(exc))  # a failed fit is an outcome of its own (type and message)
            return out
        vals = (list(vals) + [0.0] * self.length)[:self.length]
        out = np.asarray([0.0] + vals, dtype=float)
        out[~np.isfinite(out)] = 0.0
        return out

    def _sampler(self):
        """The estimator's declared batched sampler of ``release()`` (:mod:`reference.fast_path`), or None.

        Used only when the release read is the estimator's own ``release()`` (``release="auto"``): the
        sampler then draws releases with the law of fitting once per draw, and the vector built from each
        is the one :meth:`__call__` builds. A sampler that refuses the class (a subclass that changes a
        step of the algorithm) returns None, and the estimator is fitted once per draw.
        """
        if not hasattr(self, "_fast"):
            self._fast = None
            if self.release == "auto" and callable(getattr(self.cls, "release", None)):
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
                vals = (_numbers(r) + [0.0] * self.length)[:self.length]
                out[i, 1:] = vals
            out[~np.isfinite(out)] = 0.0
            return out

        return draw

    def outputs(self, data, seed: int, n: int = 3) -> list:
        """``n`` releases drawn with the generator of ``seed`` (for the pre-flight check)."""
        rng = np.random.default_rng(seed)
        from audit.engine.sampling import reseed_globals

        reseed_globals(rng)
        return [self(data, rng).tolist() for _ in range(n)]
