"""The switch scan (:mod:`audit.gate.switches`): structure that switches with the exact record count, at any size.

The leak subjects (``tests/subjects/switches_by_size.py``) switch at counts no ladder of round sizes holds: a
fallback below 37 records, a warning while a class has fewer than 23, float Laplace noise above 3,000 records, a
dtype that widens from 86. Their switches are deterministic functions of the count, so where the scan finds them
does not depend on chance, and each check below exits 1 whatever the seed. The scan itself decides nothing: its
pairs are confirmed by the determinism test at the channel's share of alpha (``ALPHA * SWITCH_SHARE`` = 1.25e-4
per run) and by the sampled search, so a correct subject fails through this channel with probability at most
1.25e-4 per run (the slow test bounds it over 200 seeds).
"""
from __future__ import annotations

import json

import numpy as np
import pytest

from audit.__main__ import main
from audit.gate.channels import SWITCH_SHARE
from audit.gate.determinism import probe_determinism
from audit.gate.outputs import probe_grid
from audit.gate.switches import (FACTOR, SMALL, SWITCH_RECORDS, scan_sizes, switch_pairs, switch_scan)
from audit.gate.verdict import ALPHA
from subjects import switches_by_size as S
from subjects.noisy_counts import NoisyCounts

BOUNDS, CLASSES = [(0.0, 1.0)], [0, 1]
GRID = probe_grid(BOUNDS)
CHECK = ["--bounds", "[[0, 1]]", "--classes", "0,1", "--epsilon", "1", "--budget", "quick", "--witnesses", "off",
         "--quiet"]


def _scan(cls, relation="add-remove", n_max=4_000, seed=0, **kw):
    return switch_scan(cls, BOUNDS, CLASSES, grid=GRID, relation=relation, n_max=n_max, seed=seed, **kw)


def _row(out, name) -> dict:
    return json.loads((out / f"check-subjects.switches_by_size-{name}" / "report.json").read_text())["claims"][0]


def test_the_grid_holds_every_small_size_then_grows_by_a_factor_to_the_largest():
    sizes = scan_sizes(16_000)
    assert sizes[:SMALL] == list(range(1, SMALL + 1)) and sizes[-2:] == [15_999, 16_000]
    steps = [b / a for a, b in zip(sizes[SMALL - 1:-2], sizes[SMALL:-1])]
    assert all(s <= FACTOR + 0.02 for s in steps) and len(sizes) < 60


@pytest.mark.parametrize("cls, n, path", [
    (S.FallbackBelow37, 36, "model.counts_ value"),
    (S.WarnsFewPerClass, 45, "fit warning[0] structure"),
    (S.FloatNoiseAbove3000, 3_000, "model.counts_ structure array int64 [2] -> array float64 [2]"),
    (S.NarrowDtype, 85, "model.counts_ structure array int16 [2] -> array int32 [2]"),
    (S.PrecisionBySize, 299, "fit stdout#form['noisy positive share: #'] value 'n.dd' -> 'n.ddd'"),
])
def test_the_scan_finds_each_switch_at_its_exact_count(cls, n, path):
    """One switch each, bisected to the exact count (the warning's at 45 vs 46: a class reaches 23 records).
    The subjects draw their noise from the OS, so a miss is a chance event: ``PrecisionBySize``, whose printed
    value can repeat on the grid's few fits and lead a bisection, was missed on 0 of 52 seeds (1 of 12 before the
    scan followed more than one lead)."""
    scan = _scan(cls)
    assert [s.n for s in scan.switches] == [n], scan.summary()
    assert any(c.startswith(path) for c in scan.switches[0].changes), scan.switches[0].changes
    assert [p.description for p in scan.pairs] == [f"[switch] {n:,} records vs {n + 1:,} (one more of class {c})"
                                                   for c in (0, 1)]
    assert f"switches at {n:,} vs {n + 1:,} records" in scan.summary()


def test_a_correct_subject_whose_structure_never_changes_gives_no_switch():
    """A warning about the public epsilon, a dtype chosen from the public classes, a fixed mode string, noisy
    counts and predictions: nothing switches (noise that repeats on a few fits is verified away)."""
    for seed in range(3):
        scan = _scan(S.PublicStructure, seed=seed)
        assert not scan.switches, scan.summary()
        assert scan.summary().endswith("no structure switched with the record count")


