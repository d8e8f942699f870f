"""Exact discrete Laplace sampling (reference.discrete_noise) and the float-noise mutant it replaces.

Statistical tests use a fixed seed and a chi-square test at level ALPHA = 1e-3: a correct sampler fails
with probability 1e-3 under a fresh seed (the false-alarm rate); with the fixed seed the outcome is
deterministic. The reachability checks are deterministic computations on doubles.
"""
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy import stats

from audit.mutants.float_noise import FloatLaplace, float_sum_attainable
from reference.discrete_noise import (SCALE_BITS, DiscreteLaplaceLaw, bernoulli_exp, discrete_laplace,
                                      rational_scale)
from reference.mechanisms import Laplace

ALPHA = 1e-3  # false-alarm rate of each goodness-of-fit test


@given(scale=st.floats(1e-6, 1e9))
def test_rational_scale_rounds_up_by_at_most_2_to_minus_bits(scale):
    t, s = rational_scale(scale)
    assert s & (s - 1) == 0  # power of two
    assert Fraction(t, s) >= Fraction(scale)
    assert Fraction(t, s) - Fraction(scale) <= Fraction(scale) * Fraction(1, 2 ** SCALE_BITS)


@pytest.mark.parametrize("num,den", [(0, 5), (1, 1), (3, 7), (7, 7)])
def test_bernoulli_exp_matches_exp(num, den):
    rng = np.random.default_rng(3)
    n = 40_000
    hits = int(bernoulli_exp(np.full(n, num), den, rng).sum())
    p = math.exp(-num / den)
    if num == 0:
        assert hits == n
    else:
        assert stats.binomtest(hits, n, p).pvalue > ALPHA


@pytest.mark.parametrize("scale", [0.2, 1.0, 3.7, 50.0])
def test_discrete_laplace_matches_pmf(scale):
    law = DiscreteLaplaceLaw(scale)
    xs = law.sample(40_000, np.random.default_rng(4))
    assert xs.dtype == np.int64
    reach = int(np.ceil(40 / law.rate))
    ks = np.arange(-reach, reach + 1)
    p = np.exp(law.logpmf(ks))
    assert p.sum() == pytest.approx(1.0, abs=1e-9)
    # cells: single integers while their expected count is >= 50, the rest pooled into the two tails
    big = p * xs.size >= 50
    lo, hi = ks[big].min(), ks[big].max()
    inner = np.arange(lo, hi + 1)
    obs = np.r_[np.sum(xs < lo), np.bincount(xs[(xs >= lo) & (xs <= hi)] - lo, minlength=inner.size),
                np.sum(xs > hi)]
    exp = np.r_[p[ks < lo].sum(), p[(ks >= lo) & (ks <= hi)], p[ks > hi].sum()] * xs.size
    keep = exp > 0
    assert stats.chisquare(obs[keep], exp[keep] * obs[keep].sum() / exp[keep].sum()).pvalue > ALPHA


def test_same_seed_same_numbers_and_no_truncation():
    t, s = rational_scale(2.0)
    a = discrete_laplace(t, s, (100, 3), np.random.default_rng(9))
    b = discrete_laplace(t, s, (100, 3), np.random.default_rng(9))
    assert a.shape == (100, 3) and np.array_equal(a, b)
    with pytest.raises(ValueError, match="scale"):
        rational_scale(-1.0)


def test_float_laplace_mutant_has_outputs_unattainable_from_the_neighbour():
    """Finite-sample reachability (Mironov 2012): outputs of fl(0 + n) that no double n' turns into
    fl(1 + n'). Deterministic given the seed; 2,000 outputs; at epsilon 1 about 43% are unattainable by
    this (weak, any-double) criterion: an infinite privacy loss the statistical audit cannot see."""
    outs = FloatLaplace(1.0).batch(0.0, 2000, np.random.default_rng(0))
    unattainable = np.mean([not float_sum_attainable(o, 1.0) for o in outs])
    assert unattainable > 0.3


@settings(max_examples=40, deadline=None)
@given(a=st.floats(-1e3, 1e3), frac=st.floats(-1, 1), seed=st.integers(0, 2 ** 32 - 1))
def test_lattice_laplace_outputs_are_attainable_from_the_neighbour(a, frac, seed):
    """The lattice Laplace: every output from D is, as a double, the exact lattice point k * grid, and it has
    positive probability under D' with a log-ratio within epsilon."""
    m = Laplace(1.0)
    b = a + frac
    for o in m.batch(a, 20, np.random.default_rng(seed)):
        assert math.isfinite(m.logpmf(o, b))
        assert abs(m.logpmf(o, a) - m.logpmf(o, b)) <= 1.0 + 1e-9


# --------------------------------------------------------------------------- the inversion sampler
def _tail_chisquare(ys, rate, cells=12):
    """Chi-square p-value of geometric draws ``ys`` (P(Y >= k) = exp(-k rate)) on ``cells`` equiprobable-ish cells."""
    cuts = np.unique(np.floor(np.quantile(ys, np.linspace(0, 1, cells + 1)[1:-1])).astype(int) + 1)
    edges = np.r_[0, cuts]
    obs = np.r_[[np.sum((ys >= lo) & (ys < hi)) for lo, hi in zip(edges[:-1], edges[1:])], np.sum(ys >= edges[-1])]
    tail = np.exp(-edges * rate)
    exp = np.r_[tail[:-1] - tail[1:], tail[-1]] * ys.size
    return stats.chisquare(obs, exp).pvalue


