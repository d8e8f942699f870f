"""``audit check``: audit someone else's mechanism or estimator against a claim.

A subject is named ``MODULE:CALLABLE`` and resolved as follows:

* a class with ``fit`` (or a factory returning an object with ``fit``) is
  an estimator: each sample fits a fresh ``CALLABLE(**params)`` on one of the neighbouring datasets and releases its
  ``release()`` or, without one, its predictions on a fixed public probe set
  (:func:`audit.learner_mechanism`);
* any other class, or a function given ``params``, is a factory:
  ``CALLABLE(**params)`` must return a mechanism ``m(data, rng)``;
* a function without ``params`` is the mechanism itself.

The neighbouring inputs come from ``data``:

* for estimators, a base dataset (``builtin:blobs`` by default, or
  ``builtin:iris|wine|breast_cancer``, or ``PATH.csv`` whose last column is
  the label) from which add/remove or substitute pairs are built
  (:mod:`audit.neighbours`);
* for mechanisms, ``scalar`` (answers 0 and 1, the default) or ``query:N``
  (the query-vector patterns of length N).
"""
from __future__ import annotations

import importlib
import inspect
import json
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from . import checkpoint
from .budget import SAMPLES
from .estimate import Claim, audit_pairs
from .learner import learner_mechanism
from .neighbours import NeighbourPair, add_remove_pairs, query_pairs, substitute_pairs
from .report import Report

__all__ = ["Subject", "CheckError", "resolve", "build", "audit_subject", "check_report"]

ALPHA = 0.05
#: records of the built-in datasets used as the base of the pairs (tiny data gives strong signals)
BUILTIN_ROWS = 8


class CheckError(ValueError):
    """A usage error of ``check``: the message says what is wrong, and where."""


@dataclass
class Subject:
    """One thing to audit and the claim made for it."""

    name: str
    target: str
    epsilon: float
    delta: float = 0.0
    neighbours: str = "add-remove"
    params: dict = field(default_factory=dict)
    data: str | None = None
    expect: str = "pass"
    note: str = ""


def resolve(target: str):
    """Import ``MODULE:CALLABLE``."""
    if not isinstance(target, str) or target.count(":") != 1:
        raise CheckError(f"the subject must be written MODULE:CALLABLE, got {target!r}")
    module_name, attr = target.split(":")
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:
        raise CheckError(f"cannot import module {module_name!r} of {target!r}: {type(exc).__name__}: {exc}") from exc
    obj = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise CheckError(f"module {module_name!r} has no attribute {attr!r}")
        obj = getattr(obj, part)
    if not callable(obj):
        raise CheckError(f"{target!r} is not callable")
    return obj


def _is_estimator(obj, params) -> bool:
    """A class with ``fit``, or a factory whose product has ``fit``."""
    if inspect.isclass(obj):
        return callable(getattr(obj, "fit", None))
    if not params:
        return False
    try:
        return callable(getattr(obj(**params), "fit", None))
    except Exception:
        return False


def load_dataset(spec: str):
    """The base dataset ``(X, y, bounds, classes)`` named by ``spec``."""
    if spec == "builtin:blobs":
        rng = np.random.default_rng(20261122)
        X = np.clip(rng.normal(0.5, 0.2, size=(BUILTIN_ROWS, 2)), 0.0, 1.0)
        y = (X[:, 0] + X[:, 1] > 1.0).astype(int)
        return X, y, [(0.0, 1.0), (0.0, 1.0)], [0, 1]
    if spec.startswith("builtin:"):
        from sklearn import datasets

        name = spec.split(":", 1)[1]
        loaders = {"iris": datasets.load_iris, "wine": datasets.load_wine, "breast_cancer": datasets.load_breast_cancer}
        if name not in loaders:
            raise CheckError(f"unknown built-in dataset {name!r}; choose blobs, {', '.join(loaders)}")
        full = loaders[name]()
        bounds = [(float(lo), float(hi)) for lo, hi in zip(full.data.min(0), full.data.max(0))]
        idx = np.random.default_rng(0).choice(len(full.target), size=BUILTIN_ROWS, replace=False)
        return full.data[idx], full.target[idx], bounds, sorted(set(full.target.tolist()))
    path = Path(spec)
    if path.suffix != ".csv" or not path.exists():
        raise CheckError(f"--data must be builtin:NAME or an existing PATH.csv, got {spec!r}")
    import pandas as pd

    frame = pd.read_csv(path)
    X = frame.iloc[:, :-1].to_numpy(dtype=float)
    y = frame.iloc[:, -1].to_numpy()
    bounds = [(float(lo), float(hi)) for lo, hi in zip(X.min(0), X.max(0))]
    return X, y, bounds, sorted(set(y.tolist()))


