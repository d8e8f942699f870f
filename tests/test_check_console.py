"""The console explains itself (issue 27 item 5): what decided a verdict, progress, missing extras, help texts,
claims-file lines, readable events and ``--params`` beyond JSON.

Sampled verdicts use fixed seeds at alpha 0.05 and subjects that lose far more than their claim.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np

import pytest

from audit.__main__ import main

HERE = Path(__file__).parent


@pytest.fixture(autouse=True)
def subjects_on_path(monkeypatch):
    monkeypatch.syspath_prepend(str(HERE))


def _claim_lines(out: str) -> list[str]:
    return [line for line in out.splitlines() if " claim " in line and ("✓" in line or "✗" in line)]


def test_a_float_probe_violation_says_so_on_its_console_line(tmp_path, capsys):
    assert main(["check", "subjects.noise:MyLaplace", "--params", '{"epsilon": 1}', "--epsilon", "1",
                 "--out", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    (line,) = _claim_lines(out)
    assert "violation" in line and "floating-point probe" in line and "--no-float-probe" in line
    assert "  remedy: add the noise on a public lattice" in out  # what to do, on the console, not only the report
    row = json.loads((tmp_path / "check-subjects.noise-MyLaplace" / "report.json").read_text())["claims"][0]
    assert row["decided_by"][0] == "float probe" and "--no-float-probe" in row["detail"]
    assert "(through the float probe)" in (tmp_path / "check-subjects.noise-MyLaplace" / "report.md").read_text()
    # broken noise is flagged through the outputs: the line does not blame the probe
    assert main(["check", "subjects.noise:MyLaplace", "--params", '{"epsilon": 1, "broken": true}', "--epsilon", "1",
                 "--no-float-probe", "--out", str(tmp_path)]) == 1
    (line,) = _claim_lines(capsys.readouterr().out)
    assert "violation" in line and "floating-point" not in line


def test_the_console_line_is_the_final_verdict(tmp_path, capsys):
    """A violation decided after the sampled bound (kept state) reads violation on its line, not pass."""
    assert main(["check", "subjects.kept_state:NoisyCountModel", "--epsilon", "1", "--no-search", "--n-samples",
                 "2000", "--bounds", "[[0, 1]]", "--classes", "0,1", "--out", str(tmp_path)]) == 1
    (line,) = _claim_lines(capsys.readouterr().out)
    assert line.split("] ", 1)[1].startswith("✗ claim subjects.kept_state:NoisyCountModel: violation")
    assert "through kept state" in line and "--state warn" in line


def _parsers(parser, path="python -m audit"):
    """Every parser of the command line, with its command path."""
    import argparse

    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _parsers(sub, f"{path} {name}")


def test_every_flag_and_command_has_help_text():
    import argparse

    from audit.__main__ import build_parser

    missing = []
    for path, parser in _parsers(build_parser()):
        for action in parser._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            if not (action.help or "").strip() or action.help == argparse.SUPPRESS:
                missing.append(f"{path} {'/'.join(action.option_strings) or action.dest}")
            if isinstance(action, argparse._SubParsersAction):
                for choice in action._choices_actions:  # each command's line in its parent's --help
                    if not (choice.help or "").strip():
                        missing.append(f"{path} {choice.dest}")
    assert not missing, f"flags or commands without help text: {missing}"
    assert len(list(_parsers(build_parser()))) >= 9  # the walk reached every subcommand


@pytest.mark.parametrize("body,message", [
    ('budget = "quick"\n\n[[subjects]]\ncallable = "a:b"\nepsilon = 1\n',
     ":3: unknown key 'subjects' (did you mean 'subject'?)"),
    ('[[subject]]\ncallable = "a:b"\nepsilon = 1\n\n[subject.extra]\nx = 1\n', ":5: unknown key 'extra'"),
    ('[[subject]]\ncallable = "a:b"\nepsilon = 1\nparmas.epsilon = 1\n',
     ":4: unknown key 'parmas' in subject 1 (did you mean 'params'?)"),
    ('[[subject]]\ncallable = "a:b"\nepsilon = 1\n\n[[subject]]\ncallable = "c:d"\nepsilon = 1\n"colour" = "red"\n',
     ":8: unknown key 'colour' in subject 2"),
    ('[[subject]]\ncallable = "a:b"\nepsilon = 1\nbounds = [[1, 0]]\n', ":4: subject 'a:b': --bounds needs"),
    ('[[subject]]\ncallable = "a:b"\nepsilon = 1\n\n[[subject]]\ncallable = "c:d"\nepsilon = 1\nstate = "loud"\n',
     ":8: subject 'c:d': state must be"),
    ('[[subject]]\ncallable = "a:b"\nepsilon = 1\nneighbours = "swap"\n', ":4: subject 'a:b': neighbouring must be"),
    ('[[subject]]\ncallable = "a:b"\nname = "x"\nepsilon = 1\n[[subject]]\ncallable = "c:d"\nepsilon = 2\n'
     'name = "x"\n', ":8: subject name 'x' is used twice"),
    ('[[subject]]\ncallable = "a:b"\nepsilon = = 1\n', ":3: not valid TOML"),
    ('subject = [{ callable = "a:b", epsilon = 1, colour = 2 }]\n', ":1: unknown key 'colour'"),
    ('[[subject]]\ncallable = "a:b"\nepsilon = 1\nscale_records = 500\n',
     ":4: subject 'a:b': scale_records must be an integer >= 1000, got 500"),
])
def test_claims_file_errors_give_the_real_line(tmp_path, capsys, body, message):
    claims = tmp_path / "bad.toml"
    claims.write_text(body)
    assert main(["check", "--claims", str(claims), "--out", str(tmp_path), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert f"{claims}{message}" in err, err
    assert f"{claims}:0:" not in err


def test_a_missing_optional_dependency_names_the_extra(tmp_path, capsys, monkeypatch):
    """diffprivlib (an adapter's mechanism, a factory, an estimator imported by name), distributed
    (--scheduler) and hypothesis (compare --noise off) missing: exit 2 naming the extra to install."""
    import sys

    for name in ("diffprivlib", "distributed", "hypothesis"):
        monkeypatch.setitem(sys.modules, name, None)  # import raises ModuleNotFoundError, installed or not
        for cached in [m for m in sys.modules if m.startswith(name + ".")]:  # submodules an earlier test imported
            monkeypatch.delitem(sys.modules, cached)
    out = ["--out", str(tmp_path), "--quiet"]
    cases = [
        (["check", "audit.adapters.diffprivlib:Laplace", "--params", '{"epsilon": 1}', "--epsilon", "1"], "diffprivlib"),
        (["check", "audit.adapters.diffprivlib:decision_tree", "--params",
          '{"epsilon": 1, "max_depth": 1, "bounds": [[0, 0], [1, 1]], "classes": [0, 1]}', "--epsilon", "1"],
         "diffprivlib"),
        (["check", "diffprivlib.models:GaussianNB", "--epsilon", "1"], "diffprivlib"),
        (["check", "subjects.noise:MyLaplace", "--params", '{"epsilon": 1}', "--epsilon", "1", "--scheduler",
          "tcp://127.0.0.1:1"], "distributed"),
        (["compare", "reference.privatree:PrivaTreeClassifier", "--reference", "privatree", "--noise", "off"], "test"),
    ]
    for argv, extra in cases:
        assert main(argv + out) == 2, argv
        err = capsys.readouterr().err
        assert f"pip install 'dptree-audit[{extra}]'" in err and err.count("dptree-audit[") == 1, err


PARAMS_BASE = ["check", "subjects.strict_params:TupleBounds", "--epsilon", "1", "--no-search", "--no-scale",
               "--n-samples", "2000", "--bounds", "[[0, 1]]", "--classes", "0,1", "--quiet"]


def test_params_accepts_a_python_literal_and_a_factory(tmp_path, capsys):
    out = ["--out", str(tmp_path)]
    assert main(PARAMS_BASE + ["--params", '{"epsilon": 1, "bounds": [[0], [1]]}'] + out) == 2  # JSON has no tuple
    assert "bounds must be a tuple" in capsys.readouterr().err
    assert main(PARAMS_BASE + ["--params", "{'epsilon': 1, 'bounds': ((0,), (1,))}"] + out) == 0
    row = json.loads((tmp_path / "check-subjects.strict_params-TupleBounds" / "report.json").read_text())["claims"][0]
    assert row["subject"].startswith("subjects.strict_params:TupleBounds {'epsilon': 1, 'bounds': ((0,), (1,))}")
    assert main(PARAMS_BASE + ["--params", "subjects.strict_params:params"] + out) == 0  # numpy arrays
    row = json.loads((tmp_path / "check-subjects.strict_params-TupleBounds" / "report.json").read_text())["claims"][0]
    assert "'bounds': ([0.0], [1.0])" in row["subject"]


@pytest.mark.parametrize("text,message", [
    ("[1]", "--params must be a JSON object"),
    ("{'a': open('x')}", "is neither"),
    ("builtins:list", "--params builtins:list() must return a dict, got list"),
    ("subjects.nope:params", "cannot import module 'subjects.nope'"),
])
def test_params_errors_name_the_forms(tmp_path, capsys, text, message):
    assert main(PARAMS_BASE + ["--params", text, "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert message in err, err


def test_claims_file_params_as_a_literal_string(tmp_path):
    claims = tmp_path / "tuple.toml"
    claims.write_text('[[subject]]\ncallable = "subjects.strict_params:TupleBounds"\n'
                      "params = \"{'epsilon': 1.0, 'bounds': ((0,), (1,))}\"\nepsilon = 1\nsearch = false\n"
                      'scale = false\nn_samples = 2000\nbounds = [[0, 1]]\nclasses = [0, 1]\n\n'
                      '[[subject]]\nname = "bad"\ncallable = "subjects.strict_params:TupleBounds"\nepsilon = 1\n'
                      'params = "[1]"\n')
    assert main(["check", "--claims", str(claims), "--out", str(tmp_path), "--quiet"]) == 2  # the bad one: line 15
    from audit.check import CheckError
    from audit.frontends.claims_file import load_claims

    with pytest.raises(CheckError, match=r"tuple.toml:15: subject 'bad': params must be"):
        load_claims(claims)
    claims.write_text(claims.read_text().split("\n\n[[subject]]\nname")[0] + "\n")
    assert main(["check", "--claims", str(claims), "--budget", "quick", "--out", str(tmp_path), "--quiet"]) == 0


class _Majority:
    """Predicts the majority label, "yes" or "no" (no noise); refuses an empty dataset."""

    def __init__(self, random_state=None):
        self.random_state = random_state

    def fit(self, X, y):
        if len(y) == 0:
            raise ValueError("empty")
        self.label_ = "yes" if np.mean(y) > 0.5 else "no"
        return self

    def predict(self, X):
        return np.full(len(X), self.label_)


def test_events_on_estimator_releases_name_their_coordinates():
    from audit.engine.estimation.events import choose_event, coordinates
    from audit.engine.release import EstimatorRelease
    from audit.engine.estimation.sampling import Samples

    mech = EstimatorRelease(_Majority, {}, bounds=[(0.0, 1.0)], classes=["no", "yes"], release="predictions")
    zeros, ones, empty = (np.zeros((3, 1)), np.zeros(3)), (np.zeros((3, 1)), np.ones(3)), (np.zeros((0, 1)), np.zeros(0))
    mech.calibrate([zeros, ones, empty])
    assert mech.names == ["raised"] + [f"prediction at ({q})" for q in (0.125, 0.375, 0.625, 0.875)]
    rng = np.random.default_rng(0)

    def sample(d):
        return Samples("vector", np.array([mech(d, rng) for _ in range(60)]), (5,))

    with coordinates(mech.coordinates()):
        by_prediction = choose_event(sample(ones), sample(zeros), delta=0.0, alpha=0.05).description
        by_refusal = choose_event(sample(empty), sample(zeros), delta=0.0, alpha=0.05).description
    assert "x[" not in by_prediction + by_refusal
    assert by_prediction.startswith("prediction at (") and "is 'yes'" in by_prediction, by_prediction
    assert re.match(r"fit (raised ValueError\(|succeeded)(.*) \[raised [<>]= ", by_refusal), by_refusal
    # products, ratios and patterns of named coordinates
    names = mech.coordinates()
    assert names.operation(1, "*", 2) == "(prediction at (0.125)) * (prediction at (0.375))"
    assert names.pattern([(0, 0.0), (1, 1.0), (2, None)]) == \
        "pattern (fit succeeded; prediction at (0.125) is 'yes'; 1 other coordinate(s) free)"
    # outside the block, vectors keep x[j]
    assert choose_event(sample(ones), sample(zeros), delta=0.0, alpha=0.05).description.startswith("x[")


def test_check_reports_events_in_words(tmp_path):
    base = ["--epsilon", "1", "--quiet", "--n-samples", "2000", "--no-scale", "--state", "off", "--after-finding",
            "sample", "--bounds",
            "[[0, 1]]", "--classes", "0,1", "--out", str(tmp_path)]
    assert main(["check", "subjects.crashing:OddSizeCrash", "--no-search", *base]) == 1
    row = json.loads((tmp_path / "check-subjects.crashing-OddSizeCrash" / "report.json").read_text())["claims"][0]
    assert re.match(r"fit (raised ValueError|succeeded) \[raised [<>]= ", row["evidence_data"]["event"])
    assert row["decided_by"][0] == "exception"
    assert main(["check", "subjects.crashing:RefusesEmptyLeaky", "--exceptions", "report", *base]) == 1
    row = json.loads((tmp_path / "check-subjects.crashing-RefusesEmptyLeaky" / "report.json").read_text())["claims"][0]
    assert row["evidence_data"]["event"].startswith("prediction at (0.") and "x[" not in row["detail"]


def test_compare_report_is_named_after_both_and_takes_literal_params(tmp_path, capsys):
    """A literal --params (the interval median's bounds as a tuple) for both sides; the report names the
    candidate and the reference. An identical candidate: false-alarm rate 0.01 at a fixed seed."""
    argv = ["compare", "reference.mechanisms.median:IntervalExponential", "--reference", "interval-median",
            "--params", "{'epsilon': 1.0, 'bounds': (0.0, 1.0)}", "--samples", "500", "--out", str(tmp_path)]
    assert main(argv + ["--quiet"]) == 0
    # the folder also names the parameters (runs with other --params do not overwrite it)
    (folder,) = tmp_path.glob("compare-reference.mechanisms.median-IntervalExponential-vs-interval-median-p*")
    data = json.loads((folder / "report.json").read_text())
    assert data["target"] == folder.name and "'bounds': (0.0, 1.0)" in data["notes"][0]


def test_check_shows_each_pair_screened_and_confirmed_with_the_time_left_on_a_terminal(tmp_path, capsys,
                                                                                       monkeypatch):
    from audit.engine.runs import progress

    argv = ["check", "subjects.crashing:RefusesEmptyLeaky", "--exceptions", "report", "--epsilon", "1",
            "--n-samples", "2000", "--scale-records", "2000", "--state", "off", "--after-finding", "sample",
            "--bounds", "[[0, 1]]", "--classes",
            "0,1", "--out", str(tmp_path)]
    assert main(argv) == 1
    out = capsys.readouterr().out
    assert "screening 25 candidate pairs: 39 datasets at 200 outputs each" in out
    assert "screened 25 candidate pairs in " in out and "best pilot scores: " in out
    assert "scale pattern 4/4 [pure region plus one record of another class]" in out
    assert re.search(r"pair 1/2 confirmed at [\d,]+ outputs per input \(look \d of 6\): \[", out), out
    assert "pair 2/2 confirmed" in out and "sequential confirmation stopped at look" in out
    assert "confirming the scale family's pair" in out and " left" not in out  # not a terminal: no time left
    lines = out.splitlines()
    assert lines.index(next(line for line in lines if "✗ claim" in line)) > \
        lines.index(next(line for line in lines if "pair 2/2 confirmed" in line))  # steps come before the row
    monkeypatch.setattr(progress, "_terminal", lambda: True)
    assert main(argv + ["--no-scale"]) == 1
    out = capsys.readouterr().out
    assert re.search(r"pair 1/2 confirmed .*; about \d+ (s|min) left", out), out
    assert main(argv + ["--quiet"]) == 1
    assert "confirmed" not in capsys.readouterr().out  # --quiet: the closing summary only


def test_claims_file_and_compare_show_progress(tmp_path, capsys):
    claims = tmp_path / "two.toml"
    claims.write_text("".join(
        f'[[subject]]\nname = "s{i}"\ncallable = "subjects.noise:MyLaplace"\nparams = {{ epsilon = 1.0 }}\n'
        f'epsilon = 1.0\nfloat_probe = false\nn_samples = 2000\n\n' for i in range(2)))
    assert main(["check", "--claims", str(claims), "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "claim 1/2 s0: subjects.noise:MyLaplace, claimed ε 1 (add-remove)" in out and "claim 2/2 s1" in out
    assert out.count("pair 1/1 confirmed at 2,000 outputs per input: answers 0 and 1: ε ≥ ") == 2
    assert main(["compare", "reference.mechanisms.median:IntervalExponential", "--reference", "interval-median",
                 "--samples", "300", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "input 1/2 'values {0.1, 0.2, 0.7}': 300 draws per side, Kolmogorov-Smirnov, p " in out
    assert "input 2/2 " in out
