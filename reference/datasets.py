"""Offline data: the public benchmark files the papers used, and scikit-learn's bundled sets.

The benchmark files are *not* part of the project. They live in a data
directory (``../shared/data`` when it exists, see :func:`data_dir`), described
by its ``MANIFEST.md``; a loader reads them from there and never copies them.
A dataset whose file is absent raises :class:`DatasetUnavailable`, which the
reproduction runner turns into a line in its report, never a failure.

Each paper preprocesses the same file in its own way (PrivaTree drops rows
with missing values and keeps categoricals as codes; DiPriMe derives calendar
features; LPDT min-max scales), so loaders are registered per paper::

    @register("privatree", "breast-w", files=("breast-w.arff",))
    def _breast_w(d: Path) -> Dataset: ...

    ds = load("privatree", "breast-w")          # from data_dir()
    ds.X, ds.y, ds.bounds, ds.categories, ds.classes

Public facts (``bounds``, ``categories``, ``classes``, ``target_bounds``) are
fields of the :class:`Dataset`. Where the paper derived them from the data
(most of them did), the loader does the same and sets
``facts_from_data=True`` with a sentence in ``facts_note``; the reproduction
report prints it, because a model trained with facts read from the private
data is not differentially private in the strict sense.
"""
from __future__ import annotations

import gzip
import io
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

from reference.validation import shown

__all__ = ["Dataset", "DatasetUnavailable", "data_dir", "register", "load", "names", "read_arff", "read_csv",
           "read_libsvm", "minmax_bounds", "encode_categories", "bundled", "BUNDLED"]

#: scikit-learn's bundled sets the smoke runs use (offline: they ship with the package), name -> loader name
BUNDLED = {"sklearn-breast-cancer": "load_breast_cancer", "sklearn-wine": "load_wine",
           "sklearn-diabetes": "load_diabetes"}


def bundled(name: str) -> tuple:
    """``(X, y, feature_names)`` of the scikit-learn set ``name`` (a key of :data:`BUNDLED`), read from the
    installed package: no network, no data directory."""
    import sklearn.datasets

    if name not in BUNDLED:
        raise ValueError(f"name={name!r}: not a bundled set; choose one of {', '.join(BUNDLED)}")
    data = getattr(sklearn.datasets, BUNDLED[name])()
    return np.asarray(data.data, dtype=float), np.asarray(data.target), [str(f) for f in data.feature_names]

#: environment variable naming the data directory
ENV = "DPTREE_AUDIT_DATA"


class DatasetUnavailable(FileNotFoundError):
    """A dataset's file is not in the data directory (skipped, never an error in a reproduction)."""


@dataclass
class Dataset:
    """One preprocessed dataset with the public facts a learner needs.

    ``X`` is float (categorical columns hold integer codes ``0..k-1``), ``y``
    integer class codes (classification) or floats (regression).
    """

    name: str
    X: np.ndarray
    y: np.ndarray
    task: str  # "classification" | "regression"
    feature_names: list[str] = field(default_factory=list)
    #: (low, high) per numerical feature index
    bounds: dict[int, tuple[float, float]] = field(default_factory=dict)
    #: feature index -> tuple of category codes
    categories: dict[int, tuple] = field(default_factory=dict)
    classes: tuple | None = None
    target_bounds: tuple[float, float] | None = None
    #: True when bounds/categories/target bounds were read from the data, as the paper did
    facts_from_data: bool = True
    facts_note: str = ""
    #: preprocessing done, in one sentence each
    notes: list[str] = field(default_factory=list)

    @property
    def n(self) -> int:
        return int(self.X.shape[0])

    @property
    def d(self) -> int:
        return int(self.X.shape[1])

    @property
    def numerical(self) -> list[int]:
        return [j for j in range(self.d) if j not in self.categories]

    def bounds_list(self) -> list[tuple[float, float]]:
        """Bounds as a list over all features (categorical features get their code range)."""
        out = []
        for j in range(self.d):
            if j in self.categories:
                codes = self.categories[j]
                out.append((float(min(codes)), float(max(codes))))
            else:
                out.append(self.bounds[j])
        return out

    def subsample(self, n: int, seed: int = 0) -> "Dataset":
        """A copy with ``n`` rows drawn without replacement (smoke runs); facts unchanged."""
        if n >= self.n:
            return self
        idx = np.sort(np.random.default_rng(seed).choice(self.n, n, replace=False))
        copy = Dataset(**{**self.__dict__, "X": self.X[idx], "y": self.y[idx]})
        copy.notes = self.notes + [f"subsampled to {n} of {self.n} rows (seed {seed})"]
        return copy


