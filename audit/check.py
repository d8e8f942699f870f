"""``audit check``: audit someone else's mechanism or estimator against a claim.

A subject is named ``MODULE:CALLABLE`` and resolved as follows:

* a class with ``fit`` (or a factory returning an object with ``fit``) is
  an estimator: each sample fits a fresh ``CALLABLE(**params)`` (``random_state``
  through the constructor when it takes one) on one of the neighbouring datasets
  and releases what :class:`audit.engine.release.EstimatorRelease` says (by default
  everything the fitted model publishes: ``release()``, ``predict`` and ``predict_proba``
  on a grid over the public domain, the fitted structure when recognised and every
  number its pickle carries, by attribute path; ``--release`` narrows it); an
  exception in ``fit`` is an outcome. Every real-valued coordinate gets the
  floating-point events too (``decided_by`` is then ``"float probe"``).
  The pairs are found by the neighbour search of :mod:`audit.engine.search` (screened
  on a pilot, the best confirmed on fresh samples) plus the user's ``--pairs``;
* any other class, or a function given ``params``, is a factory:
  ``CALLABLE(**params)`` must return a mechanism ``m(data, rng)``;
* a function without ``params`` is the mechanism itself.

The neighbouring inputs come from ``data``:

* for estimators, a base dataset (``builtin:blobs`` by default, or
  ``builtin:iris|wine|breast_cancer``, or ``PATH.csv`` whose last column is
  the label) from which add/remove or substitute pairs are built
  (:mod:`audit.engine.neighbours`);
* for mechanisms, ``scalar`` (answers 0 and 1, the default) or ``query:N``
  (the query-vector patterns of length N), or ``--pairs MODULE:FUNCTION``;
  scalar outputs (and the real-valued coordinates of vector outputs) also get the
  floating-point events of :mod:`audit.engine.events`.

A pass carries a power statement (:mod:`audit.engine.power`).
"""
from __future__ import annotations

import ast
import importlib
import inspect
import json
import math
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from audit.engine import checkpoint, progress
from audit.engine.budget import SAMPLES
from audit.engine.estimate import Claim, audit_pairs
from audit.engine.events import coordinates, float_probe
from audit.engine.neighbours import NeighbourPair, add_remove_pairs, query_pairs, substitute_pairs
from audit.engine.outcome import REFUSAL_KINDS, SubjectExit, canonical_message, catchable, refusal_kind, subject_exit
from audit.engine.power import conclusive_n, power_statement
from audit.engine.release import EstimatorRelease
from audit.report import Report
from audit.engine.scale import scale_pairs
from audit.engine.search import candidate_pairs, data_key, search_and_confirm
from audit.engine.state_probe import probe_estimator

__all__ = ["Subject", "CheckError", "resolve", "build", "audit_subject", "check_report", "parse_params",
           "params_text"]

