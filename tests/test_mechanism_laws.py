"""Each sampler matches the law it states.

Every test draws a fixed number of samples from a fixed seed and applies a
goodness-of-fit test at level ALPHA = 1e-3: for a correct sampler, a fresh
seed would fail with probability 1e-3 (the false-alarm rate); with the fixed
seed the outcome is deterministic. A failure means the sampler and its stated
law disagree.
"""
import math

import numpy as np
import pytest
from scipy import stats

from reference.mechanisms import (
    BitRandomizedResponse,
    ExponentialMechanism,
    IntervalExponential,
    Laplace,
    PermuteAndFlip,
    RandomizedResponse,
    TwoSidedGeometric,
)

ALPHA = 1e-3  # false-alarm rate of each goodness-of-fit test
N = 40_000


def chisquare_pvalue(samples, probs, min_expected=5.0):
    """Chi-square test of integer-coded samples against probs, rare cells pooled."""
    counts = np.bincount(np.asarray(samples), minlength=len(probs)).astype(float)
    expected = np.asarray(probs) * len(samples)
    order = np.argsort(expected)
    pooled_obs, pooled_exp, acc_o, acc_e = [], [], 0.0, 0.0
    for i in order:  # pool the smallest cells until each has min_expected
        acc_o += counts[i]
        acc_e += expected[i]
        if acc_e >= min_expected:
            pooled_obs.append(acc_o)
            pooled_exp.append(acc_e)
            acc_o = acc_e = 0.0
    if acc_e > 0:
        pooled_obs[-1] += acc_o
        pooled_exp[-1] += acc_e
    return stats.chisquare(pooled_obs, pooled_exp).pvalue


def lattice_chisquare_pvalue(offsets, law, cells=40):
    """Chi-square of integer noise offsets against a discrete Laplace law, in ``cells`` cells of about equal
    exact probability (the pmf summed over +-40 scales; the rest, < e^-40, joins the end cells)."""
    reach = int(np.ceil(40 / law.rate))
    ks = np.arange(-reach, reach + 1)
    cdf = np.cumsum(np.exp(law.logpmf(ks)))
    edges = np.unique(np.searchsorted(cdf, np.linspace(0, 1, cells + 1)[1:-1]))  # cell i: ks[edges[i-1]+1..edges[i]]
    probs = np.diff(np.r_[0.0, cdf[edges], 1.0])
    cell = np.searchsorted(ks[edges], offsets, side="left")
    return stats.chisquare(np.bincount(cell, minlength=probs.size), probs * len(offsets)).pvalue


@pytest.mark.parametrize("epsilon,sens", [(0.5, 1.0), (2.0, 3.0)])
def test_laplace_batch_and_sample_follow_lattice_law(epsilon, sens):
    m = Laplace(epsilon, sens)
    rng = np.random.default_rng(1)
    centre = int(np.floor(2.0 / m.grid + 0.5))
    xs = m.batch(2.0, N, rng)
    units = xs / m.grid
    assert np.all(units == np.round(units))  # on the lattice
    assert lattice_chisquare_pvalue(units.astype(np.int64) - centre, m.law(1)) > ALPHA
    singles = np.array([m.sample(2.0, rng) for _ in range(3000)])
    assert lattice_chisquare_pvalue((singles / m.grid).astype(np.int64) - centre, m.law(1), cells=20) > ALPHA
    # the stated pmf: normalised, and close to the Laplace density times the grid
    assert math.isclose(math.exp(m.logpmf(2.5, 2.0)) / m.grid,
                        stats.laplace(2.0, m.scale).pdf(2.5), rel_tol=1e-3)
    assert m.logpmf(2.5 + m.grid / 2, 2.0) == -math.inf  # off the lattice


@pytest.mark.parametrize("epsilon", [0.3, 1.0, 3.0])
def test_geometric_is_integer_and_matches_pmf(epsilon):
    m = TwoSidedGeometric(epsilon)
    rng = np.random.default_rng(2)
    xs = m.batch(5, N, rng)
    assert np.issubdtype(xs.dtype, np.integer)
    support = np.arange(-60, 71)
    probs = np.exp([m.logpmf(k, 5) for k in support])
    assert probs.sum() == pytest.approx(1.0, abs=1e-6)
    assert xs.min() >= support[0] and xs.max() <= support[-1]
    assert chisquare_pvalue(xs - support[0], probs / probs.sum()) > ALPHA
    assert isinstance(m.sample(5, rng), int)


UTILS = [np.array([0.0, 1.0, 3.0, 2.5]), np.array([5.0, 5.0, 4.0])]


