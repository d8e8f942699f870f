"""``check --exact``: the exact loss of ordinary code, held to an independent oracle.

The subjects (``tests/subjects/exact_user.py``) are written as engineers ship them with NumPy's generator; the
oracle (``tests/exact_user_oracle.py``) writes each release law down from its closed form, with no tracing. Every
computed interval must hold the oracle's value, and the verdicts must follow: a violation refuted with its exact
loss, a correct subject proved on its domain, a continuous draw undecided. Nothing here is sampled, so there is
no false-alarm rate: each assertion is exact up to the stated float tolerance.
"""
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import exact_user_oracle as oracle
from subjects import exact_user
from audit.engine.exact_code.symbolic import Undecided
from audit.gate.exact import exact_check, pair_exact

ROOT = Path(__file__).resolve().parents[1]
#: the interval must hold the oracle's value up to this (float rounding of the laws and the windows' mass)
TOL = 1e-9

MECHANISMS = ("RandomizedResponse", "RandomizedResponseChoice", "RandomizedResponseWrongP", "ReportNoisyMax",
              "ReportNoisyMaxBuggy", "PermutedSample", "LocalReport")
#: subjects whose pairs the exact mode decides value by value quickly enough for the default suite
DECIDED = ("NoisyCountsVectorised", "NoisyCountsGlobal", "NoisyCountsHalfNoise", "ClampedCountBuggy", "PoissonNoise",
           "NoisyMajorityRR") + MECHANISMS


def _data(name, d):
    if name in MECHANISMS:
        return d
    X, y = d
    return np.asarray(X, dtype=float).reshape(len(y), 1), np.asarray(y)


def _params(name):
    return {"epsilon": 1.0} if name in MECHANISMS else {}


@pytest.mark.parametrize("name", DECIDED)
def test_each_pair_interval_holds_the_oracle_value(name):
    for d0, d1 in oracle.PAIRS[name]:
        truth = oracle.ORACLE[name](d0, d1, epsilon=1.0)
        res = pair_exact(getattr(exact_user, name), _data(name, d0), _data(name, d1), _params(name))
        assert res.lower <= truth * (1 + TOL) + TOL or truth == math.inf, (name, d0, d1, res, truth)
        assert res.upper >= truth * (1 - TOL) - TOL, (name, d0, d1, res, truth)
        if math.isfinite(truth) and res.argument != "none":  # a finite truth with a proof: the interval is tight
            # (its width is the windows' left-out mass, 1e-13 per atom, over the least likely release's mass)
            assert res.upper - res.lower <= 1e-6 * max(1.0, truth), (name, d0, d1, res, truth)


@pytest.mark.parametrize("name,relation,classes,verdict,value", [
    ("NoisyCountsVectorised", "add-remove", [0, 1], "proved", 1.0),
    ("NoisyCountsHalfNoise", "add-remove", [0, 1], "refuted", 2.0),
    ("ClampedCountBuggy", "add-remove", [0, 1], "refuted", 1.0 - math.log(1 - math.exp(-1.0))),
    ("NoisyMajorityRR", "substitute", [0, 1], "proved", 1.0),
    ("RandomizedResponse", "substitute", [0, 1], "proved", 1.0),
    ("RandomizedResponseWrongP", "substitute", [0, 1], "refuted", 2.0),
    ("ReportNoisyMax", "add-remove", [0, 1, 2], "proved", 0.5),
    ("ReportNoisyMaxBuggy", "add-remove", [0, 1, 2], "refuted", 4.0),
    ("LocalReport", "substitute", [(0, 0), (0, 1), (1, 0), (1, 1)], "proved", 1.0),
])
def test_domain_verdicts_and_exact_values(name, relation, classes, verdict, value):
    """``LocalReport`` (a noisy label and a randomized-response bit) is proved only because its paths pair by
    release: the bit kept on one input is flipped on the other for the same release."""
    records = 1 if name == "LocalReport" else 3
    res = exact_check(getattr(exact_user, name), 1.0, relation, bounds=[(0.0, 1.0)], classes=classes,
                      records=records, params=_params(name))
    assert res.verdict == verdict, res
    assert abs(res.lower - value) <= 1e-9 * max(1.0, value), res
    if verdict == "proved":
        assert res.upper <= 1.0 * (1 + 1e-9), res
    assert res.seconds <= 60, "each subject within 60 CPU-s"