ALPHA = 0.05
#: records of the built-in datasets used as the base of the pairs (tiny data gives strong signals)
BUILTIN_ROWS = 8
#: screened candidate pairs confirmed on fresh samples (alpha is shared over these only)
CONFIRM = 2
#: a pass is conclusive when a loss of (1 + POWER_MARGIN) times the claim would have been caught with
#: probability 0.9
POWER_MARGIN = 0.25
#: refusals exempted by default in each exceptions mode (``Subject.exempt``): that a dataset is not empty is
#: public (a claim's domain is n >= 1); ``report`` also exempts datasets of one class
EXEMPT_DEFAULT = {"fail": ("empty",), "report": ("empty", "one-class"), "off": ()}
#: fits per dataset that decide whether a refusal is certain on it (a refusal that happens only sometimes is an
#: outcome, never exempt)
EXEMPT_FITS = 5
#: seconds the scale family may spend choosing its pair, and again confirming it, per budget
SCALE_SECONDS = {"quick": 45.0, "standard": 240.0, "full": 900.0}


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
    #: ``MODULE:FUNCTION`` returning extra pairs (always audited)
    pairs: str | None = None
    #: public ``[(low, high), ...]`` per feature and public classes (estimators); default: the dataset's
    bounds: list | None = None
    classes: list | None = None
    #: outputs per input (default: the budget's)
    n_samples: int | None = None
    #: ``"auto"``, a kind (``"release"``, ``"predictions"``, ``"structure"``, ``"attributes"``) or a list of
    #: kinds and fitted attribute names
    release: object = "auto"
    #: neighbour search for estimators; exceptions as outcomes ("fail", "report" or "off"; True is "fail",
    #: False "off"); floating-point events for mechanisms and estimators (every real-valued coordinate)
    search: bool = True
    exceptions: object = "fail"
    float_probe: bool = True
    #: estimators: the scale family of the neighbour search (:mod:`audit.engine.scale`)
    scale: bool = True
    #: seconds the scale family may spend choosing its pair, and again confirming it (default: the budget's)
    scale_seconds: float | None = None
    #: estimators: random state kept after fit (:mod:`audit.engine.state_probe`): "fail", "warn" or "off"
    state: str = "fail"
    #: an inconclusive pass (its detectable loss above the claim) fails the gate
    strict_power: bool = False
    #: refusals that do not decide (:data:`EXEMPT_DEFAULT` per exceptions mode when None): "empty" (no records),
    #: "one-class" (a single label) or exception type names; a pair one of whose datasets ``fit`` refuses so on
    #: every one of :data:`EXEMPT_FITS` fits lies outside the claim's public domain and is reported, not audited
    exempt: list | None = None
    #: whether the user stated the expected verdict (a claims file's ``expected``); without it the verdict is
    #: read as the gate's answer, never as "expected" or "MISMATCH"
    expected_stated: bool = False


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
    from audit.engine.release import KINDS

    if isinstance(text, (list, tuple)):
        return list(text)
    if text == "auto" or text in KINDS:
        return text
    items = [a.strip() for a in str(text).split(",") if a.strip()]
    if not items or not all(a.isidentifier() for a in items):
        raise CheckError(f"--release must be auto or a comma list of {', '.join(KINDS)} and fitted attribute "
                         f"names ATTR, got {text!r}")
    return items


def _user_pairs(spec: str, relation: str):
    """The pairs returned by ``MODULE:FUNCTION()`` (``--pairs``)."""
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


def _domain(subject: Subject):
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
    if X.shape[1] != len(bounds) or not set(np.asarray(y).tolist()) <= set(classes):
        # the dataset does not fit the public domain: a public base dataset drawn inside it instead
        rng = np.random.default_rng(20261123)
        lo, hi = np.array([b[0] for b in bounds]), np.array([b[1] for b in bounds])
        X = lo + rng.random((BUILTIN_ROWS, len(bounds))) * (hi - lo)
        y = np.array([classes[k % len(classes)] for k in range(BUILTIN_ROWS)])
    return X, y, bounds, classes, notes


def build(subject: Subject):
    """``(mechanism, pairs, kind)`` for a subject: the pairs the plain (search-free) audit would use."""
    plan = plan_subject(subject)
    return plan["mechanism"], plan["fixed"] + plan["candidates"], plan["kind"]


