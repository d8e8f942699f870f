"""``audit check``: audit someone else's mechanism or estimator against a claim.

A subject is named ``MODULE:CALLABLE`` and resolved as follows:

* a class with ``fit`` (or a factory returning an object with ``fit``) is
  an estimator: each sample fits a fresh ``CALLABLE(**params)`` (``random_state``
  through the constructor when it takes one) on one of the neighbouring datasets
  and releases what :class:`audit.gate.outputs.EstimatorRelease` says (by default
  everything the fitted model publishes: ``release()``, ``predict`` and ``predict_proba``
  on a grid over the public domain, the fitted structure when recognised and every
  number its pickle carries, by attribute path; ``--release`` narrows it); an
  exception in ``fit`` is an outcome. Every real-valued coordinate gets the
  floating-point events too (``decided_by`` then lists ``"float probe"``).
  The pairs are found by the neighbour search of :mod:`audit.engine.search` (screened
  on a pilot, the best confirmed on fresh samples) plus the user's ``--pairs``;
* any other class, or a function given ``params``, is a factory:
  ``CALLABLE(**params)`` must return a mechanism ``m(data, rng)``;
* a function without ``params`` is the mechanism itself.

The neighbouring inputs come from ``data``:

* for estimators, a base dataset (``builtin:blobs`` by default, or
  ``builtin:iris|wine|breast_cancer``, or ``PATH.csv`` whose last column is
  the label) from which add/remove or substitute pairs are built
  (:mod:`audit.engine.estimation.neighbours`);
* for mechanisms, ``scalar`` (answers 0 and 1, the default) or ``query:N``
  (the query-vector patterns of length N), or ``--pairs MODULE:FUNCTION``;
  scalar outputs (and the real-valued coordinates of vector outputs) also get the
  floating-point events of :mod:`audit.engine.estimation.events`.

A pass carries a power statement (:mod:`audit.engine.estimation.power`).
"""
from __future__ import annotations

import inspect
import math
import time
import warnings
from dataclasses import dataclass, field

from audit.engine.runs import checkpoint, progress
from audit.engine.runs.budget import SAMPLES
from audit.engine.estimation.estimate import Claim, audit_pairs
from audit.engine.estimation.events import coordinates, float_probe
from audit.engine.estimation.sequential import LOOKS, SPEND, sequential_audit
from audit.gate.inputs import (BUILTIN_ROWS, CheckError, domain, load_dataset, mechanism_pairs, params_text,
                                parse_bounds, parse_classes, parse_params, parse_release, resolve,
                                disagreeing_facts)
from audit.gate.inputs import user_pairs as _user_pairs
from audit.gate.refusals import (EXEMPT_DEFAULT, EXEMPT_FIRST, EXEMPT_FITS, evidence_of, exceptions_mode,
                                  exempt_list)
from audit.gate.refusals import (certain_refusals as _certain_refusals, crash_text as _crash_text,
                                  exception_verdict as _exception_verdict, exempt_text as _exempt_text,
                                  raises as _raises, ExemptionRefuted, settle_exemptions)
from audit.gate.budget import (GROW_FACTOR, GROW_MAX, GROW_SECONDS, GROW_SHARE, GROW_STAGES, SCALE_CONFIRM_RECORDS,
                               SCALE_RECORDS, SCALE_SECONDS, CpuLaps, coverage_cut, grow_limit, scale_records)
from audit.gate.budget import confirmed_rows as _confirmed_rows, grow as _grow, grow_text as _grow_text
from audit.gate.verdict import AFTER_FINDING, ALPHA, certain_finding, decided_row
from audit.gate.verdict import (float_verdict as _float_verdict, state_verdict as _state_verdict,
                                subject_error_row as _subject_error_row)
from audit.engine.estimation.neighbours import add_remove_pairs, substitute_pairs
from audit.gate.outcome import SubjectExit
from audit.engine.estimation.power import POWER_MARGIN, conclusive_n, power_statement
from audit.gate.outputs import EstimatorRelease
from audit.results.report import Report
from audit.gate.scale import confirm_samples, scale_pairs
from audit.gate.search import BOUND, candidate_pairs, data_key, search_and_confirm
from audit.gate.channels import CHANNELS_SHARE, read_channels
from audit.gate.determinism import join_verdict
from audit.gate.diagnosis import diagnose

