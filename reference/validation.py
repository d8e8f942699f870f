"""Parameter checks shared by the mechanisms, the ledger and the learners.

Every check raises an error whose message names the parameter and the
offending value, so a user can act on it without reading the source.
"""
from __future__ import annotations

import math
import warnings
from contextlib import contextmanager
from numbers import Integral, Real

import numpy as np

__all__ = [
    "check_positive_finite",
    "check_probability",
    "check_generator",
    "check_nonempty",
    "check_neighbouring",
    "check_max_depth",
    "NEIGHBOURING_RELATIONS",
    "shown",
]

#: The two neighbouring relations every claim must name explicitly.
NEIGHBOURING_RELATIONS = ("add-remove", "substitute")


def shown(value) -> str:
    """``repr(value)`` with numpy scalars written as the Python numbers they hold (``2``, ``nan``), never
    ``np.int64(2)``: messages show values the way a user typed them."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, np.ndarray):  # an array as the list it holds: ``[0, 0]``, not ``array([0, 0])``
        value = value.tolist()
    if isinstance(value, dict):
        return "{" + ", ".join(f"{shown(k)}: {shown(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (tuple, list)):
        inner = ", ".join(shown(v) for v in value)
        return f"({inner}{',' if len(value) == 1 else ''})" if isinstance(value, tuple) else f"[{inner}]"
    return repr(value)


def check_positive_finite(name: str, value) -> float:
    """Return ``value`` as a float, or raise if it is not a positive finite number."""
    if isinstance(value, bool) or not isinstance(value, (Real, np.floating, np.integer)):
        raise TypeError(f"{name} must be a positive finite number, got {shown(value)}")
    value = float(value)
    if not math.isfinite(value) or value <= 0.0:
        raise ValueError(f"{name} must be a positive finite number, got {shown(value)}")
    return value


def check_probability(name: str, value, *, open_low: bool = False, open_high: bool = False) -> float:
    """Return ``value`` as a float in [0, 1] (optionally open at either end)."""
    if isinstance(value, bool) or not isinstance(value, (Real, np.floating, np.integer)):
        raise TypeError(f"{name} must be a probability in [0, 1], got {shown(value)}")
    value = float(value)
    low_ok = value > 0.0 if open_low else value >= 0.0
    high_ok = value < 1.0 if open_high else value <= 1.0
    if math.isnan(value) or not (low_ok and high_ok):
        lo = "(" if open_low else "["
        hi = ")" if open_high else "]"
        raise ValueError(f"{name} must be a probability in {lo}0, 1{hi}, got {shown(value)}")
    return value


def check_generator(rng) -> np.random.Generator:
    """Samplers take an explicit ``numpy.random.Generator``; nothing else."""
    if not isinstance(rng, np.random.Generator):
        raise TypeError(
            f"rng must be a numpy.random.Generator (e.g. numpy.random.default_rng(0)), got {type(rng).__name__}"
        )
    return rng


def check_nonempty(name: str, values) -> np.ndarray:
    """Return ``values`` as a 1-D float array with at least one finite entry each."""
    arr = np.asarray(values, dtype=float)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D sequence, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        bad = arr[~np.isfinite(arr)][0]
        raise ValueError(f"{name} must contain only finite numbers, found {shown(bad)}")
    return arr


def check_neighbouring(value: str) -> str:
    if value not in NEIGHBOURING_RELATIONS:
        raise ValueError(f"neighbouring must be one of {NEIGHBOURING_RELATIONS}, got {shown(value)}")
    return value


def check_max_depth(value) -> int:
    """A tree depth: a non-negative integer (bools refused)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < 0:
        raise ValueError(f"max_depth must be a non-negative integer, got {shown(value)}")
    return int(value)


# --------------------------------------------------------------------------- data entering fit and predict
# scikit-learn's conventions for X (Developer guide, "Rolling your own estimator"): 2-D, at least one feature,
# no complex numbers, finite, feature names and counts recorded by fit and checked by predict. Every learner
# calls :func:`check_X` at its entry points, so all of them say the same thing about the same bad input.
import inspect as _inspect  # noqa: E402

from sklearn.utils.validation import check_array as _check_array  # noqa: E402
from sklearn.utils.validation import check_is_fitted as _check_is_fitted  # noqa: E402

try:  # scikit-learn >= 1.6
    from sklearn.utils.validation import validate_data as _validate_data
except ImportError:  # pragma: no cover - scikit-learn < 1.6 (the diffprivlib extra pins it)
    def _validate_data(estimator, X, *, reset, skip_check_array):
        return estimator._validate_data(X, reset=reset, cast_to_ndarray=not skip_check_array)

