"""Budgets in counts, never in seconds (issue 45 item 1): the same seed gives the same report on a quiet machine and
on a loaded one.

A loaded machine is simulated deterministically: the clock (``time.perf_counter`` and ``time.process_time``) is
patched to run 50 times faster than real time, so every stage looks 50 times slower. Before counts, the scale
family chose its largest size and the growth its stages from measured times, and the replay measurement and the
refusal fits stopped at a deadline: under such a clock the report changed. Now each stage's work is a count fixed by
the budget and the seed, and the time caps that remain are safety nets far above the expected (10 times): when one
stops a stage, the report names the stage and the cut and the audit did not finish (exit 3, never a pass).

Every run here is deterministic (fixed seeds, compared against itself): no false alarm is possible.
"""
from __future__ import annotations

import json
import time

import numpy as np
import pytest

from audit.__main__ import main
from audit.engine.scale import SCALE_PATTERNS, confirm_samples, scale_pairs
from audit.engine.state_probe import probe_estimator
from audit.engine.estimation.neighbours import NeighbourPair
from subjects import kept_state_forms as forms

#: a cheap estimator check that runs every stage with a count: search, the scale family (up to 2,000 records),
#: confirmation, the state probe, and growth (300 outputs per input leave the pass inconclusive: it grows to 1,200)
CHEAP = ["check", "subjects.kept_state:NoisyCountModel", "--params", '{"keep": false}', "--epsilon", "1",
         "--n-samples", "300", "--scale-records", "2000", "--bounds", "[[0, 1]]", "--classes", "0,1", "--quiet"]
#: measurements, not results: left out of the comparison
TIMING = ("elapsed_s", "stage_cpu_s", "versions")


def _slow_clock(monkeypatch, factor: float = 50.0):
    """Every duration read from ``time`` is ``factor`` times the real one (a machine ``factor`` times slower)."""
    real_wall, real_cpu = time.perf_counter, time.process_time
    wall0, cpu0 = real_wall(), real_cpu()
    monkeypatch.setattr(time, "perf_counter", lambda: wall0 + factor * (real_wall() - wall0))
    monkeypatch.setattr(time, "process_time", lambda: cpu0 + factor * (real_cpu() - cpu0))


def _report(out) -> dict:
    (path,) = out.glob("*/report.json")
    return json.loads(path.read_text())


def test_the_same_seed_gives_the_same_report_when_the_clock_runs_50_times_slower(tmp_path, monkeypatch):
    """The safety caps (about 10 times a stage's expected time) are lifted here, since 50 times slower is past them
    by design: this test is about the counts; the caps have their own tests below."""
    import audit.check as check_module

    monkeypatch.setattr(check_module, "GROW_SECONDS", {b: 1e9 for b in check_module.GROW_SECONDS})
    lifted = CHEAP + ["--scale-seconds", "1e9"]
    assert main(lifted + ["--out", str(tmp_path / "quiet")]) == 0
    quiet = _report(tmp_path / "quiet")
    _slow_clock(monkeypatch)
    assert main(lifted + ["--out", str(tmp_path / "loaded")]) == 0
    loaded = _report(tmp_path / "loaded")
    monkeypatch.undo()
    row = quiet["claims"][0]
    # every stage ran: the scale family to 2,000 records, the growth, the state probe; and nothing was cut
    assert "scale family: sizes 1,000 to 2,000 records" in row["detail"]
    assert row["grown"] and row["grown"][0]["n"] == 1_200 and row["state"]["verdict"] == "clean"
    assert "coverage_cut" not in row and row["power"] == "conclusive"
    # the CPU seconds of each stage are reported (a measurement: left out of the comparison below)
    stages = quiet["stage_cpu_s"][row["id"]]
    assert {"state probe", "scale family (choosing its pair)", "search and confirmation", "growth"} <= set(stages)
    assert all(v >= 0 for v in stages.values())
    for key in TIMING:
        quiet.pop(key), loaded.pop(key)
    assert loaded == quiet


def test_the_state_probes_replay_measures_the_same_counts_on_a_slow_clock(monkeypatch):
    """The replay's trials are counts (10, 20, ... 200 per side); its old 10 s deadline fell inside them at 50x."""
    X, Y = np.array([[0.1], [0.4], [0.6], [0.9]]), np.array([0, 0, 1, 1])
    quiet = [probe_estimator(cls, X, Y, epsilon=1.0).to_json() for cls in (forms.DerivedTreeSeed, forms.NoisyBigCounts)]
    _slow_clock(monkeypatch)
    loaded = [probe_estimator(cls, X, Y, epsilon=1.0).to_json() for cls in (forms.DerivedTreeSeed, forms.NoisyBigCounts)]
    assert loaded == quiet and quiet[0]["verdict"] == "violation" and quiet[1]["verdict"] == "clean"


