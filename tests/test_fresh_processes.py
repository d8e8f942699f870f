"""The gate audits the randomness source (:mod:`audit.gate.fresh`) and samples exchangeably
(:func:`audit.engine.estimation.sampling.draw_many`).

Leaks: noise seeded at import (numpy's global seed, a module-level generator), from the clock in milliseconds, from
the process id. Controls: a fit time and a fit counter kept beside fresh noise, ``random_state`` forwarded to an
inner step. The probe's verdicts are at its alpha (2.5e-4, split over 8 candidates): a correct subject is flagged
by it with probability at most 2.5e-4; the controls here pass whatever the entropy.
"""
from __future__ import annotations

import json
import random
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from audit.__main__ import main
from audit.engine.estimation import sampling
from audit.gate.fresh import probe_fresh

X = np.array([[0.1], [0.4], [0.6], [0.9]])
Y = np.array([0, 1, 1, 0])
PAIRS = [SimpleNamespace(d0=(X, Y), d1=(X[:-1], Y[:-1]), description="the last record removed"),
         SimpleNamespace(d0=(X[:2], Y[:2]), d1=(X[:3], Y[:3]), description="a record added")]
GRID = np.linspace(0.0, 1.0, 5)[:, None]
BASE = ["--epsilon", "1", "--bounds", "[[0, 1]]", "--classes", "0,1", "--quiet", "--n-samples", "2000",
        "--no-scale"]


@pytest.fixture(autouse=True)
def _subjects_importable(monkeypatch):
    monkeypatch.syspath_prepend(str(Path(__file__).parent))


def _fresh(target):
    return probe_fresh(target, {}, PAIRS, grid=GRID, classes=[0, 1], epsilon=1.0)


@pytest.mark.parametrize("target, site", [
    ("subjects.seeded_at_import:GlobalSeededAtImport", "seeded_at_import.py:"),
    ("subjects.seeded_at_import:ModuleGenerator", "seeded_at_import.py:"),
    ("subjects.as_shipped:ClockSeeded", "as_shipped.py:"),
    ("subjects.as_shipped:PidSeeded", "as_shipped.py:"),
    ("subjects.as_shipped:AddressSeeded", "as_shipped.py:"),
])
def test_noise_an_adversary_can_enumerate_is_found_across_fresh_processes(target, site):
    rep = _fresh(target)
    assert rep.verdict == "violation", rep.summary()
    assert rep.epsilon_lower > 1.0 and rep.counts[0] > rep.counts[1]
    assert rep.paths[0]["path"] in ("model.counts_", "predict(grid)")
    assert any(s.startswith(site) for _, _, s in rep.seeds), rep.seeds  # the call site of a seed not from entropy
    assert "remedy: draw the noise from OS entropy" in rep.summary()


def test_the_seed_set_at_import_is_named_with_its_value_and_call():
    rep = _fresh("subjects.seeded_at_import:GlobalSeededAtImport")
    assert ("numpy.random.seed", "1234") in {(w, t) for w, t, _ in rep.seeds}
    assert rep.to_json()["constant_seeds"] and rep.to_json()["channel"] == "fresh processes"


@pytest.mark.parametrize("target", ["subjects.as_shipped:KeepsFitTime", "subjects.as_shipped:NumbersItsFits",
                                    "subjects.as_shipped:ForwardsRandomState", "subjects.shipped_leaks:Correct"])
def test_fresh_noise_is_clean_across_fresh_processes(target):
    rep = _fresh(target)
    assert rep.verdict == "clean" and rep.screened == 24, rep.summary()


def test_a_subject_given_as_an_object_that_cannot_be_reimported_is_skipped_and_says_why():
    rep = probe_fresh(lambda: None, {}, PAIRS, grid=GRID, classes=[0, 1], epsilon=1.0)
    assert rep.verdict == "skipped" and "MODULE:CALLABLE" in rep.notes[0]


def test_a_class_given_in_python_is_reimported_by_reference():
    from subjects.seeded_at_import import ModuleGenerator

    assert probe_fresh(ModuleGenerator, {}, PAIRS, grid=GRID, classes=[0, 1], epsilon=1.0).verdict == "violation"


