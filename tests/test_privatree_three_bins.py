"""The three-bin node law (audit.privatree.three_bin_law) against brute-force enumeration and the samplers.

The reduction (the comparison of the two boundaries separates for a fixed middle bin) must give, to rounding, the
same law as summing every noisy histogram with the learner's own arithmetic; the whole release law of a tree over one
feature of three bins must fit both samplers (chi-square, cells of expected count below 5 pooled, fixed seed,
false-alarm rate 1e-3 per sampler).
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from audit.privatree import node_law
from audit.privatree.three_bin_law import MIN_SEPARATION, check_separation, choice_law
from tests.test_privatree_exact_law import assert_law_matches_samplers

THREE = dict(bounds=[(0.0, 1.0)], classes=[0, 1], binning="uniform", max_bins=3, epsilon_shares=(0.0, 0.5, 0.5))


def _pmfs(counts, alpha):
    hm = [node_law._hmax(alpha, int(c)) for c in counts]
    return [node_law.clamped_pmf(alpha, int(c), h) for c, h in zip(counts, hm)]


def _brute(counts, alpha, monkeypatch):
    """Every noisy histogram, the learner's exact comparison (the enumeration path of node_law.feature_law)."""
    monkeypatch.setattr(node_law, "MAX_CELLS_STATES", 10 ** 7)
    B = np.asarray(counts).reshape(3, 2)
    hm = [node_law._hmax(alpha, int(c)) for c in counts]
    n = math.prod(h + 1 for h in hm)
    grids = np.stack([g.ravel() for g in np.meshgrid(*[np.arange(h + 1) for h in hm], indexing="ij")], axis=1)
    mass = np.ones(n)
    for i, (c, h) in enumerate(zip(counts, hm)):
        mass *= node_law.clamped_pmf(alpha, int(c), h)[grids[:, i]]
    gini, _ = node_law.exact_gini_keys(grids.reshape(-1, 3, 2), 1.0)  # the learner's exact comparison
    s = np.argmin(gini, axis=1)
    s = np.where(np.isfinite(gini[np.arange(n), s]), s, -1)
    assert B.shape == (3, 2)
    return {0: float(mass[s == 0].sum()), 1: float(mass[s == 1].sum()), None: float(mass[s == -1].sum())}


@settings(max_examples=12, deadline=None)
@given(counts=st.lists(st.integers(0, 4), min_size=6, max_size=6), node_eps=st.sampled_from([3.5, 4.0, 5.0]))
def test_the_separated_sum_equals_every_histogram_summed(counts, node_eps):
    """Any counts of up to 4 records per cell, at node epsilons where the enumeration fits (9 to 12 values per cell):
    each choice's probability agrees to 1e-13, ties decided exactly, as the learner does."""
    mp = pytest.MonkeyPatch()
    try:
        alpha = math.exp(-node_eps)
        fast = choice_law(_pmfs(counts, alpha))
        slow = _brute(counts, alpha, mp)
    finally:
        mp.undo()
    for k in (0, 1, None):
        assert abs(fast[k] - slow[k]) < 1e-13, (counts, k, fast, slow)


def test_ties_go_to_the_first_boundary_as_in_the_learner():
    """The middle bin empty makes every comparison a tie: the learner keeps boundary 0, so boundary 1 is chosen only
    when the left side is empty; with symmetric counts, every x = z pair ties too."""
    alpha = math.exp(-3.0)
    law = choice_law(_pmfs([0, 0, 0, 0, 0, 0], alpha))
    assert law[0] > law[1] > 0.0
    law2 = choice_law(_pmfs([1, 1, 0, 0, 1, 1], alpha))
    assert law2[0] > law2[1]  # symmetric data: the tie rule favours boundary 0


