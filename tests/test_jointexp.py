"""JointExp (reference/jointexp.py): its output law on the public grid, checked on tiny data.

1. The normaliser of the dynamic program equals brute-force enumeration of
   ``exp(epsilon u(o) / (2 Delta)) / prod mult!`` over every sorted grid vector
   (small grids), and the exact pmf sums to 1.
2. The law of the sampled interval sequence equals brute-force enumeration of
   the definition's masses (chi-square test, seed fixed, false-alarm rate 0.001).
3. The exact log-probability ratio between add/remove neighbours never exceeds epsilon
   (also a hypothesis property over tiny neighbouring datasets, with the support checked).
4. Every output is a point of the public grid, whatever the data (issue 17 finding 2),
   and nothing derived from the data survives a call (finding 7).
"""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import reference.jointexp as je_mod
from audit.exact import privacy_loss
from reference.grid import grid_index, grid_searchsorted
from reference.jointexp import JointExp


def _brute_masses(je: JointExp, data):
    """Mass of every interval sequence, straight from the definition: ``c^k / k!`` per run."""
    start, counts, n = je._prepare(data)
    w = np.diff(np.concatenate(([0.0], je.quantiles, [1.0]))) * n
    m = je.quantiles.size
    out = {}
    for seq in itertools.combinations_with_replacement(range(n + 1), m):
        gaps = np.diff(np.concatenate(([0], seq, [n])))
        logm = -je.rate * np.sum(np.abs(gaps - w))
        vol = 1.0
        for i, run in itertools.groupby(seq):
            k = len(list(run))
            vol *= counts[i] ** k / math.factorial(k)
        out[seq] = math.exp(logm) * vol
    return out, start, counts


def _grid_vectors(je: JointExp):
    """Every sorted vector of grid points (small grids only)."""
    pts = je.points(np.arange(je.grid + 1)).tolist()
    return [np.array(t) for t in itertools.combinations_with_replacement(pts, je.quantiles.size)]


@settings(max_examples=20, deadline=None)
@given(st.lists(st.floats(0.0, 1.0), min_size=0, max_size=4), st.sampled_from([[0.5], [0.3, 0.6], [0.2, 0.5, 0.7]]),
       st.sampled_from([0.5, 2.0]), st.integers(1, 7))
def test_normaliser_and_pmf_equal_enumeration_over_the_grid(x, q, eps, grid):
    je = JointExp(eps, q, (0.0, 1.0), grid=grid)
    outs = _grid_vectors(je)
    total = sum(math.exp(je.rate * je.utility(o, x)) / math.prod(math.factorial(k) for k in
                                                                  np.unique(o, return_counts=True)[1]) for o in outs)
    assert je.log_normaliser(x) == pytest.approx(math.log(total), rel=1e-9, abs=1e-9)
    assert sum(math.exp(je.logpmf(o, x)) for o in outs) == pytest.approx(1.0, rel=1e-9)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.floats(0.0, 1.0), min_size=0, max_size=5), st.sampled_from([[0.5], [0.25, 0.75], [0.2, 0.5, 0.7]]),
       st.sampled_from([0.5, 1.0, 4.0]))
def test_normaliser_equals_enumeration(x, q, eps):
    je = JointExp(eps, q, (0.0, 1.0))
    masses, _, _ = _brute_masses(je, x)
    total = sum(masses.values())
    assert je.log_normaliser(x) == pytest.approx(math.log(total), rel=1e-9, abs=1e-9)


def test_fft_path_equals_direct_path(monkeypatch):
    x = np.random.default_rng(3).beta(2, 5, size=300)
    je = JointExp(0.5, np.linspace(0, 1, 11)[1:-1], (0.0, 1.0))
    direct = je.log_normaliser(x)
    monkeypatch.setattr(je_mod, "_DIRECT_MAX", 10)
    assert JointExp(0.5, np.linspace(0, 1, 11)[1:-1], (0.0, 1.0)).log_normaliser(x) == pytest.approx(direct, rel=1e-10)


@pytest.mark.parametrize("direct_max", [10, 10_000])
def test_every_reachable_state_has_a_predecessor(monkeypatch, direct_max):
    """On data with many ties (gaps with no grid point, as in real datasets), every state of the forward pass
    with positive weight must lie in a gap with grid points, and a new run (r = 0) at level j >= 1 must have an
    earlier state with positive weight. The FFT path once gave rounding noise to states that broke both, and
    the backward pass then crashed on the PrivaTree reproduction's folds (2,000+ records); both paths are
    checked, then 300 draws on the FFT path."""
    monkeypatch.setattr(je_mod, "_DIRECT_MAX", direct_max)
    rng = np.random.default_rng(4)
    x = np.concatenate((np.zeros(40), np.round(rng.beta(2, 5, size=260), 2), np.ones(30)))
    je = JointExp(0.5, np.linspace(0, 1, 11)[1:-1], (0.0, 1.0))
    _, count, n = je._prepare(x)
    A, _ = je._forward(count, n)
    phi = np.exp(je._log_phi_table(n))
    for j, a in enumerate(A):
        assert np.all(a[count == 0] == 0.0)
        if j:
            for i in np.flatnonzero(a[:, 0] > 0):
                assert i > 0 and np.sum(A[j - 1][:i].sum(axis=1) * phi[j, i:0:-1]) > 0
    draws = je.batch(x, 300, np.random.default_rng(5))
    assert draws.shape == (300, 9) and np.all(np.diff(draws, axis=1) >= 0)


