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
