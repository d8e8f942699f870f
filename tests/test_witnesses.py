"""The witness store (:mod:`audit.gate.witnesses`) and its test martingale (:mod:`audit.engine.estimation.betting`).

The statistical tests run at fixed seeds. What "refuted" means here: a martingale's wealth reached ``1 / a``; for a
claim that holds that happens with probability at most ``a`` over every run and output (Ville's inequality), and
each test below states its ``a``.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from audit.engine.estimation.betting import BETS, Martingale, wealth_threshold
from audit.engine.estimation.estimate import Claim
from audit.engine.estimation.neighbours import NeighbourPair
from audit.gate.witnesses import decode, encode, fingerprint, pilot_size, retest, topup_size, witness_alpha

ROOT = Path(__file__).resolve().parents[1]
SUBSTITUTE = Claim(1.0, 0.0, "substitute")
BIT = NeighbourPair(1, 0, "the bit flipped", "substitute")
#: the quick budget's outputs per input: a re-test's pilot is 200 and its top-up 500 there
QUICK = 20_000


class RandomizedResponse:
    """Randomized response on one bit: exactly ``epsilon * factor``-DP (substitution); at ``factor = 1`` every
    event's ratio is at its claim's bound, the hardest correct mechanism for a false alarm."""

    def __init__(self, epsilon=1.0, factor=1.0):
        self.p = np.exp(epsilon * factor) / (1 + np.exp(epsilon * factor))

    def __call__(self, bit, rng):
        return int(bit if rng.random() < self.p else 1 - bit)

    def batch(self, bit, n, rng):
        return np.where(rng.random(n) < self.p, bit, 1 - bit).astype(int)


def _bet(mech, runs, *, threshold=40.0, seed=0):
    m, refuted = Martingale(), []
    for r in range(runs):
        got = retest(mech, BIT, SUBSTITUTE, m, threshold=threshold, n_pilot=pilot_size(QUICK),
                     n_bet=topup_size(QUICK), seed=[seed, 1, r])
        refuted.append(got["refuted"])
    return m, refuted


# ---------------------------------------------------------------------------------------------------- the martingale

def test_the_wealth_of_a_clear_separation_refutes_and_reads_the_loss_it_refutes():
    m = Martingale()
    m.update(0, both=0, only_d=90, only_d1=0, neither=10)
    assert m.wealth(1.0) > wealth_threshold(0.05)
    assert 1.0 < m.epsilon_lower(20.0) < 10.0
    assert m.wealth(m.epsilon_lower(20.0) + 1e-6) < 20.0 <= m.wealth(m.epsilon_lower(20.0) - 1e-6)
    assert m.outputs == 100 and m.point() > 2.0


def test_a_martingale_with_no_steps_has_wealth_one_and_refutes_nothing():
    assert Martingale().wealth(0.5) == pytest.approx(1.0) and Martingale().epsilon_lower(20.0) == 0.0


@given(st.lists(st.tuples(st.integers(0, 50), st.integers(0, 50), st.integers(0, 50), st.integers(0, 50)),
                min_size=1, max_size=6), st.floats(0.0, 3.0), st.floats(0.0, 1.0))
@settings(max_examples=60, deadline=None)
def test_the_wealth_falls_as_the_claimed_epsilon_grows_and_survives_json(batches, epsilon, more):
    """The reading of :meth:`Martingale.epsilon_lower` rests on this monotonicity (every factor ``1 + lam Z`` falls
    as the claim grows), and the store on the JSON round trip."""
    m = Martingale()
    for k, (a, b, c, d) in enumerate(batches):
        m.update(k % 2, both=a, only_d=b, only_d1=c, neither=d)
    assert m.log_wealth(epsilon + more) <= m.log_wealth(epsilon) + 1e-9
    back = Martingale.from_dict(json.loads(json.dumps(m.to_dict())))
    assert back.counts == m.counts and back.log_wealth(epsilon) == pytest.approx(m.log_wealth(epsilon))


def test_bad_counts_and_a_bad_stored_state_are_errors_naming_the_value():
    with pytest.raises(ValueError, match="direction must be 0 or 1, got 2"):
        Martingale().update(2, both=0, only_d=0, only_d1=0, neither=0)
    with pytest.raises(ValueError, match=r"non-negative integers, got \[-1, 0, 0, 0\]"):
        Martingale().update(0, both=-1, only_d=0, only_d1=0, neither=0)
    with pytest.raises(ValueError, match="2 rows of 4 non-negative counts"):
        Martingale.from_dict({"counts": [[0, 0, 0]]})
    with pytest.raises(ValueError, match="alpha must lie in"):
        wealth_threshold(0.0)


def test_the_bets_are_fixed_and_below_the_largest_that_keeps_the_wealth_positive():
    assert len(BETS) == 16 and max(BETS) < 1.0 and min(BETS) > 0.0


def test_the_witness_levels_sum_to_alpha_over_every_martingale_ever_started():
    assert sum(witness_alpha(j, 0.05) for j in range(1, 100_000)) == pytest.approx(0.05, rel=1e-4)
    with pytest.raises(ValueError, match="starts at 1"):
        witness_alpha(0, 0.05)


# ------------------------------------------------------------------------------------------------------ the re-test

def test_a_loss_five_times_the_claim_is_refuted_in_one_run_within_a_few_hundred_outputs():
    m, refuted = _bet(RandomizedResponse(1.0, 5.0), 1)
    assert refuted == [True] and m.outputs <= 200 and m.epsilon_lower(40.0) > 1.0


def test_a_loss_a_quarter_above_the_claim_is_refuted_within_three_runs():
    """epsilon 1.25 against a claim of 1: the evidence accumulates over runs (here it is enough within one or
    two; each run bets 500 outputs per input, as the store does at quick)."""
    m, refuted = _bet(RandomizedResponse(1.0, 1.25), 3)
    assert any(refuted) and m.epsilon_lower(40.0) > 1.0


def test_a_mechanism_at_its_claim_is_not_refuted_over_thirty_runs():
    """Randomized response at exactly its claim: a refutation here has probability at most 1/40 (Ville)."""
    m, refuted = _bet(RandomizedResponse(1.0, 1.0), 30)
    assert not any(refuted) and m.wealth(1.0) < 1.0 and m.runs == 30 and m.outputs == 30 * topup_size(QUICK)


@pytest.mark.slow
def test_the_false_alarm_rate_over_a_history_of_a_hundred_runs_is_at_most_alpha():
    """200 histories of 100 runs each (500 outputs per input bet per run, new draws every run, events chosen on
    each run's pilot), randomized response at exactly its claim, the store's first witness threshold
    ``1 / (alpha / 2)`` with alpha 0.05. Ville bounds the rate per history by 0.025; the test asserts at most
    alpha (10 of 200 histories; a rate of 0.025 exceeds that with probability 0.01, and the rate measured here
    is far below it). About 100 s."""
    alarms = sum(any(_bet(RandomizedResponse(1.0, 1.0), 100, threshold=1 / witness_alpha(1, 0.05), seed=s)[1])
                 for s in range(200))
    assert alarms <= 10, alarms


# ------------------------------------------------------------------------------------------ datasets and fingerprints

@given(st.lists(st.lists(st.floats(-1e6, 1e6), min_size=2, max_size=2), min_size=0, max_size=5),
       st.lists(st.integers(0, 3), min_size=0, max_size=5))
@settings(max_examples=40, deadline=None)
def test_a_dataset_survives_the_store_with_its_dtype_and_shape(rows, labels):
    X = np.array(rows, dtype=float).reshape(len(rows), 2)
    y = np.array(labels, dtype=np.int64)
    X2, y2 = decode(json.loads(json.dumps(encode((X, y)))))
    assert X2.dtype == X.dtype and X2.shape == X.shape and np.array_equal(X2, X)
    assert y2.dtype == y.dtype and np.array_equal(y2, y)


def test_what_cannot_be_stored_as_plain_json_is_not_stored():
    assert encode(object()) is None and encode((np.array(["a"]), 1)) is None and encode(float("nan")) is None


def test_the_fingerprint_changes_with_a_source_file_and_with_the_parameters(tmp_path, monkeypatch):
    from audit.gate.run import Subject

    (tmp_path / "fp_subject.py").write_text("import numpy\nX = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    subject = Subject("s", "fp_subject:X", 1.0, params={"a": 1})
    first = fingerprint(subject)
    assert first["files"] == 1 and "numpy" in first["libraries"] and "python" in first["libraries"]
    assert fingerprint(subject) == first
    assert fingerprint(Subject("s", "fp_subject:X", 1.0, params={"a": 2}))["digest"] != first["digest"]
    (tmp_path / "fp_subject.py").write_text("import numpy\nX = 2\n")
    assert fingerprint(subject)["digest"] != first["digest"]


def test_the_fingerprint_changes_with_the_auditors_own_code(tmp_path, monkeypatch):
    """A gate that learnt a new channel judges an unchanged subject afresh: a stored pass from an older gate is not
    kept (a subject keeping a twister's outputs passed the gate before it read them, and kept passing)."""
    import audit.gate.witnesses as W
    from audit.gate.run import Subject

    (tmp_path / "fp_subject2.py").write_text("X = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    subject = Subject("s", "fp_subject2:X", 1.0)
    first = fingerprint(subject)
    assert first["auditor"] == W.auditor_digest() and len(first["auditor"]) == 16
    monkeypatch.setattr(W, "auditor_digest", lambda: "0" * 16)  # the auditor's sources changed
    assert fingerprint(subject)["digest"] != first["digest"]


# --------------------------------------------------------------------------------------- check with a store, end to end

SOURCE = '''
import numpy as np

STRENGTH = {strength}  # 1.0 is epsilon-DP; 5.0 is the bug: five times too little noise


class NoisyCounts:
    def __init__(self, epsilon=1.0, random_state=None):
        self.epsilon, self.random_state = epsilon, random_state

    def get_params(self, deep=True):
        return {{"epsilon": self.epsilon, "random_state": self.random_state}}

    def set_params(self, **kw):
        for k, v in kw.items():
            setattr(self, k, v)
        return self

    def fit(self, X, y):
        rng = np.random.default_rng(self.random_state)
        p = 1.0 - np.exp(-self.epsilon * STRENGTH)
        exact = np.array([np.sum(np.asarray(y) == c) for c in (0, 1)])
        self.counts_ = exact + rng.geometric(p, 2) - rng.geometric(p, 2)
        return self

    def predict(self, X):
        return np.full(len(X), int(np.argmax(self.counts_)))
'''


def _check(tmp_path, strength, comment="", quiet=True):
    (tmp_path / "pkg_w").mkdir(exist_ok=True)
    (tmp_path / "pkg_w" / "__init__.py").write_text(SOURCE.format(strength=strength) + comment)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}
    env.pop("DP_AUDIT_WITNESSES", None)
    proc = subprocess.run([sys.executable, "-m", "audit", "check", "pkg_w:NoisyCounts", "--epsilon", "1",
                           "--bounds", "[[0, 1]]", "--classes", "0,1", "--n-samples", "300", "--no-scale",
                           *(["--quiet"] if quiet else []), "--out", str(tmp_path / "out")],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    (report,) = (tmp_path / "out").glob("*/report.json")
    return proc.returncode, json.loads(report.read_text())["claims"][0], proc


def test_a_bug_reintroduced_fails_through_its_stored_witness_and_an_unchanged_subject_skips_the_full_audit(
        tmp_path):
    """Five runs in the working directory's default store (.dp-audit/): a correct subject (full audit, witnesses
    stored), the same again (full audit skipped), the bug (refuted), the fix (full audit again: the fingerprint
    changed), the bug re-introduced (refuted by the stored witness before any search, on at most a thousand
    outputs per input)."""
    code, row, _ = _check(tmp_path, 1.0)
    assert code == 0 and row["verdict"] == "pass" and row["witnesses"]["full_audit"].startswith("run")
    store = json.loads((tmp_path / ".dp-audit" / "witnesses.json").read_text())
    (entry,) = store["claims"].values()
    assert len(entry["witnesses"]) == 2 and {w["status"] for w in entry["witnesses"]} == {"open"}

    code, again, proc = _check(tmp_path, 1.0, quiet=False)
    assert code == 0 and again["witnesses"]["full_audit"] == "skipped: fingerprint unchanged since run 1"
    console = proc.stdout + proc.stderr  # the console says the audit was skipped, and the evidence it re-tested
    assert "full audit skipped: the subject's fingerprint is unchanged since run 1" in console
    assert "re-tested on" in console
    assert again["epsilon_lower"] == row["epsilon_lower"] and again["detail"].startswith("full audit skipped")
    assert all(w["runs"] == 1 for w in again["witnesses"]["witnesses"])

    code, bug, proc = _check(tmp_path, 5.0)
    assert code == 1 and bug["verdict"] == "violation", proc.stdout + proc.stderr

    code, fixed, _ = _check(tmp_path, 1.0, "# fixed: the noise is back\n")
    assert code == 0 and fixed["verdict"] == "pass" and fixed["witnesses"]["full_audit"].startswith("run")

    code, again_bug, proc = _check(tmp_path, 5.0)
    assert code == 1 and again_bug["decided_by"] == ["stored witness"], proc.stdout + proc.stderr
    assert again_bug["n_samples"] <= 1_000 and again_bug["epsilon_lower"] > 1.0
    assert "refuted by a stored witness before any search" in again_bug["detail"]
    assert again_bug["witnesses"]["full_audit"] == "skipped: a stored witness refuted the claim"


def test_an_unusable_store_is_a_usage_error_before_any_sampling(tmp_path, capsys):
    from audit.__main__ import main

    (tmp_path / "file").write_text("")
    argv = ["check", "subjects.noise:MyLaplace", "--epsilon", "1", "--quiet", "--out", str(tmp_path / "o")]
    assert main(argv + ["--witnesses", str(tmp_path / "file" / "store")]) == 2
    assert "--witnesses" in capsys.readouterr().err
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "witnesses.json").write_text("{not json")
    assert main(argv + ["--witnesses", str(tmp_path / "bad")]) == 2
    assert "is not a witness store" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()
