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
from reference.mechanisms import logspace as ls
from reference.mechanisms.jointexp import joint_exp_batch
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


def _brute_new_runs(je: JointExp, total: np.ndarray, pos: np.ndarray, j: int, n: int) -> np.ndarray:
    """The new-run sums of the forward pass by a plain matrix log-sum-exp (independent of the scans)."""
    t = je._targets(n)[j]
    g = pos[:, None] - pos[None, :]
    w = np.where(g > 0, total[None, :] - je.rate * np.abs(g - t), -np.inf)
    top = np.max(w, axis=1)
    safe = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore"):
        return np.log(np.sum(np.exp(w - safe[:, None]), axis=1)) + safe


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 400), min_size=1, max_size=60, unique=True), st.integers(0, 10 ** 9),
       st.sampled_from([0.05, 0.25, 1.0, 5.0]), st.sampled_from([[0.5], [0.1, 0.9], [0.3, 0.31, 0.7]]))
def test_log_space_convolution_equals_brute_force(gaps, seed, eps, q):
    """The forward pass's new-run sums (a growing window and a decaying prefix, by doubling scans in
    split logs) equal a direct matrix log-sum-exp, for weights spread over thousands of orders of
    magnitude (ties put whole datasets between two grid points): absolute error below 1e-9 in the log."""
    rng = np.random.default_rng(seed)
    pos = np.sort(np.array(gaps, dtype=float))
    n = int(pos[-1]) + int(rng.integers(0, 50))
    total = rng.normal(0.0, 1.0, pos.size) * rng.choice([1.0, 50.0, 3000.0])
    total[rng.random(pos.size) < 0.2] = -np.inf  # zero weights
    je = JointExp(eps, q, (0.0, 1.0))
    for j in range(len(q) + 1):
        got = je._new_runs(ls.split(total), pos, j, n).value()
        want = _brute_new_runs(je, total, pos, j, n)
        assert np.array_equal(np.isfinite(got), np.isfinite(want))
        fin = np.isfinite(want)
        np.testing.assert_allclose(got[fin], want[fin], rtol=0, atol=1e-9 * max(1.0, np.max(np.abs(want[fin]), initial=1)))


def _pattern_law(je: JointExp, data):
    """Exact law of the sequence of gaps (among those holding grid points) of the sorted output,
    by enumerating every sequence (independent of the forward pass): log mass
    ``-rate sum |g_j - t_j| + sum_runs (k log c - log k!)``, normalised."""
    start, count, n = je._prepare(data)
    gaps = np.flatnonzero(count > 0)
    t = je._targets(n)
    m = je.quantiles.size
    seqs = list(itertools.combinations_with_replacement(range(gaps.size), m))
    logm = []
    for seq in seqs:
        i = gaps[list(seq)]
        g = np.diff(np.concatenate(([0], i, [n])))
        lm = -je.rate * float(np.sum(np.abs(g - t)))
        for k, run in itertools.groupby(seq):
            r = len(list(run))
            lm += r * math.log(count[gaps[k]]) - math.lgamma(r + 1)
        logm.append(lm)
    logm = np.array(logm)
    top = logm.max()
    p = np.exp(logm - top)
    return seqs, p / p.sum(), top + math.log(np.sum(np.exp(logm - top))), start, count, gaps


def _pattern_counts(draws, je, start, gaps, seqs):
    k = grid_searchsorted(draws, je.bounds[0], je.bounds[1], je.grid, "left")
    gap = np.searchsorted(start, k, side="right") - 1
    state = np.searchsorted(gaps, gap)
    assert np.all(gaps[state] == gap)  # every output lies in a gap that holds grid points
    index = {s: i for i, s in enumerate(seqs)}
    return np.bincount([index[tuple(row)] for row in state.tolist()], minlength=len(seqs))


def _gof_pvalue(obs, p):
    """Chi-square goodness of fit, cells with expected count below 5 pooled."""
    n = obs.sum()
    big = p * n >= 5
    o = np.append(obs[big], obs[~big].sum())
    e = np.append(p[big] * n, p[~big].sum() * n)
    keep = e > 0
    assert obs[p == 0].sum() == 0
    if keep.sum() < 2:  # one cell holds all the mass (to double precision): every draw must be in it
        return 1.0 if o[keep].sum() == n else 0.0
    return stats.chisquare(o[keep], e[keep] * o[keep].sum() / e[keep].sum()).pvalue


_TIED = {
    "all tied at 0.5": lambda n, rng: np.full(n, 0.5),
    "0/1 with 40% ones": lambda n, rng: (rng.random(n) < 0.4).astype(float),
    "5 integer levels": lambda n, rng: rng.integers(0, 5, n) / 4.0,
}


@pytest.mark.parametrize("n", [1_000, 30_000, 100_000])
@pytest.mark.parametrize("kind", sorted(_TIED))
def test_sampler_matches_exact_law_on_tied_data_at_realistic_sizes(kind, n):
    """Issue 26 finding 1: on tied and low-cardinality data at 10^3-10^5 records the reference
    sampler and the batched twin both follow the exact law (enumerated over gap sequences,
    independently of the forward pass), and the normaliser is finite and equals the enumeration.
    Before the fix the reference put every edge above 0.5 and the batched path every edge below it
    (300 of 300 draws), and past 29,806 records both returned the lower bound. Chi-square with
    cells below 5 expected pooled; 1,500 draws per path; fixed seeds; false-alarm rate 1e-3 per path."""
    rng = np.random.default_rng(2600 + n)
    x = _TIED[kind](n, rng)
    je = JointExp(1.0, np.linspace(0, 1, 6)[1:-1], (0.0, 1.0))
    seqs, p, log_w, start, count, gaps = _pattern_law(je, x)
    assert math.isfinite(je.log_normaliser(x))
    assert je.log_normaliser(x) == pytest.approx(log_w, rel=1e-12, abs=1e-9)
    for draws in (je.batch(x, 1500, rng), joint_exp_batch(je, x, 1500, rng)):
        assert _gof_pvalue(_pattern_counts(draws, je, start, gaps, seqs), p) > 1e-3
    o = je.sample(x, rng)
    assert math.isfinite(je.logpmf(o, x)) and je.logpmf(o, x) <= 0.0


def test_a_million_tied_values_have_the_binomial_law_of_edges():
    """10^6 values all at 0.5, 9 levels, epsilon 1: every split of the 9 edges between the
    ``c0 = 32,769`` grid points at or below 0.5 and the ``c1 = 32,768`` above it has the same
    utility, so the number below is Binomial(9, c0 / (c0 + c1)). 600 draws per path, chi-square,
    false-alarm rate 1e-3 per path."""
    x = np.full(10 ** 6, 0.5)
    je = JointExp(1.0, np.linspace(0, 1, 10)[1:-1], (0.0, 1.0))
    p = stats.binom.pmf(np.arange(9), 8, 32769 / 65537)
    rng = np.random.default_rng(26)
    for draws in (je.batch(x, 600, rng), joint_exp_batch(je, x, 600, rng)):
        below = np.sum(draws <= 0.5, axis=1)
        assert _gof_pvalue(np.bincount(below, minlength=9), p) > 1e-3
    assert math.isfinite(je.log_normaliser(x)) and math.isfinite(je.logpmf(je.sample(x, rng), x))


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
