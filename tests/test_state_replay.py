"""Replay (audit.engine.replay): a kept integer that changes from fit to fit becomes a measured loss.

Statistical parts: every probe below draws its secret seeds from ``default_rng(PROBE_SEED)`` (seed 1,904,270,361),
so each count is fixed; the epsilon lower bounds are Clopper-Pearson bounds at alpha 0.05 split (Bonferroni) over
the candidates and the six looks of the growing sample, so a claim that holds is flagged with probability at most
0.05 for another seed. Deterministic parts: fingerprints, candidates, the report's fields.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from audit.engine import replay as rp
from audit.engine.state_probe import PROBE_SEED, StateReport, probe_estimator
from subjects import kept_state_forms as forms

X = np.array([[0.1], [0.4], [0.6], [0.9]])
Y = np.array([0, 0, 1, 1])


def _replay(rep, path):
    return next(r for r in rep.replays if r.path == path)


def test_a_derived_seed_used_for_the_noise_is_caught_by_replay():
    """tree_seed_ = rng.integers(2**31) then default_rng(tree_seed_) draws the noise: no generator and no copy of the
    probe's seed is kept, yet refitting with the known seed and tree_seed_ in place of the derived one reproduces the
    published model from D every time and never from D' (its counts differ)."""
    rep = probe_estimator(forms.DerivedTreeSeed, X, Y, epsilon=1.0)
    assert rep.verdict == "violation" and [(f.path, f.kind) for f in rep.findings] == [("model.tree_seed_", "replay")]
    r = _replay(rep, "model.tree_seed_")
    assert (r.k0, r.k1) == (r.n0, 0) and r.n0 == r.n1 == 20 and r.origin == "derived from the seed"
    assert r.modes[0].kind == "reseed"
    assert rep.epsilon_lower == r.epsilon_lower > 1.0
    assert rep.evidence.startswith("ε = ∞: ") and "model.tree_seed_" in rep.evidence and "20/20" in rep.evidence \
        and "0/20 from D'" in rep.evidence


def test_an_os_entropy_seed_is_caught_by_replay_when_the_probe_seeds_are_refused():
    """The subject takes only 64-bit seeds: the probe's seeds are refused (said in the remarks), it fits unseeded, and
    seed_ = secrets.randbits(64) changes even between two unseeded fits; refitting with seed_ as random_state
    reproduces the model."""
    rep = probe_estimator(forms.OSEntropyBits, X, Y, epsilon=1.0)
    assert rep.verdict == "violation" and [f.path for f in rep.findings] == ["model.seed_"]
    assert "fit refused" in rep.remarks[0] and "ValueError" in rep.remarks[0]
    r = _replay(rep, "model.seed_")
    assert r.origin.startswith("changes with the same seed") and (r.k0, r.k1) == (r.n0, 0) and r.epsilon_lower > 1


def test_a_seed_sequence_entropy_kept_as_seed_is_a_seed_copy_and_its_replay_is_measured():
    rep = probe_estimator(forms.OSEntropySeed, X, Y, epsilon=1.0)
    assert {(f.path, f.kind) for f in rep.findings} == {("model.seed_", "seed")}
    r = _replay(rep, "model.seed_")
    assert r.reproduced and r.k1 == 0 and math.isinf(rep.epsilon_lower)


def test_noisy_big_counts_that_change_are_candidates_but_not_findings():
    """The counts are at least 2**16 and change from fit to fit: candidates. Replaying with them does not reproduce
    the model, so the probe is clean and lists them as 'replay did not reproduce'."""
    rep = probe_estimator(forms.NoisyBigCounts, X, Y)
    assert rep.verdict == "clean" and rep.epsilon_lower == 0.0 and not rep.findings
    assert rep.replays and all(not r.reproduced for r in rep.replays)
    assert "model.total_" in {r.path for r in rep.replays}
    assert "replay did not reproduce" in rep.summary()


def test_a_lone_noisy_count_is_not_replayable():
    """A single large noisy integer and nothing else random: a replay could only 'reproduce' an empty rest, which
    proves nothing, so it is not measured and not a finding."""
    class OneCount(forms._Noisy):
        def fit(self, X, y):
            self.count_ = 100_000 + int(np.sum(y)) + int(np.random.default_rng(self.random_state).integers(-50, 50))
            return self

    rep = probe_estimator(OneCount, X, Y)
    assert rep.verdict == "clean" and rep.replays and "changes from seed to seed" in rep.replays[0].reason


