"""Budgets of ``audit check`` in counts, never in seconds (issue 45 item 1): the growth of an inconclusive pass,
the scale family's reach and its confirmation, the safety caps that remain and the coverage cut they leave, and the
CPU seconds of each stage.

Each stage's work is fixed by the budget and the seed: the outputs per input of a growth stage
(:data:`GROW_MAX`), the largest size the scale family reaches (:data:`SCALE_RECORDS`) and the records fitted per
input to confirm its pair (:data:`SCALE_CONFIRM_RECORDS`). So the same seed gives the same report on a quiet
machine and on a loaded one. The time caps (:data:`GROW_SECONDS`, :data:`SCALE_SECONDS`, and those of the state
probe and the refusal fits) are safety nets, about ten times the expected; a stage one stops is named in the row's
``coverage_cut`` and on the console, and the audit then did not finish (:func:`coverage_cut`: exit status 3).
"""
from __future__ import annotations

import time

from audit.gate.inputs import CheckError
from audit.gate.search import BOUND
from audit.gate.verdict import ALPHA
from audit.engine.runs import progress
from audit.engine.runs.budget import SAMPLES
from audit.engine.estimation.estimate import AuditResult, audit_pairs, count_event
from audit.engine.estimation.power import POWER_MARGIN, conclusive_n, detectable_loss, power_statement


__all__ = ["GROW_SHARE", "GROW_STAGES", "GROW_FACTOR", "GROW_MAX", "GROW_SECONDS", "SCALE_RECORDS",
           "SCALE_CONFIRM_RECORDS", "SCALE_SECONDS", "grow_limit", "scale_records", "coverage_cut", "CpuLaps",
           "confirmed_rows", "grow", "grow_text"]

#: the share of alpha kept for growing an inconclusive pass (the first audit runs at the rest: Bonferroni over the
#: first audit and every growth stage, so a claim that holds is flagged with probability at most alpha overall)
GROW_SHARE = 0.2
#: growth stages at most, each drawing GROW_FACTOR times the outputs per input of the one before
GROW_STAGES = 2
GROW_FACTOR = 4
#: the most outputs per input a growth stage may draw, per budget: a count, so the same seed grows the same way on
#: any machine. A mechanism's outputs are cheap (vectorised); an estimator's are fits, so its growth never goes
#: beyond the budget's own outputs per input (it grows a pass run at fewer, ``--n-samples``)
GROW_MAX = {"mechanism": {"quick": 80_000, "standard": 1_600_000, "full": 16_000_000},
            "estimator": dict(SAMPLES)}
#: safety cap (wall seconds, about ten times the growth's expected time): past it no further stage starts, and
#: the report names the cut (the audit did not finish: exit status 3)
GROW_SECONDS = {"quick": 600.0, "standard": 3000.0, "full": 12000.0}
#: the largest size the scale family reaches, per budget (records; 1,000 times a power of two)
SCALE_RECORDS = {"quick": 16_000, "standard": 32_000, "full": 128_000}
#: records fitted per input when confirming the scale family's pair: its outputs per input are this divided by
#: the pair's size (at least 200, at most the budget's outputs per input), e.g. 1,500 at 16,000 records at quick
SCALE_CONFIRM_RECORDS = {"quick": 24_000_000, "standard": 128_000_000, "full": 1_280_000_000}
#: safety cap (wall seconds, about ten times the scale family's expected time) on choosing its pair, per budget
#: (``--scale-seconds``): past it no new size is drawn and the report names the patterns left out
SCALE_SECONDS = {"quick": 450.0, "standard": 2400.0, "full": 9000.0}


def confirmed_rows(pairs, results) -> list[dict]:
    """Every confirmed pair's bound and event (the report shows them all, not only the worst)."""
    return [{"pair": p.description, "epsilon_lower": float(r.epsilon_lower), "epsilon_point": float(r.epsilon_point),
             "event": str(r.event), "direction": r.direction,
             "counts": {k: int(v) for k, v in r.counts.items()}} for p, r in zip(pairs, results)]