def test_few_distinct_values_use_exact_sums_beyond_the_direct_limit():
    """5,000 records on 14 integer values (more than the direct path's 2,000): the forward sums run over the
    14 gaps that hold grid points and equal the direct path's; the FFT could not resolve their weights
    (hundreds of orders of magnitude apart), which made every later draw degenerate."""
    x = np.random.default_rng(1).integers(1, 15, 5000).astype(float)
    sparse = JointExp(0.2, np.linspace(0, 1, 11)[1:-1], (1.0, 14.0)).log_normaliser(x)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(je_mod, "_DIRECT_MAX", 10 ** 6)
        direct = JointExp(0.2, np.linspace(0, 1, 11)[1:-1], (1.0, 14.0)).log_normaliser(x)
    assert sparse == pytest.approx(direct, rel=1e-12)


def test_large_tied_feature_draws_spread_quantiles():
    """The PrivaTree reproduction's crash (Diabetes130US, a 1..14 feature, 56,872 records, epsilon 0.198):
    phi underflows for the large jumps between values, so the backward draws combine weights in log space.
    20 draws must succeed and spread the 9 quantiles over several values (the true law puts almost all its
    mass on spread-out quantiles: piling them into one gap costs thousands of records of utility)."""
    counts = [8011, 9662, 9931, 7750, 5565, 4162, 3257, 2422, 1691, 1269, 1074, 802, 664, 612]
    x = np.repeat(np.arange(1.0, 15.0), counts)
    je = JointExp(0.198, np.linspace(0, 1, 11)[1:-1], (1.0, 14.0))
    draws = je.batch(x, 20, np.random.default_rng(0))
    assert draws.shape == (20, 9) and np.all(np.diff(draws, axis=1) >= 0)
    assert all(np.unique(np.floor(d)).size >= 6 for d in draws)


def test_sampled_interval_law_matches_enumeration():
    """Chi-square goodness of fit of the sampled intervals; false-alarm rate 0.001 (seed fixed)."""
    x = [0.1, 0.3, 0.35, 0.8]
    je = JointExp(2.0, [0.3, 0.7], (0.0, 1.0))
    masses, start, counts = _brute_masses(je, x)
    keys = [k for k, v in masses.items() if v > 0]
    p = np.array([masses[k] for k in keys])
    p /= p.sum()
    rng = np.random.default_rng(20240601)
    n = 20_000
    draws = je.batch(x, n, rng)
    # the interval of each (sorted) output: its grid index k has start[i] <= k < start[i] + counts[i]
    k = grid_searchsorted(draws, 0.0, 1.0, je.grid, "left")
    np.testing.assert_array_equal(je.points(k), draws)  # grid points only
    idx = np.searchsorted(start, k, side="right") - 1
    counts = {}
    for row in map(tuple, idx):
        counts[row] = counts.get(row, 0) + 1
    assert set(counts) <= set(keys)
    obs = np.array([counts.get(k, 0) for k in keys])
    exp = p * n
    big = exp >= 5
    chi2 = np.sum((obs[big] - exp[big]) ** 2 / exp[big]) + (obs[~big].sum() - exp[~big].sum()) ** 2 / max(exp[~big].sum(), 1e-9)
    df = int(big.sum()) - (0 if (~big).any() else 1)
    assert chi2 < stats.chi2.ppf(0.999, df)


@pytest.mark.parametrize("eps", [0.5, 1.0, 2.0])
def test_log_probability_ratio_within_epsilon(eps):
    """Add/remove neighbours: the exact log-probability ratio is at most epsilon at random grid outputs."""
    rng = np.random.default_rng(7)
    je = JointExp(eps, [0.25, 0.5, 0.75], (0.0, 1.0))
    worst = 0.0
    for _ in range(20):
        x = list(rng.random(int(rng.integers(1, 6))))
        x1 = x + [float(rng.choice([0.0, 1.0, rng.random()]))]
        l0, l1 = je.log_normaliser(x), je.log_normaliser(x1)
        for _ in range(50):
            o = je.points(np.sort(rng.integers(0, je.grid + 1, size=3)))
            # logpmf = rate u(o) - log mult! - log W: the ratio from the utilities and the normalisers
            worst = max(worst, abs(je.rate * (je.utility(o, x) - je.utility(o, x1)) - l0 + l1))
        assert je.logpmf(o, x) - je.logpmf(o, x1) == pytest.approx(je.rate * (je.utility(o, x) - je.utility(o, x1))
                                                                   - l0 + l1, abs=1e-12)
    assert worst <= eps + 1e-9
    assert worst > 0.2 * eps  # the check is not vacuous: the law does move between neighbours


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(0.0, 1.0), min_size=0, max_size=3), st.floats(0.0, 1.0),
       st.sampled_from([[0.5], [0.3, 0.6]]), st.sampled_from([0.5, 1.0, 3.0]))