def test_check_fails_a_module_level_generator_through_the_randomness_source(tmp_path):
    assert main(["check", "subjects.seeded_at_import:ModuleGenerator", *BASE, "--out", str(tmp_path)]) == 1
    row = json.loads((tmp_path / "check-subjects.seeded_at_import-ModuleGenerator" / "report.json")
                     .read_text())["claims"][0]
    assert row["verdict"] == "violation" and row["decided_by"] == ["determinism"]
    assert row["determinism"]["channel"] == "fresh processes"
    assert "violation through the randomness source" in row["detail"]


@pytest.mark.parametrize("name", ["KeepsFitTime", "NumbersItsFits", "ForwardsRandomState"])
def test_correct_code_that_keeps_a_time_a_counter_or_a_forwarded_seed_passes(tmp_path, name):
    """The old gate failed the first two through the order of its draws (every output of D drawn before any of
    D'), the third as kept state (the seed the gate itself injected, replayed)."""
    assert main(["check", f"subjects.as_shipped:{name}", *BASE, "--out", str(tmp_path)]) == 0


def _drifting(data, rng):
    """A correct-looking output beside a value that drifts with the process's history."""
    _drifting.calls += 1
    return (int(data), _drifting.calls)


def test_draws_are_exchangeable_in_time_and_keep_each_blocks_samples():
    """Three inputs drawn by one call: their outputs' call numbers are spread alike over the whole run (a drift
    cannot tell them apart), and each input's samples are those it gives alone (its own generator and global
    generators' states)."""
    _drifting.calls = 0
    items = [(k, 1000, np.random.SeedSequence(k)) for k in range(3)]
    calls = {i: np.array([v[1] for v in b.values]) for i, b in sampling.draw_many(_drifting, items)}
    # 3,000 calls in all, in runs of 16: each input's calls span the run and centre on its middle (drawn one input
    # after the other, their means were 500, 1,500 and 2,500); the order is seeded, so this holds every time
    assert all(c.min() < 100 and c.max() > 2900 and abs(c.mean() - 1500) < 400 for c in calls.values())

    def noisy(data, rng):
        return float(data + rng.laplace() + np.random.laplace() + random.random())

    def fresh_items():  # spawning children advances a SeedSequence: each call gets its own
        return [(k, 1000, np.random.SeedSequence(k)) for k in range(3)]

    together = {i: b.values for i, b in sampling.draw_many(noisy, fresh_items())}
    for i, item in enumerate(fresh_items()):
        alone = next(sampling.draw(noisy, *item)).values
        assert np.array_equal(alone, together[i])


def test_a_structure_that_switches_at_a_round_size_is_found_on_the_ladder():
    """The tiny candidates never reach 1,000 records; the ladder's pair 999 vs 1,000 does (determinism at its
    share of alpha, 1.25e-4: a correct subject is flagged with probability at most that)."""
    from audit.gate.determinism import probe_determinism
    from audit.gate.ladder import ladder_pairs
    from subjects.as_shipped import FinerAtAThousand

    pairs = ladder_pairs([(0.0, 1.0)], [0, 1], "add-remove", n_max=2_000)
    assert [p.description for p in pairs][:2] == ["[round size] 9 records vs 10", "[round size] 10 records vs 11"]
    rep = probe_determinism(FinerAtAThousand, pairs, grid=GRID, classes=[0, 1], epsilon=1.0, alpha=1.25e-4,
                            screen_pairs=len(pairs))
    assert rep.verdict == "violation" and rep.pair == "[round size] 999 records vs 1,000", rep.summary()
    assert [p["path"] for p in rep.paths] == ["model.n_bins_"]


CONTROL = "subjects.as_shipped:WithProvenance"  # a fit time, a run id, a fit counter, a JSON card, a forwarded seed
CONTROL_X = np.array([[0.2], [0.2], [0.2], [0.8]])
CONTROL_Y = np.array([0, 0, 0, 1])
CONTROL_PAIRS = [((CONTROL_X, CONTROL_Y), (CONTROL_X[:-1], CONTROL_Y[:-1]), "one record of class 1 removed")]


