"""What ``audit check`` reads from its user: the subject's callable, its parameters, the public domain, the
datasets and pairs (the parsing behind the command line and the claims file; :mod:`audit.gate.run` audits)."""
from __future__ import annotations

import ast
import difflib
import importlib
import json
import os
import re
from pathlib import Path

import numpy as np

from audit.engine.estimation.neighbours import NeighbourPair, query_pairs
from audit.engine.runs import progress

__all__ = ["disagreeing_facts", "CheckError", "resolve", "load_dataset", "domain", "mechanism_pairs", "parse_params", "params_text",
           "parse_bounds", "parse_classes", "parse_release", "user_pairs", "BUILTIN_ROWS"]


class CheckError(ValueError):
    """A usage error of ``check``: the message says what is wrong, and where."""


#: records of the built-in datasets used as the base of the pairs (tiny data gives strong signals)
BUILTIN_ROWS = 8


def resolve(target):
    """Import ``MODULE:CALLABLE``; a callable object (a subject given in Python) is itself."""
    if callable(target) and not isinstance(target, str):
        return target
    if not isinstance(target, str) or target.count(":") != 1:
        raise CheckError(f"the subject must be written MODULE:CALLABLE, got {target!r}")
    module_name, attr = target.split(":")
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:
        hint = ""
        if module_name.endswith(".py") or "/" in module_name or os.sep in module_name or module_name.startswith("."):
            path = module_name.removesuffix(".py")
            while path.startswith("./"):
                path = path[2:]
            stem = os.path.basename(path)
            if not os.path.isabs(path) and not path.startswith(".") and os.path.exists(path + ".py"):
                dotted = path.replace(os.sep, ".").replace("/", ".")
                hint = (f" (MODULE is a module name, not a file: from this directory write {dotted}:{attr})")
            else:
                hint = (f" (MODULE is a module name, not a file: for {stem}.py write {stem}:{attr} and run from the "
                        f"directory that holds {stem}.py, or add that directory to PYTHONPATH)")
        elif isinstance(exc, ModuleNotFoundError) and exc.name and module_name.startswith(exc.name):
            hint = " (run from the directory that holds the module, or add that directory to PYTHONPATH)"
        raise CheckError(f"cannot import module {module_name!r} of {target!r}: {type(exc).__name__}: {exc}{hint}") \
            from exc
    obj = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            close = difflib.get_close_matches(part, [n for n in dir(obj) if not n.startswith("_")], n=3)
            hint = f" (did you mean {' or '.join(repr(c) for c in close)}?)" if close else ""
            raise CheckError(f"module {module_name!r} has no attribute {attr!r}{hint}")
        obj = getattr(obj, part)
    if not callable(obj):
        raise CheckError(f"{target!r} is not callable")
    return obj


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


def disagreeing_facts(estimator, bounds, classes) -> list:
    """Warnings for public facts the estimator was given (its ``classes`` or ``bounds`` parameter, stored untouched
    as scikit-learn's convention has it) that differ from the domain the gate audits: labels the estimator does not
    know, or features outside its bounds, are records it may ignore, so the audit would say nothing of its
    privacy on its own domain (``--classes 2,3`` for an estimator built with ``classes=(0, 1)`` passes any
    learner)."""
    out = []
    own = getattr(estimator, "classes", None)
    if isinstance(own, (list, tuple, np.ndarray)) and len(own):
        try:
            differ = set(np.asarray(own).tolist()) != set(classes)
        except TypeError:
            differ = False
        if differ:
            out.append(f"WARNING: the estimator's own classes={list(np.asarray(own).tolist())!r} differ from the "
                       f"audited classes {list(classes)!r}: the gate feeds labels the estimator may ignore, so the "
                       "verdict speaks of those labels, not of the estimator's; give --classes its own classes, or "
                       "pass the audited ones to it with --params")
    own = getattr(estimator, "bounds", None)
    try:
        own = None if own is None else [tuple(float(v) for v in b) for b in own]
    except (TypeError, ValueError):
        own = None
    if own and all(len(b) == 2 for b in own) and own != [tuple(map(float, b)) for b in bounds]:
        out.append(f"WARNING: the estimator's own bounds={[list(b) for b in own]!r} differ from the audited bounds "
                   f"{[list(b) for b in bounds]!r}: records the gate builds may lie outside what the estimator "
                   "expects; give --bounds its own bounds, or pass the audited ones to it with --params")
    return out