@pytest.mark.parametrize("scale", [0.3, 1.0, 1024.0, 1e6])
def test_geometric_inversion_matches_its_law(scale):
    """40,000 draws per scale; chi-square at ALPHA (false-alarm rate 1e-3 per scale under a fresh seed)."""
    from reference.discrete_noise import geometric

    t, s = rational_scale(scale)
    ys = geometric(t, s, 40_000, np.random.default_rng(11))
    assert ys.dtype == np.int64 and ys.min() >= 0
    assert _tail_chisquare(ys, s / t) > ALPHA


@pytest.mark.parametrize("scale", [0.7, 3.0, 2000.0])
def test_the_exact_fallback_alone_has_the_same_law(monkeypatch, scale):
    """A negative margin sends every draw through the exact (decimal-bracketed) path: 4,000 draws, same
    chi-square test at ALPHA."""
    import reference.discrete_noise as dn

    monkeypatch.setattr(dn, "MARGIN_BITS", -80)
    calls = []
    slow = dn._geometric_slow
    monkeypatch.setattr(dn, "_geometric_slow", lambda *a: calls.append(1) or slow(*a))
    t, s = rational_scale(scale)
    ys = dn.geometric(t, s, 4_000, np.random.default_rng(12))
    assert len(calls) == 4_000
    assert _tail_chisquare(ys, s / t, cells=8) > ALPHA


def test_inversion_and_cks_samplers_agree_in_law():
    """Two independent exact samplers of DLap(2.5), 60,000 draws each: a two-sample chi-square on the
    values with expected count >= 20 (pooled tails) at ALPHA."""
    from reference.discrete_noise import discrete_laplace_cks

    t, s = rational_scale(2.5)
    a = discrete_laplace(t, s, 60_000, np.random.default_rng(13))
    b = discrete_laplace_cks(t, s, 60_000, np.random.default_rng(14))
    lo, hi = -12, 12
    ca = np.r_[np.sum(a < lo), np.bincount(np.clip(a, lo, hi) - lo, minlength=hi - lo + 1)[1:-1], np.sum(a > hi)]
    cb = np.r_[np.sum(b < lo), np.bincount(np.clip(b, lo, hi) - lo, minlength=hi - lo + 1)[1:-1], np.sum(b > hi)]
    assert stats.chi2_contingency(np.vstack([ca, cb]))[1] > ALPHA


class _Words:
    """A stand-in generator whose raw words are given, then drawn from a real generator."""

    def __init__(self, words, seed=0):
        self.words, self.rng = list(words), np.random.default_rng(seed)
        self.bit_generator = self

    def random_raw(self, size=None):
        if size is None:
            return np.uint64(self.words.pop(0)) if self.words else self.rng.bit_generator.random_raw()
        out = [self.random_raw() for _ in range(size)]
        return np.array(out, dtype=np.uint64)


def test_a_zero_first_word_is_decided_exactly_from_further_bits():
    """x = 0 means U < 2**-64: the draw is at least floor(64 ln 2 / rate) and is decided from the next words."""
    from reference.discrete_noise import geometric

    t, s = rational_scale(1.0)
    y = int(geometric(t, s, 1, _Words([0, 1 << 63]))[0])
    # U in [2**-65, 2**-64 + ...): Y = floor(-ln U) with -ln U between 64 ln 2 and 65 ln 2
    assert math.floor(64 * math.log(2)) <= y <= math.floor(65 * math.log(2))


@settings(max_examples=200, deadline=None)
@given(j=st.integers(0, 5000), word=st.integers(1, 2 ** 64 - 1), scale=st.sampled_from([0.5, 1.0, 37.0, 4096.0]))
def test_exact_comparison_agrees_with_double_precision_away_from_the_boundary(j, word, scale):
    """Where U's 64-bit cell is more than 1e-9 (relative) away from exp(-j s / t), the exact comparison must
    give the double-precision answer (and it never errs by more than that near the boundary)."""
    from reference.discrete_noise import _u_at_most_exp

    t, s = rational_scale(scale)
    c = math.exp(-j * s / t)
    u = word * 2.0 ** -64
    if abs(u - c) <= 1e-9 * c + 2.0 ** -63:
        return
    assert _u_at_most_exp(j, t, s, [word, 64], np.random.default_rng(0)) == (u < c)


def test_the_exact_fallback_handles_a_huge_rate_without_huge_numbers(monkeypatch):
    """Scale 1e-9 (the noise-off mode's epsilon 1e9): P(Y >= 1) = exp(-1e9), so every draw is 0. Forced
    through the exact path, each draw must be decided in double precision (exp(-1e9) as a decimal would be a
    number of 434 million digits)."""
    import reference.discrete_noise as dn

    monkeypatch.setattr(dn, "MARGIN_BITS", -80)
    t, s = rational_scale(1e-9)
    assert not dn.geometric(t, s, 2_000, np.random.default_rng(15)).any()
    assert not dn.discrete_laplace(t, s, 2_000, np.random.default_rng(16)).any()