__all__ = ["Subject", "CheckError", "resolve", "build", "audit_subject", "audit_claim", "check_report", "parse_params",
           "params_text", "parse_bounds", "parse_classes", "parse_release", "load_dataset", "mechanism_pairs",
           "exceptions_mode", "exempt_list", "EXEMPT_DEFAULT", "EXEMPT_FITS", "BUILTIN_ROWS",
           # the budgets in counts (audit.gate.budget), named here too
           "GROW_SHARE", "GROW_STAGES", "GROW_FACTOR", "GROW_MAX", "GROW_SECONDS", "SCALE_RECORDS",
           "SCALE_CONFIRM_RECORDS", "SCALE_SECONDS", "grow_limit", "scale_records", "power_reading", "float_or_outputs"]

#: screened candidate pairs confirmed on fresh samples (alpha is shared over these only)
CONFIRM = 2


@dataclass
class Subject:
    """One thing to audit and the claim made for it."""

    name: str
    #: ``MODULE:CALLABLE``, or the callable itself (:class:`audit.frontends.doors.EstimatorFactory` from Python)
    target: object
    epsilon: float
    delta: float = 0.0
    neighbours: str = "add-remove"
    params: dict = field(default_factory=dict)
    data: str | None = None
    expect: str = "pass"
    note: str = ""
    #: ``MODULE:FUNCTION`` returning extra pairs, or the pairs themselves (always audited)
    pairs: object = None
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
    #: estimators: the scale family of the neighbour search (:mod:`audit.gate.scale`)
    scale: bool = True
    #: safety cap (wall seconds) on choosing the scale family's pair (default: the budget's, :data:`SCALE_SECONDS`);
    #: the work itself is fixed by counts (:data:`SCALE_RECORDS`, :data:`SCALE_CONFIRM_RECORDS`)
    scale_seconds: float | None = None
    #: the largest size the scale family reaches (default: the budget's, :data:`SCALE_RECORDS`)
    scale_records: int | None = None
    #: estimators: random state kept after fit (:mod:`audit.gate.state.probe`): "fail", "warn" or "off"
    state: str = "fail"
    #: estimators: values the same on every fit as shipped of D and different on D' (:mod:`audit.gate.determinism`):
    #: "fail", "warn" or "off"
    determinism: str = "fail"
    #: once kept state or determinism has decided the claim (a certain violation): "stop" (skip the sampled
    #: stages; fail fast) or "sample" (run them too, to measure every other leak), :data:`AFTER_FINDING`
    after_finding: str = "stop"
    #: an inconclusive pass (its detectable loss above the claim) fails the gate
    strict_power: bool = False
    #: an inconclusive pass grows its budget on the winning pair (:data:`GROW_STAGES` stages, each at most
    #: :data:`GROW_MAX` outputs per input) until it is conclusive, with :data:`GROW_SHARE` of alpha kept for it
    grow: bool = True
    #: the most outputs per input a growth stage may draw (default: the budget's, :data:`GROW_MAX`)
    grow_max: int | None = None
    #: refusals that do not decide (:data:`EXEMPT_DEFAULT` per exceptions mode when None): "empty" (no records),
    #: "one-class" (a single label) or exception type names; a pair one of whose datasets ``fit`` refuses so on
    #: every one of the audit's draws per input (at least :data:`EXEMPT_FITS` fits) lies outside the claim's public domain and is reported, not audited
    exempt: list | None = None
    #: whether the user stated the expected verdict (a claims file's ``expected``); without it the verdict is
    #: read as the gate's answer, never as "expected" or "MISMATCH"
    expected_stated: bool = False


def _is_estimator(obj, params) -> bool:
    """A class with ``fit``, or a factory whose product has ``fit``."""
    if inspect.isclass(obj):
        return callable(getattr(obj, "fit", None))
    if getattr(obj, "makes_estimators", False):  # a factory given in Python (audit.frontends.doors.EstimatorFactory)
        return True
    if not params:
        return False
    try:
        return callable(getattr(obj(**params), "fit", None))
    except Exception:
        return False


def build(subject: Subject):
    """``(mechanism, pairs, kind)`` for a subject: the pairs the plain (search-free) audit would use."""
    plan = plan_subject(subject)
    return plan["mechanism"], plan["fixed"] + plan["candidates"], plan["kind"]