def test_continuous_noise_is_undecided_naming_its_line():
    with pytest.raises(Undecided) as info:
        exact_check(exact_user.LaplaceCount, 1.0, bounds=[(0.0, 1.0)], classes=[0, 1], records=1)
    assert "laplace" in str(info.value) and "exact_user.py:" in info.value.site
    assert "two-sided geometric" in info.value.fix


def test_noisy_values_turned_into_numbers_are_never_called_proved():
    """``int(max(noisy, 0))`` decides the noisy value: the runs beyond the windows were not followed, so the
    mode states (hi, delta) and leaves pure epsilon undecided instead of claiming it."""
    res = exact_check(exact_user.ClampedCount, 1.0, bounds=[(0.0, 1.0)], classes=[0, 1], records=2)
    assert res.verdict == "undecided" and 0 < res.delta < 1e-9, res
    assert abs(res.lower - 1.0) < 1e-9 and res.upper <= 1 + 1e-9, res


def test_randomness_the_auditor_cannot_see_is_undecided():
    import os

    def leaky(data, rng):  # the OS's entropy: a number that differs between any two runs
        return sum(data) + int.from_bytes(os.urandom(8), "big")

    with pytest.raises(Undecided, match="cannot intercept"):
        pair_exact(leaky, (0,), (0, 1))


def _finite_mechanism(table):
    """A k-ary mechanism: the release's law is row ``min(sum(data), len(table) - 1)`` of ``table``."""
    def mech(data, rng):
        row = table[min(sum(data), len(table) - 1)]
        return int(rng.choice(len(row), p=row))
    return mech


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.integers(1, 20), min_size=2, max_size=4), min_size=2, max_size=3).filter(
    lambda rows: len({len(r) for r in rows}) == 1))
def test_property_finite_laws_match_brute_force(rows):
    """Random finite laws (each row a law over the releases): the exact interval holds the brute-force loss
    ``max_r |ln P(r | D) - ln P(r | D')|`` of the two rows the pair selects."""
    table = [np.array(r, dtype=float) / sum(r) for r in rows]
    mech = _finite_mechanism(table)
    for a in range(len(table) - 1):
        d0, d1 = (1,) * a, (1,) * (a + 1)
        truth = max(abs(math.log(p / q)) for p, q in zip(table[a], table[a + 1]))
        res = pair_exact(mech, d0, d1)
        assert res.lower <= truth + 1e-9 and res.upper >= truth - 1e-9 and res.upper - res.lower < 1e-9


@settings(max_examples=25, deadline=None)
@given(st.floats(0.2, 3.0), st.integers(0, 3), st.sampled_from([1, -1]))
def test_property_noisy_count_shifts_match_closed_form(epsilon, count, move):
    """A count with two-sided geometric noise (two NumPy draws) at any rate and any count: the exact loss is
    ``epsilon`` for a shift by one, proved by the coupling, with the lower end within 1e-9."""
    p = 1 - math.exp(-epsilon)

    def mech(data, rng):
        return sum(data) + rng.geometric(p) - rng.geometric(p)

    d0, d1 = (1,) * count, (1,) * max(0, count + move)
    if d0 == d1:
        return
    res = pair_exact(mech, d0, d1)
    assert res.argument == "coupling"
    assert abs(res.upper - epsilon) <= 1e-9 * epsilon and abs(res.lower - epsilon) <= 1e-9 * epsilon


def test_sampled_gate_never_exceeds_the_exact_upper_end():
    """Soundness against the sampled estimator: on the same pair, the sampled lower bound (at its own alpha)
    stays below the exact upper end, for a violation and for a correct subject (fixed seed; the sampled bound
    exceeds the truth with probability at most alpha = 0.05)."""
    from audit import estimate_epsilon

    for name, d0, d1 in (("RandomizedResponseWrongP", (0, 1), (1, 1)), ("RandomizedResponse", (0, 1), (1, 1))):
        mech = getattr(exact_user, name)(epsilon=1.0)
        exact = pair_exact(type(mech), d0, d1, {"epsilon": 1.0})
        est = estimate_epsilon(mech, d0, d1, n_samples=4000, seed=0, alpha=0.05)
        assert est.epsilon_lower <= exact.upper + 1e-9, (name, est.epsilon_lower, exact.upper)


