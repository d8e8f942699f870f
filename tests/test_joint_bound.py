"""The joint lower bound on epsilon (audit.engine.estimation.joint): coupled thinning plus Fisher's exact test,
spending the whole alpha on one test of both counts.

The slow tests measure its false-alarm rate at the boundary of the claim (p0 = e^epsilon p1 + delta exactly,
the hardest case a private mechanism can give) over 2,000 seeded count pairs each: a valid bound refutes a
true claim in at most alpha of them, and the issue asks for at least half of alpha (the reference
Clopper-Pearson bound, alpha / 2 on each side, was measured at 0.002-0.008 against 0.05). At a true rate r the
count over 2,000 seeds has a standard deviation of about sqrt(2000 r (1 - r)) (about 8 at r = 0.035), so the
window [50, 100] (0.025 to 0.05) refutes the bound only when it is invalid or more than twice too cautious. The
seeds are fixed: the counts below are the same on every machine.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from audit.engine.estimation.bounds import epsilon_lower_bound
from audit.engine.estimation.joint import epsilon_lower_joint, joint_p_values


def _boundary_counts(seed, epsilon, p1, n, delta):
    g = np.random.default_rng(seed)
    p0 = min(1.0, np.exp(epsilon) * p1 + delta)
    return g.binomial(n, p0), g.binomial(n, p1), g


def test_bad_counts_and_levels_are_named():
    with pytest.raises(ValueError, match="k0 must lie in"):
        epsilon_lower_joint(11, 10, 0, 10)
    with pytest.raises(ValueError, match="delta must lie in"):
        epsilon_lower_joint(1, 10, 0, 10, delta=1.5)
    with pytest.raises(ValueError, match="alpha must lie in"):
        epsilon_lower_joint(1, 10, 0, 10, alpha=0.0)


def test_the_same_rng_state_gives_the_same_bound_and_no_event_gives_zero():
    assert epsilon_lower_joint(300, 1000, 100, 1000, rng=7) == epsilon_lower_joint(300, 1000, 100, 1000, rng=7)
    assert epsilon_lower_joint(0, 1000, 0, 1000, rng=0) == 0.0


def test_p_values_start_at_epsilon_zero_and_end_at_one():
    eps, p = joint_p_values(200, 1000, 50, 1000, rng=1)
    assert eps[0] == 0.0 and np.all(np.diff(eps) > 0) and p[-1] == 1.0
    assert p[0] < 1e-10  # 200 vs 50 of 1,000: refuted at epsilon 0


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 400), st.integers(0, 400), st.integers(0, 2**32 - 1))
def test_no_more_on_d_than_on_d_prime_bounds_nothing(k0, extra, seed):
    """With as many outputs on each side and no more events on D than on D', no epsilon is refuted (Fisher's
    one-sided p-value at epsilon 0 is at least 1/2 then)."""
    assert epsilon_lower_joint(k0, 1000, min(1000, k0 + extra), 1000, rng=seed) == 0.0


def test_on_average_it_is_tighter_than_the_reference():
    """Over 200 seeded count pairs at the boundary (epsilon 1, p1 0.05, 1,000 outputs a side) the joint bound's
    mean is above the Clopper-Pearson one's (measured 0.69 against 0.57 over 2,000 seeds)."""
    joint, reference = [], []
    for seed in range(200):
        k0, k1, g = _boundary_counts(seed, 1.0, 0.05, 1000, 0.0)
        joint.append(epsilon_lower_joint(k0, 1000, k1, 1000, rng=g))
        reference.append(float(epsilon_lower_bound(k0, 1000, k1, 1000)))
    assert np.mean(joint) > np.mean(reference) + 0.05


@pytest.mark.release
@pytest.mark.parametrize("epsilon,p1,n,delta", [(1.0, 0.05, 1000, 0.0), (1.0, 0.05, 1000, 1e-3),
                                                (0.5, 0.3, 5000, 0.0)])
def test_the_false_alarm_rate_at_the_claims_boundary_is_between_half_alpha_and_alpha(epsilon, p1, n, delta):
    alpha, seeds = 0.05, 2000
    refuted = 0
    for seed in range(seeds):
        k0, k1, g = _boundary_counts(seed, epsilon, p1, n, delta)
        refuted += epsilon_lower_joint(k0, n, k1, n, delta=delta, alpha=alpha, rng=g) > epsilon
    assert 0.5 * alpha * seeds <= refuted <= alpha * seeds, refuted  # measured 68, 67 and 87 of 2,000


@pytest.mark.parametrize("loss,p1,n,alpha", [(1.25, 0.05, 1000, 0.025), (1.1, 0.26, 2000, 0.00016)])
def test_the_exact_power_matches_a_simulation_of_the_bound(loss, p1, n, alpha):
    """``joint_power`` against 400 seeded simulations of ``epsilon_lower_joint > 1``: the simulated rate has a
    standard deviation of at most 0.025, and the window of 4 of them fails a correct formula with probability
    below 1e-4 (seed fixed: the same counts everywhere). The power also grows with the loss."""
    from audit.engine.estimation.joint import joint_power

    p0 = np.exp(loss) * p1
    exact = joint_power(p0, p1, n, n, claim=1.0, alpha=alpha)
    g = np.random.default_rng(7)
    hits = sum(epsilon_lower_joint(g.binomial(n, p0), n, g.binomial(n, p1), n, alpha=alpha, rng=g) > 1.0
               for _ in range(400))
    assert abs(hits / 400 - exact) <= 4 * max(np.sqrt(exact * (1 - exact) / 400), 0.005)
    assert joint_power(np.exp(loss + 0.2) * p1, p1, n, n, claim=1.0, alpha=alpha) >= exact