def domain(subject):
    """Public bounds and classes: the subject's own, else those of the dataset named by ``data``."""
    X, y, bounds, classes = load_dataset(subject.data or "builtin:blobs")
    notes = []
    if subject.bounds is not None:
        bounds = [tuple(map(float, b)) for b in subject.bounds]
        if any(len(b) != 2 or not b[0] < b[1] for b in bounds):
            raise CheckError(f"--bounds must be [[low, high], ...] with low < high, got {subject.bounds!r}")
    elif subject.data and subject.data.endswith(".csv"):
        notes.append("bounds taken from the CSV's own min/max (give the public ones with --bounds)")
    if subject.classes is not None:
        classes = list(subject.classes)
        if not classes:
            raise CheckError("--classes must name at least one class")
    elif subject.data and subject.data.endswith(".csv"):
        notes.append("classes taken from the CSV's labels (give the public ones with --classes)")
    given = [what for what, v in (("--bounds", subject.bounds), ("--classes", subject.classes)) if v is None]
    if given and not (subject.data and subject.data.endswith(".csv")):
        notes.append(f"domain: bounds {[list(b) for b in bounds]}, classes {list(classes)}, from the dataset "
                     f"{subject.data or 'builtin:blobs'} (the claim is audited on this public domain; give your "
                     f"own with {' and '.join(given)})")
        progress.step(notes[-1])
    lo, hi = np.array([b[0] for b in bounds]), np.array([b[1] for b in bounds])
    if subject.bounds is not None and X.shape[1] == len(bounds) and len(X):
        values = np.asarray(X, dtype=float)
        outside = int(np.any((values < lo) | (values > hi), axis=1).sum())
        if outside:  # the reference learners warn about such records; the gate says so in the console and report
            notes.append(f"WARNING: {outside} of {len(X)} records of the dataset {subject.data or 'builtin:blobs'} lie "
                         f"outside --bounds {bounds}: the declared public domain excludes the data, so the pairs "
                         "built from its records are outside the claim's domain (give the public bounds of your data)")
            progress.step(notes[-1])
    if X.shape[1] != len(bounds) or not set(np.asarray(y).tolist()) <= set(classes):
        # the dataset does not fit the public domain: a public base dataset drawn inside it instead
        rng = np.random.default_rng(20261123)
        X = lo + rng.random((BUILTIN_ROWS, len(bounds))) * (hi - lo)
        y = np.array([classes[k % len(classes)] for k in range(BUILTIN_ROWS)])
    return X, y, bounds, classes, notes


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


def parse_params(value, option: str = "--params") -> dict:
    """Constructor or factory arguments: a dict as is (a claims file's table), or text that is a JSON object, a
    Python literal dict (``ast.literal_eval``: tuples, sets, None, True, e.g. diffprivlib's
    ``{'bounds': ((0, 0), (1, 1))}``), or ``MODULE:FUNCTION`` whose call returns the dict (numpy arrays, objects:
    whatever an outside constructor needs that neither JSON nor a literal can say)."""
    if isinstance(value, dict):
        return dict(value)
    text = str(value).strip()
    forms = (f"{option} must be a JSON object, a Python literal dict (tuples allowed: \"{{'bounds': ((0, 0), "
             f"(1, 1))}}\") or MODULE:FUNCTION returning a dict")
    if re.fullmatch(r"[A-Za-z_][\w.]*:[A-Za-z_][\w.]*", text):
        func = resolve(text)
        try:
            params = func()
        except Exception as exc:
            raise CheckError(f"{option} {text}() failed: {type(exc).__name__}: {exc}") from exc
        if not isinstance(params, dict):
            raise CheckError(f"{option} {text}() must return a dict, got {type(params).__name__}")
        return dict(params)
    try:
        params = json.loads(text)
    except json.JSONDecodeError as exc:
        try:
            params = ast.literal_eval(text)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            raise CheckError(f"{forms}; {text!r} is neither (JSON: {exc})") from None
    if not isinstance(params, dict):
        raise CheckError(f"{forms}, got {text!r}")
    return params


