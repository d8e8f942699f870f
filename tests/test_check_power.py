"""Power in the verdict (issue 27 item 4): a pass says how weak it is.

``NoisyCountModel(keep=False)`` is epsilon-DP; audited without search at 150 outputs per input (and without
growing the budget, ``--no-grow``) it cannot catch a loss of 1.25 (the claim plus 25%) with probability 0.9, so
its pass reads inconclusive (exit 0), and ``--strict-power`` makes that fail the gate (exit 1). By default the
pass grows: its winning pair is audited again at 600 and 2,400 outputs per input (a fifth of alpha kept for the
growth, Bonferroni) and becomes conclusive. Fixed seeds; the pass itself has false-alarm rate at most 0.05.
"""
from __future__ import annotations

import json

import pytest

from audit.__main__ import main

BASE = ["check", "subjects.kept_state:NoisyCountModel", "--params", '{"keep": false}', "--epsilon", "1", "--quiet",
        "--no-search", "--bounds", "[[0, 1]]", "--classes", "0,1"]


def _row(tmp_path):
    return json.loads((tmp_path / "check-subjects.kept_state-NoisyCountModel" / "report.json").read_text())["claims"][0]


def test_a_weak_pass_reads_inconclusive_and_strict_power_fails_it(tmp_path):
    assert main(BASE + ["--n-samples", "150", "--no-grow", "--out", str(tmp_path)]) == 0
    row = _row(tmp_path)
    assert row["verdict"] == "pass" and row["power"] == "inconclusive"
    assert row["n_conclusive"] is None or row["n_conclusive"] > 150
    assert "inconclusive pass" in row["detail"]
    md = (tmp_path / "check-subjects.kept_state-NoisyCountModel" / "report.md").read_text()
    assert "inconclusive" in md
    assert main(BASE + ["--n-samples", "150", "--no-grow", "--strict-power", "--out", str(tmp_path)]) == 1
    assert _row(tmp_path)["verdict"] == "inconclusive"


def test_a_weak_pass_grows_until_conclusive_with_alpha_kept(tmp_path):
    assert main(BASE + ["--n-samples", "150", "--strict-power", "--out", str(tmp_path)]) == 0
    row = _row(tmp_path)
    assert row["verdict"] == "pass" and row["power"] == "conclusive" and row["detectable_loss"] <= 1.25
    assert row["alpha"] == pytest.approx(0.05 * 0.2 / 2)  # the stage that decided: its share of alpha
    assert "budget grown on the winning pair (alpha 0.01 kept for it, 0.04 for the first audit)" in row["detail"]
    assert any("grown to" in c["pair"] for c in row["pairs_confirmed"])


def test_a_strong_pass_is_conclusive(tmp_path):
    assert main(BASE + ["--n-samples", "20000", "--strict-power", "--out", str(tmp_path)]) == 0
    row = _row(tmp_path)
    assert row["power"] == "conclusive" and row["detectable_loss"] <= 1.25


def test_growth_keeps_the_first_audits_event_and_a_correct_float_mechanism_reads_conclusive():
    """OpenDP's float Laplace (correct, epsilon 1) at quick, seed 1: the first audit's winning event is a float
    pattern that leaves the pass just inconclusive (about 32,000 outputs per input would settle it). Growth counts
    that same event (chosen on the first audit's pilot, so the stage's fresh outputs bound it at the stage's level)
    on 80,000 outputs per input, every one counted, and the pass reads conclusive; a new pilot used to pick a rarer
    float pattern and stay inconclusive. False-alarm rate: the claim holds, so a violation would occur with
    probability at most alpha = 0.05 (0.04 first audit + 0.01 growth)."""
    pytest.importorskip("opendp")
    from audit.gate.run import Subject, audit_subject

    subject = Subject("opendp-float-laplace", "subjects.opendp_float:FloatLaplace", epsilon=1.0,
                      params={"epsilon": 1.0})
    row = audit_subject(subject, "quick", 1)
    assert row["verdict"] == "pass" and row["power"] == "conclusive", row["detail"]
    first, grown = row["pairs_confirmed"][0], row["pairs_confirmed"][-1]
    assert "grown to 80,000" in grown["pair"] and grown["counts"]["n_pilot"] == 0
    assert grown["event"] == first["event"] and grown["counts"]["n1"] == 80_000
    assert row["grown"][0]["conclusive"] is True
