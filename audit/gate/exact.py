"""``check --exact``: the exact privacy loss of a user's own code over every neighbouring pair of a tiny domain.

The domain is public and finite, built from the claim's own public facts:

* an **estimator** (a class with ``fit``) is fitted on every dataset of at most ``records`` records whose
  features sit at the ends of their ``--bounds`` and whose labels are the ``--classes``; its release is the
  fitted model's state (every attribute, as :func:`audit.engine.exact_code.explore.encode` reads it). The
  public methods (``predict``, ``predict_proba``, ``decision_function``, ``transform``) are post-processing of
  that state when they draw nothing, which is checked on one fitted model: then the state's law bounds theirs;
* a **mechanism** ``m(data, rng)`` is called on every tuple of at most ``records`` records taken from the
  ``--classes`` values (order kept: a mechanism may answer per record), or on the user's ``--pairs``; its
  release is what it returns.

Every dataset's paths are explored once (:func:`audit.engine.exact_code.explore.explore`), and every pair's
loss is an interval (:func:`audit.engine.exact_code.loss.pair_loss`). The verdict, for a pure claim ``epsilon``:

* **refuted** when some pair's lower end exceeds ``epsilon`` by more than the float rounding of a noise rate
  (:data:`~audit.engine.exact_code.loss.ROUNDING_SLACK`, relative);
* **proved on this domain** when every pair's upper end is at most ``epsilon`` (within that rounding, stated)
  and covers every outcome of the noise;
* **undecided** otherwise, with the reason (a continuous draw and its site, a coupling that fails, noise values
  the code converted to numbers whose far tails were not run).

What "proved" means: this code, these datasets, these sizes. It says nothing of larger data; the sampled gate
(``check`` without ``--exact``) speaks of those, never with proof.
"""
from __future__ import annotations

import inspect
import itertools
import time
from dataclasses import dataclass, field

import numpy as np

from audit.engine.runs import progress
from audit.engine.exact_code.explore import explore
from audit.engine.exact_code.intercept import TracingGenerator, intercepted
from audit.engine.exact_code.loss import ROUNDING_SLACK, pair_loss
from audit.engine.exact_code.symbolic import Path, Undecided
from audit.engine.exact_law.domain import Domain, enumerate_pairs

__all__ = ["ExactResult", "exact_check", "exact_row", "pair_exact", "EXACT_RECORDS", "METHODS"]

#: the default record limit of the domain
EXACT_RECORDS = 3
#: the methods checked to draw nothing (post-processing of the state)
METHODS = ("predict", "predict_proba", "predict_log_proba", "decision_function", "transform", "score_samples")


@dataclass
class ExactResult:
    """The exact loss over a domain: ``[lower, upper]``, the worst pairs, the verdict and why."""

    lower: float
    upper: float
    verdict: str  # "proved", "refuted" or "undecided"
    reason: str
    domain: str
    pairs: int
    worst_lower: str = ""
    worst_upper: str = ""
    release: str = ""
    delta: float = 0.0
    note: str = ""
    seconds: float = 0.0
    per_pair: list = field(default_factory=list)


class _NoDraws(Path):
    """A path on which any draw is an error: the methods of a fitted model must not draw."""

    def decide(self, options):
        raise Undecided("a public method draws randomness after the fit", "",
                        "draw at fit time and keep the result, so the state's law bounds what the methods serve")

    def new_atom(self, kind, param):
        return self.decide([])


def _is_estimator(obj) -> bool:
    return inspect.isclass(obj) and hasattr(obj, "fit")


def _ordered_neighbours(datasets, relation: str):
    """Every neighbouring pair among ``datasets``, tuples of records whose order counts (a mechanism may answer
    per record): one record removed at any place, or one record replaced; each unordered pair once."""
    known, values = set(datasets), sorted({x for d in datasets for x in d}, key=repr)
    pairs = set()
    for d in datasets:
        for i in range(len(d)):
            if relation == "add-remove":
                if d[:i] + d[i + 1:] in known:
                    pairs.add((d[:i] + d[i + 1:], d))
                continue
            for r in values:
                d1 = d[:i] + (r,) + d[i + 1:]
                if r != d[i] and d1 in known:
                    pairs.add(tuple(sorted((d, d1), key=repr)))
    return sorted(pairs, key=repr)


def _estimator_pairs(bounds, classes, records: int, relation: str, epsilon: float):
    """Every neighbouring pair of the estimator's domain, as tuples of records ``(x..., label)`` in ``repr``
    order: the pairs of :func:`audit.engine.exact_law.domain.enumerate_pairs` (the certificates' own enumeration)
    on the grid of the bounds' ends."""
    grid = [sorted({float(lo), float(hi)}) for lo, hi in bounds]
    domain = Domain("check --exact", "", None, {}, grid, list(classes), records, relation, epsilon, "certified")
    types = [tuple(p) + (c,) for p in itertools.product(*grid) for c in classes]  # enumerate_pairs' type order

    def records_of(d):
        return tuple(types[t] for t in d)

    return sorted(((records_of(d0), records_of(d1)) for d0, d1 in enumerate_pairs(domain)), key=repr)