@pytest.mark.parametrize("u", UTILS)
@pytest.mark.parametrize("monotonic", [False, True])
def test_exponential_mechanism_matches_pmf(u, monotonic):
    m = ExponentialMechanism(1.2, 1.0, monotonic=monotonic)
    rng = np.random.default_rng(3)
    assert chisquare_pvalue(m.batch(u, N, rng), m.pmf(u)) > ALPHA
    assert chisquare_pvalue([m.sample(u, rng) for _ in range(4000)], m.pmf(u)) > ALPHA


@pytest.mark.parametrize("u", UTILS)
@pytest.mark.parametrize("monotonic", [False, True])
def test_permute_and_flip_both_paths_match_pmf(u, monotonic):
    m = PermuteAndFlip(1.2, 1.0, monotonic=monotonic)
    rng = np.random.default_rng(4)
    assert m.pmf(u).sum() == pytest.approx(1.0, abs=1e-12)
    assert chisquare_pvalue(m.batch(u, N, rng), m.pmf(u)) > ALPHA
    assert chisquare_pvalue([m.sample(u, rng) for _ in range(8000)], m.pmf(u)) > ALPHA


def test_permute_and_flip_pmf_by_enumerating_permutations():
    """The closed form equals the average over all permutations, exactly."""
    from itertools import permutations

    u = np.array([0.3, 1.0, -0.5, 1.0])
    m = PermuteAndFlip(0.9)
    p = np.exp(m.rate * (u - u.max()))
    brute = np.zeros(u.size)
    perms = list(permutations(range(u.size)))
    for perm in perms:
        stay = 1.0
        for r in perm:
            brute[r] += stay * p[r] / len(perms)
            stay *= 1 - p[r]
    np.testing.assert_allclose(m.pmf(u), brute, rtol=1e-12)


@pytest.mark.parametrize("k,v", [(2, 1), (5, 3)])
def test_randomized_response_matches_pmf(k, v):
    m = RandomizedResponse(1.0, k)
    rng = np.random.default_rng(5)
    assert chisquare_pvalue(m.batch(v, N, rng), m.pmf(v)) > ALPHA


def test_bit_randomized_response_matches_pmf():
    m = BitRandomizedResponse(1.5, sensitivity=2)
    bits = [1, 0, 1]
    rng = np.random.default_rng(6)
    out = m.batch(bits, N, rng)
    codes = out @ np.array([4, 2, 1])
    outcomes = [tuple(int(b) for b in np.binary_repr(c, 3)) for c in range(8)]
    probs = np.exp([m.logpmf(o, bits) for o in outcomes])
    assert probs.sum() == pytest.approx(1.0)
    assert chisquare_pvalue(codes, probs) > ALPHA


@pytest.mark.parametrize("data", [[0.1, 0.2, 0.7], [0.5, 0.5, 0.5, 0.9], []])
def test_interval_exponential_matches_cdf(data):
    m = IntervalExponential(2.0, bounds=(0.0, 1.0))
    rng = np.random.default_rng(7)
    xs = m.batch(data, N, rng)
    # every output is a point of the public grid t_j = j / M
    np.testing.assert_array_equal(m.points(np.rint(xs * m.grid)), xs)
    # chi-square of the sampled gaps against the exact gap law (false-alarm rate ALPHA)
    start, count, log_p = m.gaps(data)
    gap = np.searchsorted(start, np.rint(xs * m.grid), side="right") - 1
    ok = count > 0
    if ok.sum() > 1:
        assert chisquare_pvalue(np.flatnonzero(ok).searchsorted(gap), np.exp(log_p[ok])) > ALPHA
    # the grid point is uniform inside its gap: its relative position in 8 blocks of the widest gap
    i = int(np.argmax(count * np.exp(log_p)))
    j = np.rint(xs[gap == i] * m.grid).astype(int) - start[i]
    block = j * 8 // count[i]
    probs = np.diff(-(-np.arange(9) * count[i] // 8)) / count[i]  # grid points per block, exactly
    assert chisquare_pvalue(block, probs) > ALPHA
    # the cdf is the running sum of the pmf (small grid: every point enumerated), and sums to one
    small = IntervalExponential(2.0, bounds=(0.0, 1.0), grid=40)
    pts = small.points(np.arange(41))
    pmf = np.exp([small.logpmf(r, data) for r in pts])
    assert pmf.sum() == pytest.approx(1.0, abs=1e-12)
    np.testing.assert_allclose(small.cdf(pts, data), np.cumsum(pmf), atol=1e-12)
    assert small.logpmf(float(np.nextafter(pts[3], 1.0)), data) == -math.inf  # off the grid: impossible
