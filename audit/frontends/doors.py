"""One engine behind every door: :func:`audit.assert_private` audits what ``python -m audit check`` audits.

An estimator wrapped by :func:`audit.learner_mechanism` is handed to the gate's own engine
(:func:`audit.gate.run.audit_subject`) with the claim, exactly as ``check`` and ``check --claims`` audit a class
named on the command line: everything the fitted model publishes (``release()``, the predictions on a grid
over the public domain, the numbers its pickle carries), the neighbour search, the scale family, the
floating-point, exception, kept-state and determinism probes, the growth of an inconclusive pass and the power statement,
with the same defaults. The pairs given in Python are added to the search (always audited, sharing alpha),
never a replacement for it. A plain mechanism ``m(data, rng)`` is audited on the pairs given, as
:func:`audit.audit_pairs` does, with the floating-point events on and the power statement of ``check``.

The public domain of an estimator (``bounds``, ``classes``) is the caller's; without them it is read from the
datasets of the pairs, which is not private (the result and any ``AssertionError`` say so).
"""
from __future__ import annotations

import functools
import inspect
from dataclasses import dataclass, field

import numpy as np

from reference.randomness import seeded_fits

__all__ = ["assert_private", "EstimatorFactory", "GateResult", "gate_assert"]


class EstimatorFactory:
    """A zero-argument estimator factory (a class, a ``functools.partial`` or any callable) as a gate subject:
    ``EstimatorFactory(make)(**params)`` is ``make(**params)``, with ``make``'s signature (so the gate passes
    ``random_state`` through it when ``make`` takes one) and a readable name in the report."""

    #: what tells :func:`audit.gate.run.plan_subject` that this callable makes estimators without parameters
    makes_estimators = True

    def __init__(self, make):
        if not callable(make):
            raise TypeError(f"make_estimator must be a class or a zero-argument callable, got {make!r}")
        self.make = make
        try:
            self.__signature__ = inspect.signature(make)
        except (TypeError, ValueError):
            self.__signature__ = inspect.Signature()

    def __call__(self, **params):
        return self.make(**params)

    def __str__(self) -> str:
        make, kw = self.make, {}
        if isinstance(make, functools.partial) and not make.args:
            make, kw = make.func, dict(make.keywords)
        name = f"{getattr(make, '__module__', '?')}:{getattr(make, '__qualname__', type(make).__name__)}"
        return name + (f"({', '.join(f'{k}={v!r}' for k, v in kw.items())})" if kw else "")

    __repr__ = __str__


@dataclass
class GateResult:
    """What :func:`audit.assert_private` found: the gate's claim row and its reading.

    ``verdict`` is ``"pass"``, ``"violation"`` or ``"inconclusive"`` (a pass this sample size could not have
    turned into a violation at 1.25 times the claim, failed only with ``strict_power=True``); ``power`` is
    ``"conclusive"`` or ``"inconclusive"`` for a pass; ``detail`` holds every piece of evidence and the power
    statement, as the ``check`` report does.
    """

    row: dict
    kind: str
    notes: list = field(default_factory=list)

    @property
    def verdict(self) -> str:
        return self.row["verdict"]

    @property
    def violation(self) -> bool:
        return self.row["verdict"] == "violation"

    @property
    def epsilon_lower(self) -> float:
        return float(self.row["epsilon_lower"])

    @property
    def epsilon_point(self) -> float:
        return float(self.row["epsilon_point"])

    @property
    def power(self) -> str | None:
        return self.row.get("power")

    @property
    def detectable_loss(self) -> float | None:
        return self.row.get("detectable_loss")

    @property
    def decided_by(self) -> list:
        return list(self.row.get("decided_by", []))

    @property
    def detail(self) -> str:
        return "; ".join([self.row["detail"]] + self.notes)

    def evidence(self) -> str:
        """The evidence and the power statement, as one text (the report's ``detail``)."""
        return self.detail


def _domain_from_pairs(pairs, bounds, classes):
    """``(bounds, classes, note)``: the caller's public domain, or (not private) the one the pairs' datasets span."""
    if bounds is not None and classes is not None:
        return bounds, classes, ""
    Xs, ys = [], []
    for p in pairs:
        for d in ((p.d0, p.d1) if hasattr(p, "d0") else tuple(p)[:2]):
            if not (isinstance(d, tuple) and len(d) == 2):
                raise ValueError(f"pairs: an estimator's datasets must be (X, y) tuples, got {d!r}; or give "
                                 "bounds= and classes=")
            X = np.asarray(d[0], dtype=float)
            if X.size:
                Xs.append(X.reshape(len(X), -1))
            ys.extend(np.asarray(d[1]).tolist())
    note = []
    if bounds is None:
        if not Xs:
            raise ValueError("bounds=None and the pairs hold no records to read them from: give bounds=[(low, high), "
                             "...] (the public domain of each feature)")
        X = np.vstack(Xs)
        lo, hi = X.min(axis=0), X.max(axis=0)
        if np.any(lo >= hi):
            j = int(np.flatnonzero(lo >= hi)[0])
            raise ValueError(f"bounds=None: feature {j} takes one value ({lo[j]:g}) in the pairs' datasets, so no "
                             "bounds can be read from them; give bounds=[(low, high), ...]")
        bounds = [(float(a), float(b)) for a, b in zip(lo, hi)]
        note.append("bounds")
    if classes is None:
        if not ys:
            raise ValueError("classes=None and the pairs hold no labels to read them from: give classes=[...]")
        classes = sorted(set(ys))
        note.append("classes")
    text = (f"{' and '.join(note)} read from the pairs' datasets ({bounds if 'bounds' in note else ''}"
            f"{'; ' if len(note) == 2 else ''}{classes if 'classes' in note else ''}): data, not a public domain, "
            "and not private; give bounds= and classes= (the public ones) to audit the claim as it ships")
    return bounds, classes, text