def plan_subject(subject: Subject) -> dict:
    """Everything needed to audit a subject: its mechanism, kind, candidate and fixed pairs, notes."""
    obj = resolve(subject.target)
    notes = []
    if _is_estimator(obj, subject.params):
        X, y, bounds, classes, notes = _domain(subject)
        try:
            obj(**subject.params)
        except TypeError as exc:
            raise CheckError(f"{subject.target}(**params) failed: {exc}") from exc
        mode = exceptions_mode(subject.exceptions)
        mech = EstimatorRelease(obj, subject.params, bounds=bounds, classes=classes, release=subject.release,
                                exceptions=mode != "off")
        fixed = _user_pairs(subject.pairs, subject.neighbours) if subject.pairs else []
        if subject.neighbours == "add-remove":
            base = add_remove_pairs(X, y, bounds=bounds, classes=classes, corners=1)
        else:
            base = substitute_pairs(X, y, bounds=bounds, classes=classes, records=[0])
        cands = []
        if subject.search:
            cands = candidate_pairs(bounds, classes, subject.neighbours, seed=0) + base
        elif not fixed:
            cands = base
        datasets = [d for p in fixed + cands for d in (p.d0, p.d1)]
        try:
            errors = mech.calibrate(datasets)
        except SubjectExit:
            raise
        except Exception as exc:
            raise CheckError(f"auditing {subject.name!r} ({subject.target}, an estimator) failed: it raised on "
                             f"every dataset tried, e.g. mechanism raised at sample 0: {type(exc).__name__}: "
                             f"{exc}") from exc
        if errors:
            notes.append(f"exceptions are outcomes: fit raised on {len(errors)} of {len(datasets)} datasets "
                         f"tried (e.g. {type(errors[0]).__name__}: {str(errors[0])[:80]})"
                         if mode != "off" else "")
        exempt = exempt_list(subject)
        certain = _certain_refusals(mech, datasets, exempt) if errors and exempt else {}
        outside = [p for p in fixed + cands if data_key(p.d0) in certain or data_key(p.d1) in certain]
        exempted = [_exempt_text(p, certain) for p in outside]
        fixed = [p for p in fixed if not any(p is q for q in outside)]
        cands = [p for p in cands if not any(p is q for q in outside)]
        if not fixed + cands:
            raise CheckError(f"auditing {subject.name!r} ({subject.target}): every pair tried has a dataset that fit "
                             f"refuses ({exempted[0] if exempted else 'no pair'}); give --pairs inside the domain fit "
                             "accepts, or --exempt none to let the refusals decide")
        crash = [p for p in fixed + cands if _raises(mech, p.d0) != _raises(mech, p.d1)]
        notes.append(f"release: {mech.description}")
        notes += preflight(mech, datasets[-1])
        return {"mechanism": mech, "kind": "estimator", "fixed": fixed, "candidates": cands,
                "notes": [n for n in notes if n], "factory": lambda: obj(**subject.params), "base": (X, y),
                "bounds": bounds, "classes": classes, "crash_pairs": crash, "exceptions": mode,
                "exempted": exempted, "exempt": exempt}
    if inspect.isclass(obj) or subject.params:
        try:
            mech = obj(**subject.params)
        except Exception as exc:
            raise CheckError(f"{subject.target}(**{params_text(subject.params)}) failed: {type(exc).__name__}: "
                             f"{exc}") from exc
        if not callable(mech):
            raise CheckError(f"{subject.target}(**params) returned {mech!r}, which is not a mechanism m(data, rng)")
    else:
        mech = obj
    pairs = _user_pairs(subject.pairs, subject.neighbours) if subject.pairs else \
        mechanism_pairs(subject.data or "scalar")
    return {"mechanism": mech, "kind": "mechanism", "fixed": pairs, "candidates": [], "notes": notes}


def exceptions_mode(value) -> str:
    """``"fail"``, ``"report"`` or ``"off"`` from a flag value (``True`` is ``"fail"``, ``False`` ``"off"``)."""
    if value is True:
        return "fail"
    if value is False or value is None:
        return "off"
    if value in ("fail", "report", "off"):
        return value
    raise CheckError(f"exceptions must be 'fail', 'report' or 'off', got {value!r}")


def exempt_list(subject: Subject) -> tuple:
    """The refusals that do not decide: the subject's ``exempt`` (``"none"`` for none), else its mode's default."""
    mode = exceptions_mode(subject.exceptions)
    if subject.exempt is None:
        return EXEMPT_DEFAULT[mode]
    items = [subject.exempt] if isinstance(subject.exempt, str) else list(subject.exempt)
    items = [str(i).strip() for i in items if str(i).strip()]
    if items == ["none"]:
        return ()
    bad = [i for i in items if i not in REFUSAL_KINDS and not i.isidentifier()]
    if bad or "none" in items:
        raise CheckError(f"--exempt must be none or a comma list of {', '.join(REFUSAL_KINDS)} and exception type "
                         f"names, got {subject.exempt!r}")
    return tuple(items)