def test_command_line_exit_codes_and_report_fields(tmp_path):
    """0 proved, 1 refuted, 3 undecided; ``report.json`` carries ``exact_epsilon`` and ``exact_verdict``."""
    import json

    cases = [("RandomizedResponse", 0, "proved"), ("RandomizedResponseWrongP", 1, "refuted")]
    for name, code, verdict in cases:
        out = tmp_path / name
        proc = subprocess.run([sys.executable, "-m", "audit", "check", f"subjects.exact_user:{name}",
                               "--params", '{"epsilon": 1.0}', "--neighbours", "substitute", "--epsilon", "1",
                               "--exact", "--exact-records", "2", "--classes", "0,1", "--out", str(out), "--quiet"],
                              cwd=ROOT / "tests", capture_output=True, text=True, timeout=300)
        assert proc.returncode == code, proc.stdout + proc.stderr
        (report,) = out.glob("*/report.json")  # its own folder: a sampled run's report of the subject stays
        assert report.parent.name == f"check-subjects.exact_user-{name}-exact"
        row = json.loads(report.read_text())["claims"][0]
        assert row["exact_verdict"] == verdict and len(row["exact_epsilon"]) == 2
        assert ("PROVED on this domain" if code == 0 else "REFUTED") in proc.stdout + proc.stderr
    proc = subprocess.run([sys.executable, "-m", "audit", "check", "subjects.exact_user:LaplaceCount", "--epsilon",
                           "1", "--exact", "--bounds", "[[0, 1]]", "--classes", "0,1", "--out", str(tmp_path / "u"),
                           "--quiet"], cwd=ROOT / "tests", capture_output=True, text=True, timeout=300)
    assert proc.returncode == 3 and "UNDECIDED" in proc.stderr and "laplace" in proc.stderr
    proc = subprocess.run([sys.executable, "-m", "audit", "check", "subjects.exact_user:RandomizedResponse",
                           "--epsilon", "1", "--delta", "0.1", "--exact", "--out", str(tmp_path / "d")],
                          cwd=ROOT / "tests", capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2 and "--delta" in proc.stderr


def _rr_python(data, rng):
    """Randomized response written with Python's ``random`` module (epsilon 1 under substitution)."""
    import random

    keep = math.exp(1.0) / (1 + math.exp(1.0))
    return tuple(b if random.random() < keep else 1 - b for b in data)


def _counts_generator_class(data, rng):
    """A count with two-sided geometric noise from ``np.random.Generator(np.random.PCG64(seed))``."""
    gen = np.random.Generator(np.random.PCG64(12345))
    p = 1 - math.exp(-1.0)
    return sum(data) + gen.geometric(p) - gen.geometric(p)


def _coin_from_sklearn(data, rng):
    """scikit-learn's ``check_random_state`` with an integer seed and with None: both intercepted."""
    from sklearn.utils import check_random_state

    a = check_random_state(7).randint(0, 2)
    b = check_random_state(None).randint(0, 2)
    return (sum(data) + a, b)


def _geometric_by_retries(data, rng):
    """A geometric count drawn by retrying a Bernoulli: an unbounded loop of draws, pruned below 1e-15."""
    k = 0
    while rng.random() < math.exp(-1.0):
        k += 1
    return sum(data) + k


@pytest.mark.parametrize("mech,d0,d1,truth,argument", [
    (_rr_python, (0, 1), (1, 1), 1.0, "complete law"),
    (_counts_generator_class, (0,), (0, 1), 1.0, "coupling"),
    (_coin_from_sklearn, (0,), (0, 1), math.inf, "complete law"),
])
def test_other_doors_to_the_randomness_are_intercepted(mech, d0, d1, truth, argument):
    res = pair_exact(mech, d0, d1)
    assert res.argument == argument
    assert (res.lower == truth if truth == math.inf else abs(res.lower - truth) < 1e-9 and res.upper - truth < 1e-9)


def test_a_loop_of_retried_draws_is_pruned_and_never_proved():
    """The loop's paths below probability 1e-15 are left out, their mass carried into every upper end: one-sided
    noise moved by one has an infinite loss (the count 0 cannot come from the larger input), and the lower end
    reads it as ln(P(0) / left-out mass) > 30, refuting any claim; nothing is claimed proved."""
    for d0, d1 in (((), (1,)), ((1,), (1, 1))):
        res = pair_exact(_geometric_by_retries, d0, d1)
        assert res.lower > 30 and res.upper == math.inf and 0 < res.delta < 1e-14


def _count_in_a_sentence(data, rng):
    """A noisy count formatted into a sentence (an f-string calls ``format``): the text is a function of the noisy
    count, so its exact loss is epsilon (1), never the infinity a text of the unformatted form would read."""
    p = 1 - math.exp(-1.0)
    return f"count={sum(data) + rng.geometric(p) - rng.geometric(p)}"


class _Slotted:
    __slots__ = ("value",)


def _slotted_release(data, rng):
    out = _Slotted()
    out.value = sum(data) + int(rng.integers(0, 2))
    return out


def test_formatting_a_noisy_value_reads_its_value_and_unreadable_releases_are_undecided():
    res = pair_exact(_count_in_a_sentence, (0,), (0, 1))
    assert abs(res.lower - 1.0) < 1e-9 and res.upper <= 1 + 1e-9 and res.delta > 0
    with pytest.raises(Undecided, match="cannot read"):
        pair_exact(_slotted_release, (0,), (0, 1))


@pytest.mark.parametrize("k", [3, 5])
def test_many_classes_of_noisy_counts_decided_as_a_product(k):
    """Vectorised noisy counts over k classes keep k independent noisy values: their joint law (55^k window
    values) is never enumerated, the lower ends add over the factors. Add/remove moves one count (epsilon),
    substitution two (2 epsilon)."""
    params = {"classes": tuple(range(k))}
    one, two = (np.zeros((1, 1)), np.array([0])), (np.zeros((2, 1)), np.array([0, 1]))
    res = pair_exact(exact_user.NoisyCountsVectorised, one, two, params)
    assert res.argument == "coupling" and abs(res.lower - 1.0) < 1e-9 and abs(res.upper - 1.0) < 1e-9
    swapped = (np.zeros((1, 1)), np.array([1]))
    res = pair_exact(exact_user.NoisyCountsVectorised, one, swapped, params)
    assert abs(res.lower - 2.0) < 1e-9 and abs(res.upper - 2.0) < 1e-9


def _one_noise_for_two_counts(data, rng):
    """A bug: one noise draw added to every count (an array plus a noisy scalar, broadcast by NumPy)."""
    counts = np.bincount(np.asarray(data, dtype=int), minlength=2)
    p = 1 - math.exp(-1.0)
    return counts + (rng.geometric(p) - rng.geometric(p))


def test_an_array_plus_one_noisy_scalar_broadcasts_and_reused_noise_is_refuted():
    """The difference of the two released counts is exact, so the loss is infinite: a lower end far above any
    claim (ln of a release's mass over the windows' left-out mass), and no upper end."""
    res = pair_exact(_one_noise_for_two_counts, (0,), (0, 1))
    assert res.lower > 25 and res.upper == math.inf


def _two_sided(z, eps):
    a = math.exp(-eps)
    return (1 - a) / (1 + a) * a ** abs(z)


def _kept_above(threshold, eps, classes=2):
    """Noisy counts of each class, each kept only when it exceeds a public threshold (a sparse release)."""
    p = 1 - math.exp(-eps)

    def mech(data, rng):
        counts = np.bincount(np.asarray(data, dtype=int), minlength=classes)
        noisy = counts + rng.geometric(p, size=classes) - rng.geometric(p, size=classes)
        return {c: noisy[c] for c in range(classes) if noisy[c] > threshold}
    return mech


def _kept_above_truth(c0, c1, threshold, eps):
    """Brute force for one class whose count moves from c0 to c1: the released value's law, summed over a window
    of +-200 (left-out mass below 1e-80), and the 'not kept' event."""
    def law(c):
        out = {"not kept": sum(_two_sided(z, eps) for z in range(-200, threshold - c + 1))}
        out.update({c + z: _two_sided(z, eps) for z in range(threshold - c + 1, 200)})
        return out
    l0, l1 = law(c0), law(c1)
    return max(abs(math.log(l0[r] / l1[r])) for r in l0 if r in l1)


@pytest.mark.parametrize("threshold,eps", [(-1, 1.0), (0, 1.0), (2, 0.5), (1, 2.0)])
def test_a_sparse_release_is_a_product_of_its_paths_and_matches_brute_force(threshold, eps):
    """Each path (which classes are kept) is a product of the kept values' sub-laws and the dropped classes'
    masses; the pair's lower end is the worst path's sum of factors, the upper end the coupling's. Both hold the
    brute-force loss to 1e-9 (one record of class 1 added: one count moves by one)."""
    res = pair_exact(_kept_above(threshold, eps), (0,), (0, 1))
    truth = _kept_above_truth(0, 1, threshold, eps)
    assert res.lower <= truth + 1e-9 and res.upper >= truth - 1e-9, (res, truth)
    assert res.upper - res.lower < 1e-8, res


@pytest.mark.parametrize("noise_epsilon,verdict,value", [(None, "proved", 1.0), (2.0, "refuted", 2.0)])
def test_the_projects_own_exact_noise_is_an_atom_of_its_law(noise_epsilon, verdict, value):
    """reference.mechanisms' two-sided geometric noise is sampled by rejection loops over uniforms of up to 2^56
    values: followed draw by draw it could not be decided. The exact mode reads it as one atom of its law,
    ``DLap(1 / epsilon)``, and decides the counts as it decides NumPy's geometric difference (the float rounding
    of the rate stays within the tolerance)."""
    res = exact_check(exact_user.ProjectGeometricCounts, 1.0, bounds=[(0.0, 1.0)], classes=[0, 1], records=3,
                      params={"noise_epsilon": noise_epsilon})
    assert res.verdict == verdict, res
    assert abs(res.lower - value) <= TOL * value and (verdict != "proved" or res.upper <= 1.0 + TOL), res


@pytest.mark.parametrize("params", [
    dict(epsilon=1.0, bounds=[(0.0, 1.0)], n_bins=4, target_bounds=(0.0, 1.0)),
    dict(epsilon=1.0, bounds=[(0.0, 1.0)], n_bins=4, target_bounds=(0.0, 1.0), indicator_share=0.3),
    dict(epsilon=1.0, bounds=[(0.0, 1.0)], n_bins=4, target_bounds=(0.0, 1.0), per_leaf_noise=True),
])
def test_lpdts_randomisers_committed_exact_losses_are_reproduced_with_no_law_of_their_own(params):
    """LPDT's local randomiser (its lattice Laplace label and randomized-response leaf bits) and the authors'
    per-leaf label noise, traced as ordinary code, against their hand-derived laws (the certificate's
    ``report_pair_loss``): 1 and 2.5 on the worst pair of ``reports/lpdt/certificate.md``, to 1e-9. The bits are
    kept on one input where they flip on the other, so the paths pair by release; each path's law is a product."""
    from audit.engine.exact_law.randomizer_law import randomizer_of, report_pair_loss

    m = randomizer_of(params)
    for (x0, y0), (x1, y1) in [((0.1, 0.0), (0.3, 1.0)), ((0.1, 0.25), (0.9, 0.25)), ((0.5, 0.375), (0.7, 0.5))]:
        law = report_pair_loss(params, ([[x0]], [y0]), ([[x1]], [y1]))
        truth = (law.lower + law.upper) / 2
        res = pair_exact(lambda d, rng: m.sample(d, rng), ((x0,), y0), ((x1,), y1))
        assert res.argument == "coupling", res
        assert abs(res.lower - truth) <= 1e-9 and abs(res.upper - truth) <= 1e-9, (x0, y0, x1, y1, res, truth)