def test_small_node_epsilon_is_refused_where_rounding_could_flip_a_comparison():
    assert check_separation(91) > MIN_SEPARATION > check_separation(300)
    alpha = math.exp(-0.1)
    with pytest.raises(ValueError, match="separation"):
        choice_law(_pmfs([0] * 6, alpha))


def test_release_law_of_a_three_bin_tree_matches_both_samplers():
    """Depth 2, one feature of three public bins, strict, epsilon 4 (node epsilon 1, 30 values per cell)."""
    params = dict(THREE, epsilon=4.0, max_depth=2)
    X = np.array([[0.1], [0.5], [0.5], [0.9]])
    y = np.array([0, 1, 0, 1])
    law = assert_law_matches_samplers(params, X, y, seed=36)
    assert any(r[0] == "node" and r[2] == 1 for r in law.upper)  # the second boundary is reachable


def test_the_three_bin_certificate_domain_is_within_its_claim_on_two_records():
    """The certificate's three-bin domain cut to two records (the committed certificate goes to three): every pair's
    exact loss below epsilon 4, and above the leaf's share alone (the nodes leak too)."""
    import dataclasses

    from audit.engine.exact_law.domain import certify_domain
    from audit.privatree.certificate import domains

    three = next(d for d in domains() if d.name == "strict, one feature, three bins")
    res = certify_domain(dataclasses.replace(three, max_records=2))
    assert res.verdict == "certified" and res.width < 1e-9
    assert 2.0 < res.worst["lower"] <= res.worst["upper"] <= 4.0


@settings(max_examples=15, deadline=None)
@given(counts=st.lists(st.integers(0, 4), min_size=6, max_size=6), drop=st.sampled_from([1e-12, 1e-9, 1e-6, 1e-3]))
def test_leaving_out_the_least_likely_pairs_loses_at_most_the_mass_it_reports(counts, drop):
    """Each bin's least likely noisy pairs of mass at most ``drop`` left out (node epsilon 1, about 30 values per
    cell): every choice's probability falls by at least 0 and at most the reported dropped mass, itself at most
    three times ``drop``, and the comparisons of the states kept are unchanged (the difference is the dropped
    states' share only)."""
    pm = _pmfs(counts, math.exp(-1.0))
    full, kept = choice_law(pm), choice_law(pm, drop)
    assert 0.0 <= kept["dropped"] <= 3 * drop * (1 + 1e-9)
    for k in (0, 1, None):
        assert -1e-15 <= full[k] - kept[k] <= kept["dropped"] + 1e-15, (counts, k, full, kept)
    assert "dropped" not in full
    with pytest.raises(ValueError, match="drop"):
        choice_law(pm, -1.0)


@settings(max_examples=8, deadline=None)
@given(counts=st.lists(st.integers(0, 3), min_size=6, max_size=6))
def test_a_coarse_tail_gives_intervals_that_hold_the_fine_law(counts):
    """node_law.feature_law of one feature of three bins at a coarse tail (1e-6 per noisy count: the cut-offs and each
    bin's least likely pairs of mass 1e-6 left out) against the default tail (1e-13, nothing left out): each
    choice's fine probability lies in ``[coarse, coarse + truncated]``."""
    alpha = math.exp(-1.0)
    H = np.asarray(counts).reshape(3, 2)
    fine, fine_t = node_law.feature_law(H, alpha, 1.0, False)
    coarse, coarse_t = node_law.feature_law(H, alpha, 1.0, False, tail=1e-6)
    assert fine_t < 1e-11 and coarse_t < 1e-5
    for key, p in fine.items():
        assert coarse[key] - 1e-15 <= p <= coarse[key] + coarse_t + fine_t, (counts, key, p, coarse[key], coarse_t)