def _certain_refusals(mech, datasets, exempt) -> dict:
    """``data_key -> text`` of the datasets that ``fit`` refuses, with an exempt refusal, on every one of
    :data:`EXEMPT_FITS` fits (the calibration's and more with other seeds): a refusal that happens only sometimes
    is an outcome of the mechanism, never a statement about the domain."""
    out = {}
    for data in datasets:
        key = data_key(data)
        seen = _raises(mech, data)
        if seen is None or key in out:
            continue
        kind = refusal_kind(data)
        if kind not in exempt and seen.split("(")[0] not in exempt:
            continue
        rng = np.random.default_rng(0xE3E3)
        texts = {seen}
        for _ in range(EXEMPT_FITS - 1):
            try:
                mech.fit(data, int(rng.integers(0, 2**31 - 1)))
            except BaseException as exc:  # noqa: BLE001 - the subject's exception is what is measured
                if isinstance(exc, SystemExit):
                    raise subject_exit(exc, data) from None
                if not catchable(exc):
                    raise
                texts.add(f"{type(exc).__name__}({canonical_message(exc)[:80]!r})")
            else:
                break
        else:
            what = {"empty": "an empty dataset", "one-class": "a dataset of one class"}.get(kind, "a dataset")
            out[key] = f"fit refuses {what} ({len(data[1])} records) on every one of {EXEMPT_FITS} fits: " + \
                " / ".join(sorted(texts))
    return out


def _exempt_text(pair, certain) -> str:
    side = "D" if data_key(pair.d0) in certain else "D'"
    text = certain.get(data_key(pair.d0)) or certain.get(data_key(pair.d1))
    return f"{pair.description}: {text} (on {side})"


def _raises(mech, data) -> str | None:
    """What ``fit`` raised on ``data`` during calibration (``"Type('message')"``), or None."""
    return getattr(mech, "raised_on", {}).get(data_key(data))


def _crash_text(mech, pair) -> str:
    a, b = _raises(mech, pair.d0), _raises(mech, pair.d1)
    which, other = ("D", "D'") if a else ("D'", "D")
    return f"fit raises {a or b} on {which} and not on {other} ({pair.description})"


def preflight(mech, data) -> list[str]:
    """Warnings when the same seed does not give the same outputs, or different seeds give the same."""
    try:
        a, b, c = mech.outputs(data, 11), mech.outputs(data, 11), mech.outputs(data, 12)
    except Exception as exc:  # the audit itself reports what fails
        return [f"pre-flight check skipped: {type(exc).__name__}: {exc}"]
    out = []
    if a != b:
        out.append("WARNING: pre-flight check failed: the same seed gave different outputs, so runs are not "
                   "reproducible (the estimator draws randomness the auditor does not seed, e.g. OS entropy)")
    if a == c and len({tuple(v) for v in a}) > 1:
        out.append("WARNING: pre-flight check failed: different seeds gave the same outputs, so sample blocks "
                   "may repeat each other and the bounds' independence assumption fails")
    return out