def test_json_fields_and_pair():
    D0 = (np.array([[0.1], [0.2], [0.8], [0.9], [0.5]]), np.array([0, 0, 1, 1, 1]))
    D1 = (D0[0][:-1], D0[1][:-1])
    j = probe_estimator(forms.DerivedTreeSeed, None, None, pair=(D0, D1), epsilon=0.5).to_json()
    assert j["verdict"] == "violation" and j["truncated"] is False and j["epsilon_lower"] > 0.5
    row = j["replays"][0]
    assert row["path"] == "model.tree_seed_" and row["kind"] == "integer" and row["counts"][1] == row["counts"][0]
    assert row["counts"][2] == 0 and row["epsilon_lower"] == j["epsilon_lower"]
    assert StateReport(skipped="x").to_json()["verdict"] == "inconclusive"


def test_fingerprints_compare_exactly_with_nan_equal_to_nan():
    nodes = np.zeros(2, dtype=[("left", np.int64), ("threshold", np.float64)])
    nodes["threshold"] = [np.nan, 0.5]
    lv = rp.leaves({"w": [1.0, np.nan], "nodes": nodes, "n": 3, "rng": np.random.default_rng(0)})
    assert set(lv.numeric) == {"model#len", "model['w']#len", "model['w'][0]", "model['w'][1]",
                               "model['nodes']['left']", "model['nodes']['threshold']", "model['n']"}
    assert rp.same(lv.numeric["model['nodes']['threshold']"], np.array([np.nan, 0.5]))
    assert not rp.same(np.array([0.5, 1.0]), np.array([0.5, 1.0 + 1e-16 * 3]))


def test_the_candidate_cap_is_said():
    a = rp.leaves({"s": np.arange(100_000, 100_040)})
    b = rp.leaves({"s": np.arange(200_000, 200_040)})
    cands, capped = rp.find_candidates(a, b, a, cap=16)
    assert capped and len(cands) == 16 and cands[3].path == "model['s'][3]"
    small = rp.leaves({"s": np.arange(40)})
    assert rp.find_candidates(small, rp.leaves({"s": np.arange(1, 41)}), small) == ([], False)


def test_a_growing_log_read_whole_is_not_a_seed_candidate():
    """A long log of numbers (diffprivlib's process-wide budget accountant) is read as its length and content hash;
    the hash changes whenever the log grows, but it is the walk's number, not the model's: no candidate. A seed
    among the log's numbers is the state probe's to find (``walk.long_seed``)."""
    first = rp.leaves({"log": [(1.0, 0.0)] * 2_000})
    grown = rp.leaves({"log": [(1.0, 0.0)] * 2_001})
    assert "model['log']#content" in first.numeric and first.numeric["model['log']#content"] != \
        grown.numeric["model['log']#content"]
    assert rp.find_candidates(first, grown, grown) == ([], False)


def test_the_reseed_patch_is_restored_even_when_the_fit_raises():
    before = (np.random.default_rng, np.random.RandomState)
    with pytest.raises(RuntimeError), rp.reseeded(5, 6):
        assert np.random.default_rng(5).random() == np.random.default_rng(6).random()
        raise RuntimeError
    assert (np.random.default_rng, np.random.RandomState) == before


def test_diffprivlib_forest_trees_are_replayed_on_their_share_of_the_data():
    """diffprivlib's RandomForestClassifier fits tree i on the i-th even share of the records and keeps its derived
    seed as estimators_[i].random_state. Refitting tree i with it on its share of D reproduces the published tree;
    removing the last record (D') changes only the last share. Runs where diffprivlib is installed.

    The test runs with a fresh default accountant (the process's is put back after): diffprivlib's default one is
    process-wide, and a forest's fit deep-copies it once per tree (scikit-learn's ``clone`` of the parameters), so
    after the other diffprivlib tests of a run (tens of thousands of fits) the trials would stop at the probe's CPU
    safety cap. That cost is diffprivlib's, and it is not what this test measures."""
    ensemble = pytest.importorskip("diffprivlib.models")
    from diffprivlib.accountant import BudgetAccountant

    rng = np.random.default_rng(3)
    Xf = rng.random((40, 2))
    yf = (Xf[:, 0] > 0.5).astype(int)
    kept = BudgetAccountant.pop_default()
    try:
        rep = probe_estimator(lambda: ensemble.RandomForestClassifier(epsilon=1, bounds=([0, 0], [1, 1]),
                                                                      classes=[0, 1], n_estimators=5), Xf, yf,
                              epsilon=1.0)
    finally:
        BudgetAccountant.pop_default()
        if kept is not None:
            kept.set_default()
    assert rep.verdict == "violation"
    last = _replay(rep, "model.estimators_[4].random_state")
    assert last.modes[0].share == (4, 5) and last.k0 == last.n0 and last.k1 < last.n1 / 2
    assert rep.epsilon_lower == last.epsilon_lower > 1.0
    first = _replay(rep, "model.estimators_[0].random_state")
    assert first.k0 == first.n0 and first.k1 == first.n1  # share 0 is the same in D and D'