def plan_subject(subject: Subject, draws: int = EXEMPT_FITS, not_exempt=()) -> dict:
    """Everything needed to audit a subject: its mechanism, kind, candidate and fixed pairs, notes. ``draws``:
    the outputs per input the audit takes, the fits on which a refusal must hold to be exempt; the plan's
    exemptions are judged at the first look (:data:`audit.gate.refusals.EXEMPT_FIRST` fits) and settled by
    :func:`audit.gate.refusals.settle_refusals`. ``not_exempt``: keys of datasets whose refusal is known not to
    be certain."""
    obj = resolve(subject.target)
    notes = []
    if _is_estimator(obj, subject.params):
        X, y, bounds, classes, notes = domain(subject)
        try:
            made = obj(**subject.params)
        except TypeError as exc:
            raise CheckError(f"{subject.target}(**params) failed: {exc}") from exc
        for note in disagreeing_facts(made, bounds, classes):
            notes.append(note)
            progress.step(note)
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
        cuts = []
        certain = _certain_refusals(mech, datasets, exempt, min(draws, EXEMPT_FIRST), cuts, not_exempt) \
            if errors and exempt else {}
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
                "exempt": exempt, "cuts": cuts, "refusals": certain, "outside": outside, "draws": draws}
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


#: the remedy of a violation through the floating-point probe alone
FLOAT_REMEDY = ("remedy: add the noise on a public lattice with exact integer sampling, as the lattice mechanisms "
                "reference.mechanisms.Laplace and TwoSidedGeometric do, so that both inputs' outputs lie on one lattice")


def power_reading(row: dict, extra: list, worst, epsilon: float, delta: float, strict_power: bool,
                  hint: str = "--strict-power fails the gate on it") -> None:
    """A pass's power statement joins its row: the loss it would have caught with probability 0.9 (``power``
    ``"conclusive"`` when that is at most the claim plus :data:`audit.engine.estimation.power.POWER_MARGIN`), and for an
    inconclusive pass the outputs per input that would make it conclusive; ``strict_power`` turns such a pass
    into the verdict ``"inconclusive"``. ``hint`` names the switch that does it (said when it is off)."""
    loss, text = power_statement(worst, claim=epsilon, delta=delta)
    row["detectable_loss"] = None if math.isinf(loss) else loss
    target = epsilon * (1.0 + POWER_MARGIN)
    row["power"] = "conclusive" if loss <= target else "inconclusive"
    extra.append(text)
    if row["power"] == "inconclusive":
        n_more = conclusive_n(worst, claim=epsilon, delta=delta, target=target)
        row["n_conclusive"] = n_more
        extra.insert(0, f"inconclusive pass: this audit could not have seen a loss of {target:.3g} (the claim "
                        f"plus {POWER_MARGIN:.0%}) with probability 0.9 "
                        + (f"(only {loss:.3g} or more); " if math.isfinite(loss) else "(no power); ")
                        + (f"about {n_more:,} outputs per input on the winning pair would make it conclusive"
                           if n_more else "no sample size makes this event conclusive")
                        + (f"; {hint}" if not strict_power else ""))
        if strict_power:
            row["verdict"] = "inconclusive"


