"""Tests of reference.random_trees (random decision trees, Bojarski et al., arXiv:1410.6973)."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from sklearn.base import clone

from reference.random_trees_core import leaf_counts
from reference.random_trees import (
    RandomDecisionForestClassifier,
    aggregate,
    leaf_values,
    logarithmic_n_estimators,
    noise_scale,
    route,
    theory_n_estimators,
)

B2 = [(0.0, 1.0), (-2.0, 3.0)]


def make_data(n=200, seed=0, m=2):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0.0, 1.0, size=(n, m))
    y = (X[:, 0] > 0.5).astype(int)
    return X, y


def forest(**kw):
    params = dict(n_estimators=5, max_depth=3, bounds=[(0.0, 1.0)] * 2, classes=[0, 1], random_state=0)
    params.update(kw)
    return RandomDecisionForestClassifier(**params)


def exact_counts(m, X, y):
    """The exact leaf counts of a fitted forest, recomputed from its public structure and the data
    (the model drops them after fit: they are private)."""
    f = m.forest_
    leaves = route(np.clip(X, m.bounds_[:, 0], m.bounds_[:, 1]), f.attributes, f.thresholds, f.max_depth)
    y_index = np.searchsorted(m.classes_, y)
    return leaf_counts(leaves, y_index, 2 ** f.max_depth, m.classes_.size)


def slow_leaf(x, attributes, thresholds, h):
    v = 0
    for _ in range(h):
        v = 2 * v + 1 + int(x[attributes[v]] > thresholds[v])
    return v - (2 ** h - 1)


# --------------------------------------------------------------------------- structure and counts
def test_structure_does_not_depend_on_the_data():
    X1, y1 = make_data(seed=1)
    X2, y2 = make_data(n=37, seed=2)
    a = forest(random_state=3).fit(X1, y1).forest_
    b = forest(random_state=3).fit(X2, 1 - y2).forest_
    np.testing.assert_array_equal(a.attributes, b.attributes)
    np.testing.assert_array_equal(a.thresholds, b.thresholds)
    c = forest(random_state=4).fit(X1, y1).forest_
    assert not np.array_equal(a.thresholds, c.thresholds)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), h=st.integers(0, 5), k=st.integers(1, 4), n=st.integers(1, 40))
def test_every_record_lands_in_exactly_one_leaf_per_tree(seed, h, k, n):
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.uniform(0, 1, n), rng.uniform(-2, 3, n)])
    y = rng.integers(0, 2, n)
    m = RandomDecisionForestClassifier(n_estimators=k, max_depth=h, bounds=B2, classes=[0, 1], private=False,
                                       random_state=seed).fit(X, y)
    f = m.forest_
    assert f.attributes.shape == (1, k, 2 ** h - 1)
    assert np.all((f.attributes >= 0) & (f.attributes < 2))
    lo = np.asarray(B2)[f.attributes, 0]
    hi = np.asarray(B2)[f.attributes, 1]
    assert np.all((f.thresholds >= lo) & (f.thresholds <= hi))
    # counts per tree sum to n, per class to the class sizes, and match a record-by-record routing
    assert np.all(f.counts.sum(axis=(2, 3)) == n)
    np.testing.assert_array_equal(f.counts[0].sum(axis=1), np.tile(np.bincount(y, minlength=2), (k, 1)))
    expected = np.zeros_like(f.counts[0])
    for t in range(k):
        for i in range(n):
            expected[t, slow_leaf(X[i], f.attributes[0, t], f.thresholds[0, t], h), y[i]] += 1
    np.testing.assert_array_equal(f.counts[0], expected)


def test_vectorised_and_per_tree_routing_agree():
    # route() has two code paths (few records / many records); both must give the per-record leaf
    rng = np.random.default_rng(5)
    X = rng.uniform(0, 1, size=(1500, 3))
    m = RandomDecisionForestClassifier(n_estimators=2, max_depth=4, bounds=[(0, 1)] * 3, classes=[0, 1],
                                       private=False, random_state=0).fit(X, rng.integers(0, 2, 1500))
    f = m.forest_
    big = route(X, f.attributes, f.thresholds, 4)
    small = route(X[:50], f.attributes, f.thresholds, 4)
    np.testing.assert_array_equal(big[..., :50], small)
    assert all(big[0, t, i] == slow_leaf(X[i], f.attributes[0, t], f.thresholds[0, t], 4)
               for t in range(2) for i in range(0, 1500, 97))


def test_non_private_leaf_values_are_fractions_and_empty_leaves_uniform():
    X, y = make_data(n=30)
    m = forest(private=False, max_depth=6, n_estimators=20).fit(X, y)
    f = m.forest_
    total = f.counts.sum(axis=-1)
    np.testing.assert_allclose(f.theta.sum(axis=-1), 1.0)
    full = total > 0
    np.testing.assert_allclose(f.theta[full], f.counts[full] / total[full][:, None])
    empty = f.theta[~full][:, 1]
    assert empty.size > 100  # 64 leaves, 30 records: most leaves are empty
    # empty leaves: U[0, 1]; KS test at the fixed seed, false-alarm rate 0.001
    assert stats.kstest(empty, "uniform").pvalue > 1e-3


# --------------------------------------------------------------------------- noise and accounting
@pytest.mark.parametrize("neighbouring,accounting,factor,ledger_factor", [
    ("add-remove", "strict", 1, 1), ("add-remove", "paper", 1, 1),
    ("substitute", "strict", 2, 1), ("substitute", "paper", 1, 2)])
def test_noise_scale_and_ledger_follow_the_neighbouring_relation(neighbouring, accounting, factor, ledger_factor):
    X, y = make_data()
    k, eps, h = 4, 0.7, 2
    m = forest(n_estimators=k, max_depth=h, epsilon=eps, neighbouring=neighbouring, accounting=accounting).fit(X, y)
    assert m.noise_scale_ == pytest.approx(factor * k / eps)
    ledger = m.privacy_ledger_
    assert len(ledger) == k * 2 ** h * 2  # one charge per (tree, leaf, class) count
    assert ledger.total_epsilon() == pytest.approx(ledger_factor * eps)
    frame = ledger.to_frame()
    assert set(frame["mechanism"]) == {"TwoSidedGeometric"}
    assert frame["scope"].str.match(r"tree\d+=leaf\d+/class\d").all()


def test_exact_privacy_loss_of_the_counts_equals_the_ledger():
    # white-box (spec 3.7.1): the noisy-count release is Laplace on the count array, so its
    # exact loss between neighbours is ||counts(D) - counts(D')||_1 / scale, structure fixed.
    X, y = make_data(n=40, seed=3)
    for neighbouring, accounting, expect in (("add-remove", "strict", 1.0), ("substitute", "strict", 1.0),
                                             ("substitute", "paper", 2.0)):
        losses = []
        for i in range(10):
            if neighbouring == "add-remove":
                X1, y1 = np.delete(X, i, axis=0), np.delete(y, i)
            else:
                X1, y1 = X.copy(), y.copy()
                X1[i] = 1.0 - X1[i]
                y1[i] = 1 - y1[i]
            kw = dict(n_estimators=3, max_depth=2, epsilon=1.0, neighbouring=neighbouring, accounting=accounting,
                      random_state=i)
            a, b = forest(**kw).fit(X, y), forest(**kw).fit(X1, y1)
            losses.append(np.abs(exact_counts(a, X, y) - exact_counts(b, X1, y1)).sum() / a.noise_scale_)
        assert max(losses) == pytest.approx(expect)  # attained: every tree's counts move
        assert max(losses) <= a.privacy_ledger_.total_epsilon() + 1e-12


def test_every_leaf_gets_laplace_noise_at_the_declared_scale():
    X, y = make_data(n=20)
    m = forest(n_estimators=50, max_depth=5, epsilon=2.0).fit(X, y)
    f = m.forest_
    assert f.counts is None  # exact private counts are not kept after fit
    noise = (f.noisy_counts - exact_counts(m, X, y)).ravel()
    assert np.all(noise == np.round(noise))  # integer noise: released counts stay on the lattice Z
    assert np.mean(noise != 0) > 0.9  # empty leaves included (P(noise = 0) is about 1/50 at scale 25)
    # KS test of the noise plus a uniform(-1/2, 1/2) jitter against Laplace(0, k / epsilon) at the fixed seed
    # (the jittered discrete Laplace's cdf is within 1/(8 x 25) of it, far below the KS critical value 0.034
    # at these 3,200 values): false-alarm rate 0.001
    jittered = noise + np.random.default_rng(0).uniform(-0.5, 0.5, noise.size)
    assert stats.kstest(jittered, "laplace", args=(0, 25.0)).pvalue > 1e-3
    assert stats.kstest(jittered, "laplace", args=(0, 12.5)).pvalue < 1e-3  # half the scale is told apart


def test_paper_invalid_rule_randomizes_pure_leaves_and_clamp_does_not():
    # spec 2.4 / E6: a pure leaf (no '+') has a negative noisy '+' count with probability
    # P(N <= -1) = a / (1 + a), a = exp(-1 / scale), under the integer (two-sided geometric) noise: 1/2 as
    # the scale grows (the paper's continuous noise: 1/2 at every epsilon). Scale k / epsilon = 10: 0.475.
    # The paper rule randomises those leaves (theta uniform, > 1e-3 w.p. 0.999) and keeps theta > 0 when the
    # count is >= 1 (also 0.475): share about 0.95. The clamp rule only has the second: share about 0.475.
    X = np.full((50, 1), 0.5)
    y = np.zeros(50, dtype=int)
    kw = dict(n_estimators=400, max_depth=0, epsilon=40.0, bounds=[(0.0, 1.0)], random_state=1)
    paper = forest(**kw).fit(X, y).forest_.theta[0, :, 0, 1]
    clamp = forest(invalid_rule="clamp", **kw).fit(X, y).forest_.theta[0, :, 0, 1]
    # binomial(400, p): each interval is more than 4 standard deviations wide around p (false alarm < 1e-4)
    assert 0.89 < np.mean(paper > 1e-3) < 0.995
    assert 0.37 < np.mean(clamp > 1e-3) < 0.58
    # with the clamp rule and epsilon -> infinity, Algorithm 2 predicts like Algorithm 1
    Xd, yd = make_data(n=300, seed=7)
    for voting in ("majority", "threshold"):
        a = forest(private=False, voting=voting, n_estimators=9, max_depth=4, random_state=2).fit(Xd, yd)
        b = forest(invalid_rule="clamp", epsilon=1e9, voting=voting, n_estimators=9, max_depth=4,
                   random_state=2).fit(Xd, yd)
        np.testing.assert_array_equal(a.predict(Xd), b.predict(Xd))


# --------------------------------------------------------------------------- voting rules
@pytest.mark.parametrize("private", [False, True])
def test_majority_and_threshold_coincide_for_one_tree(private):
    X, y = make_data(n=300, seed=4)
    mv = forest(n_estimators=1, max_depth=4, voting="majority", private=private, random_state=9).fit(X, y)
    ta = forest(n_estimators=1, max_depth=4, voting="threshold", private=private, random_state=9).fit(X, y)
    np.testing.assert_array_equal(mv.predict(X), ta.predict(X))


@pytest.mark.parametrize("private", [False, True])
def test_voting_rules_match_their_definitions(private):
    X, y = make_data(n=300, seed=5)
    kw = dict(n_estimators=7, max_depth=3, private=private, epsilon=3.0, random_state=11)
    mv = forest(voting="majority", **kw).fit(X, y)
    ta = forest(voting="threshold", **kw).fit(X, y)
    # majority: '+' iff k_x > k / 2, where a tree votes '+' iff theta > 1/2
    theta = mv.forest_.theta_at(X)[0][..., 1]  # (k, n)
    k_x = (theta > 0.5).sum(axis=0)
    np.testing.assert_array_equal(mv.predict(X), (k_x > 7 / 2).astype(int))
    np.testing.assert_allclose(mv.vote_fraction(X)[:, 1], k_x / 7)
    # threshold: '+' iff p_x = mean theta > 1/2
    np.testing.assert_allclose(ta.predict_proba(X)[:, 1], theta.mean(axis=0))
    np.testing.assert_array_equal(ta.predict(X), (theta.mean(axis=0) > 0.5).astype(int))


def test_probabilistic_averaging_draws_with_probability_p_x():
    X, y = make_data(n=200, seed=6)
    pa = forest(voting="probabilistic", private=False, n_estimators=5, max_depth=2, random_state=3).fit(X, y)
    p = pa.predict_proba(X[:1])[0, 1]
    assert 0.05 < p < 0.95
    draws = pa.predict(np.repeat(X[:1], 4000, axis=0))  # one coin per row (the integer seed fixes them)
    # two-sided binomial test at the fixed seed: false-alarm rate 0.001
    assert stats.binomtest(int(draws.sum()), 4000, p).pvalue > 1e-3


def test_aggregate_multiclass_ties_go_to_the_first_class():
    theta = np.array([[[0.5, 0.5, 0.0]], [[0.0, 0.5, 0.5]]])  # (k=2, n=1, C=3)
    assert aggregate(theta, "majority")[0] == 0  # votes: class 0 and class 1 -> tie -> class 0
    assert aggregate(theta, "threshold")[0] == 1  # mean (0.25, 0.5, 0.25)


def test_multiclass_wine_is_learned():
    from sklearn.datasets import load_wine
    X, y = load_wine(return_X_y=True)
    bounds = [(lo, hi) for lo, hi in zip(X.min(axis=0), X.max(axis=0))]  # public by assumption in this test
    m = RandomDecisionForestClassifier(n_estimators=31, max_depth=5, private=False, voting="threshold",
                                       bounds=bounds, classes=[0, 1, 2], random_state=0).fit(X, y)
    assert m.predict_proba(X).shape == (len(y), 3)
    assert np.mean(m.predict(X) == y) > 0.8  # chance is 0.4


# --------------------------------------------------------------------------- API conventions
def test_clone_release_and_determinism():
    X, y = make_data()
    m = forest(voting="threshold", epsilon=2.0)
    c = clone(m)
    assert c.get_params() == m.get_params()
    r1 = m.fit(X, y).release()
    r2 = c.fit(X, y).release()
    assert r1 == r2 and hash(r1) == hash(r2)
    assert forest(random_state=1).fit(X, y).release() != r1
    assert r1[0][0] == "structure" and len(r1[0][1]) == 5 and len(r1[1][1][0]) == 2 ** 3


def test_logarithmic_rule_uses_only_the_public_record_count():
    assert logarithmic_n_estimators(1) == 1
    assert logarithmic_n_estimators(1000) == 7  # ln 1000 = 6.9 -> 7
    assert logarithmic_n_estimators(100_000) == 13  # 11.5 -> 12 -> odd 13
    X, y = make_data(n=50)
    m = forest(n_estimators="log", n_records=100_000).fit(X, y)
    assert m.n_estimators_ == 13
    with pytest.raises(ValueError, match="n_records"):
        forest(n_estimators="log").fit(X, y)
    assert theory_n_estimators(1000, 0.1, 1.0) == math.ceil(4 * math.log(1000) / 0.01)


def test_features_outside_the_bounds_are_clipped_never_counted_in_the_model():
    X, y = make_data(n=20)
    X = X.copy()
    X[0, 0], X[1, 1], X[2, 1] = -5.0, 7.0, 1.5
    m = forest(private=False).fit(X, y)
    assert not hasattr(m, "n_clipped_")  # an exact private count: not kept (issue 17, finding 7)
    Xc = np.clip(X, 0, 1)
    np.testing.assert_array_equal(m.forest_.theta, forest(private=False).fit(Xc, y).forest_.theta)
    assert m.privacy_ledger_.total_epsilon() == math.inf  # Algorithm 1 is not private: charged inf


@pytest.mark.parametrize("kw,X_bad,y_bad,match", [
    (dict(n_estimators=0), None, None, "n_estimators"),
    (dict(n_estimators=2.5), None, None, "n_estimators"),
    (dict(max_depth=-1), None, None, "max_depth"),
    (dict(epsilon=0.0), None, None, "epsilon"),
    (dict(epsilon=float("inf")), None, None, "epsilon"),
    (dict(voting="mean"), None, None, "voting"),
    (dict(neighbouring="swap"), None, None, "neighbouring"),
    (dict(accounting="loose"), None, None, "accounting"),
    (dict(invalid_rule="drop"), None, None, "invalid_rule"),
    (dict(bounds=None), None, None, "bounds"),
    (dict(bounds=[(0, 1)]), None, None, "bounds"),
    (dict(bounds=[(0, 1), (2, 1)]), None, None, r"bounds\[1\]"),
    (dict(classes=None), None, None, "classes"),
    (dict(random_state=-3), None, None, "random_state"),
    ({}, "nan", None, r"X must be finite, found X\[3, 1\] = nan"),
    ({}, None, "unknown", "not in classes.*7"),
])
def test_bad_input_is_a_clear_error(kw, X_bad, y_bad, match):
    X, y = make_data(n=10)
    if X_bad == "nan":
        X = X.copy()
        X[3, 1] = np.nan
    if y_bad == "unknown":
        y = y.copy()
        y[4] = 7
    m = forest(**kw)
    with pytest.raises((ValueError, TypeError), match=match):
        m.fit(X, y)


def test_parameters_are_stored_untouched_and_predict_needs_fit():
    m = forest(n_estimators=0, voting="nonsense")
    assert m.n_estimators == 0 and m.voting == "nonsense"  # validation happens in fit
    with pytest.raises(ValueError, match="not fitted"):
        forest().predict(np.zeros((1, 2)))


def test_noise_scale_function():
    assert noise_scale(2.0, 10, "add-remove", "strict") == 5.0
    assert noise_scale(2.0, 10, "substitute", "strict") == 10.0
    assert noise_scale(2.0, 10, "substitute", "paper") == 5.0


def test_leaf_values_rules_on_hand_made_counts():
    rng = np.random.default_rng(0)
    counts = np.array([[3.0, 1.0], [-0.5, 2.0], [0.0, 0.0], [-1.0, -2.0]])
    paper = leaf_values(counts, rng, invalid_rule="paper")
    clamp = leaf_values(counts, rng, invalid_rule="clamp")
    np.testing.assert_allclose(paper[0], [0.75, 0.25])
    np.testing.assert_allclose(clamp[0], [0.75, 0.25])
    np.testing.assert_allclose(clamp[1], [0.0, 1.0])
    assert not np.allclose(paper[1], [0.0, 1.0])  # randomized: uniform draw (probability 0 to hit it)
    for theta in (paper, clamp):
        np.testing.assert_allclose(theta.sum(axis=1), 1.0)


# --------------------------------------------------------------------------- the audit target's mechanisms
def test_batched_forests_have_the_distribution_of_single_fits():
    # the target samples many forests per call of _draw_forests; the labels it releases on the probe grid
    # must be distributed like those of separate fit() calls. Chi-square homogeneity test at the fixed
    # seeds: false-alarm rate 0.001.
    from audit.targets.random_trees import PROBE, ForestRelease, _factory, base_data

    make = _factory(voting="threshold", epsilon=1.0, n_estimators=3, max_depth=1)
    data = base_data()
    batch = ForestRelease(make, "probe", PROBE).batch(data, 3000, np.random.default_rng(0))
    single = []
    for i in range(3000):
        est = make().set_params(random_state=i).fit(*data)
        idx = np.searchsorted(est.classes_, est.predict(PROBE))
        single.append(int(idx @ (2 ** np.arange(len(PROBE)))))
    codes = np.union1d(batch, single)
    table = np.array([[np.sum(batch == c) for c in codes], [np.sum(np.asarray(single) == c) for c in codes]])
    table = table[:, table.sum(axis=0) >= 10]
    assert table.shape[1] >= 4  # the release is not degenerate
    assert stats.chi2_contingency(table).pvalue > 1e-3


def test_audit_detects_the_flawed_scales_and_passes_the_correct_ones():
    # Sampled audits (alpha = 0.01 each): a correct learner is flagged with probability <= 0.01; the
    # flawed variants have true loss 3 (one-tree scale, k=3) and 2 (add/remove scale under substitution)
    # against a claim of 1, detected with overwhelming probability at 20,000 samples.
    from audit import Claim, audit_pairs
    from audit.targets.random_trees import ForestRelease, OneTreeScaleForest, _factory, count_pairs

    def audit(cls, relation, accounting, k, seed):
        mech = ForestRelease(_factory(cls, epsilon=1.0, neighbouring=relation, accounting=accounting,
                                      n_estimators=k, max_depth=0), output="counts")
        return audit_pairs(mech, count_pairs(relation), Claim(1.0, 0.0, relation), n_samples=20_000, alpha=0.01,
                           seed=seed)

    assert audit(OneTreeScaleForest, "add-remove", "strict", 3, 1).violation
    assert audit(RandomDecisionForestClassifier, "substitute", "paper", 2, 2).violation
    assert not audit(RandomDecisionForestClassifier, "add-remove", "strict", 3, 3).violation
    assert not audit(RandomDecisionForestClassifier, "substitute", "strict", 2, 4).violation


def test_one_tree_scale_variant_ledger_shows_k_epsilon():
    from audit.targets.random_trees import OneTreeScaleForest

    X, y = make_data()
    est = OneTreeScaleForest(n_estimators=3, max_depth=1, epsilon=1.0, bounds=[(0, 1)] * 2, classes=[0, 1],
                             random_state=0).fit(X, y)
    assert est.noise_scale_ == pytest.approx(1.0)
    assert est.privacy_ledger_.total_epsilon() == pytest.approx(3.0)


def test_theorem_5_1_identity_and_5_2_per_tree_inequality():
    from audit.theorems.random_trees import generated, thm_5_1_5_2, tree_stats

    rng = np.random.default_rng(0)
    X, y = generated(120, rng)
    correct, weight, theta_y = tree_stats(X, y, 300, 3, rng)
    np.testing.assert_allclose(theta_y, weight)  # non-private: x's own leaf is never empty
    r51, r52 = thm_5_1_5_2(correct, weight)
    assert r51["verdict"] == "holds" and r51["estimate"] == pytest.approx(r51["bound"], abs=1e-12)
    assert r52["verdict"] == "holds" and r52["min_per_tree_slack"] >= 0
    # a sanity check that the check can fail: a weight matrix below the bound is refuted
    assert thm_5_1_5_2(correct, weight * 0.5)[1]["verdict"] == "refuted"
