"""`audit check`, the claims file, resumable runs and the pytest plugin, tried as a user would.

Every audit here is a sampled test at alpha = 0.05 with a fixed seed; the
broken subjects lose 2 to 3 times their claim, far above the bound's margin.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from audit.__main__ import main
from audit.budget import ENV_VAR

HERE = Path(__file__).parent
ENV = {**os.environ, "PYTHONPATH": str(HERE) + os.pathsep + os.environ.get("PYTHONPATH", "")}


@pytest.fixture(autouse=True)
def subjects_on_path(monkeypatch):
    monkeypatch.syspath_prepend(str(HERE))


def test_check_flags_broken_and_passes_correct(tmp_path, capsys):
    broken = main(["check", "subjects.noise:MyLaplace", "--epsilon", "1", "--params",
                   '{"epsilon": 1, "broken": true}', "--out", str(tmp_path), "--quiet"])
    assert broken == 1
    assert "VIOLATED: subjects.noise:MyLaplace" in capsys.readouterr().err
    data = json.loads((tmp_path / "check-subjects.noise-MyLaplace" / "report.json").read_text())
    assert data["claims"][0]["verdict"] == "violation" and data["claims"][0]["epsilon_lower"] > 1.5
    correct = main(["check", "subjects.noise:MyLaplace", "--epsilon", "1", "--params", '{"epsilon": 1}',
                    "--out", str(tmp_path), "--quiet", "--no-float-probe"])
    assert correct == 0  # epsilon-DP in real arithmetic: passes once the floating-point events are off
    # ... but value + numpy Laplace noise, rounded to a double, is not DP (Mironov 2012): the probe sees it
    assert main(["check", "subjects.noise:MyLaplace", "--epsilon", "1", "--params", '{"epsilon": 1}',
                 "--out", str(tmp_path), "--quiet"]) == 1
    data = json.loads((tmp_path / "check-subjects.noise-MyLaplace" / "report.json").read_text())
    assert "float pattern" in data["claims"][0]["detail"]


def test_check_an_estimator_under_substitution(tmp_path):
    args = ["check", "subjects.noise:NoisyMajority", "--epsilon", "1", "--neighbours", "substitute",
            "--out", str(tmp_path), "--quiet", "--n-samples", "6000"]
    assert main(args + ["--params", '{"epsilon": 1}']) == 0
    assert main(args + ["--params", '{"epsilon": 1, "broken": true}']) == 1


def test_claims_file_with_one_broken_and_one_correct_subject(tmp_path):
    claims = tmp_path / "dp-claims.toml"
    claims.write_text(
        'budget = "quick"\nseed = 3\n\n'
        '[[subject]]\nname = "good"\ncallable = "subjects.noise:MyLaplace"\nparams = { epsilon = 1.0 }\nepsilon = 1.0\n'
        'float_probe = false\n\n'
        '[[subject]]\nname = "halved-noise"\ncallable = "subjects.noise:MyLaplace"\n'
        'params = { epsilon = 1.0, broken = true }\nepsilon = 1.0\n')
    assert main(["check", "--claims", str(claims), "--out", str(tmp_path), "--quiet"]) == 1
    data = json.loads((tmp_path / "dp-claims" / "report.json").read_text())
    verdicts = {c["id"]: c["verdict"] for c in data["claims"]}
    assert verdicts == {"good": "pass", "halved-noise": "violation"}
    assert data["seed"] == 3 and data["budget"] == "quick"


def test_a_subjects_numbers_do_not_depend_on_its_place_in_a_claims_file(tmp_path):
    """Every subject is audited from the run's seed: the same subject as the file's first and second entry, and
    from the command line, gives the same bound (deterministic: same seed, same samples)."""
    entry = ('[[subject]]\nname = "{}"\ncallable = "subjects.noise:MyLaplace"\nparams = {{ epsilon = 1.0 }}\n'
             'epsilon = 1.0\nfloat_probe = false\n\n')
    claims = tmp_path / "dp-claims.toml"
    claims.write_text('budget = "quick"\nseed = 5\n\n' + entry.format("first") + entry.format("second"))
    assert main(["check", "--claims", str(claims), "--out", str(tmp_path), "--quiet", "--witnesses", "off"]) == 0
    rows = json.loads((tmp_path / "dp-claims" / "report.json").read_text())["claims"]
    assert main(["check", "subjects.noise:MyLaplace", "--params", '{"epsilon": 1}', "--epsilon", "1", "--seed", "5",
                 "--no-float-probe", "--out", str(tmp_path), "--quiet", "--witnesses", "off"]) == 0
    alone = json.loads((tmp_path / "check-subjects.noise-MyLaplace" / "report.json").read_text())["claims"][0]
    assert rows[0]["epsilon_lower"] == rows[1]["epsilon_lower"] == alone["epsilon_lower"]


def test_claims_file_budget_yields_only_to_this_command_lines_budget(tmp_path, monkeypatch):
    """``--budget`` overrides the file's budget when main's own argv gives it (``--budget=X`` too), whatever
    ``sys.argv`` holds (a caller's, e.g. pytest's)."""
    subject = ('[[subject]]\nname = "good"\ncallable = "subjects.noise:MyLaplace"\nparams = { epsilon = 1.0 }\n'
               'epsilon = 1.0\nfloat_probe = false\n')
    claims = tmp_path / "budgets.toml"
    claims.write_text('budget = "standard"\nseed = 3\n\n' + subject)
    assert main(["check", "--claims", str(claims), "--budget=quick", "--out", str(tmp_path), "--quiet"]) == 0
    assert json.loads((tmp_path / "budgets" / "report.json").read_text())["budget"] == "quick"
    claims.write_text('budget = "quick"\nseed = 3\n\n' + subject)
    monkeypatch.setattr("sys.argv", ["audit", "check", "--budget", "standard"])
    assert main(["check", "--claims", str(claims), "--out", str(tmp_path), "--quiet"]) == 0
    assert json.loads((tmp_path / "budgets" / "report.json").read_text())["budget"] == "quick"


def test_claims_file_records_a_known_violation(tmp_path, capsys):
    """`expected = "violation"` turns a known violation into an expected row (exit 0, the report says so),
    and a subject so marked that passes is a mismatch (exit 1): the known leak is gone or went unseen."""
    subject = ('[[subject]]\nname = "{name}"\ncallable = "subjects.noise:MyLaplace"\n'
               'params = {{ epsilon = 1.0{extra} }}\nepsilon = 1.0\nexpected = "violation"\nfloat_probe = false\n')
    claims = tmp_path / "known.toml"
    claims.write_text('budget = "quick"\nseed = 3\n\n' + subject.format(name="halved-noise", extra=", broken = true"))
    assert main(["check", "--claims", str(claims), "--out", str(tmp_path), "--quiet"]) == 0
    assert "VIOLATED: halved-noise (expected)" in capsys.readouterr().err
    data = json.loads((tmp_path / "known" / "report.json").read_text())
    assert data["ok"] and data["claims"][0]["verdict"] == data["claims"][0]["expected"] == "violation"
    assert "all verdicts as expected" in (tmp_path / "known" / "report.md").read_text()
    claims.write_text('budget = "quick"\nseed = 3\n\n' + subject.format(name="good", extra=""))
    assert main(["check", "--claims", str(claims), "--out", str(tmp_path), "--quiet"]) == 1
    assert "MISMATCH** in good" in (tmp_path / "known" / "report.md").read_text()


@pytest.mark.parametrize("body,message", [
    ('[[subject]]\ncallable = "subjects.noise:MyLaplace"\nepsilom = 1.0\n', ":3: unknown key 'epsilom'"),
    ('[[subject]]\ncallable = "subjects.noise:MyLaplace"\n', "subject 1 has no 'epsilon'"),
    ('colour = "red"\n[[subject]]\ncallable = "a:b"\nepsilon = 1\n', ":1: unknown key 'colour'"),
    ('[[subject]]\ncallable = "subjects.noise:MyLaplace"\nepsilon = -1\n', "epsilon"),
    ('[[subject]]\ncallable = "a:b"\nepsilon = 1\n\n[[subject]]\ncallable = "c:d"\nepsilon = 1\nexpected = "fail"\n',
     ":8: subject 'c:d': expected must be one of ('pass', 'violation'), got 'fail'"),
])
def test_claims_file_errors_name_the_line_and_key(tmp_path, capsys, body, message):
    claims = tmp_path / "bad.toml"
    claims.write_text(body)
    assert main(["check", "--claims", str(claims), "--out", str(tmp_path), "--quiet"]) == 2
    assert message in capsys.readouterr().err
    assert [p.name for p in tmp_path.iterdir()] == ["bad.toml"]  # nothing half-written


@pytest.mark.parametrize("args,message", [
    (["check", "no_such_module:Thing", "--epsilon", "1"], "cannot import module 'no_such_module'"),
    (["check", "no_such_module:Thing", "--epsilon", "1"], "run from the directory that holds the module"),
    (["check", "mine.py:Thing", "--epsilon", "1"], "for mine.py write mine:Thing"),
    (["check", "subjects.noise:Nope", "--epsilon", "1"], "has no attribute 'Nope'"),
    (["check", "./no_dir/mine.py:Thing", "--epsilon", "1"], "for mine.py write mine:Thing"),
    (["check", "subjects.noise:MyLaplce", "--epsilon", "1"], "did you mean 'MyLaplace'"),
    (["check", "subjects.noise:MyLaplace", "--epsilon", "1"], "MyLaplace(**{}) failed"),
    (["check", "subjects.noise:fails_to_build", "--epsilon", "1", "--params", '{"epsilon": 1}'],
     "RuntimeError: cannot build"),
    (["check", "subjects.noise:MyLaplace", "--epsilon", "1", "--params", '{"epsilon": 1}', "--data", "query:x"],
     "query:N needs an integer"),
    (["check", "subjects.noise:MyLaplace"], "needs --epsilon"),
    (["check", "subjects.noise:MyLaplace", "--epsilon", "0", "--params", '{"epsilon": 1}'], "epsilon"),
    (["check", "subjects.noise:MyLaplace", "--epsilon", "1", "--params", "[1]"], "JSON object"),
])
def test_check_usage_errors_say_which_and_where(tmp_path, capsys, args, message):
    assert main(args + ["--out", str(tmp_path), "--quiet"]) == 2
    assert message in capsys.readouterr().err


def test_usage_errors_come_first_and_short(tmp_path, capsys):
    """A subject that cannot be imported stops before any claim's progress line; a bad option value prints the
    error and where the options are listed, not the whole usage block; no command at all lists the commands."""
    assert main(["check", "subjects.noise:Nope", "--epsilon", "1", "--out", str(tmp_path)]) == 2
    out = capsys.readouterr()
    assert "claim 1/1" not in out.out + out.err and "has no attribute 'Nope'" in out.err
    assert main(["check", "subjects.noise:MyLaplace", "--epsilon", "abc"]) == 2
    err = capsys.readouterr().err
    assert "invalid float value: 'abc'" in err and "usage:" not in err and "--help lists the options" in err
    assert main([]) == 2
    err = capsys.readouterr().err
    assert "required: COMMAND" in err and "check" in err and "findings" in err


def test_public_facts_the_estimator_was_given_that_differ_from_the_audited_domain_are_warned_of():
    """``--classes 2,3`` for an estimator built with ``classes=(0, 1)``: the gate feeds labels the estimator ignores
    and would pass any learner, so the console and the report say so."""
    from audit.gate.inputs import disagreeing_facts
    from subjects.noisy_counts import NoisyCounts

    est = NoisyCounts(classes=(0, 1))
    assert disagreeing_facts(est, [(0.0, 1.0)], [1, 0]) == []
    (note,) = disagreeing_facts(est, [(0.0, 1.0)], [2, 3])
    assert note.startswith("WARNING: the estimator's own classes=[0, 1] differ from the audited classes [2, 3]")
    est.bounds = [(0, 2)]
    assert "own bounds=[[0.0, 2.0]] differ" in disagreeing_facts(est, [(0.0, 1.0)], [0, 1])[0]
    assert disagreeing_facts(est, [(0.0, 2.0)], [0, 1]) == []


def test_a_subject_that_rejects_the_data_is_reported(tmp_path, capsys):
    """An unknown dataset, and an estimator that raises during fit: the message says which and where."""
    assert main(["check", "subjects.noise:NoisyMajority", "--epsilon", "1", "--data", "builtin:nope",
                 "--out", str(tmp_path), "--quiet"]) == 2
    assert "unknown built-in dataset 'nope'" in capsys.readouterr().err
    assert main(["check", "subjects.noise:RaisesInFit", "--epsilon", "1", "--out", str(tmp_path), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "auditing 'subjects.noise:RaisesInFit'" in err and "raised at sample 0" in err
    assert "X has the wrong shape for me" in err


def test_interrupted_run_resumes_to_the_same_numbers(tmp_path, monkeypatch):
    """Interrupt a claims-file run after two of its four estimates; --resume finishes it
    with the numbers of an uninterrupted run of the same seed."""
    import audit.estimate as est

    claims = tmp_path / "four.toml"
    claims.write_text("".join(
        f'[[subject]]\nname = "s{i}"\ncallable = "subjects.noise:MyLaplace"\nparams = {{ epsilon = 1.0 }}\n'
        f'epsilon = 1.0\nfloat_probe = false\n\n' for i in range(4)))
    args = ["check", "--claims", str(claims), "--budget", "quick", "--quiet"]
    assert main(args + ["--out", str(tmp_path / "a")]) == 0
    real = est.estimate_epsilon
    calls = {"n": 0}

    def interrupt_after_two(*a, **k):
        calls["n"] += 1
        if calls["n"] > 2:
            raise KeyboardInterrupt
        return real(*a, **k)

    monkeypatch.setattr(est, "estimate_epsilon", interrupt_after_two)
    resumed = tmp_path / "b"
    assert main(args + ["--out", str(resumed)]) == 130  # Ctrl-C: a line naming the --resume command, no traceback
    saved = json.loads(next(resumed.glob(".four.checkpoint-*.json")).read_text())
    assert len(saved) == 3 and "elapsed_s" in saved and not (resumed / "four").exists()  # 2 estimates + time so far
    monkeypatch.setattr(est, "estimate_epsilon", real)
    assert main(args + ["--out", str(resumed), "--resume"]) == 0
    a = json.loads((tmp_path / "a" / "four" / "report.json").read_text())
    b = json.loads((resumed / "four" / "report.json").read_text())
    assert a["claims"] == b["claims"]
    assert not list(resumed.glob(".four.checkpoint-*.json"))  # removed once the report is whole


def test_pytest_plugin_sets_the_budget(tmp_path):
    test_file = tmp_path / "test_budget.py"
    test_file.write_text(
        "import os\n"
        "from audit.budget import samples_for\n"
        "def test_budget(dp_samples):\n"
        f"    assert os.environ['{ENV_VAR}'] == 'quick'\n"
        "    assert dp_samples == samples_for('quick') == 20000\n")
    env = {k: v for k, v in ENV.items() if k != ENV_VAR}
    proc = subprocess.run([sys.executable, "-m", "pytest", str(test_file), "--dp-budget", "quick", "-q",
                           "-p", "no:cacheprovider"], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 passed" in proc.stdout


def test_a_subject_that_prints_and_warns_every_fit_does_not_flood_the_console(tmp_path):
    """The sampled fits' printed lines go nowhere (the determinism probe reads what a fit prints), and a warning
    the subject raises on every fit is shown once. Deterministic: the verdict is not asserted."""
    proc = subprocess.run([sys.executable, "-m", "audit", "check", "subjects.chatty:ChattyCounts", "--epsilon", "1",
                           "--bounds", "[[0, 1]]", "--classes", "0,1", "--out", str(tmp_path), "--quiet",
                           "--witnesses", "off"], capture_output=True, text=True, env=ENV, cwd=tmp_path, timeout=600)
    assert "ChattyCounts: fitted" not in proc.stdout + proc.stderr
    assert proc.stderr.count("UserWarning: epsilon >= 1 gives a weak guarantee") == 1, proc.stderr[-2000:]
    assert "ResourceWarning" not in proc.stderr
    assert len((proc.stdout + proc.stderr).splitlines()) <= 8


def test_a_domain_taken_from_the_default_dataset_is_said(tmp_path, capsys):
    """Without --bounds and --classes the claim is audited on the default dataset's domain: the console and the
    report say which, and how to give the public one."""
    args = ["check", "subjects.noisy_counts:NoisyCounts", "--epsilon", "1", "--n-samples", "300", "--no-scale",
            "--witnesses", "off", "--out", str(tmp_path)]
    assert main(args) == 0
    said = "domain: bounds [[0.0, 1.0], [0.0, 1.0]], classes [0, 1], from the dataset builtin:blobs"
    assert said in capsys.readouterr().err + "".join(p.read_text() for p in tmp_path.glob("*/report.md"))
    assert main(args + ["--bounds", "[[0, 1], [0, 1]]", "--classes", "0,1"]) == 0
    assert "domain: bounds" not in capsys.readouterr().err
