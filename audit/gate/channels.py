"""The channels ``audit check`` reads an estimator through before any output is sampled.

Each channel applies the gate's one principle (*whatever an adversary could compute from the published model,
its pickle, its behaviour or the fit's side effects must be covered by the noise*) to one thing an adversary
sees, and returns a report with a ``verdict`` (``"violation"``, ``"clean"``, ``"inconclusive"`` or
``"skipped"``), its ``evidence`` and its ``remedy``:

==================  =====================================================================  =================
channel             what it reads                                                          module
==================  =====================================================================  =================
kept state          generators, states and seeds the fitted model or its pickle keeps      ``state.probe``
determinism         everything a fit leaves behind, by parts, its behaviour at the         ``determinism``
                    pair's records: the same on every fit of D, never on D'
round sizes         the same test one record either side of round sizes (10 to 10,000)     ``ladder``
switches            the same test where the fits' structure switches with the record count ``switches``
                    (any size, bisected), its pairs also candidates of the neighbour search
fresh processes     the same test across fresh processes, nothing seeded by the gate and   ``fresh``
                    the clock held fixed: where the noise comes from
==================  =====================================================================  =================

:func:`read_channels` runs them in that order; the determinism channels (:data:`TRACE_CHANNELS`, a list: a
new channel of that kind is one more entry, the orchestrator :mod:`audit.gate.run` unchanged) stop at the first
violation (each later one is the same test on other fits). Each has its share of the claim's alpha (:data:`DETERMINISM_SHARE`,
:data:`LADDER_SHARE`, :data:`SWITCH_SHARE`, :data:`FRESH_SHARE`); the sampled stages get the rest
(:mod:`audit.gate.run`).
"""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from audit.engine.runs import progress
from audit.gate.budget import scale_records
from audit.gate.determinism import MAX_FITS, probe_determinism
from audit.gate.fresh import idle_readings, probe_fresh
from audit.gate.ladder import ladder_pairs, round_sizes
from audit.gate.refusals import raises as _raises
from audit.gate.state.probe import probe_estimator
from audit.gate.switches import switch_scan
from audit.gate.verdict import ALPHA

__all__ = ["read_channels", "state_probe", "TRACE_CHANNELS", "DETERMINISM_SHARE", "FRESH_SHARE", "LADDER_SHARE",
           "SWITCH_SHARE", "CHANNELS_SHARE"]

#: the share of alpha kept for the determinism evidence (:mod:`audit.gate.determinism`)
DETERMINISM_SHARE = 0.02
#: the shares of alpha kept for the same evidence across fresh processes (:mod:`audit.gate.fresh`) and along the
#: ladder of round sizes (:mod:`audit.gate.ladder`)
FRESH_SHARE = 0.005
LADDER_SHARE = 0.0025
#: the share of alpha kept for the determinism test where the switch scan found structure that switches with the
#: record count (:mod:`audit.gate.switches`)
SWITCH_SHARE = 0.0025
#: the shares of every channel together: the sampled stages of :mod:`audit.gate.run` run at the rest of alpha (a
#: new channel adds its share here, the orchestrator unchanged)
CHANNELS_SHARE = DETERMINISM_SHARE + FRESH_SHARE + LADDER_SHARE + SWITCH_SHARE


def read_channels(plan: dict, subject, budget: str, seed: int, cpu) -> tuple:
    """``(state report or None, determinism report or None)``: the channels the subject's settings switch on
    (``state``, ``determinism``), in the order of the module docstring; ``cpu`` gets a lap for each."""
    probe = det = None
    if subject.state != "off":
        probe = state_probe(plan, subject)
        if probe.verdict == "violation":
            progress.step("FOUND kept state (certain, from one fit per dataset): " + probe.evidence)
        cpu.lap("state probe")
    if subject.determinism != "off":
        for read in TRACE_CHANNELS:
            det = read(plan, subject, budget, seed, det)
            if det.verdict == "violation":
                break
    return probe, det


def _accepted(plan: dict, pairs) -> list:
    """The pairs whose two datasets ``fit`` accepts (:func:`audit.gate.refusals.raises`)."""
    mech = plan["mechanism"]
    return [p for p in pairs if _raises(mech, p.d0) is None and _raises(mech, p.d1) is None]


def state_probe(plan: dict, subject: Subject):
    """The state probe on the base dataset and the first audited pair that ``fit`` accepts on both sides; a kept
    seed that does not tell that pair apart is measured on the first other accepted pair it does."""
    accepted = _accepted(plan, plan["fixed"] + plan["candidates"])
    pair = (accepted[0].d0, accepted[0].d1) if accepted else None
    others = [(p.description, (p.d0, p.d1)) for p in accepted[1:]]
    return probe_estimator(plan["factory"], *plan["base"], pair=pair, others=others, epsilon=subject.epsilon,
                           delta=subject.delta, alpha=ALPHA,
                           fresh=lambda inputs, base: idle_readings(subject.target, subject.params, inputs, base))