def test_exact_loss_of_neighbours_within_epsilon_on_the_same_support(x, extra, q, eps):
    """The exact loss over every output (``critical_outputs`` covers each rank pattern) is at
    most epsilon, and every grid vector has positive probability under both neighbours."""
    je = JointExp(eps, q, (0.0, 1.0))
    x1 = x + [extra]
    assert privacy_loss(je, x, x1) <= eps + 1e-9
    for o in je.critical_outputs(x, x1):
        assert math.isfinite(je.logpmf(o, x)) and math.isfinite(je.logpmf(o, x1))
    off = np.array([np.nextafter(je.points(1), 1.0)] * len(q))  # not a grid point: probability zero under both
    assert je.logpmf(off, x) == je.logpmf(off, x1) == -math.inf


def test_outputs_are_grid_points_and_no_state_survives():
    rng = np.random.default_rng(5)
    je = JointExp(1.0, [0.25, 0.5, 0.75], (-1.0, 2.0), grid=1000)
    for x in ([0.9], [0.9, 0.3], list(rng.random(7))):
        o = je.sample(x, rng)
        assert all(grid_index(v, -1.0, 2.0, 1000) >= 0 for v in o)
    assert not hasattr(je_mod, "_FORWARD_CACHE")
    assert not any(isinstance(v, dict) and v for k, v in vars(je_mod).items() if not k.startswith("__"))


def test_samples_are_sorted_inside_bounds_and_track_quantiles():
    rng = np.random.default_rng(11)
    x = rng.normal(size=5000)
    levels = np.linspace(0, 1, 11)[1:-1]
    o = JointExp(5.0, levels, (-6.0, 6.0)).sample(x, rng)
    assert np.all(np.diff(o) >= 0) and o[0] >= -6 and o[-1] <= 6
    assert all(grid_index(v, -6.0, 6.0, 2 ** 16) >= 0 for v in o)
    # with 5000 points and epsilon 5 every private quantile is within 0.02 in rank of the truth
    ranks = np.searchsorted(np.sort(x), o) / x.size
    assert np.max(np.abs(ranks - levels)) < 0.02


def test_degenerate_range_and_bad_parameters():
    rng = np.random.default_rng(0)
    assert np.all(JointExp(1.0, [0.5], (2.0, 2.0)).sample([2.0, 2.0], rng) == 2.0)
    with pytest.raises(ValueError, match="quantiles"):
        JointExp(1.0, [0.5, 0.4], (0, 1))
    with pytest.raises(ValueError, match="epsilon"):
        JointExp(0.0, [0.5], (0, 1))
    with pytest.raises(ValueError, match="bounds"):
        JointExp(1.0, [0.5], (1, 0))
    with pytest.raises(ValueError, match="finite"):
        JointExp(1.0, [0.5], (0, 1)).sample([np.nan], rng)
    with pytest.raises(ValueError, match="grid"):
        JointExp(1.0, [0.5], (0, 1), grid=0)


@pytest.mark.parametrize("x", [[0.1, 0.45, 0.5, 0.9], [0.5], []])
def test_batched_backward_pass_has_the_exact_grid_law(x):
    """``reference.privatree_batch.joint_exp_batch`` and ``JointExp.batch`` against the exact pmf,
    enumerated over every sorted vector of a 7-point grid: chi-square, 30,000 draws each, fixed
    seed, false-alarm rate 1e-3 per test."""
    from reference.privatree_batch import joint_exp_batch

    je = JointExp(2.0, [0.3, 0.6], (0.0, 1.0), grid=6)
    outs = _grid_vectors(je)
    p = np.exp([je.logpmf(o, x) for o in outs])
    index = {tuple(o.tolist()): i for i, o in enumerate(outs)}
    rng = np.random.default_rng(31)
    for draws in (joint_exp_batch(je, x, 30_000, rng), je.batch(x, 30_000, rng)):
        k = np.array([index[tuple(row.tolist())] for row in draws])  # a KeyError would be an off-grid output
        obs = np.bincount(k, minlength=len(outs))
        big = p * 30_000 >= 5
        exp_counts = np.append(p[big] * 30_000, p[~big].sum() * 30_000)
        obs_counts = np.append(obs[big], obs[~big].sum())
        keep = exp_counts > 0
        assert stats.chisquare(obs_counts[keep], exp_counts[keep] * obs_counts[keep].sum() / exp_counts[keep].sum()
                               ).pvalue > 1e-3