@pytest.mark.parametrize("cls, path, k", [
    (forms.KeepsCheckRandomState, "model.random_state_", 4),  # MT19937: block position lowered by 4 words
    (forms.KeepsBoundMethod, "model.jitter_.__self__", 2),  # PCG64: advance(-2)
    (forms.KeepsBitGeneratorState, "model.rng_state_", 0),  # the state dict was kept before the first draw
])
def test_a_kept_generator_is_rewound_and_its_replay_measured(cls, path, k):
    """The calibration fit (known seed) measures the draws consumed; each published model's kept generator, rewound
    by that many, replays its fit: 20/20 from D, 0/20 from D' (seeded as the module docstring says)."""
    rep = probe_estimator(cls, X, Y, epsilon=1.0)
    r = _replay(rep, path)
    assert r.origin == "kept" and r.modes[0].kind == "rewind" and r.modes[0].k == k
    assert (r.k0, r.n0, r.k1, r.n1) == (20, 20, 0, 20) and r.epsilon_lower > 1.0
    assert math.isinf(rep.epsilon_lower) and path in rep.evidence and "20/20 fits from D" in rep.evidence


def test_a_stdlib_random_state_is_reported_as_not_replayed_with_the_reason():
    rep = probe_estimator(forms.KeepsRandomGetState, X, Y)
    r = _replay(rep, "model.state_")
    assert not r.reproduced and r.n0 == 0 and "cannot be passed as random_state" in r.reason
    assert rep.verdict == "violation" and math.isinf(rep.epsilon_lower)


def test_rewind_helpers_round_trip():
    g = np.random.default_rng(11)
    g.random(5)
    assert rp.consumption(g, 11) == 5
    again = rp.rewound(g, 5)
    assert again.random() == np.random.default_rng(11).random()
    rs = np.random.RandomState(11)
    first = rs.random_sample(3)
    assert rp.consumption(rs, 11) == 6  # doubles take two 32-bit words
    assert np.array_equal(rp.rewound(rs, 6).random_sample(3), first)
    with pytest.raises(ValueError):
        rp.consumption(np.random.default_rng(12), 11, max_steps=100)


def test_scikit_learn_forest_trees_are_replayed_by_reseeding_their_derived_seeds():
    """scikit-learn's forest draws each tree's seed (kept as estimators_[i].random_state) and bootstraps with it:
    refitting the forest with the known seed and the published tree's seed in place of the derived one reproduces
    that tree from D, never from D' (a non-private learner: the trees follow the data)."""
    from sklearn.ensemble import RandomForestClassifier

    rng = np.random.default_rng(3)
    Xf = rng.random((40, 2))
    yf = (Xf[:, 0] > 0.5).astype(int)
    rep = probe_estimator(lambda: RandomForestClassifier(n_estimators=3, max_depth=2), Xf, yf, epsilon=1.0)
    assert rep.verdict == "violation" and not rep.skipped
    assert {f.path for f in rep.findings} == {f"model.estimators_[{i}].random_state" for i in range(3)}
    r = _replay(rep, "model.estimators_[1].random_state")
    assert r.modes[0].kind == "reseed" and r.modes[0].sub_path == "model.estimators_[1]"
    assert r.k0 == r.n0 >= 20 and r.k1 == 0 and r.epsilon_lower > 1.0


def test_an_os_entropy_seed_that_ignores_random_state_is_replayed_with_every_seed_replaced():
    """seed_ differs on every fit, seeded or not; the replay that puts it in place of every integer seed the fit
    makes reproduces the published model from D, never from D' (counts of the measurement, fixed seeds)."""
    rep = probe_estimator(forms.EntropyIgnoringSeed, X, Y, epsilon=1.0)
    assert rep.verdict == "violation" and [f.path for f in rep.findings] == ["model.seed_"]
    r = _replay(rep, "model.seed_")
    assert (r.k0, r.k1) == (r.n0, 0) and r.epsilon_lower > 1
    assert "in place of every integer seed the fit makes" in rep.evidence