def params_text(params: dict) -> str:
    """Parameters as a report shows them: JSON when JSON says them exactly, else Python's notation (tuples
    stay tuples, arrays are written as lists)."""
    try:
        text = json.dumps(params)
        if json.loads(text) == params:
            return text
    except (TypeError, ValueError):
        pass

    def plain(v):
        if isinstance(v, np.ndarray):
            return v.tolist()
        if isinstance(v, dict):
            return {k: plain(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return type(v)(plain(x) for x in v)
        return v

    return repr(plain(params))


def parse_bounds(text):
    """``--bounds``: JSON ``[[low, high], ...]`` (``None`` stays ``None``)."""
    if text is None:
        return None
    try:
        bounds = json.loads(text) if isinstance(text, str) else text
        bounds = [(float(lo), float(hi)) for lo, hi in bounds]
    except (ValueError, TypeError) as exc:
        raise CheckError(f"--bounds must be JSON [[low, high], ...], got {text!r}") from exc
    if not bounds or any(not (np.isfinite(lo) and np.isfinite(hi) and lo < hi) for lo, hi in bounds):
        raise CheckError(f"--bounds needs finite low < high for every feature, got {text!r}")
    return bounds


def parse_classes(text):
    """``--classes``: a JSON list or comma-separated labels (integers where they parse)."""
    if text is None:
        return None
    if isinstance(text, (list, tuple)):
        classes = list(text)
    else:
        try:
            classes = json.loads(text)
            classes = classes if isinstance(classes, list) else [classes]
        except ValueError:
            classes = [c.strip() for c in text.split(",") if c.strip()]
            classes = [int(c) if c.lstrip("-").isdigit() else c for c in classes]
    if not classes:
        raise CheckError(f"--classes must name at least one class, got {text!r}")
    return classes


def parse_release(text):
    """``--release``: auto, or a comma list of the kinds release | predictions | structure | attributes and
    fitted attribute names ATTR (a single kind stays a word: ``"predictions"``)."""
    from audit.gate.outputs import KINDS

    if isinstance(text, (list, tuple)):
        return list(text)
    if text == "auto" or text in KINDS:
        return text
    items = [a.strip() for a in str(text).split(",") if a.strip()]
    if not items or not all(a.isidentifier() for a in items):
        raise CheckError(f"--release must be auto or a comma list of {', '.join(KINDS)} and fitted attribute "
                         f"names ATTR, got {text!r}")
    return items


def user_pairs(spec, relation: str):
    """The pairs returned by ``MODULE:FUNCTION()`` (``--pairs``), or the list of pairs given in Python."""
    if not isinstance(spec, str):
        raw, spec = list(spec), "given"
    else:
        func = resolve(spec)
        try:
            raw = list(func())
        except Exception as exc:
            raise CheckError(f"--pairs {spec}() failed: {type(exc).__name__}: {exc}") from exc
    if not raw:
        raise CheckError(f"--pairs {spec}() returned no pairs")
    pairs = []
    for k, p in enumerate(raw):
        if isinstance(p, NeighbourPair):
            pairs.append(p)
        elif isinstance(p, (tuple, list)) and len(p) in (2, 3):
            pairs.append(NeighbourPair(p[0], p[1], str(p[2]) if len(p) == 3 else f"--pairs #{k}", relation))
        else:
            raise CheckError(f"--pairs {spec}() item {k} must be (d0, d1) or a NeighbourPair, got {p!r}")
    return pairs