_LOADERS: dict[tuple[str, str], tuple[tuple[str, ...], Callable[[Path], Dataset]]] = {}


def cache_dir() -> Path:
    """The per-user data cache where ``python -m audit data fetch`` puts files by default:
    ``$XDG_CACHE_HOME/dptree-audit/data`` (``~/.cache/dptree-audit/data``)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "dptree-audit" / "data"


def data_dir(path: str | os.PathLike | None = None) -> Path | None:
    """The data directory: ``path``, else ``$DPTREE_AUDIT_DATA``, else ``../shared/data`` (from the working
    directory, then from the project root) when it exists, else the per-user cache (:func:`cache_dir`) when it
    exists; ``None`` when there is none."""
    if path is not None:
        p = Path(path)
        if not p.is_dir():
            raise ValueError(f"data_dir={shown(str(path))} is not a directory")
        return p
    if os.environ.get(ENV):
        return data_dir(os.environ[ENV])
    root = Path(__file__).resolve().parent.parent
    for p in (Path.cwd().parent / "shared" / "data", root.parent / "shared" / "data", cache_dir()):
        if p.is_dir():
            return p
    return None


def files_of(paper: str, names=None) -> dict[str, tuple[str, ...]]:
    """Dataset name -> the files its loader needs, for ``paper`` (all its datasets, or ``names``)."""
    _ensure_registered(paper)
    return {n: files for (p, n), (files, _) in _LOADERS.items() if p == paper and (names is None or n in names)}


def register(paper: str, name: str, files: tuple[str, ...]):
    """Register ``fn(data_dir) -> Dataset`` as the loader of ``name`` for ``paper``; ``files`` must all exist.
    A loader of no ``files`` reads a set bundled with an installed package (:func:`bundled`) and is called with
    ``None``: it works offline, with no data directory."""
    def deco(fn):
        _LOADERS[(paper, name)] = (tuple(files), fn)
        return fn
    return deco


def _ensure_registered(paper: str) -> None:
    import importlib

    module = f"reference.{paper.replace('-', '_')}.data"
    try:
        importlib.import_module(module)
    except ModuleNotFoundError as exc:  # a paper without loaders yet
        if exc.name not in (module, module.rsplit(".", 1)[0]):
            raise


def names(paper: str) -> list[str]:
    """Registered dataset names for ``paper``, in registration order."""
    _ensure_registered(paper)
    return [n for (p, n) in _LOADERS if p == paper]


def load(paper: str, name: str, directory: str | os.PathLike | None = None) -> Dataset:
    """Load ``name`` as ``paper`` preprocesses it; :class:`DatasetUnavailable` when its file is absent."""
    _ensure_registered(paper)
    if (paper, name) not in _LOADERS:
        raise ValueError(f"name={shown(name)}: no dataset of that name for paper={shown(paper)}; known: {names(paper)}")
    files, fn = _LOADERS[(paper, name)]
    if not files:  # a set bundled with an installed package (scikit-learn's): no data directory needed
        return fn(None)
    d = data_dir(directory)
    if d is None:
        raise DatasetUnavailable(f"{name}: no data directory (fetch the files with `python -m audit data fetch`, or set "
                                 f"--data-dir or ${ENV})")
    missing = [f for f in files if not (d / f).is_file()]
    if missing:
        raise DatasetUnavailable(f"{name}: {', '.join(missing)} not found in {d}")
    return fn(d)


# ----------------------------------------------------------------------------- readers
def _open_text(path: Path):
    if path.suffix == ".gz":
        return io.TextIOWrapper(gzip.open(path), encoding="utf-8", errors="replace")
    return open(path, encoding="utf-8", errors="replace")


def read_arff(path: Path) -> pd.DataFrame:
    """An ARFF file (optionally gzipped) as a DataFrame; nominal values as str, ``?`` as NaN."""
    from scipy.io import arff

    with _open_text(path) as fh:
        data, _meta = arff.loadarff(fh)
    df = pd.DataFrame(data)
    for c in df.columns:
        if df[c].dtype == object:
            df[c] = df[c].map(lambda v: v.decode() if isinstance(v, bytes) else v).replace("?", np.nan)
    return df


def read_csv(path: Path, **kw) -> pd.DataFrame:
    """A CSV file (optionally gzipped); ``?`` (with or without spaces) read as missing."""
    kw.setdefault("na_values", ["?", " ?"])
    kw.setdefault("skipinitialspace", True)
    return pd.read_csv(path, **kw)


def read_libsvm(path: Path, n_features: int, n_rows: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """A LIBSVM sparse text file as a dense float matrix (1-based indices) and its labels."""
    ys, rows = [], []
    with _open_text(path) as fh:
        for i, line in enumerate(fh):
            if n_rows is not None and i >= n_rows:
                break
            parts = line.split()
            if not parts:
                continue
            ys.append(float(parts[0]))
            rows.append([(int(k) - 1, float(v)) for k, v in (p.split(":") for p in parts[1:])])
    X = np.zeros((len(rows), n_features))
    for i, r in enumerate(rows):
        for k, v in r:
            X[i, k] = v
    return X, np.asarray(ys)


# ----------------------------------------------------------------------------- public facts as the papers read them
def minmax_bounds(X: np.ndarray, columns) -> dict[int, tuple[float, float]]:
    """``(min, max)`` of each listed column, read from the data (as the papers did); a constant column
    gets a unit-width range so that learners accept it."""
    out = {}
    for j in columns:
        lo, hi = float(np.min(X[:, j])), float(np.max(X[:, j]))
        out[j] = (lo, hi if hi > lo else lo + 1.0)
    return out


def encode_categories(df: pd.DataFrame, columns) -> tuple[pd.DataFrame, dict[str, tuple]]:
    """Replace each listed column by integer codes ``0..k-1`` (sorted values); returns the value order."""
    df = df.copy()
    levels = {}
    for c in columns:
        cat = pd.Categorical(df[c].astype(str))
        levels[c] = tuple(cat.categories)
        df[c] = cat.codes.astype(float)
    return df, levels


def from_frame(name: str, df: pd.DataFrame, target: str, *, categorical=(), task="classification",
               notes=(), facts_note: str = "") -> Dataset:
    """A :class:`Dataset` from a clean DataFrame: categoricals coded, bounds and categories read from the
    data (``facts_from_data=True``), classes coded ``0..K-1`` in sorted order."""
    df = df.dropna().reset_index(drop=True)
    feats = [c for c in df.columns if c != target]
    df, levels = encode_categories(df, [c for c in categorical if c in feats])
    X = df[feats].to_numpy(dtype=float)
    cat_idx = {feats.index(c): tuple(range(len(levels[c]))) for c in levels}
    ds = Dataset(name=name, X=X, y=np.empty(0), task=task, feature_names=feats, categories=cat_idx,
                 bounds=minmax_bounds(X, [j for j in range(len(feats)) if j not in cat_idx]),
                 facts_from_data=True, notes=list(notes),
                 facts_note=facts_note or "bounds and category sets read from the data, as the paper did")
    if task == "classification":
        cls = pd.Categorical(df[target].astype(str))
        ds.y = cls.codes.astype(int)
        ds.classes = tuple(range(len(cls.categories)))
        ds.notes.append(f"classes: {dict(enumerate(cls.categories))}")
    else:
        ds.y = df[target].to_numpy(dtype=float)
        ds.target_bounds = (float(ds.y.min()), float(ds.y.max()))
    return ds