def _arrays(d, features: int):
    X = np.array([r[:features] for r in d], dtype=float).reshape(len(d), features)
    y = np.array([r[features] for r in d])
    return X, y


def _check_methods(make, X, y):
    """Fit once with NumPy's own randomness, then call each public method with every draw forbidden."""
    model = make()
    model.fit(X, y)
    for name in METHODS:
        method = getattr(model, name, None)
        if not callable(method):
            continue
        with intercepted(), _NoDraws([], {}):
            try:
                method(X)
            except Undecided as exc:
                raise Undecided(f"{type(model).__name__}.{name} draws randomness after the fit", exc.site,
                                exc.fix) from None
            except Exception:  # a method that rejects these points is not a draw
                continue


def _caller(target, params: dict):
    """``call(d)``: a zero-argument run of the code on dataset ``d`` (an estimator's ``(X, y)``, a mechanism's
    data), returning its release."""
    if _is_estimator(target):
        return lambda d: (lambda: target(**params).fit(*d))
    mech = target(**params) if inspect.isclass(target) or params else target
    return lambda d: (lambda: mech(d, TracingGenerator()))


def pair_exact(target, d0, d1, params: dict | None = None, **kw):
    """The exact loss of one pair (:class:`audit.engine.exact_code.loss.PairExact`): ``d0`` and ``d1`` are an
    estimator's ``(X, y)`` or a mechanism's data."""
    call = _caller(target, dict(params or {}))
    return pair_loss(explore(call(d0), **kw), explore(call(d1), **kw))


