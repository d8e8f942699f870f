"""Exceptions as first-class outcomes in ``audit check``.

An exception's outcome is its type and its canonical message (:mod:`audit.engine.outcome`); the refusal of an
empty dataset is reported on a line of its own and does not decide unless asked (``--exempt none``); a subject
that ends the process (``sys.exit`` in ``fit``) is an error row and exit 3 (could not finish), never a silent exit 0. Statistical
verdicts at alpha 0.05 with fixed seeds and 2,000 outputs per input (a refusal on one side only is certain, so
the lower bound is about ln(2000 / 3.7) = 6.3 > 1); a correct estimator would be flagged with probability at
most 0.05 under another seed.
"""
from __future__ import annotations

import json

import pytest

from audit.__main__ import main

#: the determinism probe also finds these crashes before sampling (and stops there by default): the tests here
#: measure the sampled evidence, so it runs too (--after-finding sample)
BASE = ["--epsilon", "1", "--quiet", "--n-samples", "2000", "--no-scale", "--state", "off", "--bounds", "[[0, 1]]",
        "--classes", "0,1", "--after-finding", "sample"]


def _row(tmp_path, name):
    return json.loads((tmp_path / f"check-subjects.crashing-{name}" / "report.json").read_text())["claims"][0]


@pytest.mark.parametrize("error", ["ValueError", "RuntimeError"])
@pytest.mark.parametrize("search", [[], ["--no-search"]])
def test_a_crash_that_separates_a_pair_is_a_violation_through_an_exception(tmp_path, error, search):
    params = json.dumps({"error": error})
    assert main(["check", "subjects.crashing:OddSizeCrash", *BASE, *search, "--params", params,
                 "--out", str(tmp_path)]) == 1
    row = _row(tmp_path, "OddSizeCrash")
    assert row["verdict"] == "violation" and row["decided_by"][0] == "exception" and row["epsilon_lower"] > 1
    assert f"violation through an exception: fit raises {error}(" in row["detail"]
    assert row["exception_findings"]


def test_the_refusal_of_empty_data_is_reported_apart_and_decides_only_when_asked(tmp_path):
    assert main(["check", "subjects.crashing:RefusesEmpty", *BASE, "--out", str(tmp_path)]) == 0
    row = _row(tmp_path, "RefusesEmpty")
    assert row["verdict"] == "pass" and row["exempt_refusals"] and not row["exception_findings"]
    assert all("fit refuses an empty dataset (0 records) on every one of 2,000 fits" in t for t in row["exempt_refusals"])
    assert "reported, not decisive: the refusal of an empty dataset" in row["detail"]
    assert main(["check", "subjects.crashing:RefusesEmpty", *BASE, "--exempt", "none", "--out", str(tmp_path)]) == 1
    row = _row(tmp_path, "RefusesEmpty")
    assert row["decided_by"][0] == "exception" and not row["exempt_refusals"]
    assert "the outputs alone: ε ≥" in row["detail"] and "(within the claim)" in row["detail"]


def test_report_mode_passes_a_private_estimator_that_refuses_empty_data_and_names_the_refusal(tmp_path):
    assert main(["check", "subjects.crashing:RefusesEmpty", *BASE, "--exceptions", "report",
                 "--out", str(tmp_path)]) == 0
    row = _row(tmp_path, "RefusesEmpty")
    assert row["verdict"] == "pass" and "cannot fit on an empty dataset" in " ".join(row["exempt_refusals"])
    assert "reported, not decisive" in row["detail"]


def test_report_mode_still_flags_an_output_leak(tmp_path):
    assert main(["check", "subjects.crashing:RefusesEmptyLeaky", *BASE, "--exceptions", "report",
                 "--out", str(tmp_path)]) == 1
    row = _row(tmp_path, "RefusesEmptyLeaky")
    assert row["decided_by"][0] == "outputs" and "violation through the outputs" in row["detail"]


def test_a_refusal_whose_message_carries_the_count_separates_by_its_message(tmp_path):
    """Same exception type on both sides of a 2-vs-3 record pair, different messages: a different outcome."""
    assert main(["check", "subjects.crashing:CountInMessage", *BASE, "--out", str(tmp_path)]) == 1
    row = _row(tmp_path, "CountInMessage")
    assert row["decided_by"][0] == "exception" and row["epsilon_lower"] > 1
    assert "too few records to fit: " in row["evidence_data"]["event"]


def test_a_refusal_at_random_on_every_dataset_is_an_outcome_that_separates_nothing(tmp_path):
    """fit gives up with probability 0.3 whatever the data: the refusal is an outcome with one law on both sides
    (the gate passes, alpha 0.05), and it is never exempt (on the empty dataset it is not certain)."""
    assert main(["check", "subjects.crashing:RandomRefusal", *BASE, "--out", str(tmp_path)]) == 0
    row = _row(tmp_path, "RandomRefusal")
    assert row["verdict"] == "pass"