def test_the_all_sizes_entrys_family_climbs_towards_the_proofs_bound_on_the_analysed_release():
    """The all-sizes entry of three bins at depth 2 states the proof's 4 as the supremum (its limit); the family of the
    analysis (bin 0 empty, bins 1 and 2 alike of class-1 share 2/5, a class-0 record added to bin 0) has the losses
    the note quotes, rising with the records, below 4 and above 3 (a leaf at the root gives at most 1 + 2), and its
    worst release is the analysed one: the root splits at boundary 1 and its left child is a leaf labelled 1."""
    from audit.engine.exact_law.allsizes import point_loss
    from audit.engine.exact_law.laws import pair_interval
    from audit.privatree.certificate import all_sizes
    from audit.privatree.exact_law import release_law

    d = next(x for x in all_sizes() if x.name == "strict, one feature, three bins, depth 2")
    law = d.law(d.params)
    assert law.limits["add-remove"][0] == 4.0 == d.epsilon_claimed and d.upper_method == "proof"
    losses = []
    for a, b in ((15, 10), (30, 20)):
        c = (0, 0, a, b, a, b)
        assert (c, (0,)) in law.witnesses
        losses.append(point_loss(law, c, 0)[0])
        assert f"{losses[-1]:.4f} at {2 * (a + b) + 1}" in d.upper_note
    assert 3.0 < losses[0] < losses[1] < 4.0
    params = dict(THREE, epsilon=4.0, max_depth=2)
    X = lambda c: np.repeat([[1 / 6], [1 / 6], [0.5], [0.5], [5 / 6], [5 / 6]], c, axis=0)  # noqa: E731
    y = lambda c: np.repeat([0, 1, 0, 1, 0, 1], c)  # noqa: E731
    c0, c1 = (0, 0, 30, 20, 30, 20), (1, 0, 30, 20, 30, 20)
    L0, L1 = (release_law(params, X(c), y(c), tail=1e-10) for c in (c0, c1))
    assert pair_interval(L0, L1)[0] == pytest.approx(losses[1], abs=1e-12)
    ratios = {r: math.log(L0.lower[r] / L1.upper[r]) for r in L0.lower if L0.lower[r] > 0 and L1.upper.get(r, 0) > 0}
    worst = max(ratios, key=ratios.get)
    assert ratios[worst] == pytest.approx(losses[1], abs=1e-12)
    assert worst[:4] == ("node", 0, 1, ("leaf", 1))


def test_the_families_loss_is_the_analysis_three_factors_each_tending_to_its_budget():
    """The analysis behind the entry's limit, factor by factor (node epsilon 1 per level, leaf epsilon 2): on the family
    (bin 0 empty, bins 1 and 2 of (a, b) records each, a class-0 record added to bin 0), the root's ratio of
    boundary 1 rises towards e^1 as the bins grow, the left child's ratio of no split (bins 0 and
    1 below it, bin 2 empty) is e^1 to 1e-9, and the loss is their sum plus the leaf's 2 exactly."""
    from audit.engine.exact_law.allsizes import point_loss
    from audit.privatree.certificate import all_sizes

    law = next(x for x in all_sizes() if x.name == "strict, one feature, three bins, depth 2")
    law = law.law(law.params)
    alpha = math.exp(-1.0)

    def pmfs(counts):
        hm = [node_law._hmax(alpha, int(c), 1e-10) for c in counts]
        return [node_law.clamped_pmf(alpha, int(c), h) for c, h in zip(counts, hm)]

    roots = []
    for a, b in ((15, 10), (60, 40)):
        r0, r1 = (choice_law(pmfs((e, 0, a, b, a, b)), 1e-10) for e in (0, 1))
        k0, k1 = (choice_law(pmfs((e, 0, a, b, 0, 0)), 1e-10) for e in (0, 1))
        root, child = math.log(r0[1] / r1[1]), math.log(k0[None] / k1[None])
        assert abs(child - 1.0) < 1e-9
        assert point_loss(law, (0, 0, a, b, a, b), 0)[0] == pytest.approx(root + child + 2.0, abs=1e-6)
        roots.append(root)
    assert 0.6 < roots[0] < roots[1] < 1.0