def exact_check(target, epsilon: float, relation: str = "add-remove", *, bounds=None, classes=None,
               records: int = EXACT_RECORDS, params: dict | None = None, pairs=None,
               max_paths: int | None = None) -> ExactResult:
    """The exact loss of ``target`` (a class with ``fit``, or a mechanism ``m(data, rng)``) over every
    neighbouring pair of the tiny domain (module docstring)."""
    if not (isinstance(records, int) and records >= 1):
        raise ValueError(f"--exact-records must be an integer >= 1, got {records!r}")
    params = dict(params or {})
    start = time.process_time()
    kw = {} if max_paths is None else {"max_paths": max_paths}
    if _is_estimator(target):
        if bounds is None or classes is None:
            raise ValueError("--exact on an estimator needs --bounds and --classes: the domain's public facts")
        features = len(bounds)
        pair_list = _estimator_pairs(bounds, classes, records, relation, epsilon)
        domain = (f"every dataset of at most {records} records, features at the ends of the bounds "
                  f"{[tuple(b) for b in bounds]}, labels {list(classes)}")
        fit = _caller(target, params)

        def call(d):
            return fit(_arrays(d, features))

        _check_methods(lambda: target(**params), *_arrays(max((d for p in pair_list for d in p), key=len), features))
    else:
        if pairs:
            pair_list = [(p.d0, p.d1) for p in pairs]
            domain = f"the {len(pair_list)} pairs given (--pairs)"
        else:
            if classes is None:
                raise ValueError("--exact on a mechanism needs --classes (the values one record takes) or --pairs")
            datasets = [t for n in range(records + 1) for t in itertools.product(list(classes), repeat=n)]
            pair_list = _ordered_neighbours(datasets, relation)
            domain = f"every tuple of at most {records} records with values {list(classes)}"

        call = _caller(target, params)

    explored, per_pair = {}, []
    lo, hi, delta = 0.0, 0.0, 0.0
    worst_lo = worst_hi = release = ""
    reasons = []
    every, wall = max(1, len(pair_list) // 10), time.perf_counter()
    for i, (d0, d1) in enumerate(pair_list):
        if i and i % every == 0 and len(pair_list) >= 100:
            progress.step(f"exact: {i:,} of {len(pair_list):,} neighbouring pairs, {len(explored):,} datasets explored",
                          done=i, total=len(pair_list), since=wall)
        for d in (d0, d1):
            key = repr(d)
            if key not in explored:
                explored[key] = explore(call(d), **kw)
        res = pair_loss(explored[repr(d0)], explored[repr(d1)])
        per_pair.append((d0, d1, res))
        if res.lower > lo:
            lo, worst_lo, release = res.lower, f"{_show(d0)} vs {_show(d1)}", _show_release(res.release)
        if res.upper > hi or not worst_hi:
            hi, worst_hi = res.upper, f"{_show(d0)} vs {_show(d1)}"
        delta = max(delta, res.delta)
        if res.why and res.why not in reasons:
            reasons.append(res.why)
    seconds = time.process_time() - start
    site = next((e.concretised for e in explored.values() if e.concretised), "")
    verdict, reason, note = _verdict(lo, hi, delta, epsilon, reasons, site)
    return ExactResult(lo, hi, verdict, reason, domain, len(pair_list), worst_lo, worst_hi, release, delta, note,
                       seconds, per_pair)


def _verdict(lo, hi, delta, epsilon, reasons, site=""):
    limit = epsilon * (1.0 + ROUNDING_SLACK)
    note = ""
    if lo > limit:
        return "refuted", f"the exact loss is at least {lo:.6g} > the claimed {epsilon:g}", note
    if hi <= limit and delta == 0.0:
        if hi > epsilon:
            note = (f"proved up to the rounding of the noise rate: the upper end exceeds the claim by "
                    f"{hi - epsilon:.3g} ({(hi - epsilon) / epsilon:.2g} relative)")
        return "proved", "every pair's exact loss is at most the claim on this domain", note
    if hi <= limit:
        return "undecided", ("the code turns noisy values into numbers (int, float, an index) or retries draws"
                             + (f", first at {site}" if site else "") + f", so its runs beyond the noise windows "
                             f"(probability at most {delta:.2g}) were not followed: proved ({hi:.6g}, {delta:.2g})"
                             " on this domain, not pure epsilon; keep the noisy values as NumPy returns them"), note
    if reasons:
        return "undecided", "the upper end is not below the claim: " + "; ".join(reasons), note
    return "undecided", f"the exact loss lies in [{lo:.6g}, {hi:.6g}], which holds the claim {epsilon:g}", note


def _show(d) -> str:
    if isinstance(d, tuple) and d and isinstance(d[0], tuple):
        return "{" + ", ".join("(" + ", ".join(f"{v:g}" if isinstance(v, float) else str(v) for v in r) + ")"
                               for r in d) + "}"
    return repr(d)


def _show_release(release) -> str:
    """A release as the code made it: a fitted model's attributes ``name=value``, numbers as numbers."""
    text = _readable(release)
    return text if len(text) <= 240 else text[:237] + "..."


def _readable(x) -> str:
    if isinstance(x, tuple) and len(x) == 2 and x[0] == "values of the kept forms":
        return "the kept noisy values at " + "(" + ", ".join(_readable(v) for v in x[1]) + \
            ") (any: that value does not matter)"
    if isinstance(x, float) and x.is_integer():
        return str(int(x))
    if isinstance(x, tuple) and len(x) == 2 and x[0] == "float":
        return x[1]
    if isinstance(x, tuple) and len(x) == 4 and x[0] == "array":
        return "[" + ", ".join(_readable(v) for v in x[3]) + "]"
    if isinstance(x, tuple) and len(x) == 2 and x[0] in ("tuple", "list") and isinstance(x[1], tuple):
        return ("(" if x[0] == "tuple" else "[") + ", ".join(_readable(v) for v in x[1]) + (")" if x[0] == "tuple"
                                                                                            else "]")
    if isinstance(x, tuple) and len(x) == 2 and isinstance(x[0], str) and isinstance(x[1], tuple) and \
            all(isinstance(a, tuple) and len(a) == 2 and isinstance(a[0], str) for a in x[1]):
        fitted = [(k, v) for k, v in x[1] if k.endswith("_")] or list(x[1])
        return ", ".join(f"{k}={_readable(v)}" for k, v in fitted)
    if isinstance(x, tuple):
        return "(" + ", ".join(_readable(v) for v in x) + ")"
    return repr(x)


def exact_row(subject, result: ExactResult) -> dict:
    """The report row of an exact check: the claim, ``exact_epsilon`` ``[lo, hi]`` and ``exact_verdict``."""
    from audit.gate.inputs import params_text

    verdict = {"proved": "pass", "refuted": "violation"}.get(result.verdict, "undecided")
    detail = (f"exact on this domain: {result.domain}; {result.pairs} neighbouring pairs; "
              f"{result.verdict}: {result.reason}" + (f"; {result.note}" if result.note else "")
              + (f"; worst pair {result.worst_lower}, release {result.release}" if result.worst_lower else ""))
    return {"id": subject.name, "subject": f"{subject.target} {params_text(subject.params)}",
            "neighbouring": subject.neighbours, "epsilon_claimed": subject.epsilon, "delta": subject.delta,
            "epsilon_lower": result.lower, "epsilon_point": result.upper, "n_samples": 0, "alpha": 0.0,
            "verdict": verdict, "expected": subject.expect, "expected_stated": bool(subject.expected_stated),
            "method": "exact", "exact_epsilon": [result.lower, result.upper], "exact_loss": [result.lower,
                                                                                              result.upper],
            "exact_verdict": result.verdict, "exact_domain": result.domain, "exact_pairs": result.pairs,
            "exact_delta": result.delta, "worst_pair": result.worst_lower or result.worst_upper,
            "worst_release": result.release, "decided_by": [], "detail": detail,
            "exact_cpu_s": round(result.seconds, 3)}
