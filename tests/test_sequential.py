"""The group-sequential confirmation (audit.engine.estimation.sequential): where it stops, that it keeps the
false-alarm rate, and that the same seed gives the same result."""
import numpy as np
import pytest
from scipy import stats

from audit.engine.estimation.estimate import Claim
from audit.engine.estimation.sequential import LOOKS, SPEND, conclusive, futile, look_sizes, sequential_audit


class Response:
    """Randomised response on one bit: reports the bit with probability e^eps / (1 + e^eps); its loss is
    exactly eps on the pair (0, 1), so a claim of eps is met with equality (the worst case for false alarms)."""

    def __init__(self, eps):
        self.keep = np.exp(eps) / (1 + np.exp(eps))

    def __call__(self, bit, rng):
        return int(bit) if rng.random() < self.keep else 1 - int(bit)

    def batch(self, bit, n, rng):
        return np.where(rng.random(n) < self.keep, int(bit), 1 - int(bit))


class Shift:
    """An event of probability 0.5 on one input and 0.4 on the other: loss ln 1.25 = 0.22, far below 1."""

    def __call__(self, bit, rng):
        return int(rng.random() < (0.5 if bit else 0.4))

    def batch(self, bit, n, rng):
        return (rng.random(n) < (0.5 if bit else 0.4)).astype(int)


PAIRS = [(0, 1), (1, 0)]


def test_a_correct_frequent_event_stops_conclusive_at_the_first_look():
    res = sequential_audit(Response(1.0), PAIRS, Claim(1.0), n_samples=20_000, alpha=0.05, seed=0)
    assert not res.violation
    assert res.planned == [1_250, 2_500, 5_000, 7_500, 10_000, 20_000] == look_sizes(20_000)
    j = len(res.looks) - 1
    assert res.looks[-1].stop == "conclusive" and j < 2 and res.n_samples == res.planned[j]
    assert all(lk.stop == "" for lk in res.looks[:-1])
    # the bounds were taken at the stopping look's share of alpha, split over two pairs and two directions
    assert res.alpha == pytest.approx(0.05 * SPEND[j]) and res.worst.alpha == pytest.approx(0.05 * SPEND[j] / 2)


class Mixed:
    """Two pairs in one mechanism: on ``("strong", bit)`` randomised response at eps 1 (a frequent event with loss
    exactly 1), on ``("weak", bit)`` an event of probability 0.002 against 0.001 (loss ln 2, too rare for any look
    to make a pass conclusive on it)."""

    def __call__(self, data, rng):
        return int(self.batch(data, 1, rng)[0])

    def batch(self, data, n, rng):
        kind, bit = data
        if kind == "strong":
            return Response(1.0).batch(bit, n, rng)
        return (rng.random(n) < (0.002 if bit else 0.001)).astype(int)


def test_the_pass_stops_conclusive_on_its_worst_pair_as_the_row_reads_it():
    """The row's power is its worst pair's (the largest lower bound), so the confirmation stops once that pair's
    pass is conclusive, although the weak pair's never is."""
    pairs = [(("strong", 0), ("strong", 1)), (("weak", 0), ("weak", 1))]
    res = sequential_audit(Mixed(), pairs, Claim(1.0), n_samples=20_000, alpha=0.05, seed=0)
    assert res.looks[-1].stop == "conclusive" and res.n_samples < 20_000
    assert res.worst_pair == 0 and conclusive(res.worst, Claim(1.0))
    assert not conclusive(res.results[1], Claim(1.0)) and not futile(res.results[0], Claim(1.0))


def test_a_leak_stops_at_the_first_look_with_a_violation():
    res = sequential_audit(Response(2.0), PAIRS, Claim(1.0), n_samples=20_000, alpha=0.05, seed=0)
    assert res.violation and res.looks[-1].stop == "violation" and res.epsilon_lower > 1.0


def test_weak_events_stop_futile_and_futility_off_runs_every_look():
    res = sequential_audit(Shift(), PAIRS, Claim(1.0), n_samples=20_000, alpha=0.05, seed=0)
    assert res.looks[-1].stop == "futile" and res.n_samples == 1_250 and futile(res.worst, Claim(1.0))
    full = sequential_audit(Shift(), PAIRS, Claim(1.0), n_samples=20_000, alpha=0.05, seed=0, futility=0)
    assert [lk.n for lk in full.looks] == [1_250, 2_500, 5_000, 7_500, 10_000, 20_000] and not full.violation
    assert full.alpha == pytest.approx(0.05 * SPEND[-1])
    # a claim below the true loss (0.22) is never futile: the upper bounds stay above it
    assert not futile(full.worst, Claim(0.05))


def test_the_same_seed_gives_the_same_result_and_another_seed_another():
    a = sequential_audit(Shift(), PAIRS, Claim(1.0), n_samples=8_000, alpha=0.05, seed=3, futility=0)
    b = sequential_audit(Shift(), PAIRS, Claim(1.0), n_samples=8_000, alpha=0.05, seed=3, futility=0)
    c = sequential_audit(Shift(), PAIRS, Claim(1.0), n_samples=8_000, alpha=0.05, seed=4, futility=0)
    assert [r.counts for r in a.results] == [r.counts for r in b.results]
    assert [r.counts for r in a.results] != [r.counts for r in c.results]


