"""Exceptions as first-class outcomes in ``audit check`` (issue 27 item 1).

A failed ``fit`` was recorded as all zeros, identical to a model predicting class 0 everywhere, so an
estimator that refuses every odd-sized dataset passed with epsilon >= 0. Statistical verdicts at alpha
0.05 with fixed seeds and 2,000 outputs per input (a refusal on one side only is certain, so the lower
bound is about ln(2000 / 3.7) = 6.3 > 1); a correct estimator would be flagged with probability at most
0.05 under another seed.
"""
from __future__ import annotations

import json

import pytest

from audit.__main__ import main

BASE = ["--epsilon", "1", "--quiet", "--n-samples", "2000", "--no-scale", "--state", "off", "--bounds", "[[0, 1]]",
        "--classes", "0,1"]


def _row(tmp_path, name):
    return json.loads((tmp_path / f"check-subjects.crashing-{name}" / "report.json").read_text())["claims"][0]


@pytest.mark.parametrize("error", ["ValueError", "RuntimeError"])
@pytest.mark.parametrize("search", [[], ["--no-search"]])
def test_a_crash_that_separates_a_pair_is_a_violation_through_an_exception(tmp_path, error, search):
    params = json.dumps({"error": error})
    assert main(["check", "subjects.crashing:OddSizeCrash", *BASE, *search, "--params", params,
                 "--out", str(tmp_path)]) == 1
    row = _row(tmp_path, "OddSizeCrash")
    assert row["verdict"] == "violation" and row["decided_by"] == "exception" and row["epsilon_lower"] > 1
    assert f"violation through an exception: fit raises {error}(" in row["detail"]
    assert row["exception_findings"]


def test_report_mode_passes_a_private_estimator_that_refuses_empty_data_and_names_the_refusal(tmp_path):
    assert main(["check", "subjects.crashing:RefusesEmpty", *BASE, "--out", str(tmp_path)]) == 1  # default: fail
    assert _row(tmp_path, "RefusesEmpty")["decided_by"] == "exception"
    assert main(["check", "subjects.crashing:RefusesEmpty", *BASE, "--exceptions", "report",
                 "--out", str(tmp_path)]) == 0
    row = _row(tmp_path, "RefusesEmpty")
    assert row["verdict"] == "pass" and "cannot fit on an empty dataset" in " ".join(row["exception_findings"])
    assert "reported, not decisive" in row["detail"]


def test_report_mode_still_flags_an_output_leak(tmp_path):
    assert main(["check", "subjects.crashing:RefusesEmptyLeaky", *BASE, "--exceptions", "report",
                 "--out", str(tmp_path)]) == 1
    row = _row(tmp_path, "RefusesEmptyLeaky")
    assert row["decided_by"] == "outputs" and "violation through the outputs" in row["detail"]