def _estimator_door(mechanism, pairs, claim, *, n_samples, seed, bounds, classes, strict_power, options):
    from audit.gate.run import Subject, audit_claim
    from audit.engine.runs.budget import current_budget

    options = dict(options)
    witnesses = options.pop("witnesses", None)
    pairs = list(pairs)
    bounds, classes, note = _domain_from_pairs(pairs, bounds, classes)
    factory = EstimatorFactory(mechanism.make_estimator)
    subject = Subject(name=str(factory), target=factory, epsilon=claim.epsilon, delta=claim.delta,
                      neighbours=claim.neighbouring, pairs=pairs or None, bounds=[tuple(b) for b in bounds],
                      classes=list(classes), n_samples=n_samples, strict_power=strict_power, **options)
    with seeded_fits():  # the auditor's fits are seeded (same seed, same result), as in `python -m audit check`
        row = audit_claim(subject, current_budget(), seed, witnesses=witnesses)
    return GateResult(row, "estimator", [note] if note else [])


def _mechanism_door(mechanism, pairs, claim, *, n_samples, alpha, seed, strict_power, float_probe_on):
    from audit.engine.estimation.estimate import audit_pairs
    from audit.engine.estimation.events import float_probe
    from audit.gate.run import power_reading

    with float_probe(float_probe_on):
        res = audit_pairs(mechanism, pairs, claim, n_samples=n_samples, alpha=alpha, seed=seed)
    row = res.claim_row(id=getattr(mechanism, "__qualname__", type(mechanism).__name__), subject="mechanism",
                        expected="pass", announce=False, power=False)
    extra = []
    if float_probe_on:
        extra.append("floating-point probe on (scalar outputs: sign, exponent, mantissa residues)")
    if res.violation:
        by_float = str(getattr(res.worst, "event", "")).startswith("float pattern")
        row["decided_by"] = ["float probe"] if by_float else ["outputs"]
        if by_float:
            extra.insert(0, "violation through the floating-point probe: the outputs of the two inputs lie on "
                            "different float lattices (Mironov 2012); the fix is noise on a public lattice "
                            "(reference.mechanisms: Laplace, TwoSidedGeometric); float_probe=False audits the "
                            "claim in real arithmetic instead")
    else:
        power_reading(row, extra, res.worst, claim.epsilon, claim.delta, strict_power,
                      hint="strict_power=True fails it")
    row["detail"] = "; ".join([row["detail"]] + extra)
    return GateResult(row, "mechanism")


def gate_assert(mechanism, pairs, epsilon: float = 1.0, delta: float = 0.0, *, n_samples: int | None = None,
                alpha: float = 0.05, seed: int = 0, neighbouring: str = "add-remove", bounds=None, classes=None,
                strict_power: bool = False, float_probe: bool = True, **options) -> GateResult:
    """The body of :func:`audit.assert_private` (documented there)."""
    from audit.gate.verdict import ALPHA
    from audit.engine.runs.budget import samples_for
    from audit.engine.estimation.estimate import Claim
    from audit.engine.estimation.learner import LearnerMechanism

    claim = Claim(epsilon=epsilon, delta=delta, neighbouring=neighbouring)
    n = samples_for() if n_samples is None else n_samples
    if not isinstance(strict_power, bool):
        raise ValueError(f"strict_power must be True or False, got {strict_power!r}")
    if isinstance(mechanism, LearnerMechanism):
        if alpha != ALPHA:
            raise ValueError(f"alpha: an estimator is audited by the gate at its false-alarm rate {ALPHA} "
                             f"(audit.gate.verdict.ALPHA), as `python -m audit check` does; got {alpha!r}")
        result = _estimator_door(mechanism, pairs, claim, n_samples=n, seed=seed, bounds=bounds, classes=classes,
                                 strict_power=strict_power, options={"float_probe": float_probe, **options})
    else:
        if bounds is not None or classes is not None or options:
            given = [k for k, v in (("bounds", bounds), ("classes", classes)) if v is not None] + sorted(options)
            raise ValueError(f"{', '.join(given)}: only for an estimator wrapped by audit.learner_mechanism; "
                             f"{type(mechanism).__name__} is a plain mechanism m(data, rng)")
        result = _mechanism_door(mechanism, pairs, claim, n_samples=n, alpha=alpha, seed=seed,
                                 strict_power=strict_power, float_probe_on=float_probe)
    if result.verdict != "pass":
        what = ("violated" if result.violation else
                "not shown: the audit did not finish (a safety cap cut its coverage: "
                + "; ".join(f"{c['stage']}: {c['cut']}" for c in result.row["coverage_cut"]) + ")"
                if result.row.get("finished") is False else
                "not shown: an inconclusive pass (strict_power=True)")
        decided = f" through {', '.join(result.decided_by)}" if result.decided_by else ""
        evidence = "\n".join(f"  - {part}" for part in str(result.detail).split("; ") if part.strip())
        raise AssertionError(  # the verdict on its first line, then the evidence one clause a line (pytest shows it)
            f"privacy claim ({epsilon:g}, {delta:g})-DP under {neighbouring} is {what}{decided}: epsilon_lower = "
            f"{result.epsilon_lower:.4g} {'>' if result.violation else '<='} {epsilon:g} at confidence "
            f"{1 - result.row['alpha'] if result.kind == 'mechanism' else 1 - ALPHA:g}.\nEvidence:\n{evidence}")
    return result


