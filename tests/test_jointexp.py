"""JointExp (reference/jointexp.py): its output law on tiny data, checked three ways.

1. The normaliser of the dynamic program equals numerical integration of
   ``exp(epsilon u(o) / (2 Delta))`` over the ordered region (m = 1, 2).
2. The law of the sampled interval sequence equals brute-force enumeration of
   the definition's masses (chi-square test, seed fixed, false-alarm rate 0.001).
3. The exact log-density ratio between add/remove neighbours never exceeds epsilon.
"""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, stats

import reference.jointexp as je_mod
from reference.jointexp import JointExp


def _brute_masses(je: JointExp, data):
    """Mass of every interval sequence, straight from the definition (spec 2.4)."""
    edges, lengths, n = je._prepare(data)
    w = np.diff(np.concatenate(([0.0], je.quantiles, [1.0]))) * n
    m = je.quantiles.size
    out = {}
    for seq in itertools.combinations_with_replacement(range(n + 1), m):
        gaps = np.diff(np.concatenate(([0], seq, [n])))
        logm = -je.rate * np.sum(np.abs(gaps - w))
        vol = 1.0
        for i, run in itertools.groupby(seq):
            k = len(list(run))
            vol *= lengths[i] ** k / math.factorial(k)
        out[seq] = math.exp(logm) * vol
    return out, edges, lengths


def test_normaliser_matches_numerical_integration_m1():
    x = [0.2, 0.3, 0.7]
    je = JointExp(1.0, [0.5], (0.0, 1.0))
    val = integrate.quad(lambda o: math.exp(je.rate * je.utility([o], x)), 0, 1, points=x, limit=200)[0]
    assert je.log_normaliser(x) == pytest.approx(math.log(val), abs=1e-9)


def test_normaliser_matches_cellwise_integration_m2():
    """u is constant on products of data cells: integrate cell by cell, evaluating u at interior points."""
    x = [0.1, 0.45, 0.5, 0.9]
    je = JointExp(2.0, [0.3, 0.6], (0.0, 1.0))
    cuts = [0.0] + x + [1.0]
    cells = list(zip(cuts, cuts[1:]))
    total = 0.0
    for i, (a0, a1) in enumerate(cells):
        for k, (b0, b1) in enumerate(cells[i:], start=i):
            o1 = a0 + 0.3 * (a1 - a0)
            o2 = b0 + 0.7 * (b1 - b0)
            vol = (a1 - a0) * (b1 - b0) if k > i else (a1 - a0) ** 2 / 2
            total += math.exp(je.rate * je.utility([o1, o2], x)) * vol
    assert je.log_normaliser(x) == pytest.approx(math.log(total), abs=1e-9)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.floats(0.0, 1.0), min_size=0, max_size=5), st.sampled_from([[0.5], [0.25, 0.75], [0.2, 0.5, 0.7]]),
       st.sampled_from([0.5, 1.0, 4.0]))
def test_normaliser_equals_enumeration(x, q, eps):
    je = JointExp(eps, q, (0.0, 1.0))
    masses, _, _ = _brute_masses(je, x)
    total = sum(masses.values())
    if total == 0:
        assert je.log_normaliser(x) == -math.inf
    else:
        assert je.log_normaliser(x) == pytest.approx(math.log(total), rel=1e-9, abs=1e-9)


def test_fft_path_equals_direct_path(monkeypatch):
    x = np.random.default_rng(3).beta(2, 5, size=300)
    je = JointExp(0.5, np.linspace(0, 1, 11)[1:-1], (0.0, 1.0))
    direct = je.log_normaliser(x)
    monkeypatch.setattr(je_mod, "_DIRECT_MAX", 10)
    assert JointExp(0.5, np.linspace(0, 1, 11)[1:-1], (0.0, 1.0)).log_normaliser(x) == pytest.approx(direct, rel=1e-10)


def test_sampled_interval_law_matches_enumeration():
    """Chi-square goodness of fit of the sampled intervals; false-alarm rate 0.001 (seed fixed)."""
    x = [0.1, 0.3, 0.35, 0.8]
    je = JointExp(2.0, [0.3, 0.7], (0.0, 1.0))
    masses, edges, lengths = _brute_masses(je, x)
    keys = [k for k, v in masses.items() if v > 0]
    p = np.array([masses[k] for k in keys])
    p /= p.sum()
    rng = np.random.default_rng(20240601)
    n = 20_000
    draws = je.batch(x, n, rng)
    # the interval of each (sorted) output: edges[i] < o < edges[i+1]
    idx = np.searchsorted(edges, draws, side="right") - 1
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
def test_log_density_ratio_within_epsilon(eps):
    """Add/remove neighbours: the exact log-density ratio is at most epsilon at every output."""
    rng = np.random.default_rng(7)
    je = JointExp(eps, [0.25, 0.5, 0.75], (0.0, 1.0))
    worst = 0.0
    for _ in range(20):
        x = list(rng.random(int(rng.integers(1, 6))))
        x1 = x + [float(rng.choice([0.0, 1.0, rng.random()]))]
        for _ in range(50):
            o = np.sort(rng.random(3))
            worst = max(worst, abs(je.logpdf(o, x) - je.logpdf(o, x1)))
    assert worst <= eps + 1e-9
    assert worst > 0.2 * eps  # the check is not vacuous: the law does move between neighbours


def test_samples_are_sorted_inside_bounds_and_track_quantiles():
    rng = np.random.default_rng(11)
    x = rng.normal(size=5000)
    levels = np.linspace(0, 1, 11)[1:-1]
    o = JointExp(5.0, levels, (-6.0, 6.0)).sample(x, rng)
    assert np.all(np.diff(o) >= 0) and o[0] >= -6 and o[-1] <= 6
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
