"""How ``audit check`` words a row's verdict when the state probe or the floating-point probe decided it, and
the row of a subject whose audit could not finish."""
from __future__ import annotations

import re

from audit.gate.inputs import params_text

__all__ = ["ALPHA", "float_verdict", "state_verdict", "subject_error_row"]

#: the gate's level per claim (shared by its audited pairs and both directions)
ALPHA = 0.05


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
        extra.insert(0, "violation through kept state (ε = ∞: whoever holds the fitted model or its pickle can "
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
    nan = float("nan")
    return {"id": subject.name, "subject": f"{subject.target} {params_text(subject.params)}",
            "neighbouring": subject.neighbours, "epsilon_claimed": subject.epsilon, "delta": subject.delta,
            "epsilon_lower": nan, "epsilon_point": nan, "n_samples": 0, "alpha": ALPHA, "verdict": "error",
            "expected": subject.expect, "expected_stated": bool(subject.expected_stated), "method": "sampled",
            "decided_by": ["error"], "detail": f"error: {exc}"}


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

