"""Thresholds, medians and bin edges on a public grid (issue 17, findings 2 and 7).

* :mod:`reference.grid`: exact grid counting, the public coarsening rule, the residual delta.
* The pre-fix float median (``audit.mutants.FloatIntervalMedian``) leaks through its float
  lattice: outputs drawn from one dataset are unattainable from its neighbour; the grid median's
  outputs are always attainable from both.
* Hypothesis properties over tiny neighbouring datasets: the exact grid pmf of
  :class:`reference.mechanisms.IntervalExponential` (enumerated over every point of a small grid,
  and through ``audit.exact.privacy_loss`` on the default grid) keeps the ratio within
  ``e^epsilon`` on one common support.
* The learners store grid points and charge the residual delta in their ledgers.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from audit.exact import privacy_loss
from audit.mutants import FloatIntervalMedian
from audit.mutants.float_median import attainable
from reference.grid import (DEFAULT_GRID, check_grid, effective_grid, grid_index, grid_searchsorted, grid_value,
                            selection_delta)
from reference.mechanisms import ExponentialMechanism, IntervalExponential

_finite = st.floats(-1e6, 1e6, allow_nan=False)


# --------------------------------------------------------------------------- the grid
@settings(max_examples=60, deadline=None)
@given(_finite, st.floats(1e-3, 1e6), st.integers(1, 5000), st.lists(st.floats(-2e6, 2e6), max_size=20))
def test_grid_counting_is_exact(low, width, M, extra):
    high = low + width
    t = grid_value(np.arange(M + 1), low, high, M)
    assert np.all(np.diff(t) > 0) and t[0] == low
    v = np.concatenate((t[:: max(1, M // 7)], np.nextafter(t[:: max(1, M // 7)], np.inf),
                        np.nextafter(t[:: max(1, M // 7)], -np.inf), extra, [np.inf, -np.inf]))
    for side in ("left", "right"):
        np.testing.assert_array_equal(grid_searchsorted(v, low, high, M, side), np.searchsorted(t, v, side))
    j = int(M // 3)
    assert grid_index(t[j], low, high, M) == j
    assert grid_index(float(np.nextafter(t[j], np.inf)), low, high, M) in (-1, j + 1)


def test_effective_grid_is_a_public_coarsening():
    assert effective_grid(DEFAULT_GRID, 0.0, 1.0) == DEFAULT_GRID
    assert effective_grid(DEFAULT_GRID, 0.5, 0.5) == 1  # a child range of width zero
    narrow = effective_grid(DEFAULT_GRID, 1.0, 1.0 + 1e-12)
    assert 1 <= narrow < DEFAULT_GRID and check_grid(narrow, (1.0, 1.0 + 1e-12)) == narrow
    with pytest.raises(ValueError, match="grid"):
        IntervalExponential(1.0, (1.0, 1.0 + 1e-12))  # the default grid is too fine there: named
    with pytest.raises(ValueError, match="grid"):
        IntervalExponential(1.0, (0.0, 1.0), grid=0)
    assert IntervalExponential(1.0, (0.5, 0.5)).sample([0.5], np.random.default_rng(0)) == 0.5


def test_residual_delta_is_small_public_and_grows_with_the_outcomes():
    d = IntervalExponential(1.0, (0.0, 1.0)).residual_delta
    assert 1e-10 < d < 1e-8  # about 2.8e-9 at M = 2**16, epsilon = 1
    assert selection_delta(10, 1.0) < selection_delta(1000, 1.0) < selection_delta(1000, 2.0)
    assert ExponentialMechanism(1.0).residual_delta(5) == selection_delta(5, 1.0)
    assert selection_delta(10, 100.0) < 1.0  # vacuous but a valid ledger entry


# --------------------------------------------------------------------------- the float lattice leak
def test_float_median_mutant_outputs_are_unattainable_from_a_neighbour():
    """D = {0.9}, D' = {0.9, 0.3} on (0, 1), epsilon 1. Outputs of the float median drawn from either
    dataset are, for a sizeable fraction, impossible under the other (infinite loss); the grid
    median's outputs all have positive probability under both. Fixed seed; the observed fractions
    are about 0.24 in each direction, so the bound 0.1 on 400 draws fails with probability < 1e-9."""
    rng = np.random.default_rng(17)
    D, D1 = [0.9], [0.9, 0.3]
    flawed = FloatIntervalMedian(1.0, (0.0, 1.0))
    for a, b in ((D, D1), (D1, D)):
        r = flawed.batch(a, 400, rng)
        assert all(attainable(flawed, v, a) for v in r[:50])  # the reachability test is sound
        assert np.mean([not attainable(flawed, v, b) for v in r]) > 0.1
    fixed = IntervalExponential(1.0, (0.0, 1.0))
    for a, b in ((D, D1), (D1, D)):
        r = fixed.batch(a, 400, rng)
        assert all(math.isfinite(fixed.logpmf(v, b)) for v in r)
        assert max(abs(fixed.logpmf(v, a) - fixed.logpmf(v, b)) for v in r) <= 1.0 + 1e-9


# --------------------------------------------------------------------------- exact grid laws of neighbours
_tiny = st.lists(st.floats(0.0, 1.0), max_size=4)


@settings(max_examples=60, deadline=None)
@given(_tiny, st.floats(0.0, 1.0), st.sampled_from([0.3, 1.0, 3.0]), st.integers(1, 24))
def test_interval_median_grid_pmf_ratio_on_every_point(x, extra, eps, M):
    """Every point of a small grid, enumerated: positive probability under both neighbours,
    the ratio within e^epsilon, the pmf sums to one, and ``privacy_loss`` (critical outputs)
    finds the same maximum as the enumeration."""
    m = IntervalExponential(eps, (0.0, 1.0), grid=M)
    x1 = x + [extra]
    pts = m.points(np.arange(M + 1))
    l0 = np.array([m.logpmf(float(p), x) for p in pts])
    l1 = np.array([m.logpmf(float(p), x1) for p in pts])
    assert np.all(np.isfinite(l0)) and np.all(np.isfinite(l1))  # the same support: the whole grid
    assert np.exp(l0).sum() == pytest.approx(1.0, abs=1e-12)
    worst = float(np.max(np.abs(l0 - l1)))
    assert worst <= eps + 1e-9
    assert privacy_loss(m, x, x1) == pytest.approx(worst, abs=1e-12)


@settings(max_examples=40, deadline=None)
@given(_tiny, st.floats(0.0, 1.0), st.sampled_from([0.5, 1.0, 2.0]))
def test_interval_median_default_grid_exact_loss_within_epsilon(x, extra, eps):
    m = IntervalExponential(eps, (0.0, 1.0))
    x1 = x + [extra]
    assert privacy_loss(m, x, x1) <= eps + 1e-9
    start0, count0, _ = m.gaps(x)
    start1, count1, _ = m.gaps(x1)
    assert count0.sum() == count1.sum() == m.grid + 1  # every grid point is in exactly one gap


# --------------------------------------------------------------------------- the learners
def test_diprime_stores_grid_thresholds_and_charges_the_residual_delta():
    from reference.diprime import DiPriMeForestClassifier

    rng = np.random.default_rng(3)
    X = rng.random((40, 2))
    y = (X[:, 0] > 0.5).astype(int)
    est = DiPriMeForestClassifier(epsilon=2.0, n_estimators=1, max_depth=1, bounds=[(0.0, 1.0)] * 2,
                                  classes=[0, 1], random_state=0).fit(X, y)
    root = est.estimators_[0]
    assert not root.is_leaf
    assert grid_index(root.threshold, 0.0, 1.0, DEFAULT_GRID) >= 0  # the root range is the public bounds
    medians = [c for c in est.privacy_ledger_.charges if c.mechanism == "IntervalExponential"]
    assert medians and all(c.delta == IntervalExponential(c.epsilon, (0.0, 1.0)).residual_delta for c in medians)


def test_privatree_edges_are_grid_points_and_the_quantiles_charge_delta():
    from reference.jointexp import JointExp
    from reference.privatree import PrivaTreeClassifier

    rng = np.random.default_rng(4)
    X = rng.random((60, 2))
    y = (X[:, 1] > 0.4).astype(int)
    est = PrivaTreeClassifier(epsilon=1.0, max_depth=2, bounds=[(0.0, 1.0)] * 2, classes=[0, 1], n_public=60,
                              random_state=0).fit(X, y)
    charges = [c for c in est.privacy_ledger_.charges if c.mechanism == "JointExp"]
    assert len(charges) == 2 and all(0 < c.delta < 1e-6 for c in charges)
    levels = np.linspace(0.0, 1.0, est.max_bins + 1)[1:-1]
    assert charges[0].delta == JointExp(charges[0].epsilon, levels, (0.0, 1.0)).residual_delta
    for edges in est.bin_edges_.values():
        assert all(grid_index(float(e), 0.0, 1.0, DEFAULT_GRID) >= 0 for e in np.ravel(edges))


def test_diprime_categorical_exponential_mechanism_charges_its_residual_delta():
    from reference.diprime import DiPriMeForestClassifier

    rng = np.random.default_rng(6)
    X = np.column_stack((rng.integers(0, 3, 30).astype(float), rng.random(30)))
    y = (X[:, 0] > 0).astype(int)
    est = DiPriMeForestClassifier(epsilon=2.0, n_estimators=1, max_depth=2, bounds=[(0.0, 2.0), (0.0, 1.0)],
                                  categories={0: [0.0, 1.0, 2.0]}, classes=[0, 1], random_state=1).fit(X, y)
    cat = [c for c in est.privacy_ledger_.charges if c.mechanism == "ExponentialMechanism"]
    assert {c.component for c in cat} == {"median", "attribute"}  # categorical medians and attribute choices
    assert all(0 < c.delta < 1e-12 for c in cat)  # a few candidates: a tiny, positive delta


def test_batched_grid_median_has_the_reference_law_on_the_grid():
    """``median_lebesgue`` (the DiPriMe fast path) against IntervalExponential's exact gap law:
    chi-square over the gaps, 40,000 rows, fixed seed, false-alarm rate 1e-3 per input; every
    output is a grid point of its row's range (rows with different public ranges, one of width zero)."""
    from scipy import stats

    from reference.diprime_batch_medians import median_lebesgue

    rng = np.random.default_rng(21)
    for x, (lo, hi) in (([0.1, 0.15, 0.5, 0.52, 0.9], (0.0, 1.0)), ([0.3, 0.3, 0.7], (0.2, 0.8)), ([], (0.0, 1.0))):
        n = 40_000
        values = np.broadcast_to(np.concatenate((x, [0.95])), (n, len(x) + 1))
        member = np.broadcast_to(np.arange(len(x) + 1) < len(x), values.shape)
        r = median_lebesgue(values, member, np.full(n, lo), np.full(n, hi), 1.5, rng)
        m = IntervalExponential(1.5, (lo, hi))
        j = grid_searchsorted(r, lo, hi, m.grid, "left")
        np.testing.assert_array_equal(m.points(j), r)
        start, count, log_p = m.gaps(x)
        ok = count > 0
        gap = np.searchsorted(start[ok], j, side="right") - 1
        obs = np.bincount(gap, minlength=int(ok.sum()))
        if ok.sum() > 1:
            assert stats.chisquare(obs, n * np.exp(log_p[ok])).pvalue > 1e-3
    zero = median_lebesgue(np.array([[0.4]]), np.array([[True]]), np.array([0.4]), np.array([0.4]), 1.0, rng)
    assert zero.tolist() == [0.4]
