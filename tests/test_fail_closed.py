"""The command line fails closed (:mod:`audit.frontends.fail_closed`): one exit status per cause, never a pass without a
complete report. The commands run as a user's CI runs them, ``python -m audit ...`` in a child process."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from audit.frontends.fail_closed import EXIT_UNFINISHED, runs_outside_code, worker_main

TESTS = Path(__file__).parent
BASE = ["--epsilon", "1", "--bounds", "[[0, 1]]", "--classes", "0,1", "--quiet", "--n-samples", "2000",
        "--no-scale"]


def _audit(*args, cwd=TESTS):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-m", "audit", *args], capture_output=True, text=True, cwd=cwd,
                          env=env, timeout=600)


def test_a_subject_that_ends_the_process_fails_closed_with_no_report(tmp_path):
    """``os._exit(0)`` inside ``fit`` ended the old gate with exit 0 and no report: a green CI job."""
    out = tmp_path / "reports"
    proc = _audit("check", "subjects.crashing:HardExitInFit", *BASE, "--out", str(out))
    assert proc.returncode == EXIT_UNFINISHED, proc.stderr
    assert "the gate could not finish" in proc.stderr and "exit status 0" in proc.stderr
    assert not any(out.rglob("report.json"))  # nothing half-written


def test_an_unwritable_out_is_a_usage_error_before_any_sampling(tmp_path):
    """``--out`` under a file: exit 2 naming the option, before the subject is even imported (a subject that
    does not exist would otherwise be the error)."""
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    proc = _audit("check", "no_such_module:Thing", *BASE, "--out", str(blocker / "reports"))
    assert proc.returncode == 2
    assert "--out" in proc.stderr and "cannot be written" in proc.stderr and "no_such_module" not in proc.stderr


def test_a_complete_pass_exits_0_through_the_worker(tmp_path):
    proc = _audit("check", "subjects.crashing:RefusesEmpty", *BASE, "--state", "off", "--out", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "check-subjects.crashing-RefusesEmpty" / "report.json").exists()


def test_the_gate_failing_is_never_read_as_a_violation(capsys):
    def crashes():
        raise RuntimeError("a bug in the gate")

    assert worker_main(crashes) == EXIT_UNFINISHED
    assert "a bug in the gate" in capsys.readouterr().err


def test_only_the_commands_that_run_outside_code_get_a_worker():
    assert runs_outside_code(["check", "m:C", "--epsilon", "1"]) and runs_outside_code(["compare", "m:C"])
    assert not runs_outside_code(["run", "privatree"]) and not runs_outside_code(["check", "--help"])
    assert not runs_outside_code([])
