"""What the command line prints (issue 21): a line per finished row, a closing summary, ``--quiet``,
``--format json``, ``--print-report``, ``--version``; where ``run`` writes by default; Ctrl-C and ``--resume``."""
import json
import os

import pytest

from audit import checkpoint
from audit.__main__ import _default_out, main
from audit.check import GROW_SHARE

#: float noise added to a value: private in real arithmetic, so the floating-point probe is off here
LAPLACE = ["check", "tests.subjects.noise:MyLaplace", "--params", '{"epsilon": 1}', "--epsilon", "1",
           "--budget", "quick", "--no-float-probe"]


def test_check_prints_a_line_per_claim_then_the_summary(tmp_path, capsys):
    assert main(LAPLACE + ["--out", str(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert any(line.endswith("✓ claim tests.subjects.noise:MyLaplace: pass: claimed ε 1, measured ε ≥ "
                             + line.rsplit("≥ ", 1)[-1]) for line in lines)
    assert lines[-3].startswith("Budget quick, seed 0, ") and lines[-3].endswith("no claim refuted.")
    assert lines[-2].endswith("claims 1 pass.")
    # module and class name the report: two modules' MyLaplace never overwrite each other
    folder = tmp_path / "check-tests.subjects.noise-MyLaplace"
    assert lines[-1].startswith(f"Report: {folder}/report.md")
    assert not any(line.startswith("|") for line in lines)  # the Markdown went to the file only
    assert oct(folder.stat().st_mode & 0o777) == oct(0o777 & ~_umask())
    row = json.loads((folder / "report.json").read_text())["claims"][0]
    ev = row["evidence_data"]
    assert ev["pair"] == 0 and ev["n_pairs"] == 1 and ev["event"].startswith("x ") and \
        ev["alpha"] == pytest.approx(0.05 * (1 - GROW_SHARE) / 2)  # per direction; a fifth kept for growing
    assert ev["counts"]["n0"] == ev["counts"]["n1"] == 16_000 and ev["direction"] in ("d0 vs d1", "d1 vs d0")
    assert ev["epsilon_lower"] == row["epsilon_lower"] and isinstance(row["detail"], str)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_quiet_json_and_print_report(tmp_path, capsys):
    assert main(LAPLACE + ["--out", str(tmp_path), "--quiet"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 3 and out[0].startswith("Budget quick")
    assert main(LAPLACE + ["--out", str(tmp_path), "--format", "json"]) == 0
    captured = capsys.readouterr()
    summary = json.loads(captured.out)  # stdout is one JSON object; the per-row lines went to stderr
    assert summary["ok"] is True and summary["counts"] == {"claims": {"pass": 1}} and summary["budget"] == "quick"
    assert summary["report_json"].endswith("report.json") and "✓ claim" in captured.err
    assert main(LAPLACE + ["--out", str(tmp_path), "--quiet", "--print-report"]) == 0
    assert "## Privacy claims" in capsys.readouterr().out


def test_version(capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.startswith("dptree-audit ")


def test_run_writes_beside_a_report_of_a_larger_budget(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert _default_out("privatree", "quick") == ("reports", "")  # nothing there yet
    (tmp_path / "reports" / "privatree").mkdir(parents=True)
    (tmp_path / "reports" / "privatree" / "report.json").write_text(json.dumps({"budget": "full"}))
    out, note = _default_out("privatree", "quick")
    assert out == os.path.join("reports", ".runs", "quick") and "full-budget report" in note
    assert _default_out("privatree", "full") == ("reports", "")  # same budget: replaced, as the lead regenerates


def test_ctrl_c_says_what_was_saved_and_resume_gives_the_whole_run(tmp_path, capsys, monkeypatch):
    from tests.subjects import interrupting

    base = ["check", "tests.subjects.interrupting:InterruptedLaplace", "--epsilon", "100", "--data", "query:3",
            "--budget", "quick", "--quiet"]
    monkeypatch.setattr(interrupting, "CALLS", [0])
    argv = base + ["--params", '{"limit": 25}', "--out", str(tmp_path / "a")]
    assert main(argv) == 130
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("interrupted: ")  # one line, no traceback
    assert err[0].endswith("continue with: python -m audit " + " ".join(argv[:6]) + " --budget quick --quiet "
                           "--params '{\"limit\": 25}' --out " + str(tmp_path / "a") + " --resume")
    (ckpt,) = (tmp_path / "a").glob(".*checkpoint*.json")
    saved = json.loads(ckpt.read_text())
    assert saved[checkpoint.ELAPSED_KEY] > 0 and len(saved) >= 2
    resumed = base + ["--params", '{"limit": 0}', "--out", str(tmp_path / "a"), "--resume"]
    assert main(resumed) == 0
    whole = json.loads(next((tmp_path / "a").glob("*/report.json")).read_text())
    assert not ckpt.exists() and whole["elapsed_s"] >= round(saved[checkpoint.ELAPSED_KEY], 3)
    assert main(base + ["--out", str(tmp_path / "b")]) == 0  # uninterrupted: the same numbers
    fresh = json.loads(next((tmp_path / "b").glob("*/report.json")).read_text())
    for key in ("epsilon_lower", "epsilon_point", "detail", "evidence_data"):  # the subject names the params
        assert fresh["claims"][0][key] == whole["claims"][0][key]
    capsys.readouterr()


def test_compare_reference_list_exits_0(capsys):
    assert main(["compare", "x:y", "--reference", "list"]) == 0
    assert "laplace" in capsys.readouterr().out.split()