def test_an_exempt_refusal_is_judged_on_every_draw_not_on_five_fits(tmp_path):
    """fit refuses the empty dataset except with probability 0.02 (``RarelyAcceptsEmpty``): over the 2,000 fits the
    audit draws per input it accepts it, so the refusal is not exempt, and the rare output of the empty side
    decides. (At the old five fits it was exempt with probability 0.90 and the gate passed.)"""
    assert main(["check", "subjects.crashing:RarelyAcceptsEmpty", *BASE, "--out", str(tmp_path)]) == 1
    row = _row(tmp_path, "RarelyAcceptsEmpty")
    assert row["verdict"] == "violation" and not row["exempt_refusals"]


def test_an_exemption_refuted_when_settled_sends_the_claim_back_to_be_audited_with_the_refusal_deciding(tmp_path):
    """The staged exemption: ``VeryRarelyAcceptsEmpty`` refuses the empty dataset on the first look's 64 fits
    (exempt there) and accepts it at fit 637 of the 2,000 the settled judgement makes. The row would pass on the
    other pairs, so the exemption is settled, refuted, and the claim audited again without it: the refusal then
    separates the pair (a violation, as a single look at 2,000 fits gives)."""
    assert main(["check", "subjects.crashing:VeryRarelyAcceptsEmpty", *BASE, "--out", str(tmp_path)]) == 1
    row = _row(tmp_path, "VeryRarelyAcceptsEmpty")
    assert row["verdict"] == "violation" and not row["exempt_refusals"]
    assert "fit accepted an empty dataset (0 records) at fit 637 of the 2,000" in row["detail"]
    assert "audited again with it deciding" in row["detail"]


def test_a_violation_found_elsewhere_does_not_wait_for_the_exemption_to_be_settled(tmp_path):
    """``RefusesEmptyLeaky`` publishes its exact count: the outputs decide, so its refusal of the empty dataset is
    judged at the first look only (64 fits, not 2,000), and the row says so."""
    assert main(["check", "subjects.crashing:RefusesEmptyLeaky", *BASE, "--out", str(tmp_path)]) == 1
    row = _row(tmp_path, "RefusesEmptyLeaky")
    assert row["verdict"] == "violation" and row["decided_by"][0] == "outputs"
    assert all("on every one of 64 fits" in t for t in row["exempt_refusals"])
    assert "judged at the exemption's first look, 64 fits" in row["detail"]


def test_sys_exit_in_fit_is_an_error_row_and_exit_3_and_later_subjects_are_still_audited(tmp_path, capsys):
    assert main(["check", "subjects.crashing:ExitsInFit", *BASE, "--out", str(tmp_path)]) == 3
    row = _row(tmp_path, "ExitsInFit")
    assert row["verdict"] == "error" and "called sys.exit(None) inside fit" in row["detail"]
    assert "called sys.exit" in capsys.readouterr().err
    claims = tmp_path / "exits.toml"
    claims.write_text('[[subject]]\nname = "exits"\ncallable = "subjects.crashing:ExitsInFit"\nepsilon = 1.0\n'
                      'bounds = [[0, 1]]\nclasses = [0, 1]\nn_samples = 2000\nscale = false\n\n'
                      '[[subject]]\nname = "after"\ncallable = "subjects.crashing:RefusesEmpty"\nepsilon = 1.0\n'
                      'bounds = [[0, 1]]\nclasses = [0, 1]\nn_samples = 2000\nscale = false\nstate = "off"\n')
    assert main(["check", "--claims", str(claims), "--quiet", "--out", str(tmp_path)]) == 3
    rows = json.loads((tmp_path / "exits" / "report.json").read_text())["claims"]
    assert [r["verdict"] for r in rows] == ["error", "pass"]


def test_outcome_codes_tell_type_and_message_apart_and_mask_addresses():
    from audit.engine.outcome import outcome_code, outcome_text

    codes = {outcome_code(e) for e in (ValueError("n = 3"), ValueError("n = 4"), RuntimeError("n = 3"))}
    assert len(codes) == 3 and 0 not in codes
    assert outcome_code(ValueError("at 0x7f00aa11bb22")) == outcome_code(ValueError("at 0x7f00cc33dd44"))
    assert outcome_text(KeyError("x")).startswith("builtins.KeyError: ")
    assert all(float(c) == c for c in codes)  # exact in a float64


@pytest.mark.parametrize("event, kinds", [
    ("fit raised ValueError('an odd number of records (3) is not supported') [raised >= 7]", ["exception"]),
    ("pattern (fit succeeded; prediction at (0.125) is 1)", ["exception", "outputs"]),
    ("fit succeeded [raised < 0.5] and model.count_ >= 3", ["exception", "outputs"]),
    ("float pattern (sign, exponent, mantissa mod 16) of model.count_ in {12, 13}", ["float probe"]),
    ("model.count_ >= 3", ["outputs"]),
    ("x[2] >= 1", ["outputs"]),
])
def test_decided_by_lists_every_kind_of_evidence_the_deciding_event_reads(event, kinds):
    from audit.check_refusals import evidence_of

    assert evidence_of(event, ["raised", "prediction at (0.125)", "model.count_"]) == kinds