def pilot_samples(n_samples: int) -> int:
    """Outputs per dataset for screening the candidate pairs: a thirtieth of the budget (666 at quick), between
    200 and 20,000. Each distinct dataset is sampled once for every pair that holds it, so at quick the 27
    default candidates (40 datasets) cost a third of the 80,000 fits of the two confirmed pairs."""
    return int(min(20_000, max(200, n_samples // 30)))


def _reads_exception(event: str) -> bool:
    """Whether an event's words read the ``raised`` coordinate (fit raised / fit succeeded)."""
    return "fit raised" in event or "fit succeeded" in event or event.startswith("raised") or "[raised" in event


def _state_probe(plan: dict, subject: Subject):
    """The state probe on the base dataset and the first audited pair that ``fit`` accepts on both sides."""
    accepted = [p for p in plan["fixed"] + plan["candidates"]
                if _raises(plan["mechanism"], p.d0) is None and _raises(plan["mechanism"], p.d1) is None]
    pair = (accepted[0].d0, accepted[0].d1) if accepted else None
    return probe_estimator(plan["factory"], *plan["base"], pair=pair, epsilon=subject.epsilon, delta=subject.delta,
                           alpha=ALPHA)


def _confirmed_rows(pairs, results) -> list[dict]:
    """Every confirmed pair's bound and event (the report shows them all, not only the worst)."""
    return [{"pair": p.description, "epsilon_lower": float(r.epsilon_lower), "epsilon_point": float(r.epsilon_point),
             "event": str(r.event), "direction": r.direction,
             "counts": {k: int(v) for k, v in r.counts.items()}} for p, r in zip(pairs, results)]


def audit_subject(subject: Subject, budget: str, seed: int) -> dict:
    """Audit one subject; return its claim row.

    The one-fit probes come first and a certain finding is printed at once (fail fast): the state probe
    (:mod:`audit.engine.state_probe`) and the refusals seen while calibrating; then the outputs are sampled.
    """
    plan = plan_subject(subject)
    mech, kind = plan["mechanism"], plan["kind"]
    claim = Claim(subject.epsilon, subject.delta, subject.neighbours)
    n = subject.n_samples or SAMPLES[budget]
    extra = []
    probe = None
    if kind == "estimator" and subject.state != "off":
        probe = _state_probe(plan, subject)
        if probe.verdict == "violation":
            progress.step("FOUND kept state (certain, from one fit per dataset): " + probe.evidence)
    if kind == "estimator" and plan["crash_pairs"] and plan["exceptions"] != "off":
        progress.step("FOUND a refusal that separates a pair: " + _crash_text(mech, plan["crash_pairs"][0]))
    names = mech.coordinates() if callable(getattr(mech, "coordinates", None)) else None
    with checkpoint.scope(subject.name), float_probe(subject.float_probe), \
            coordinates(names):
        try:
            if plan["candidates"] and subject.search and kind == "estimator":
                scale = None
                if subject.scale:
                    budget_s = subject.scale_seconds or SCALE_SECONDS.get(budget, SCALE_SECONDS["quick"])
                    grown = scale_pairs(mech, plan["bounds"], plan["classes"], subject.neighbours, budget_s=budget_s,
                                        seed=seed, delta=subject.delta)
                    best = grown.best()
                    scale = (best, grown.samples_within(best, budget_s, n))
                    extra.append(grown.summary() + f"; confirmed at {scale[1]:,} outputs per input")
                crash_ids = {id(p) for p in plan["crash_pairs"]}
                also = (lambda p: id(p) not in crash_ids) if crash_ids and plan["exceptions"] != "off" else None
                found = search_and_confirm(mech, plan["candidates"], claim, n_pilot=pilot_samples(n), n_samples=n,
                                           alpha=ALPHA, seed=seed, confirm=CONFIRM, fixed=plan["fixed"], scale=scale,
                                           also=also)
                res = found.decisive
                extra.append("search: " + found.summary())
                tried = found.tried
                audited = found.pairs if res is found.audit else [scale[0]]
                confirmed = _confirmed_rows(found.pairs, found.audit.results)
                if found.scale_audit is not None:
                    confirmed += _confirmed_rows([scale[0]], found.scale_audit.results)
            else:
                audited = plan["fixed"] + plan["candidates"]
                res = audit_pairs(mech, audited, claim, n_samples=n, alpha=ALPHA, seed=seed)
                tried = None
                confirmed = _confirmed_rows(audited, res.results)
        except ValueError as exc:
            raise CheckError(f"auditing {subject.name!r} ({subject.target}, a {kind}) failed: {exc}") from exc
    # announced when it joins the report, complete (its console line says what decided it)
    row = res.claim_row(id=subject.name, subject=f"{subject.target} {params_text(subject.params)} ({kind})",
                        expected=subject.expect, announce=False)
    row["expected_stated"] = bool(subject.expected_stated)
    row["pairs_confirmed"] = confirmed
    if kind == "estimator" and subject.float_probe:
        extra.append("floating-point probe on (each real-valued coordinate that varies: sign, exponent, mantissa "
                     "residues)")
    if kind == "mechanism" and subject.float_probe:
        extra.append("floating-point probe on (scalar outputs: sign, exponent, mantissa residues)")
        if res.violation and str(getattr(res.worst, "event", "")).startswith("float pattern"):
            row["decided_by"] = "float probe"
            extra.insert(0, "violation through the floating-point probe: the outputs of the two inputs lie on "
                            "different float lattices (Mironov 2012), so some bit patterns occur from one input "
                            "only; --no-float-probe audits the claim in real arithmetic instead")
        elif res.violation:
            row["decided_by"] = "outputs"
    if kind == "estimator" and plan["exceptions"] != "off":
        _exception_verdict(row, extra, plan, res, audited, confirmed)
    if kind == "estimator" and subject.float_probe and res.violation and row.get("decided_by") != "exception":
        _float_verdict(row, extra, str(getattr(res.worst, "event", "")))
    if not res.violation:
        loss, text = power_statement(res.worst, claim=subject.epsilon, delta=subject.delta)
        row["detectable_loss"] = None if math.isinf(loss) else loss
        target = subject.epsilon * (1.0 + POWER_MARGIN)
        row["power"] = "conclusive" if loss <= target else "inconclusive"
        extra.append(text)
        if row["power"] == "inconclusive":
            n_more = conclusive_n(res.worst, claim=subject.epsilon, delta=subject.delta, target=target)
            row["n_conclusive"] = n_more
            extra.insert(0, f"inconclusive pass: this audit could not have seen a loss of {target:.3g} (the claim "
                            f"plus {POWER_MARGIN:.0%}) with probability 0.9 "
                            + (f"(only {loss:.3g} or more); " if math.isfinite(loss) else "(no power); ")
                            + (f"about {n_more:,} outputs per input on the winning pair would make it conclusive"
                               if n_more else "no sample size makes this event conclusive")
                            + ("; --strict-power fails the gate on it" if not subject.strict_power else ""))
            if subject.strict_power:
                row["verdict"] = "inconclusive"
    row["winning_pair"] = res.worst_description
    if probe is not None:
        _state_verdict(row, extra, probe, subject)
    if tried is not None:
        row["pairs_tried"] = [{"pair": d, "pilot_epsilon_lower": lo, "pilot_epsilon_point": pt}
                              for d, lo, pt in tried]
    row["detail"] = "; ".join([row["detail"]] + plan["notes"] + extra)
    if subject.note:
        row["detail"] = f"{subject.note} — {row['detail']}"
    return row


def _exception_verdict(row, extra, plan, res, audited, confirmed) -> None:
    """What the refusals decided: the deciding event read for the ``raised`` coordinate, the outputs' own bound
    beside it, and the exempt refusals on a line of their own."""
    mech = plan["mechanism"]
    extra.append("exceptions in fit are outcomes (type and message)" + (
        f"; exempt refusals (not decisive): {', '.join(plan['exempt'])}" if plan["exempt"] else ""))
    crash = plan["crash_pairs"]
    row["exception_findings"] = [_crash_text(mech, p) for p in crash]
    row["exempt_refusals"] = list(plan["exempted"])
    if plan["exempted"]:
        what = "empty dataset" if all("an empty dataset" in t for t in plan["exempted"]) else "exempt refusal"
        extra.append(f"reported, not decisive: the refusal of an {what} on {len(plan['exempted'])} pair(s), e.g. "
                     f"{plan['exempted'][0]}; that a dataset has at least one record is public, so such pairs lie "
                     "outside the claim's domain (--exempt none lets them decide)" if what == "empty dataset" else
                     f"reported, not decisive: {len(plan['exempted'])} pair(s) with a dataset fit always refuses "
                     f"(--exempt {','.join(plan['exempt'])}), e.g. {plan['exempted'][0]}")
    worst_pair = audited[res.worst_pair] if audited and res.worst_pair < len(audited) else None
    event = str(getattr(res.worst, "event", ""))
    through_crash = worst_pair is not None and any(worst_pair is p for p in crash) and _reads_exception(event)
    row["decided_by"] = "exception" if through_crash else "outputs"
    crash_descriptions = {p.description for p in crash}
    alone = [c for c in confirmed if c["pair"] not in crash_descriptions and not _reads_exception(c["event"])]
    if alone:
        best = max(alone, key=lambda c: c["epsilon_lower"])
        row["outputs_alone"] = best
        alone_text = (f"the outputs alone: ε ≥ {best['epsilon_lower']:.3g} on {best['pair']} "
                      f"({'above' if best['epsilon_lower'] > row['epsilon_claimed'] else 'within'} the claim)")
    else:
        alone_text = "the outputs alone were not confirmed on a pair fit accepts on both sides"
    if res.violation and through_crash:
        extra.insert(0, f"violation through an exception: {_crash_text(mech, worst_pair)} (the refusal itself "
                        f"tells them apart; --exempt TYPE exempts a refusal you declare public); {alone_text}")
    elif res.violation:
        extra.insert(0, "violation through the outputs")


def _state_verdict(row, extra, probe, subject) -> None:
    """The state probe's verdict joins the row: a finding fails the gate (``--state fail``) with an unbounded
    loss; a probe that could not run makes a pass inconclusive, never clean."""
    row["state"] = probe.to_json()
    extra.append(probe.summary())
    verdict = probe.verdict
    if verdict == "violation" and subject.state == "fail":
        row["verdict"] = "violation"
        row["decided_by"] = "kept state"
        # a kept generator, state or seed, or a kept value whose replay reproduces the published noise: whoever
        # holds the model subtracts the noise, so the loss is unbounded on any pair whose records that part reads
        row["epsilon_reading"] = "∞"
        for key in ("power", "detectable_loss", "n_conclusive"):  # the sampled pass's power no longer applies
            row.pop(key, None)
        extra.insert(0, "violation through kept state (ε = ∞: whoever holds the fitted model or its pickle can "
                        "replay the fit's noise and subtract it; --state warn reports it without failing): "
                        + probe.evidence)
    elif verdict == "inconclusive" and row["verdict"] == "pass":
        row["power"] = "inconclusive"
        row["state_inconclusive"] = probe.skipped or "the probe's walk was cut short"
        extra.insert(0, f"inconclusive: the state probe could not run ({row['state_inconclusive']}), so kept "
                        "random state was not ruled out")
        if subject.strict_power:
            row["verdict"] = "inconclusive"


def _subject_error_row(subject: Subject, exc: Exception) -> dict:
    """The row of a subject whose audit could not finish (it ended the process inside ``fit``)."""
    nan = float("nan")
    return {"id": subject.name, "subject": f"{subject.target} {params_text(subject.params)}",
            "neighbouring": subject.neighbours, "epsilon_claimed": subject.epsilon, "delta": subject.delta,
            "epsilon_lower": nan, "epsilon_point": nan, "n_samples": 0, "alpha": ALPHA, "verdict": "error",
            "expected": subject.expect, "expected_stated": bool(subject.expected_stated), "method": "sampled",
            "decided_by": "error", "detail": f"error: {exc}"}


def _float_verdict(row: dict, extra: list, event: str) -> None:
    """An estimator's violation decided by a floating-point event: ``decided_by`` and the words naming the
    coordinate whose bit patterns tell the inputs apart."""
    found = re.match(r"float pattern \(sign, exponent, mantissa mod (\d+)\) of (.+) in \{", event)
    if not found:
        return
    row["decided_by"] = "float probe"
    extra.insert(0, f"violation through the floating-point probe on {found.group(2)}: its values from the two "
                    f"inputs lie on different float lattices (Mironov 2012), so some patterns of sign, exponent "
                    f"and mantissa mod {found.group(1)} occur from one input only; --no-float-probe audits the "
                    "claim in real arithmetic instead")


def check_report(subjects: list[Subject], budget: str, seed: int, name: str) -> Report:
    start = time.perf_counter()
    report = Report(name, budget, seed, title="Privacy claims of outside code, audited by `python -m audit check`.")
    for k, subject in enumerate(checkpoint.progress(subjects, desc="claims", unit="claim")):
        what = subject.name if subject.name == subject.target else f"{subject.name}: {subject.target}"
        progress.step(f"claim {k + 1}/{len(subjects)} {what}, claimed ε {subject.epsilon:g} ({subject.neighbours})",
                      done=k, total=len(subjects), since=start)
        try:
            row = audit_subject(subject, budget, seed + k)
        except SubjectExit as exc:  # the next subjects are still audited; check exits 2
            row = _subject_error_row(subject, exc)
        report.claims.append(row)
    sizes = sorted({s.n_samples or SAMPLES[budget] for s in subjects})
    report.notes.append(f"{', '.join(f'{n:,}' for n in sizes)} outputs per input (20% pilot), alpha = {ALPHA} per claim "
                        "shared over its audited pairs and both directions: a claim that holds is flagged with "
                        "probability at most alpha. For estimators the audited pairs are the user's (--pairs) and "
                        f"the {CONFIRM} best of a neighbour search screened on separate pilot samples (a thirtieth "
                        "of the budget per dataset, at least 200), so the search does not raise that rate.")
    report.elapsed_s = time.perf_counter() - start
    return report