def test_a_threshold_on_one_class_count_is_crossed_by_one_of_the_pairs():
    """At 45 records the classes hold 23 and 22: one more of class 1 ends the warning, one more of class 0 does
    not. The determinism test on the two pairs decides on the first."""
    pairs = switch_pairs(45, BOUNDS, CLASSES)
    assert [np.bincount(p.d0[1]).tolist() for p in pairs] == [[23, 22]] * 2
    assert [np.bincount(p.d1[1]).tolist() for p in pairs] == [[24, 22], [23, 23]]
    rep = probe_determinism(S.WarnsFewPerClass, pairs, grid=GRID, classes=CLASSES, epsilon=1.0,
                            alpha=ALPHA * SWITCH_SHARE, screen_pairs=len(pairs))
    assert rep.verdict == "violation" and rep.pair == "[switch] 45 records vs 46 (one more of class 1)"
    assert rep.paths[0]["path"] == "fit warning[0]"


def test_under_substitution_the_pairs_keep_the_count_and_a_switch_on_it_alone_is_public():
    """``BinsBySize`` doubles its bins from 500 records: the scan finds the switch under either relation, but
    under substitution its pairs keep the count (D(499) and D(500), each with its last record's class
    replaced), so the determinism test finds nothing there; a per-class threshold still shows."""
    scan = _scan(S.BinsBySize, "substitute", n_max=1_000)
    assert [s.n for s in scan.switches] == [499]
    assert [(len(p.d0[1]), len(p.d1[1])) for p in scan.pairs] == [(499, 499), (500, 500)]
    assert [p.description for p in scan.pairs] == ["[switch] 499 records, the last one's class 0 replaced by 1",
                                                   "[switch] 500 records, the last one's class 1 replaced by 0"]
    rep = probe_determinism(S.BinsBySize, scan.pairs, grid=GRID, classes=CLASSES, epsilon=1.0, relation="substitute",
                            alpha=ALPHA * SWITCH_SHARE, screen_pairs=len(scan.pairs))
    assert rep.verdict == "clean", rep.summary()
    warns = _scan(S.WarnsFewPerClass, "substitute", n_max=1_000)
    rep = probe_determinism(S.WarnsFewPerClass, warns.pairs, grid=GRID, classes=CLASSES, epsilon=1.0,
                            relation="substitute", alpha=ALPHA * SWITCH_SHARE, screen_pairs=len(warns.pairs))
    assert rep.verdict == "violation" and rep.pair == "[switch] 46 records, the last one's class 1 replaced by 0"


class _GlobalFallback(S.FallbackBelow37):
    """The fallback, its noise drawn from numpy's global generator (which the scan seeds from the audit's)."""

    def _rng(self):
        return np.random


def test_the_same_seed_gives_the_same_scan():
    first, again = _scan(_GlobalFallback, n_max=2_000, seed=7), _scan(_GlobalFallback, n_max=2_000, seed=7)
    assert first.summary() == again.summary() and (first.fits, first.records) == (again.fits, again.records)
    assert [s.n for s in first.switches] == [36]


class _RefusesBelow40(NoisyCounts):
    def fit(self, X, y):
        if len(y) < 40:
            raise ValueError("need at least 40 records")
        return super().fit(X, y)


def _accepts(data):
    try:
        _RefusesBelow40().fit(*data)
    except ValueError:
        return False
    return True


def test_a_refusal_threshold_is_left_to_the_exceptions_channel():
    """``fit`` raising below 40 records switches the structure too; the pairs there would have a refused
    dataset, so none is kept (refusals are judged with their exemptions elsewhere) and the summary says so."""
    scan = _scan(_RefusesBelow40, n_max=1_000, accepts=_accepts)
    assert [s.n for s in scan.switches] == [39] and scan.switches[0].refused and not scan.pairs
    assert "fit refuses one side" in scan.summary()


def test_the_record_cap_is_named_in_the_summary(monkeypatch):
    import audit.gate.switches as switches

    monkeypatch.setitem(switches.SWITCH_RECORDS, "quick", 20_000)
    scan = _scan(S.FloatNoiseAbove3000)
    assert not scan.switches and "RECORD CAP" in scan.summary() and "20,000 records fitted" in scan.summary()


def test_the_scan_costs_a_few_hundred_fits():
    """Counts, not seconds: the grid's 3 fits at each of 49 sizes, verification and one bisection, far below the
    budget's record cap."""
    scan = _scan(S.FallbackBelow37)
    assert scan.fits < 1_000 and scan.records < SWITCH_RECORDS["quick"]


@pytest.mark.parametrize("name, path", [("FallbackBelow37", "model.counts_"), ("WarnsFewPerClass", "fit warning[0]"),
                                        ("NarrowDtype", "model.counts_#dtype"),
                                        ("FloatNoiseAbove3000", "model.counts_#dtype"),
                                        ("PrecisionBySize", "fit stdout#form['noisy positive share: #']")])
