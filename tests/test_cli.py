"""The command line: exit codes, report files, and reports written whole or not at all."""
import json
import subprocess
import sys

import pytest

from audit.__main__ import main
from audit.results.report import Report, write_report


def test_run_mechanisms_writes_both_reports(tmp_path, capsys):
    assert main(["run", "mechanisms", "--budget", "quick", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "✓ claim laplace@1/exact: pass" in out and "✓ mutant laplace-half-noise: detected" in out
    data = json.loads((tmp_path / "mechanisms" / "report.json").read_text())
    assert data["target"] == "mechanisms" and data["budget"] == "quick" and data["seed"] == 0
    for key in ("versions", "elapsed_s", "claims", "theorems", "mutants"):
        assert key in data
    assert all(c["verdict"] == c["expected"] for c in data["claims"])
    assert {c["method"] for c in data["claims"]} == {"exact", "sampled"}
    assert len(data["mutants"]) >= 8 and all(m["detected"] for m in data["mutants"])
    assert (tmp_path / "mechanisms" / "report.md").read_text().startswith("# Audit report: `mechanisms`")
    assert (tmp_path / "mechanisms" / "figures" / "claims.png").stat().st_size > 1000


def test_usage_errors_exit_2(tmp_path, capsys):
    assert main(["run", "no-such-target", "--out", str(tmp_path)]) == 2
    assert "unknown target 'no-such-target'" in capsys.readouterr().err
    assert main(["run", "mechanisms", "--budget", "huge"]) == 2
    assert main([]) == 2
    assert main(["run", "mechanisms", "--seed", "-3"]) == 2


def test_list_names_targets(capsys):
    assert main(["list"]) == 0
    assert "mechanisms" in capsys.readouterr().out


def test_report_with_a_mismatch_exits_nonzero_and_is_atomic(tmp_path):
    rep = Report("demo", "quick", 0)
    rep.claims.append({"id": "c", "subject": "s", "neighbouring": "add-remove", "epsilon_claimed": 1.0,
                       "delta": 0.0, "epsilon_lower": 2.0, "epsilon_point": 2.1, "n_samples": 10,
                       "alpha": 0.05, "verdict": "violation", "expected": "pass"})
    assert not rep.ok and rep.mismatches() == ["c"]
    write_report(rep, tmp_path)
    first = (tmp_path / "demo" / "report.json").read_text()

    def broken(path):
        raise RuntimeError("figure failed")

    rep.figures.append(("broken", broken))
    with pytest.raises(RuntimeError):
        write_report(rep, tmp_path)
    # the earlier report is untouched and no temporary directory is left behind
    assert (tmp_path / "demo" / "report.json").read_text() == first
    assert sorted(p.name for p in tmp_path.iterdir()) == ["demo"]
    rep.claims[0].pop("alpha")
    with pytest.raises(ValueError, match="alpha"):
        write_report(rep, tmp_path)


def test_module_entry_point(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "audit", "list"], capture_output=True, text=True)
    assert proc.returncode == 0 and "mechanisms" in proc.stdout


@pytest.mark.parametrize("command", ["check", "compare"])
def test_check_and_compare_take_the_sample_count_under_either_spelling(command):
    """A newcomer who learnt ``--n-samples`` on check and ``--samples`` on compare may write either on both."""
    from audit.__main__ import build_parser

    dest = "n_samples" if command == "check" else "samples"
    parse = build_parser().parse_args
    base = [command, "m:C"] + (["--reference", "privatree"] if command == "compare" else [])
    assert getattr(parse(base + ["--n-samples", "300"]), dest) == 300
    assert getattr(parse(base + ["--samples", "300"]), dest) == 300