def test_a_replay_stopped_by_its_safety_cap_is_inconclusive_and_says_so(monkeypatch):
    X, Y = np.array([[0.1], [0.4], [0.6], [0.9]]), np.array([0, 0, 1, 1])
    _slow_clock(monkeypatch, factor=1e9)  # any real time is past the cap
    rep = probe_estimator(forms.DerivedTreeSeed, X, Y, epsilon=1.0, max_seconds=1.0)
    assert rep.verdict == "inconclusive" and not rep.findings  # its replay (a violation above) was never measured
    assert rep.cut == "the replay measurement stopped at its 1 s safety cap after 0 of 200 trials per side"
    assert rep.to_json()["cut"] == rep.cut and rep.summary().startswith("state probe inconclusive: the replay")
    assert "replay calibrated but not measured (safety cap)" in rep.summary()


def test_the_scale_family_reaches_the_records_it_is_given_and_names_a_safety_cut(monkeypatch):
    """The sizes are 1,000 times powers of two up to ``n_max`` and the bisection steps: counts. A safety cap that
    stops the family keeps the patterns finished and names those left out."""
    def mech(data, rng):
        return int(len(data[1]) + rng.integers(0, 3))

    whole = scale_pairs(mech, [(0.0, 1.0)], [0, 1], n_max=2_000, seed=1)
    assert not whole.cut and len(whole.pairs) == len(SCALE_PATTERNS) and whole.n_max == 2_000
    assert all(sizes[0] == 1_000 and 2_000 in sizes for sizes in whole.sizes.values())
    _slow_clock(monkeypatch)
    again = scale_pairs(mech, [(0.0, 1.0)], [0, 1], n_max=2_000, seed=1)
    assert [p.description for p in again.pairs] == [p.description for p in whole.pairs]
    assert again.scores == whole.scores and again.sizes == whole.sizes
    _slow_clock(monkeypatch, factor=1e9)
    cut = scale_pairs(mech, [(0.0, 1.0)], [0, 1], n_max=2_000, seed=1, max_seconds=1.0)
    assert not cut.pairs and cut.cut.startswith("the scale family stopped at its 1 s safety cap in pattern 1/4")
    assert "CUT: " in cut.summary() and all(f"[{p}]" in cut.cut for p in SCALE_PATTERNS)
    with pytest.raises(ValueError, match="max_seconds must be a positive"):
        scale_pairs(mech, [(0.0, 1.0)], [0, 1], n_max=2_000, max_seconds=0)


def test_the_scale_pairs_confirmation_is_a_count_of_records():
    big = NeighbourPair((np.zeros((16_000, 1)), np.zeros(16_000)), (np.zeros((16_001, 1)), np.zeros(16_001)), "", "add-remove")
    small = NeighbourPair((np.zeros((10, 1)), np.zeros(10)), (np.zeros((11, 1)), np.zeros(11)), "", "add-remove")
    assert confirm_samples(big, 24_000_000, 20_000) == 24_000_000 // 16_001
    assert confirm_samples(small, 24_000_000, 20_000) == 20_000 and confirm_samples(big, 10, 20_000) == 200


def test_a_check_whose_scale_family_is_cut_did_not_finish_and_names_the_cut(tmp_path, capsys):
    """``--scale-seconds`` is a safety cap: a tiny one stops the family before its first size. The claim's pass
    (conclusive once grown, as in the first test) is no pass: the verdict reads inconclusive, the report and console
    name the stage and the cut, and ``check`` exits 3 (could not finish), with or without ``--strict-power``: the
    clock never decides a pass."""
    argv = CHEAP[:-1] + ["--scale-seconds", "1e-9", "--out", str(tmp_path)]
    assert main(argv) == 3
    captured = capsys.readouterr()
    assert "SAFETY CAP: the scale family stopped" in captured.out
    assert "COVERAGE CUT by a safety cap (scale family: " in captured.out
    assert "could not finish: " in captured.err and "a safety cap cut its coverage (scale family: " in captured.err
    row = _report(tmp_path)["claims"][0]
    assert row["verdict"] == "inconclusive" and row["power"] == "inconclusive" and row["finished"] is False
    assert [c["stage"] for c in row["coverage_cut"]] == ["scale family"]
    assert "coverage cut by a safety cap, so the audit did not finish: scale family" in row["detail"]
    assert main(argv + ["--strict-power", "--quiet"]) == 3


def test_the_python_door_says_an_audit_cut_by_a_safety_cap_did_not_finish():
    """``assert_private`` with the same tiny cap raises, and says the audit did not finish (not "inconclusive")."""
    from audit import assert_private, learner_mechanism
    from subjects.kept_state import NoisyCountModel

    mech = learner_mechanism(lambda: NoisyCountModel(keep=False))
    with pytest.raises(AssertionError, match="not shown: the audit did not finish .a safety cap cut its coverage: "
                                             "scale family: "):
        assert_private(mech, [], 1.0, n_samples=300, bounds=[[0, 1]], classes=[0, 1], scale_records=2000,
                       scale_seconds=1e-9)


@pytest.mark.parametrize("flag, value, words", [("--scale-records", "999", "--scale-records must be an integer >= 1000"),
                                                ("--scale-seconds", "0", "--scale-seconds must be a positive"),
                                                ("--grow-max", "1", "--grow-max must be an integer >= 2")])
def test_count_options_name_a_bad_value(tmp_path, capsys, flag, value, words):
    assert main(CHEAP + [flag, value, "--out", str(tmp_path)]) == 2
    assert words in capsys.readouterr().err