# ``force_all_finite`` became ``ensure_all_finite`` in scikit-learn 1.6 (and was removed in 1.8)
_FINITE = "ensure_all_finite" if "ensure_all_finite" in _inspect.signature(_check_array).parameters \
    else "force_all_finite"

__all__ += ["check_X", "check_y", "check_fitted", "facts_by_index", "BinaryOnlyMixin"]


def check_int(name: str, value, low: int, high: int | None = None) -> int:
    """An integer ``>= low`` (and ``<= high`` when given); bools are refused."""
    if isinstance(value, bool) or not isinstance(value, Integral) or value < low or (high is not None and value > high):
        bound = f">= {low}" if high is None else f"in [{low}, {high}]"
        raise ValueError(f"{name} must be an integer {bound}, got {shown(value)}")
    return int(value)


def check_choice(name: str, value, options):
    """One of ``options``."""
    if value not in options:
        raise ValueError(f"{name} must be one of {options}, got {shown(value)}")
    return value


def check_pair(name: str, value) -> tuple[float, float]:
    """A finite pair ``(low, high)`` with ``low < high``."""
    try:
        lo, hi = (float(v) for v in value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a pair (low, high), got {shown(value)}") from None
    if not (np.isfinite(lo) and np.isfinite(hi) and lo < hi):
        raise ValueError(f"{name} must be finite with low < high, got {shown(value)}")
    return lo, hi


def category_codes(values, categories) -> np.ndarray:
    """The index of every value in the public ``categories`` (int64), and -1 for a value outside them
    (a category the public set does not list: it reaches no category split's left side)."""
    cats = list(categories)
    return np.array([cats.index(v) if v in cats else -1 for v in list(values)], dtype=np.int64)


def check_X(estimator, X, *, reset: bool, numeric: bool = True, allow_nan: bool = False) -> np.ndarray:
    """``X`` as a 2-D array, checked the way scikit-learn checks it, with its feature names and count.

    Parameters
    ----------
    estimator : the learner (``fit`` records on it, ``predict`` compares with it)
    X : array-like or pandas DataFrame of shape (n, m)
    reset : bool
        True in ``fit``: record ``n_features_in_`` and, for a DataFrame whose
        column names are all strings, ``feature_names_in_`` (scikit-learn's
        rule; other column names are not recorded). False in ``predict``:
        compare with them; a different count, or columns missing, added or
        reordered, is a ``ValueError`` naming them (scikit-learn's message).
    numeric : bool, default True
        Convert to float; False keeps the values (object arrays of categories).
    allow_nan : bool, default False
        Only for learners that document what NaN means.

    Returns
    -------
    ndarray of shape (n, m). Zero rows are allowed (an empty dataset is a
    dataset; the learners release a valid model on it); zero columns, 1-D
    input, complex numbers, NaN (unless allowed) and infinity are errors.
    """
    if not reset:
        check_fitted(estimator)
    elif type(X) is np.ndarray and X.ndim == 2 and X.shape[1] >= 1 and X.dtype.kind in "biuf":
        # fit on a plain numeric array: scikit-learn's check_array and validate_data return the array itself,
        # record its width and forget the names of an earlier fit; the same here, without their probes for
        # DataFrame libraries (a fifth of a small fit's time in an audit's thousands of fits)
        _check_finite(estimator, X, allow_nan)
        if hasattr(estimator, "feature_names_in_"):
            delattr(estimator, "feature_names_in_")
        estimator.n_features_in_ = X.shape[1]
        return X
    arr = _check_array(X, dtype="numeric" if numeric else None, ensure_2d=True, ensure_min_samples=0,
                       ensure_min_features=1, estimator=estimator, input_name="X", **{_FINITE: False})
    _check_finite(estimator, arr, allow_nan)
    try:
        _validate_data(estimator, X if hasattr(X, "columns") else arr, reset=reset, skip_check_array=True)
    except ValueError as e:
        fitted = getattr(estimator, "feature_names_in_", None)
        if reset or fitted is None or not hasattr(X, "columns"):
            raise
        raise ValueError(f"{e}Columns at fit: {_names(fitted)}; columns of X: {_names(X.columns)}.") from None
    return arr


def _names(columns, limit: int = 20) -> str:
    names = [str(c) for c in columns]
    return str(names[:limit])[:-1] + f", ... ({len(names)} in all)]" if len(names) > limit else str(names)


def check_fitted(estimator) -> None:
    """Raise :class:`sklearn.exceptions.NotFittedError` unless ``fit`` has run (scikit-learn's test)."""
    _check_is_fitted(estimator)


def facts_by_index(estimator, name: str, value, n_features: int, *, sequence: bool = False):
    """A public fact (``bounds``, ``categories``) keyed by column name, re-keyed by feature index.

    Parameters
    ----------
    estimator : the learner, fitted or being fitted (``feature_names_in_`` is
        set by :func:`check_X` when ``X`` was a DataFrame with string names)
    name : the parameter's name, for messages
    value : the parameter: a dict whose keys are column names is re-keyed by
        their positions; any other value is returned as it is (the learner
        checks it)
    n_features : number of columns of ``X``
    sequence : bool
        The learner takes a sequence, one entry per feature: a dict (by name
        or by index) becomes that list, and a feature it misses is an error
        naming the feature.

    Returns
    -------
    ``value``, a dict keyed by feature index, or (``sequence``) a list.
    """
    if not isinstance(value, dict):
        return value
    names = getattr(estimator, "feature_names_in_", None)
    named = [k for k in value if isinstance(k, str)]
    if named:
        if names is None:
            raise ValueError(f"{name} is keyed by column names ({', '.join(map(repr, named[:3]))}) but X has "
                             "no column names: pass X as a pandas DataFrame, or key it by feature index")
        pos = {str(c): j for j, c in enumerate(names)}
        unknown = [k for k in named if k not in pos]
        if unknown:
            raise ValueError(f"{name} names columns {unknown} that X does not have; X's columns are "
                             f"{[str(c) for c in names]}")
        value = {(pos[k] if isinstance(k, str) else k): v for k, v in value.items()}
    if not sequence:
        return value
    missing = [j for j in range(n_features) if j not in value]
    if missing:
        label = [str(names[j]) for j in missing] if names is not None else missing
        raise ValueError(f"{name} has no entry for the feature(s) {label}: give one for every feature")
    return [value[j] for j in range(n_features)]


def _check_finite(estimator, arr: np.ndarray, allow_nan: bool) -> None:
    """NaN (unless allowed) or infinity in ``X`` is a ``ValueError`` naming the first such cell."""
    if arr.dtype.kind == "f":
        if np.isfinite(arr.sum()):  # a sum is finite only when every term is (one pass, no temporary array)
            return
        nan, inf = np.isnan(arr), np.isinf(arr)
    elif arr.dtype == object:
        nan = np.vectorize(lambda v: isinstance(v, (float, np.floating)) and math.isnan(v), otypes=[bool])(arr) \
            if arr.size else np.zeros(arr.shape, dtype=bool)
        inf = np.vectorize(lambda v: isinstance(v, (float, np.floating)) and math.isinf(v), otypes=[bool])(arr) \
            if arr.size else np.zeros(arr.shape, dtype=bool)
    else:
        return
    for what, bad in (("NaN", None if allow_nan else nan), ("infinity", inf)):
        if bad is not None and bad.any():
            i, j = (int(v) for v in np.argwhere(bad)[0])
            raise ValueError(f"X must be finite, found X[{i}, {j}] = {shown(float(arr[i, j]))} ({what} in X[:, {j}]): "
                             f"{type(estimator).__name__} does not accept missing or infinite feature values; "
                             "drop or impute those rows")


def check_y(estimator, y, n_samples: int | None = None, *, numeric: bool = False) -> np.ndarray:
    """``y`` as a 1-D array, checked the way scikit-learn checks it.

    ``None`` is an error in scikit-learn's words; a column vector ``(n, 1)``
    is flattened with a ``DataConversionWarning``; other shapes, a length
    other than ``n_samples``, and NaN or infinite labels are errors.
    ``numeric`` converts to float (regression targets).
    """
    from sklearn.utils.validation import column_or_1d

    if y is None:
        raise ValueError(f"{type(estimator).__name__} requires y to be passed, but the target y is None")
    if type(y) is np.ndarray and y.ndim == 1 and y.dtype.kind in "biuf":
        y = np.ascontiguousarray(y)  # what column_or_1d returns for a plain 1-D numeric array, without its probes
    else:
        y = column_or_1d(y, warn=True)
    if numeric:
        y = y.astype(float)
    if n_samples is not None and y.shape[0] != n_samples:
        raise ValueError(f"y has {y.shape[0]} labels but X has {n_samples} rows: one label per row is needed")
    if y.dtype.kind == "f" and not np.all(np.isfinite(y)):
        i = int(np.flatnonzero(~np.isfinite(y))[0])
        raise ValueError(f"y must be finite, found y[{i}] = {shown(float(y[i]))}")
    return y


class BinaryOnlyMixin:
    """Declares to scikit-learn that a classifier takes two classes only (its ``classes`` must list two)."""

    def __sklearn_tags__(self):  # scikit-learn >= 1.6
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

    def _more_tags(self):  # pragma: no cover - scikit-learn < 1.6
        return {"binary_only": True}


# --------------------------------------------------------------------------- records outside the public bounds
__all__ += ["OutOfBoundsWarning", "clipping_on_purpose", "warn_outside_bounds", "warn_outside_target_bounds", "CLIPPED", "EDGE_CELL"]

#: what most learners do with a value outside its declared range
CLIPPED = "they are clipped to the bound, so each counts as a record at the nearest end of the range"
#: what the partition learners (LPDT, PHIST) do with a record outside the declared box
EDGE_CELL = ("they fall in the partition's nearest edge cell (as if clipped to the bound) and count in that "
             "cell's statistics")


class OutOfBoundsWarning(UserWarning):
    """Training records lie outside the declared public ``bounds`` (or labels outside ``target_bounds``).

    The learner stays private (its privacy rests on the declared bounds, never on the data), but those
    records are changed before they are used, so the model learns from values the data did not hold. The
    warning goes to the caller of ``fit``, who holds the data: how many records lie outside is private, and
    it is never kept in the model, its ``release()`` or its ledger.
    """


@contextmanager
def clipping_on_purpose():
    """Silence :class:`OutOfBoundsWarning` inside a protocol that clips to public ranges on purpose (the papers'
    experiments and reproductions): the warning is meant for a user's own fit. A context manager, and a decorator
    (``@clipping_on_purpose()``)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OutOfBoundsWarning)
        yield


def _feature_name(estimator, j: int) -> str:
    names = getattr(estimator, "feature_names_in_", None)
    return f"feature {j} ({names[j]!r})" if names is not None and j < len(names) else f"feature {j}"


def warn_outside_bounds(estimator, X, bounds, action: str = CLIPPED, *, stacklevel: int = 3) -> None:
    """Warn the caller (:class:`OutOfBoundsWarning`) when records of ``X`` lie outside ``bounds``.

    Parameters
    ----------
    estimator : the learner being fitted (named in the message, with its feature names when it has them)
    X : array (n, m) of the training records, numerical where ``bounds`` names a range
    bounds : mapping or sequence, feature index -> ``(low, high)`` or None (a feature without a range)
    action : what the learner does with such values, in words (:data:`CLIPPED`, :data:`EDGE_CELL`)
    stacklevel : 3 when called from ``fit`` itself (the warning points at the caller's line), one more per level

    The message says how many records lie outside, per feature with its range, and what the learner does
    with them. Nothing is stored (the counts are private): the warning is the only trace.
    """
    items = bounds.items() if isinstance(bounds, dict) else enumerate(bounds)
    X = np.asarray(X)
    ranges = [(int(j), float(b[0]), float(b[1])) for j, b in items if b is not None]
    if X.dtype.kind in "biuf" and X.ndim == 2 and ranges:  # two comparisons of the whole array screen every column
        low, high = np.full(X.shape[1], -np.inf), np.full(X.shape[1], np.inf)
        for j, lo, hi in ranges:
            low[j], high[j] = lo, hi
        screen = X < low
        screen |= X > high
        ranges = [r for r in ranges if screen[:, r[0]].any()] if screen.any() else []
        del screen
    outside = np.zeros(X.shape[0], dtype=bool)
    parts = []
    for j, lo, hi in ranges:
        col = X[:, int(j)].astype(float)
        out = (col < lo) | (col > hi)
        if out.any():
            outside |= out
            parts.append(f"{int(out.sum())} in {_feature_name(estimator, int(j))}, outside [{lo:g}, {hi:g}]")
    if parts:
        warnings.warn(f"{type(estimator).__name__}.fit: {int(outside.sum())} of {X.shape[0]} records lie outside "
                      f"the declared bounds ({'; '.join(parts)}); {action}. Widen bounds if they can occur "
                      "(the bounds are public: never read them from the data).", OutOfBoundsWarning, stacklevel=stacklevel)


def warn_outside_target_bounds(estimator, y, target_bounds, action: str = CLIPPED, *, stacklevel: int = 3) -> None:
    """Warn the caller (:class:`OutOfBoundsWarning`) when labels ``y`` lie outside ``target_bounds``
    ``(low, high)``; as :func:`warn_outside_bounds`, nothing is stored."""
    y = np.asarray(y, dtype=float).ravel()
    lo, hi = float(target_bounds[0]), float(target_bounds[1])
    n = int(np.count_nonzero((y < lo) | (y > hi)))
    if n:
        warnings.warn(f"{type(estimator).__name__}.fit: {n} of {y.size} labels lie outside the declared "
                      f"target_bounds [{lo:g}, {hi:g}]; {action}. Widen target_bounds if they can occur (they are "
                      "public: never read them from the data).", OutOfBoundsWarning, stacklevel=stacklevel)