class _CoinWithRunId:
    """A randomized-response bit at epsilon = 1 (exactly 1-DP: the bit is the true majority with probability
    e/(1 + e)) that keeps a run id it draws from its own generator: a changing integer that never seeds the bit."""

    def __init__(self, random_state=None):
        self.random_state = random_state

    def get_params(self, deep=True):
        return {"random_state": self.random_state}

    def set_params(self, **kw):
        for k, v in kw.items():
            setattr(self, k, v)
        return self

    def fit(self, X, y):
        rng = np.random.default_rng(self.random_state)
        self.run_id_ = int(rng.integers(2 ** 40, 2 ** 41))
        truth = int(np.mean(y) >= 0.5)
        self.bit_ = truth if rng.random() < math.e / (1 + math.e) else 1 - truth
        return self


def _measured(make, D, D1):
    cand = rp.Candidate("model.run_id_")
    mode = rp.Mode("model", prefixes={"model.run_id_", "model.random_state"})
    rec = rp.Replay(cand.path, "integer", "derived from the seed", [mode], alpha=0.05)
    publish = lambda side, secret: make().set_params(random_state=secret).fit(*(D, D1)[side])  # noqa: E731
    stopped = rp.measure([(cand, [mode], rec)], publish, make, D, epsilon=1.0, delta=0.0, alpha=0.05,
                         deadline=math.inf, rng=np.random.default_rng(PROBE_SEED))
    return stopped, rec


def test_a_replay_that_matches_by_chance_is_not_a_finding():
    """The replay refits with the run id as seed: its bit matches the published one about half the time on both
    sides, by chance. Matching is not reproducing: the measured bound stays below the claim (1), so the candidate
    is no finding (seeded: the counts are fixed; for another seed a private fit is flagged with probability at
    most alpha = 0.05)."""
    D, D1 = (X, np.array([0, 0, 0, 1])), (X[:3], np.array([0, 0, 0]))
    stopped, rec = _measured(_CoinWithRunId, D, D1)
    assert not stopped and rec.k0 > 0 and rec.k1 > 0 and rec.claim == 1.0
    assert rec.epsilon_lower <= 1.0 and not rec.reproduced
    assert "no more often than the claim allows" in rec.sentence()


def test_a_run_id_that_seeds_the_bit_is_reproduced_beyond_the_claim():
    """The same coin keeping its seed as run id: the replay reproduces every model from D and none from D' (the
    true majority differs, so the same seed gives the other bit); the bound passes the claim within the six
    looks."""

    class Seeded(_CoinWithRunId):
        def fit(self, X, y):
            self.run_id_ = self.random_state
            truth = int(np.mean(y) >= 0.5)
            keep = np.random.default_rng(self.random_state).random() < math.e / (1 + math.e)
            self.bit_ = truth if keep else 1 - truth
            return self

    stopped, rec = _measured(Seeded, (X, Y), (X[:3], Y[:3]))
    assert not stopped and (rec.k0, rec.k1) == (rec.n0, 0) and rec.reproduced and rec.epsilon_lower > 1.0


class _SeedAsRunId(_CoinWithRunId):
    """The coin keeping its seed as run id (the leak of the test above, at module level for the calibration)."""

    def fit(self, X, y):
        self.run_id_ = self.random_state
        truth = int(np.mean(y) >= 0.5)
        self.bit_ = truth if np.random.default_rng(self.random_state).random() < math.e / (1 + math.e) else 1 - truth
        return self


def test_a_reference_fit_that_repeats_the_probe_fit_by_chance_does_not_hide_the_seed():
    """A model of one noisy bit repeats itself across seeds half the time. When fit b happens to repeat fit a, the
    calibration asks further fits whether anything changes from seed to seed, instead of dropping the replay
    (deterministic: the seeds are chosen below so that fit b repeats fit a and the next fit does not)."""
    D = (X, Y)
    fit = {s: _SeedAsRunId(random_state=s).fit(*D) for s in range(40)}
    a = 7
    same = next(s for s in fit if s != a and fit[s].bit_ == fit[a].bit_)
    other = next(s for s in fit if fit[s].bit_ != fit[a].bit_)
    la, lb = rp.leaves(fit[a]), rp.leaves(fit[same])
    cand = rp.Candidate("model.run_id_")
    modes, reasons = rp.calibrate(cand, _SeedAsRunId, True, la, lb, D)
    assert not any(m.kind == "model" for m in modes) and "nothing else in the model changes" in reasons[0]
    more = rp.Refits(lb, lambda i: rp.leaves(fit[other]))
    modes, reasons = rp.calibrate(cand, _SeedAsRunId, True, la, more, D)
    assert [m.kind for m in modes][:1] == ["model"]