def _conclusive(res, subject) -> bool:
    loss, _ = power_statement(res.worst, claim=subject.epsilon, delta=subject.delta)
    return loss <= subject.epsilon * (1.0 + POWER_MARGIN)


def grow_limit(subject: Subject, kind: str, budget: str) -> int:
    """The most outputs per input a growth stage may draw: the subject's ``grow_max``, else :data:`GROW_MAX`."""
    if subject.grow_max is not None:
        return int(subject.grow_max)
    table = GROW_MAX["estimator" if kind == "estimator" else "mechanism"]
    return table.get(budget, table["quick"])


def grow(mech, res, audited, claim, subject, n, seed, budget, kind="mechanism"):
    """Grow an inconclusive pass: count the winning pair's event again on fresh outputs, :data:`GROW_FACTOR` times
    more per stage, each stage at ``ALPHA * GROW_SHARE / GROW_STAGES`` (sequential, Bonferroni: the error rate is
    kept), until the pass is conclusive, a stage finds a violation, or the next stage would draw more than
    :func:`grow_limit` outputs per input (a count: the same seed grows alike on any machine).

    The event is kept, never chosen again: of the first audit's two directions on the winning pair, the one whose
    event has the best power for the claim (the smallest loss caught with probability 0.9 at the stage's size, from
    its frequency in the first audit) is counted on every output of the stage (:func:`count_event`; no pilot, since
    the event was chosen on the first audit's samples, which the stage does not reuse). A new pilot would pick the
    event that separates *its* samples best, on a correct mechanism often a rare one (a float pattern) with less
    power than the one that made the pass nearly conclusive. The safety cap :data:`GROW_SECONDS` stops a stage
    from starting once the growth has run that long; the stage left out is recorded with ``"cut": True``.
    Returns the deciding result, its pairs, and one record per stage."""
    if _conclusive(res, subject) or conclusive_n(res.worst, claim=subject.epsilon, delta=subject.delta,
                                                 target=subject.epsilon * (1.0 + POWER_MARGIN)) is None:
        return res, audited, []  # conclusive already, or no sample size makes its event conclusive
    pair = audited[res.worst_pair]
    limit = grow_limit(subject, kind, budget)
    cap = GROW_SECONDS.get(budget, GROW_SECONDS["quick"])
    stages, start = [], time.perf_counter()
    for k in range(1, GROW_STAGES + 1):
        n_k = n * GROW_FACTOR ** k
        if n_k > limit:
            stages.append({"n": n_k, "used": False,
                           "reason": f"beyond the growth limit of {limit:,} outputs per input"})
            break
        if time.perf_counter() - start > cap:
            stages.append({"n": n_k, "used": False, "cut": True,
                           "reason": f"stopped by the {cap:.0f} s safety cap on growth"})
            progress.step(f"SAFETY CAP: growth stage {k} ({n_k:,} outputs per input) not drawn: the growth ran "
                          f"past its {cap:.0f} s safety cap")
            break
        progress.step(f"inconclusive pass: growing the winning pair to {n_k:,} outputs per input (stage {k})")
        a_k = ALPHA * GROW_SHARE / GROW_STAGES
        direction = _best_power_direction(res.results[res.worst_pair], subject, n_k, a_k)
        if direction is None or direction.chosen is None:  # a checkpointed first audit: its event is not kept
            stage = audit_pairs(mech, [pair], claim, n_samples=n_k, alpha=a_k, seed=seed + 7919 * k)
        else:
            r = count_event(mech, pair.d0, pair.d1, direction.chosen, direction.direction, n_samples=n_k,
                            delta=subject.delta, alpha=a_k, seed=seed + 7919 * k, bound=BOUND)
            stage = AuditResult(claim, r.epsilon_lower, r.epsilon_point, bool(r.epsilon_lower > claim.epsilon), 0,
                                pair.description, [r], int(n_k), a_k)
        row = confirmed_rows([pair], stage.results)[0]
        row["pair"] = f"{pair.description} (grown to {n_k:,} outputs per input)"
        stages.append({"n": n_k, "used": True, "epsilon_lower": float(stage.epsilon_lower),
                       "violation": bool(stage.violation), "conclusive": _conclusive(stage, subject), "row": row})
        if stage.violation or stages[-1]["conclusive"]:
            return stage, [pair], stages
    return res, audited, stages