def assert_private(mechanism, pairs, epsilon: float = 1.0, delta: float = 0.0, *, n_samples: int | None = None,
                   alpha: float = 0.05, seed: int = 0, neighbouring: str = "add-remove", bounds=None, classes=None,
                   strict_power: bool = False, float_probe: bool = True, **options):
    """Audit a privacy claim and raise ``AssertionError`` with the evidence when it is violated.

    One engine behind every door (:mod:`audit.frontends.doors`): an estimator wrapped by
    :func:`audit.learner_mechanism` is audited by the gate of ``python -m audit check``, with its defaults:
    everything the fitted model publishes, the neighbour search, the scale family, the floating-point,
    exception and kept-state probes, the growth of an inconclusive pass and the power statement. ``pairs`` are
    added to the search (always audited), never a replacement for it. A plain mechanism ``m(data, rng)`` is
    audited on ``pairs`` (:func:`audit_pairs`) with the floating-point events on and the power statement.

    Parameters
    ----------
    mechanism : LearnerMechanism or callable
        ``learner_mechanism(factory)`` (its ``probe`` and ``output`` are not used: the gate reads everything
        the model publishes), or a mechanism ``m(data, rng)``.
    pairs : sequence of ``(d0, d1)`` or NeighbourPair
        Neighbouring inputs to audit (for an estimator, ``(X, y)`` datasets, e.g. ``add_remove_pairs``); may be
        empty for an estimator when ``bounds`` and ``classes`` are given.
    epsilon, delta : float
        The claim.
    n_samples : int, optional
        Outputs per input; default: the budget in force (``--dp-budget`` of the pytest plugin, or
        ``$DPTREE_AUDIT_BUDGET``; quick 20,000, standard 100,000, full 1,000,000).
    alpha : float, default 0.05
        False-alarm rate of the whole call: a claim that holds fails with probability at most ``alpha``. An
        estimator is audited at the gate's 0.05 (another value is an error).
    seed : int, default 0
        The same seed gives the same result.
    neighbouring : {"add-remove", "substitute"}
    bounds, classes : optional
        An estimator's public domain (``[(low, high), ...]`` per feature, the class labels); default: read from
        the pairs' datasets, which is not private (the result and the error say so).
    strict_power : bool, default False
        Fail an inconclusive pass (one this sample size could not have turned into a violation at 1.25 times
        the claim) too; otherwise it passes and ``result.power`` says ``"inconclusive"``.
    float_probe : bool, default True
        The floating-point events (``--no-float-probe`` of ``check`` is ``False``).
    **options
        For an estimator, the other fields of :class:`audit.gate.run.Subject` (``release``, ``search``,
        ``scale``, ``scale_records``, ``scale_seconds``, ``state``, ``exceptions``, ``grow``, ``grow_max``,
        ``exempt``, ``data``), as the
        command line's flags set them; and ``witnesses``, the witness store's folder or ``"off"``
        (:mod:`audit.gate.witnesses`; default ``$DP_AUDIT_WITNESSES``, else ``.dp-audit``), as ``--witnesses``.

    Returns
    -------
    audit.frontends.doors.GateResult
        ``verdict``, ``epsilon_lower``, ``power`` (``"conclusive"`` or ``"inconclusive"``), ``decided_by``,
        ``detail`` (the evidence and the power statement) and the gate's claim ``row``.

    Raises
    ------
    AssertionError
        The claim is violated (the message names the evidence, the pair, the event and its counts), or, with
        ``strict_power=True``, the pass is inconclusive.
    """
    return gate_assert(mechanism, pairs, epsilon, delta, n_samples=n_samples, alpha=alpha, seed=seed,
                       neighbouring=neighbouring, bounds=bounds, classes=classes, strict_power=strict_power,
                       float_probe=float_probe, **options)
