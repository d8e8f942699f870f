"""How ``audit check`` words a row's verdict when the state probe or the floating-point probe decided it, the
row of a claim decided before any output was sampled, and the row of a subject whose audit could not finish."""
from __future__ import annotations

import re

from audit.gate.inputs import params_text

__all__ = ["ALPHA", "AFTER_FINDING", "certain_finding", "decided_row", "float_verdict", "state_verdict",
           "subject_error_row"]

#: the gate's level per claim (shared by its audited pairs and both directions)
ALPHA = 0.05

#: what ``audit check`` does once a one-fit probe has decided the claim (``--after-finding``): ``"stop"`` (the
#: verdict is final, the sampled stages are skipped) or ``"sample"`` (run them too, to measure the other leaks)
AFTER_FINDING = ("stop", "sample")


def certain_finding(probe, det, subject) -> str:
    """What decided the claim before any output was sampled, or ``""``: kept state (:mod:`audit.gate.state.probe`,
    certain from one fit per dataset) or a deterministic trace of the data (:mod:`audit.gate.determinism`, its
    bound above the claim at its share of alpha), each only when it fails the gate (``"fail"`` mode). Either is
    a violation whatever the sampled stages find, so a gate may stop there (fail fast)."""
    found = []
    if probe is not None and probe.verdict == "violation" and subject.state == "fail":
        found.append("kept state")
    if det is not None and det.verdict == "violation" and subject.determinism == "fail":
        found.append("determinism")
    return " and ".join(found)


def _row_head(subject, subject_text: str) -> dict:
    """The fields every ``check`` row built without a sampled audit shares (:func:`decided_row`,
    :func:`subject_error_row`): the claim, its subject and the expected verdict."""
    return {"id": subject.name, "subject": subject_text, "neighbouring": subject.neighbours,
            "epsilon_claimed": subject.epsilon, "delta": subject.delta, "epsilon_point": float("nan"),
            "alpha": ALPHA, "expected": subject.expect, "expected_stated": bool(subject.expected_stated),
            "method": "sampled"}


def decided_row(subject, kind: str, decided: str, extra: list) -> dict:
    """The row of a claim that ``decided`` (:func:`certain_finding`) settled before sampling: no sampled bound
    (``n_samples`` 0, the sampled stages named as skipped in ``sampled_stages`` and in ``extra``); the probes'
    verdicts join it as they join a sampled row (:func:`state_verdict`, ``determinism.join_verdict``)."""
    extra.append(f"sampled stages skipped: the claim was decided before any output was sampled, by {decided} "
                 "(certain: a violation whatever the outputs show); the scale family, the neighbour search, the "
                 "floating-point probe and the power reading did not run (--after-finding sample runs them too, to "
                 "measure every other leak)")
    return {**_row_head(subject, f"{subject.target} {params_text(subject.params)} ({kind})"),
            "epsilon_lower": 0.0, "n_samples": 0, "verdict": "pass", "decided_by": [],
            "sampled_stages": f"skipped (decided by {decided})", "detail": f"decided by {decided} before sampling",
            "winning_pair": ""}


def state_verdict(row, extra, probe, subject) -> None:
    """The state probe's verdict joins the row: a finding fails the gate (``--state fail``) with an unbounded
    loss; a probe that could not run makes a pass inconclusive, never clean."""
    row["state"] = probe.to_json()
    extra.append(probe.summary())
    verdict = probe.verdict
    if verdict == "violation" and subject.state == "fail":
        sampled = row.get("decided_by", []) if row["verdict"] == "violation" else []
        row["verdict"] = "violation"
        row["decided_by"] = ["kept state"] + [k for k in sampled if k != "kept state"]
        # a kept generator, state or seed, or a kept value whose replay reproduces the published noise: whoever
        # holds the model subtracts the noise, so the loss is unbounded on any pair whose records that part reads
        row["epsilon_reading"] = "∞"
        for key in ("power", "detectable_loss", "n_conclusive"):  # the sampled pass's power no longer applies
            row.pop(key, None)
        extra.insert(0, "violation through kept state (ε = ∞: whoever holds the fitted model, its pickle or the fit's output can "
                        "replay the fit's noise and subtract it; --state warn reports it without failing): "
                        + probe.evidence)
    elif verdict == "inconclusive" and row["verdict"] == "pass":
        row["power"] = "inconclusive"
        row["state_inconclusive"] = probe.skipped or getattr(probe, "cut", "") or "the probe's walk was cut short"
        extra.insert(0, f"inconclusive: the state probe could not run ({row['state_inconclusive']}), so kept "
                        "random state was not ruled out")
        if subject.strict_power:
            row["verdict"] = "inconclusive"


def subject_error_row(subject, exc: Exception) -> dict:
    """The row of a subject (an :class:`audit.gate.run.Subject`) whose audit could not finish (it ended the
    process inside ``fit``)."""
    return {**_row_head(subject, f"{subject.target} {params_text(subject.params)}"), "epsilon_lower": float("nan"),
            "n_samples": 0, "verdict": "error", "decided_by": ["error"], "detail": f"error: {exc}"}


def float_verdict(row: dict, extra: list, event: str) -> None:
    """An estimator's violation decided by a floating-point event: ``decided_by`` and the words naming the
    coordinate whose bit patterns tell the inputs apart."""
    found = re.match(r"float pattern \(sign, exponent, mantissa mod (\d+)\) of (.+) in \{", event)
    if not found:
        return
    row["decided_by"] = ["float probe"] + [k for k in row.get("decided_by", []) if k not in ("float probe", "outputs")]
    extra.insert(0, f"violation through the floating-point probe on {found.group(2)}: its values from the two "
                    f"inputs lie on different float lattices (Mironov 2012), so some patterns of sign, exponent "
                    f"and mantissa mod {found.group(1)} occur from one input only; --no-float-probe audits the "
                    "claim in real arithmetic instead")