def _best_power_direction(result, subject, n_k: int, alpha: float):
    """Of a pair's two directions (``result.directions``), the one whose event would catch the smallest loss with
    probability 0.9 at ``n_k`` outputs per input and level ``alpha / 2``, from its frequency on the denominator
    input (``None`` when the result has no directions)."""
    directions = list(getattr(result, "directions", None) or [result])

    def loss(r):
        c = r.counts
        p1 = (c["k1"] + 0.5) / (int(c["n1"]) + 1)
        return detectable_loss(p1, n_k, claim=subject.epsilon, alpha=alpha / 2, delta=subject.delta, bound=BOUND)

    return min(directions, key=lambda r: (loss(r), -r.epsilon_lower)) if directions else None


def coverage_cut(row, extra, cuts, subject) -> None:
    """A safety cap stopped a stage: the audit did not finish. The row names each stage and what it left out
    (``coverage_cut``) and sets ``finished`` to false, the console says so, and a pass is no pass: its verdict reads
    ``inconclusive`` and ``check`` exits with the "could not finish" status (3), whatever ``--strict-power`` says.
    The caps are set far above a stage's expected time, so only a subject that hangs (or a machine far slower than
    any expected) meets one; a stage's coverage is never cut to a pass by the clock. A violation found before the
    cut stands (its evidence is complete)."""
    row["coverage_cut"] = cuts
    text = "; ".join(f"{c['stage']}: {c['cut']}" for c in cuts)
    progress.step(f"COVERAGE CUT by a safety cap ({text}): the audit could not finish")
    extra.insert(0, f"coverage cut by a safety cap, so the audit did not finish: {text}")
    if row["verdict"] == "pass":
        row["power"] = row["verdict"] = "inconclusive"
        row["finished"] = False


def grow_text(stages) -> str:
    parts = []
    for s in stages:
        if not s["used"]:
            parts.append(f"{s['n']:,} per input not drawn ({s['reason']})")
        else:
            what = "violation" if s["violation"] else "conclusive" if s["conclusive"] else "still inconclusive"
            parts.append(f"{s['n']:,} per input: ε ≥ {s['epsilon_lower']:.3g}, {what}")
    return (f"budget grown on the winning pair (alpha {ALPHA * GROW_SHARE:g} kept for it, {ALPHA * (1 - GROW_SHARE):g}"
            " for the first audit): " + " → ".join(parts))


class CpuLaps:
    """CPU seconds (``time.process_time``) of each stage of one audit, by name, in order; for the report's
    ``stage_cpu_s``, which is a measurement, not a result (the determinism comparisons leave it out)."""

    def __init__(self, into: dict | None):
        self.into, self.last = into, time.process_time()

    def lap(self, stage: str) -> None:
        now = time.process_time()
        if self.into is not None:
            self.into[stage] = round(self.into.get(stage, 0.0) + now - self.last, 3)
        self.last = now


def scale_records(subject: Subject, budget: str) -> int:
    """The largest size the scale family reaches: the subject's ``scale_records``, rounded down to 1,000 times a
    power of two, else :data:`SCALE_RECORDS` of the budget."""
    if subject.scale_records is None:
        return SCALE_RECORDS.get(budget, SCALE_RECORDS["quick"])
    value = int(subject.scale_records)
    if value < 1_000:
        raise CheckError(f"--scale-records must be at least 1000 (the family's smallest size), got {value}")
    size = 1_000
    while size * 2 <= min(value, 10 ** 6):
        size *= 2
    return size