def float_or_outputs(row, extra, mech, pair, claim, n, seed, names) -> None:
    """Credit the floating-point probe only where the two outputs' supports overlap in exact arithmetic.

    The winning pair is audited again with the floating-point events off (real arithmetic: thresholds and
    value sets only), at up to a quarter of the outputs per input, group-sequentially
    (:func:`audit.engine.estimation.sequential.sequential_audit`: it stops at the first look that refutes the
    claim, or once no look could). When that too refutes the claim, the outputs differ
    beyond their float lattices (disjoint supports in exact arithmetic, e.g. multiples of 1/n against multiples
    of 1/(n + 1)): the evidence is ``"outputs"``, the float probe second. Otherwise the float probe alone
    decided, and the finding ends with its remedy, the lattice mechanisms. The re-audit names the evidence; it
    does not decide the verdict, so its error level is not charged to the claim's alpha.
    """
    with float_probe(False), coordinates(names):
        real = sequential_audit(mech, [pair], claim, n_samples=max(2_000, n // 4), alpha=ALPHA, seed=seed + 104_729,
                                label="re-audited in real arithmetic", bound=BOUND)
    m = real.n_samples
    row["real_arithmetic"] = {"violation": bool(real.violation), "epsilon_lower": float(real.epsilon_lower),
                              "n_samples": m, "event": str(getattr(real.worst, "event", ""))}
    rest = [k for k in row["decided_by"] if k not in ("float probe", "outputs")]
    drop = ("violation through the outputs", "violation through the floating-point probe")
    if real.violation:
        row["decided_by"] = ["outputs", "float probe"] + rest
        extra[:] = [e for e in extra if not e.startswith(drop)]
        extra.insert(0, f"violation through the outputs: with the floating-point events off (real arithmetic) the "
                        f"two inputs' outputs are still told apart (ε ≥ {real.epsilon_lower:.3g} at {m:,} outputs per "
                        f"input on {pair.description}, event [{row['real_arithmetic']['event']}]), so their "
                        "supports differ in exact arithmetic, not only on the float lattice; the float-pattern "
                        "events separate them too; remedy: the released values must not reveal the data beyond "
                        "the noise (no exact statistic, e.g. a count divided by the exact record count)")
    else:
        extra[:] = [e for e in extra if e != "violation through the outputs"]
        extra.append(FLOAT_REMEDY + f" (in real arithmetic, at {m:,} outputs per input, the claim held: ε ≥ "
                                    f"{real.epsilon_lower:.3g})")


def _sampled(subject: Subject, budget: str, seed: int, plan: dict, claim: Claim, det, cpu, extra: list,
             cuts: list, decided: str = "") -> tuple[dict, list | None]:
    """The sampled stages of :func:`audit_subject` (the scale family, the neighbour search and its confirmation,
    growth, the floating-point re-audit, the power reading): ``(row, tried)``, the claim row and the pairs
    tried by the search (None without a search). ``extra`` and ``cuts`` gain their notes. A claim neither
    violated here nor ``decided`` by a probe rests on the plan's exemptions, so they are settled
    (:func:`audit.gate.refusals.settle_exemptions`, which raises when one is not certain)."""
    n = subject.n_samples or SAMPLES[budget]
    mech, kind = plan["mechanism"], plan["kind"]
    names = mech.coordinates() if callable(getattr(mech, "coordinates", None)) else None
    alpha0 = ALPHA * (1.0 - (GROW_SHARE if subject.grow else 0.0)
                      - (CHANNELS_SHARE if det is not None else 0.0))
    grow_rows, looks = [], {}
    with checkpoint.scope(subject.name), float_probe(subject.float_probe), \
            coordinates(names):
        try:
            if plan["candidates"] and subject.search and kind == "estimator":
                scale = None
                if subject.scale:
                    cap_s = subject.scale_seconds or SCALE_SECONDS.get(budget, SCALE_SECONDS["quick"])
                    grown = scale_pairs(mech, plan["bounds"], plan["classes"], subject.neighbours,
                                        n_max=scale_records(subject, budget), seed=seed, delta=subject.delta,
                                        max_seconds=cap_s)
                    best = grown.best()
                    if grown.cut:
                        cuts.append({"stage": "scale family", "cut": grown.cut})
                    if best is not None:
                        scale = (best, confirm_samples(best, SCALE_CONFIRM_RECORDS.get(
                            budget, SCALE_CONFIRM_RECORDS["quick"]), n))
                    extra.append(grown.summary() + (f"; confirmed at {scale[1]:,} outputs per input" if scale else
                                                    "; no pair to confirm"))
                    cpu.lap("scale family (choosing its pair)")
                crash_ids = {id(p) for p in plan["crash_pairs"]}
                also = (lambda p: id(p) not in crash_ids) if crash_ids and plan["exceptions"] != "off" else None
                found = search_and_confirm(mech, plan["candidates"], claim, n_pilot=pilot_samples(n), n_samples=n,
                                           alpha=alpha0, seed=seed, confirm=CONFIRM, fixed=plan["fixed"], scale=scale,
                                           also=also)
                res = found.decisive
                looks = {what: [lk.to_dict() for lk in r.looks] for what, r in
                         (("pairs", found.audit), ("scale family", found.scale_audit)) if getattr(r, "looks", None)}
                extra.append("search: " + found.summary())
                tried = found.tried
                audited = found.pairs if res is found.audit else [scale[0]]
                confirmed = _confirmed_rows(found.pairs, found.audit.results)
                if found.scale_audit is not None:
                    confirmed += _confirmed_rows([scale[0]], found.scale_audit.results)
            else:
                audited = plan["fixed"] + plan["candidates"]
                res = audit_pairs(mech, audited, claim, n_samples=n, alpha=alpha0, seed=seed)
                tried = None
                confirmed = _confirmed_rows(audited, res.results)
            cpu.lap("search and confirmation" if tried is not None else "audit")
            # the pairs the witness store keeps (audit.gate.witnesses), largest lower bound first: every pair the
            # first audit confirmed (growth goes on with the winning one only); popped before the report
            witness_pairs = sorted(((p, float(r.epsilon_lower)) for p, r in zip(audited, res.results)),
                                   key=lambda t: -t[1])
            futile = bool(getattr(res, "looks", None)) and res.looks[-1].stop == "futile"
            if subject.grow and not res.violation and audited and not futile:  # futile: more outputs cannot refute
                res, audited, grown = _grow(mech, res, audited, claim, subject, n, seed, budget, kind)
                if grown:
                    confirmed += [s["row"] for s in grown if s["used"]]
                    extra.append(_grow_text(grown))
                    # no times in the report: the same seed gives the same report.json (tests/test_determinism.py)
                    grow_rows = [{k: v for k, v in s.items() if k != "row"} for s in grown]
                    cuts += [{"stage": "growth", "cut": f"stage of {s['n']:,} outputs per input not drawn ("
                                                        f"{s['reason']})"} for s in grown if s.get("cut")]
                cpu.lap("growth")
        except ValueError as exc:
            raise CheckError(f"auditing {subject.name!r} ({subject.target}, a {kind}) failed: {exc}") from exc
    # announced when it joins the report, complete (its console line says what decided it)
    row = res.claim_row(id=subject.name, subject=f"{subject.target} {params_text(subject.params)} ({kind})",
                        expected=subject.expect, announce=False, power=False)
    row["expected_stated"] = bool(subject.expected_stated)
    row["pairs_confirmed"] = confirmed
    if looks:
        row["looks"] = looks
    if grow_rows:
        row["grown"] = grow_rows
    if kind == "estimator" and subject.float_probe:
        extra.append("floating-point probe on (each real-valued coordinate that varies: sign, exponent, mantissa "
                     "residues)")
    if kind == "mechanism" and subject.float_probe:
        extra.append("floating-point probe on (scalar outputs: sign, exponent, mantissa residues)")
        if res.violation and str(getattr(res.worst, "event", "")).startswith("float pattern"):
            row["decided_by"] = ["float probe"]
            extra.insert(0, "violation through the floating-point probe: the outputs of the two inputs lie on "
                            "different float lattices (Mironov 2012), so some bit patterns occur from one input "
                            "only; --no-float-probe audits the claim in real arithmetic instead")
        elif res.violation:
            row["decided_by"] = ["outputs"]
    if kind == "estimator" and not res.violation and not decided and plan.get("refusals"):
        settle_exemptions(plan, cuts)
        cpu.lap("refusal exemption (settled)")
    if kind == "estimator" and plan["exceptions"] != "off":
        _exception_verdict(row, extra, plan, res, audited, confirmed)
    if kind == "estimator" and res.violation and not row.get("decided_by"):  # exceptions off: the event says
        row["decided_by"] = evidence_of(str(getattr(res.worst, "event", "")), getattr(mech, "names", None))
    if kind == "estimator" and subject.float_probe and res.violation and "exception" not in row.get("decided_by", []):
        _float_verdict(row, extra, str(getattr(res.worst, "event", "")))
    if res.violation and subject.float_probe and row.get("decided_by", [None])[0] == "float probe" and audited:
        float_or_outputs(row, extra, mech, audited[min(res.worst_pair, len(audited) - 1)], claim, n, seed, names)
        cpu.lap("float re-audit")
        if row["decided_by"][0] == "float probe":  # the float lattice alone: what leaked and the remedy, on the console
            for line in extra:
                if line.startswith(("violation through the floating-point probe", FLOAT_REMEDY)):
                    progress.step(line)
    if res.violation and audited and "outputs" in row.get("decided_by", []):
        diagnosis = diagnose(mech, audited[min(res.worst_pair, len(audited) - 1)], subject.epsilon,
                             float(res.epsilon_lower), seed)
        if diagnosis is not None:
            row["diagnosis"] = {k: v for k, v in diagnosis.items() if k != "lines"}  # its text leads the detail
            for line in diagnosis["lines"]:
                progress.step(line)
        cpu.lap("diagnosis")
    if not res.violation:
        power_reading(row, extra, res.worst, subject.epsilon, subject.delta, subject.strict_power)
    row["winning_pair"] = res.worst_description
    row["_witness_pairs"] = witness_pairs
    return row, tried


def audit_subject(subject: Subject, budget: str, seed: int, stage_cpu: dict | None = None,
                  not_exempt: dict | None = None) -> dict:
    """Audit one subject; return its claim row (:func:`_audit_subject`). A warning the subject raises is shown
    once, not once per fit: the audit fits it tens of thousands of times."""
    shown, show = set(), warnings.showwarning

    def once(message, category, *where, **more):
        # Python's own "once" forgets what it showed whenever a filter changes, as the probes' captures do
        if (category, str(message)) not in shown:
            shown.add((category, str(message)))
            show(message, category, *where, **more)

    with warnings.catch_warnings():
        warnings.simplefilter("always")
        for quiet in (DeprecationWarning, PendingDeprecationWarning, ImportWarning, ResourceWarning):
            warnings.simplefilter("ignore", quiet)  # as Python's own defaults have them
        warnings.showwarning = once
        return _audit_subject(subject, budget, seed, stage_cpu, not_exempt)


def _audit_subject(subject: Subject, budget: str, seed: int, stage_cpu: dict | None = None,
                   not_exempt: dict | None = None) -> dict:
    """Audit one subject; return its claim row.

    The one-fit probes come first and a certain finding is printed at once (fail fast): the state probe
    (:mod:`audit.gate.state.probe`), the determinism probe and the refusals seen while calibrating. A violation
    of the first two ends the audit there unless ``after_finding`` is ``"sample"``; otherwise the outputs are
    sampled (:func:`_sampled`).
    Every stage's work is fixed by the budget and the seed (counts, never the clock); a safety cap that stops
    a stage is named in ``coverage_cut`` and leaves the audit unfinished (never a pass: exit status 3). ``stage_cpu``, when given, is
    filled with the CPU seconds of each stage. An exemption judged at its first look and refuted when settled
    (:class:`audit.gate.refusals.ExemptionRefuted`) makes the claim audited again without it (``not_exempt``:
    dataset key -> what was seen).
    """
    if subject.after_finding not in AFTER_FINDING:
        raise CheckError(f"after_finding must be one of {', '.join(AFTER_FINDING)}, got {subject.after_finding!r}")
    cpu = CpuLaps(stage_cpu)
    n = subject.n_samples or SAMPLES[budget]
    plan = plan_subject(subject, draws=n, not_exempt=not_exempt or {})
    if not_exempt:
        plan["notes"] += list(not_exempt.values())
    cuts = list(plan.get("cuts", ()))
    cpu.lap("plan (calibration, refusals)")
    mech, kind = plan["mechanism"], plan["kind"]
    claim = Claim(subject.epsilon, subject.delta, subject.neighbours)
    extra = []
    probe = det = None
    if kind == "estimator":
        probe, det = read_channels(plan, subject, budget, seed, cpu)
    if kind == "estimator" and plan["crash_pairs"] and plan["exceptions"] != "off":
        progress.step("FOUND a refusal that separates a pair: " + _crash_text(mech, plan["crash_pairs"][0]))
    cpu.lap("determinism")
    decided = certain_finding(probe, det, subject)
    if decided and subject.after_finding == "stop":
        row, tried = decided_row(subject, kind, decided, extra), None
    else:
        try:
            row, tried = _sampled(subject, budget, seed, plan, claim, det, cpu, extra, cuts, decided)
        except ExemptionRefuted as refuted:
            return audit_subject(subject, budget, seed, stage_cpu, {**(not_exempt or {}), **refuted.notes})
    if probe is not None:
        _state_verdict(row, extra, probe, subject)
    if det is not None:
        join_verdict(row, extra, det, subject.determinism)
    if probe is not None and probe.cut:
        cuts.append({"stage": "state probe", "cut": probe.cut})
    if cuts:
        coverage_cut(row, extra, cuts, subject)
    if tried is not None:
        row["pairs_tried"] = [{"pair": d, "pilot_epsilon_lower": lo, "pilot_epsilon_point": pt}
                              for d, lo, pt in tried]
    lead = [row["diagnosis"]["text"]] if "diagnosis" in row else []
    row["detail"] = "; ".join(lead + [row["detail"]] + plan["notes"] + extra)
    if subject.note:
        row["detail"] = f"{subject.note} — {row['detail']}"
    return row


def audit_claim(subject: Subject, budget: str, seed: int, stage_cpu: dict | None = None,
                witnesses: str | None = None) -> dict:
    """:func:`audit_subject` behind the witness store (:mod:`audit.gate.witnesses`): ``witnesses`` is the store's
    folder or ``"off"`` (default: ``$DP_AUDIT_WITNESSES``, else ``.dp-audit``). Every door (``check``, a claims
    file, ``assert_private`` and the pytest plugin) audits a claim through here."""
    from audit.gate.witnesses import audit_with_witnesses, store_path

    folder = store_path(witnesses)
    if folder is None:
        row = audit_subject(subject, budget, seed, stage_cpu=stage_cpu)
        row.pop("_witness_pairs", None)
        return row
    return audit_with_witnesses(subject, budget, seed, folder, audit_subject, plan_subject,
                                n_samples=subject.n_samples or SAMPLES[budget], alpha=ALPHA, stage_cpu=stage_cpu)


def check_report(subjects: list[Subject], budget: str, seed: int, name: str, witnesses: str | None = None) -> Report:
    start = time.perf_counter()
    report = Report(name, budget, seed, title="Privacy claims of outside code, audited by `python -m audit check`.")
    for k, subject in enumerate(checkpoint.progress(subjects, desc="claims", unit="claim")):
        what = subject.name if subject.name == subject.target else f"{subject.name}: {subject.target}"
        progress.step(f"claim {k + 1}/{len(subjects)} {what}, claimed ε {subject.epsilon:g} ({subject.neighbours})",
                      done=k, total=len(subjects), since=start)
        stage_cpu = {}
        try:
            # every subject from the run's seed itself: its numbers do not depend on its place in a claims file
            # (the same subject gives the same bound from the command line and as the file's n-th subject)
            row = audit_claim(subject, budget, seed, stage_cpu=stage_cpu, witnesses=witnesses)
        except SubjectExit as exc:  # the next subjects are still audited; check exits 2
            row = _subject_error_row(subject, exc)
        report.claims.append(row)
        report.stage_cpu_s[row["id"]] = stage_cpu
    sizes = sorted({s.n_samples or SAMPLES[budget] for s in subjects})
    report.notes.append(f"{', '.join(f'{n:,}' for n in sizes)} outputs per input (20% pilot), alpha = {ALPHA} per claim "
                        "shared over its audited pairs and both directions: a claim that holds is flagged with "
                        "probability at most alpha. For estimators the audited pairs are the user's (--pairs) and "
                        f"the {CONFIRM} best of a neighbour search screened on separate pilot samples (a thirtieth "
                        "of the budget per dataset, at least 200, never counted: they begin the confirmation's pilot), "
                        "so the search does not raise that rate; they are "
                        f"confirmed group-sequentially, at {'/'.join(f'{x:g}' for x in LOOKS)} of the outputs per "
                        f"input, alpha spent {'/'.join(f'{x:.1%}' for x in SPEND)} over the looks, stopping at a "
                        "violation, when the pass is conclusive (on its worst pair's event, as the row reads it), "
                        "or when no look could refute the claim with the events chosen (futile). Unless "
                        f"--no-grow, {GROW_SHARE:.0%} of alpha is kept for growing an inconclusive pass (the first "
                        f"audit runs at {ALPHA * (1 - GROW_SHARE):g}).")
    report.elapsed_s = time.perf_counter() - start
    return report
