"""``audit check`` reads kept state (the state probe) and grows its pairs (the scale family).

Deterministic parts: the probe (no sampling). Statistical parts: ``check`` at alpha 0.05 with fixed
seeds, so each verdict below is fixed; a false alarm of the correct estimator would occur with
probability at most 0.05 for another seed.
"""
from __future__ import annotations

import json
import re
from functools import partial

import pytest

import audit.check as check_module
from audit.__main__ import main
from audit.engine.scale import scale_pairs

BASE = ["--epsilon", "1", "--quiet", "--n-samples", "2000", "--no-search", "--bounds", "[[0, 1]]", "--classes", "0,1"]


def _row(tmp_path, name):
    return json.loads((tmp_path / f"check-subjects.kept_state-{name}" / "report.json").read_text())["claims"][0]


def test_a_kept_noise_generator_fails_the_gate_by_attribute_name(tmp_path):
    assert main(["check", "subjects.kept_state:NoisyCountModel", *BASE, "--out", str(tmp_path)]) == 1
    row = _row(tmp_path, "NoisyCountModel")
    assert row["verdict"] == "violation" and row["decided_by"][0] == "kept state"
    assert [f["path"] for f in row["state"]["findings"]] == ["model.noise_rng_", "model.noise_rng_"]
    assert "violation through kept state" in row["detail"] and "rewind" in row["detail"]


def test_warn_reports_the_kept_generator_without_failing(tmp_path):
    assert main(["check", "subjects.kept_state:NoisyCountModel", *BASE, "--state", "warn",
                 "--out", str(tmp_path)]) == 0
    row = _row(tmp_path, "NoisyCountModel")
    assert row["verdict"] == "pass" and "model.noise_rng_" in row["detail"]


def test_the_fixed_model_passes_with_the_seed_parameter_noted(tmp_path):
    assert main(["check", "subjects.kept_state:NoisyCountModel", *BASE, "--params", '{"keep": false}',
                 "--out", str(tmp_path)]) == 0
    row = _row(tmp_path, "NoisyCountModel")
    assert row["state"]["clean"] and row["state"]["notes"][0]["path"] == "model.random_state"


@pytest.mark.release
def test_default_check_flags_the_underflow_mutant_through_the_scale_family(tmp_path, monkeypatch):
    """The pre-fix JointExp inside PrivaTree (full underflow from 29,806 tied records at eps_q 1) is found by the scale
    family of a default search and confirmed on fresh samples (about 3 minutes on 2 cores).

    The family's largest size is fixed at 32,000 records (``n_max``, as the measured fit time allows on a quiet
    machine): left to the time budget, a loaded machine grows it less far, and the bisection then lands in the
    partial-underflow region near 7,500 records, where 2,000 outputs per input may show no loss (the README's
    scale-family paragraph). The release is the model's own ``release()`` (``--release release``: the tree, through
    the batched sampler), as in the README's command; the default also audits the fitted ``bin_edges_``, where the
    partial underflow near 6,000 tied records already shows (the same verdict, on another pair). The rest of the
    path is the default ``check``'s, but for ``--after-finding sample``: the switch scan (audit.gate.switches) now
    finds the mutant's record-count switch before any sampling, which would end the audit there; the scale
    family's own evidence is the object here, so the sampled stages run as well."""
    monkeypatch.setattr(check_module, "scale_pairs", partial(scale_pairs, n_max=32_000))
    params = '{"epsilon": 2, "max_depth": 1, "bounds": [[0, 1]], "classes": [0, 1], "epsilon_shares": [0.5, 0.25, 0.25]}'
    code = main(["check", "audit.privatree.underflow_jointexp:UnderflowPrivaTree", "--epsilon", "2", "--params", params,
                 "--bounds", "[[0, 1]]", "--classes", "0,1", "--budget", "standard", "--n-samples", "2000", "--quiet",
                 "--release", "release", "--after-finding", "sample",
                 "--out", str(tmp_path)])
    assert code == 1
    row = json.loads((tmp_path / "check-audit.privatree.underflow_jointexp-UnderflowPrivaTree" / "report.json")
                     .read_text())["claims"][0]
    assert row["winning_pair"].startswith("[scale:"), row["winning_pair"]
    n0, n1 = (int(v.replace(",", "")) for v in re.findall(r"([\d,]+) records vs ([\d,]+)", row["winning_pair"])[0])
    assert n1 == n0 + 1 and n0 >= 29_000, (n0, n1)
    assert row["epsilon_lower"] > 2


def test_a_certain_state_finding_is_printed_before_any_sampling(tmp_path, capsys):
    """Fail fast: the state probe runs first and its finding is on the console before the first pair is sampled."""
    assert main(["check", "subjects.kept_state:NoisyCountModel", "--epsilon", "1", "--n-samples", "2000",
                 "--no-search", "--bounds", "[[0, 1]]", "--classes", "0,1", "--after-finding", "sample",
                 "--out", str(tmp_path)]) == 1
    out = capsys.readouterr().out.splitlines()
    found = next(i for i, line in enumerate(out) if "FOUND kept state" in line)
    sampled = next(i for i, line in enumerate(out) if "confirmed at 2,000 outputs per input" in line)
    assert found < sampled and "model.noise_rng_" in out[found]
    row = _row(tmp_path, "NoisyCountModel")
    assert row["epsilon_reading"] == "∞" and "power" not in row


@pytest.mark.parametrize("target, decided", [("subjects.kept_state:NoisyCountModel", "kept state"),
                                             ("subjects.crashing:OddSizeCrash", "determinism")])
def test_a_certain_finding_decides_the_claim_and_the_sampled_stages_are_skipped(tmp_path, capsys, target, decided):
    """By default (--after-finding stop) a violation found by the one-fit probes is final: nothing is sampled,
    and the row and console say so; the verdict is the one --after-finding sample gives."""
    argv = ["check", target, "--epsilon", "1", "--n-samples", "2000", "--bounds", "[[0, 1]]", "--classes", "0,1",
            "--no-scale", "--out", str(tmp_path / "stop")]
    assert main(argv) == 1
    out = capsys.readouterr().out
    assert "confirmed at" not in out and "screening" not in out
    name = target.replace(":", "-")
    row = json.loads((tmp_path / "stop" / f"check-{name}" / "report.json").read_text())["claims"][0]
    assert row["verdict"] == "violation" and decided in row["decided_by"] and row["n_samples"] == 0
    assert row["sampled_stages"] == f"skipped (decided by {decided})" and "sampled stages skipped" in row["detail"]
    assert row["epsilon_reading"] == "∞" and "power" not in row
    sampled = argv[:-1] + [str(tmp_path / "sample"), "--after-finding", "sample"]
    assert main(sampled) == 1
    again = json.loads((tmp_path / "sample" / f"check-{name}" / "report.json").read_text())["claims"][0]
    assert again["verdict"] == "violation" and again["n_samples"] > 0 and "sampled_stages" not in again


def test_after_finding_is_checked_by_name(tmp_path):
    from audit.check import CheckError, Subject, audit_subject

    bad = Subject("s", "subjects.kept_state:NoisyCountModel", 1.0, after_finding="later")
    with pytest.raises(CheckError, match="after_finding must be one of stop, sample, got 'later'"):
        audit_subject(bad, "quick", 0)