def test_each_switch_fails_the_gate(tmp_path, name, path):
    """``audit check`` at quick: the switch channel's pair decides through the determinism test, before any
    output is sampled."""
    assert main(["check", f"subjects.switches_by_size:{name}", *CHECK, "--out", str(tmp_path)]) == 1
    row = _row(tmp_path, name)
    assert row["verdict"] == "violation" and row["decided_by"] == ["determinism"]
    assert row["determinism"]["pair"].startswith("[switch] ") and row["determinism"]["paths"][0]["path"] == path


def test_a_switch_of_the_noise_law_is_found_by_the_outputs_too(tmp_path):
    """With the determinism evidence only reported (``--determinism warn``), the switch pairs are candidates of
    the sampled search: float Laplace noise above 3,000 records is confirmed on the outputs (the float probe),
    the winning pair one of the switch's."""
    args = ["check", "subjects.switches_by_size:FloatNoiseAbove3000", *CHECK, "--determinism", "warn",
            "--no-scale", "--scale-records", "4000", "--n-samples", "2000", "--out", str(tmp_path)]
    assert main(args) == 1
    row = _row(tmp_path, "FloatNoiseAbove3000")
    assert row["verdict"] == "violation" and "outputs" in row["decided_by"]
    assert row["winning_pair"].startswith("[switch] 3,000 records vs 3,001")
    assert sum(p["pair"].startswith("[switch]") for p in row["pairs_tried"]) == 2


#: a short sampled audit for the controls (a correct subject fails it with probability at most 0.05 per run)
SHORT = [*CHECK, "--no-scale", "--scale-records", "1000", "--n-samples", "1000"]


def test_a_control_whose_structure_never_switches_passes_the_gate(tmp_path):
    """Fixed seed: this run passes (a correct subject fails with probability at most 0.05 per run, through the
    switch channel at most 1.25e-4)."""
    assert main(["check", "subjects.switches_by_size:PublicStructure", *SHORT, "--out", str(tmp_path)]) == 0
    assert "no structure switched with the record count" in _row(tmp_path, "PublicStructure")["detail"]


def test_a_switch_on_the_public_count_passes_under_substitution_and_fails_under_add_remove(tmp_path):
    """``BinsBySize``'s switch at 500 records: under substitution the count is public, and the pairs keep it
    (a correct claim, 2: a substitution moves two counts by one; fixed seed, this run passes); under add/remove
    it tells the count (a certain violation)."""
    assert main(["check", "subjects.switches_by_size:BinsBySize", "--neighbours", "substitute", *SHORT,
                 "--epsilon", "2", "--out", str(tmp_path / "sub")]) == 0
    assert "switches at 499 vs 500 records" in _row(tmp_path / "sub", "BinsBySize")["detail"]
    assert main(["check", "subjects.switches_by_size:BinsBySize", *SHORT, "--out", str(tmp_path / "ar")]) == 1
    assert _row(tmp_path / "ar", "BinsBySize")["determinism"]["pair"].startswith("[switch] 499 records vs 500")


@pytest.mark.slow
def test_false_alarm_rate_of_the_switch_channel_on_correct_subjects():
    """200 seeds of the channel (the scan, then the determinism test on its pairs at ``ALPHA * SWITCH_SHARE`` =
    1.25e-4) on ``BinsBySize`` under substitution (a switch on the public count: pairs to test every time) and on
    ``PublicStructure`` under add/remove. The determinism test flags a correct subject with probability at most
    1.25e-4 per run, so "refuted" is 2 or more alarms in the 400 runs (probability < 0.002 for a sound channel).
    A switch found on ``PublicStructure`` is no alarm, only wasted fits: at most a few in 200 are allowed."""
    alarms = switched = 0
    for s in range(200):
        for cls, relation in ((S.BinsBySize, "substitute"), (S.PublicStructure, "add-remove")):
            scan = _scan(cls, relation, n_max=1_000, seed=s)
            switched += cls is S.PublicStructure and bool(scan.switches)
            if scan.pairs:
                rep = probe_determinism(cls, scan.pairs, grid=GRID, classes=CLASSES, epsilon=1.0, relation=relation,
                                        alpha=ALPHA * SWITCH_SHARE, seed=s, screen_pairs=len(scan.pairs))
                alarms += rep.verdict == "violation"
    assert alarms < 2, alarms
    assert switched <= 6, switched