def mechanism_pairs(spec: str):
    if spec == "scalar":
        return [NeighbourPair(0.0, 1.0, "answers 0 and 1")]
    if spec.startswith("query:"):
        try:
            n = int(spec.split(":", 1)[1])
        except ValueError:
            raise CheckError(f"--data query:N needs an integer N, got {spec!r}") from None
        return query_pairs(n)
    raise CheckError(f"a mechanism's --data must be 'scalar' or 'query:N', got {spec!r}")


def build(subject: Subject):
    """``(mechanism, pairs, kind)`` for a subject."""
    obj = resolve(subject.target)
    if _is_estimator(obj, subject.params):
        X, y, bounds, classes = load_dataset(subject.data or "builtin:blobs")  # the dataset's own domain
        try:
            obj(**subject.params)
        except TypeError as exc:
            raise CheckError(f"{subject.target}(**params) failed: {exc}") from exc
        probe = np.array([[lo + (hi - lo) * q for lo, hi in bounds] for q in (0.1, 0.3, 0.5, 0.7, 0.9)])
        mech = learner_mechanism(lambda: obj(**subject.params), probe=probe)
        if subject.neighbours == "add-remove":
            pairs = add_remove_pairs(X, y, bounds=bounds, classes=classes, corners=1)
        else:
            pairs = substitute_pairs(X, y, bounds=bounds, classes=classes, records=[0])
        return mech, pairs, "estimator"
    if inspect.isclass(obj) or subject.params:
        try:
            mech = obj(**subject.params)
        except Exception as exc:
            raise CheckError(f"{subject.target}(**{subject.params!r}) failed: {type(exc).__name__}: {exc}") from exc
        if not callable(mech):
            raise CheckError(f"{subject.target}(**params) returned {mech!r}, which is not a mechanism m(data, rng)")
    else:
        mech = obj
    return mech, mechanism_pairs(subject.data or "scalar"), "mechanism"


def audit_subject(subject: Subject, budget: str, seed: int) -> dict:
    """Audit one subject; return its claim row."""
    mech, pairs, kind = build(subject)
    claim = Claim(subject.epsilon, subject.delta, subject.neighbours)
    with checkpoint.scope(subject.name):
        try:
            res = audit_pairs(mech, pairs, claim, n_samples=SAMPLES[budget], alpha=ALPHA, seed=seed)
        except ValueError as exc:
            raise CheckError(f"auditing {subject.name!r} ({subject.target}, a {kind}) failed: {exc}") from exc
    row = res.claim_row(id=subject.name, subject=f"{subject.target} {json.dumps(subject.params)} ({kind})",
                        expected=subject.expect)
    if subject.note:
        row["detail"] = f"{subject.note} — {row['detail']}"
    return row


def check_report(subjects: list[Subject], budget: str, seed: int, name: str) -> Report:
    start = time.perf_counter()
    report = Report(name, budget, seed, title="Privacy claims of outside code, audited by `python -m audit check`.")
    for k, subject in enumerate(checkpoint.progress(subjects, desc="claims", unit="claim")):
        report.claims.append(audit_subject(subject, budget, seed + k))
    report.notes.append(f"{SAMPLES[budget]:,} outputs per input (20% pilot), alpha = {ALPHA} per claim shared over "
                        "its pairs and both directions: a claim that holds is flagged with probability at most alpha.")
    report.elapsed_s = time.perf_counter() - start
    return report