def _trace(plan: dict, subject: Subject, budget: str, seed: int, pairs, share: float, **options):
    """:func:`audit.gate.determinism.probe_determinism` on ``pairs`` at ``share`` of the claim's alpha, fitting the
    subject as it ships (no injected seed)."""
    return probe_determinism(plan["factory"], pairs, grid=plan["mechanism"].grid, classes=plan["classes"],
                             epsilon=subject.epsilon, delta=subject.delta, alpha=ALPHA * share,
                             relation=subject.neighbours, max_fits=MAX_FITS.get(budget, MAX_FITS["quick"]),
                             refusals=plan["exceptions"] == "fail", progress=progress.step, seed=seed, **options)


def _joined(det, found, where: str = ""):
    """``found`` when it is a violation (it decides; ``det``'s summary among its notes), else ``det`` with
    ``found``'s summary among its notes, inconclusive when ``found`` is and ``det`` was clean."""
    if found.verdict == "violation":
        found.notes.append(det.summary())
        return found
    det.notes.append(where + found.summary())
    if found.verdict == "inconclusive" and det.verdict == "clean":
        det.verdict = "inconclusive"
    return det


def _determinism_probe(plan: dict, subject: Subject, budget: str, seed: int, det=None):
    """The determinism evidence on the audited pairs."""
    return _trace(plan, subject, budget, seed, _shaped_pairs(plan), DETERMINISM_SHARE)


def _ladder_probe(plan: dict, subject: Subject, budget: str, seed: int, det):
    """The determinism test one record either side of round sizes (:mod:`audit.gate.ladder`), up to the scale
    family's largest size (:func:`_joined` with ``det``)."""
    largest = scale_records(subject, budget)
    pairs = ladder_pairs(plan["bounds"], plan["classes"], subject.neighbours, largest)
    found = _trace(plan, subject, budget, seed, pairs, LADDER_SHARE, screen_pairs=len(pairs))
    return _joined(det, found, f"at round sizes ({len(pairs)} pairs one record either side of 10 to "
                               f"{max(round_sizes(largest), default=0):,} records): ")


def _switch_probe(plan: dict, subject: Subject, budget: str, seed: int, det):
    """The switch scan (:mod:`audit.gate.switches`) up to the scale family's largest size: its pairs join the
    neighbour search's candidates (a switch of the noise law is found by the outputs) and are given to the
    determinism test (:func:`_joined` with ``det``)."""
    mech = plan["mechanism"]
    scan = switch_scan(plan["factory"], plan["bounds"], plan["classes"], grid=mech.grid,
                       relation=subject.neighbours, n_max=scale_records(subject, budget), budget=budget, seed=seed,
                       accepts=lambda data: _raises(mech, data) is None, progress=progress.step)
    if subject.search and plan["candidates"]:
        plan["candidates"] = plan["candidates"] + scan.pairs
    if not scan.pairs:
        det.notes.append(scan.summary())
        return det
    found = _trace(plan, subject, budget, seed, scan.pairs, SWITCH_SHARE, screen_pairs=len(scan.pairs))
    return _joined(det, found, scan.summary() + ": ")


def _shaped_pairs(plan: dict) -> list:
    """The audited pairs (``fixed`` then ``candidates``), their records as 2-D float arrays."""
    d = len(plan["bounds"])

    def shaped(data):
        return np.asarray(data[0], dtype=float).reshape(-1, d), np.asarray(data[1])

    return [SimpleNamespace(d0=shaped(p.d0), d1=shaped(p.d1), description=p.description)
            for p in plan["fixed"] + plan["candidates"]]


def _fresh_probe(plan: dict, subject: Subject, budget: str, seed: int, det):
    """The determinism evidence across fresh processes (:mod:`audit.gate.fresh`) on the first two audited pairs
    that ``fit`` accepts on both sides (:func:`_joined` with ``det``)."""
    fresh = probe_fresh(subject.target, subject.params, _accepted(plan, _shaped_pairs(plan))[:2],
                        grid=plan["mechanism"].grid, classes=plan["classes"], epsilon=subject.epsilon,
                        delta=subject.delta, alpha=ALPHA * FRESH_SHARE)
    if fresh.verdict == "violation":
        progress.step("FOUND a value the same in every fresh process (fresh processes): " + fresh.evidence)
    return _joined(det, fresh)


#: the channels that look for a trace of the data no noise covers, in order: each is
#: ``read(plan, subject, budget, seed, so_far)`` and returns the report that decides (a violation) or ``so_far``
#: (None for the first) with its own summary among the notes; a new channel of this kind is one more entry here
TRACE_CHANNELS = (_determinism_probe, _ladder_probe, _switch_probe, _fresh_probe)