@pytest.mark.slow
def test_false_alarm_rate_of_the_sampled_audit_on_a_correct_model_that_keeps_its_provenance():
    """200 seeds of the sampled audit (1,000 outputs per input, one pair, state probe on) of a correct classifier
    that keeps its fit time, a run id, a fit counter and a JSON card, and forwards its random_state. Each run is a
    false alarm with probability <= 0.05, so the count is at most Binomial(200, 0.05) (mean 10); "refuted" means
    18 or more alarms, which a sound gate produces with probability < 0.003. The old gate, drawing every output of
    D before any of D', failed this control on every seed (the fit time ordered the two sides)."""
    from audit.gate.run import Subject, audit_subject

    alarms = 0
    for s in range(200):
        subject = Subject("control", CONTROL, 1.0, bounds=[(0.0, 1.0)], classes=[0, 1], search=False, scale=False,
                          n_samples=1000, determinism="off", grow=False, pairs=CONTROL_PAIRS)
        alarms += audit_subject(subject, "quick", s)["verdict"] == "violation"
    assert alarms < 18, alarms


@pytest.mark.slow
def test_false_alarm_rate_of_the_determinism_channels_on_the_same_control():
    """200 seeds of the in-process determinism probe on the search's candidate pairs and on the ladder of round
    sizes (up to 2,048 records), at their alphas (0.001 and 1.25e-4 per run): "refuted" means 3 or more alarms,
    which sound probes produce with probability < 0.002 (Binomial(200, 0.00113))."""
    from audit.gate.determinism import probe_determinism
    from audit.gate.ladder import ladder_pairs
    from audit.gate.search import candidate_pairs
    from subjects.as_shipped import WithProvenance

    tiny = candidate_pairs([(0.0, 1.0)], [0, 1], "add-remove", seed=0)
    ladder = ladder_pairs([(0.0, 1.0)], [0, 1], "add-remove", n_max=2_100)
    alarms = 0
    for s in range(200):
        for pairs, alpha in ((tiny, 1e-3), (ladder, 1.25e-4)):
            rep = probe_determinism(WithProvenance, pairs, grid=GRID, classes=[0, 1], epsilon=1.0, alpha=alpha,
                                    seed=s, screen_pairs=len(pairs) if pairs is ladder else 8)
            alarms += rep.verdict == "violation"
    assert alarms < 3, alarms


@pytest.mark.slow
def test_the_fresh_process_probe_never_flags_the_control():
    """20 runs of the fresh-process probe (its children draw OS entropy, which no seed can fix: that is what it
    tests). Each is a false alarm with probability <= 2.5e-4, so any alarm in 20 runs (probability <= 0.005)
    refutes it."""
    assert not any(_fresh(CONTROL).verdict == "violation" for _ in range(20))


def test_a_later_trace_channel_decides_or_joins_the_first_ones_report():
    """Each trace channel after the first (round sizes, fresh processes) decides when it finds a violation, and
    otherwise joins the report so far: its summary among the notes, and an inconclusive reading kept (a value it
    could not confirm above the claim makes a pass inconclusive, as the first channel's does)."""
    from audit.gate.channels import _joined
    from audit.gate.determinism import DeterminismReport

    clean = DeterminismReport()
    joined = _joined(clean, DeterminismReport(verdict="inconclusive", notes=["a value stayed"]), "at round sizes: ")
    assert joined is clean and joined.verdict == "inconclusive" and joined.notes[0].startswith("at round sizes: ")
    found = DeterminismReport(verdict="violation")
    assert _joined(DeterminismReport(), found) is found and found.notes


def test_an_inconclusive_fresh_probe_says_so():
    """Its summary read "no value was the same ..." whatever the verdict, an inconclusive one too."""
    from audit.gate.fresh import FreshReport

    rep = FreshReport(verdict="inconclusive", notes=["1 value(s) were the same in two fresh processes"])
    assert rep.summary().startswith("fresh-process probe inconclusive; 1 value(s)")
    assert FreshReport(screened=24).summary().startswith("fresh-process probe: no value was the same")