@pytest.mark.slow
def test_the_false_alarm_rate_is_at_most_alpha():
    """A mechanism whose loss equals its claim, audited 200 times (seeds 0-199) with alpha 0.25 and futility off
    (every look can flag). Refuted means: more flags than the 0.999 quantile of Binomial(200, 0.25), 70; for
    a procedure that keeps alpha this fails with probability at most 0.001 (seeded: it fails always or never)."""
    runs, alpha = 200, 0.25
    flags = sum(sequential_audit(Response(1.0), [(0, 1)], Claim(1.0), n_samples=2_000, alpha=alpha, seed=s,
                                 futility=0).violation for s in range(runs))
    assert flags <= stats.binom.ppf(0.999, runs, alpha)


def test_bad_looks_are_refused_with_their_values():
    with pytest.raises(ValueError, match="looks must end at 1"):
        sequential_audit(Shift(), PAIRS, Claim(1.0), n_samples=1_000, alpha=0.05, seed=0, looks=(0.5, 0.9),
                         spend=(0.5, 0.5))
    with pytest.raises(ValueError, match="spend"):
        sequential_audit(Shift(), PAIRS, Claim(1.0), n_samples=1_000, alpha=0.05, seed=0, looks=LOOKS,
                         spend=(0.5,) * len(LOOKS))
    with pytest.raises(ValueError, match="pairs must contain"):
        sequential_audit(Shift(), [], Claim(1.0), n_samples=1_000, alpha=0.05, seed=0)


def test_a_resumed_confirmation_reads_its_checkpoint_as_it_was_computed(tmp_path):
    from audit.engine.runs import checkpoint

    path = tmp_path / "ck.json"
    with checkpoint.active(path), checkpoint.scope("seq"):
        first = sequential_audit(Shift(), PAIRS, Claim(1.0), n_samples=8_000, alpha=0.05, seed=2, futility=0)
    with checkpoint.active(path, resume=True), checkpoint.scope("seq"):
        again = sequential_audit(Response(3.0), PAIRS, Claim(1.0), n_samples=8_000, alpha=0.05, seed=2, futility=0)
    # the second mechanism would be flagged; the checkpoint's result (the first's) comes back instead, whole
    assert not again.violation and [r.counts for r in again.results] == [r.counts for r in first.results]
    assert [lk.to_dict() for lk in again.looks] == [lk.to_dict() for lk in first.looks]
    assert again.planned == first.planned and again.n_samples == first.n_samples and again.alpha == first.alpha
    assert again.worst_pair == first.worst_pair


class Rare:
    """An event of probability 0.1 on one input and 0.1 e on the other (loss exactly 1 on it, ln 1.23 on its
    complement): a claim of 1 holds with equality, and a few looks pass before a pass is conclusive."""

    def __call__(self, bit, rng):
        return int(self.batch(bit, 1, rng)[0])

    def batch(self, bit, n, rng):
        return (rng.random(n) < (0.1 * np.e if bit else 0.1)).astype(int)


def test_the_joint_bound_counts_the_same_outputs_and_reads_its_own_power():
    """The joint bound's thinning is a stream of its own: on one seed the two bounds count the same outputs at
    every look, the results say which bound they carry, and the power reading follows it (the exact power of the
    joint test, :func:`audit.engine.estimation.joint.joint_power`), so the joint confirmation is conclusive no
    later than Clopper-Pearson's on these seeds (the bound is tighter: 2-22% on the same counts)."""
    from audit.engine.estimation.joint import joint_power
    from audit.engine.estimation.power import detection_probability

    stops = {}
    for bound in ("cp", "joint"):
        stops[bound] = [sequential_audit(Rare(), PAIRS, Claim(1.0), n_samples=20_000, alpha=0.05, seed=s,
                                         bound=bound) for s in range(3)]
    for cp, joint in zip(stops["cp"], stops["joint"]):
        assert {r.bound for r in cp.results} == {"cp"} and {r.bound for r in joint.results} == {"joint"}
        assert not cp.violation and not joint.violation
        assert joint.looks[-1].stop == "conclusive" and joint.n_samples <= cp.n_samples
        if joint.n_samples == cp.n_samples:
            assert [r.counts for r in joint.results] == [r.counts for r in cp.results]
    assert sum(j.n_samples for j in stops["joint"]) < sum(c.n_samples for c in stops["cp"])
    w = stops["joint"][0].worst
    p1, n = 0.1, int(w.counts["n1"])
    assert detection_probability(1.3, p1, n, claim=1.0, alpha=w.alpha / 2, bound="joint") == \
        pytest.approx(joint_power(min(1.0, np.exp(1.3) * p1), p1, n, n, claim=1.0, alpha=w.alpha / 2))


def test_a_claim_with_delta_keeps_the_clopper_pearson_bound():
    res = sequential_audit(Shift(), PAIRS, Claim(1.0, delta=1e-3), n_samples=4_000, alpha=0.05, seed=0,
                           bound="joint")
    assert {r.bound for r in res.results} == {"cp"}


@pytest.mark.release
def test_the_joint_confirmations_false_alarm_rate_is_at_most_alpha():
    """As :func:`test_the_false_alarm_rate_is_at_most_alpha`, with the joint bound at every look (200 seeded
    audits at alpha 0.25 of a mechanism whose loss equals its claim; refuted: more than 70 flags, the 0.999
    quantile of Binomial(200, 0.25), so a procedure that keeps alpha fails this with probability at most 0.001)."""
    runs, alpha = 200, 0.25
    flags = sum(sequential_audit(Response(1.0), [(0, 1)], Claim(1.0), n_samples=2_000, alpha=alpha, seed=s,
                                 futility=0, bound="joint").violation for s in range(runs))
    assert flags <= stats.binom.ppf(0.999, runs, alpha)
