"""LPDT (reference.lpdt*): partition rule, randomiser law, unbiasedness, the flawed variant, bad input, PHIST.

Statistical tests use fixed seeds; each states its false-alarm rate (the
probability that a correct implementation fails it) beside it.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy import stats
from sklearn.base import clone

from audit.exact import exact_loss
from reference.baselines.phist import PHISTRegressor
from reference.lpdt import LPDTRegressor, PublicPartitionTreeRegressor
from reference.lpdt_partition import grow_max_edge, regular_partition
from reference.lpdt_randomizer import LPDTRandomizer, PerLeafNoiseRandomizer
from reference.mechanisms import round_to_grid

EPSILONS = (0.5, 1.0, 2.0, 4.0, 8.0)
TB = (-1.0, 1.0)
UNIT2 = np.array([[0.0, 1.0], [0.0, 1.0]])


def _data(rng, n, d=2, noise=0.1):
    X = rng.random((n, d))
    y = np.clip(np.sin(4 * X[:, 0]) * 0.8 + noise * rng.normal(size=n), -1, 1)
    return X, y


def _boxes(part, bounds):
    """Box of every node, by traversal from the root."""
    out = {0: (bounds[:, 0].copy(), bounds[:, 1].copy())}
    stack = [0]
    while stack:
        v = stack.pop()
        f = part.feature[v]
        if f < 0:
            continue
        lo, hi = out[v]
        hl, lr = hi.copy(), lo.copy()
        hl[f] = part.threshold[v]
        lr[f] = part.threshold[v]
        out[part.left[v]] = (lo, hl)
        out[part.right[v]] = (lr, hi)
        stack += [part.left[v], part.right[v]]
    return out


def _sse(y):
    return float(((y - y.mean()) ** 2).sum()) if y.size else 0.0


# --------------------------------------------------------------------------- partition rule
@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(1, 300), d=st.integers(1, 3), depth=st.integers(0, 6),
       n_l=st.integers(1, 20))
def test_max_edge_rule_splits_a_longest_edge_at_its_midpoint_with_the_best_reduction(seed, n, d, depth, n_l):
    rng = np.random.default_rng(seed)
    Xp = rng.random((n, d))
    yp = rng.normal(size=n) + Xp[:, 0]
    bounds = np.array([[0.0, 1.0]] * d)
    part = grow_max_edge(Xp, yp, bounds, depth, n_l)
    boxes = _boxes(part, bounds)
    members = {0: np.arange(n)}
    for v in range(len(part.feature)):
        lo, hi = boxes[v]
        idx = members[v]
        f = part.feature[v]
        if f < 0:
            assert part.depth[v] <= depth
            if n >= n_l:
                assert idx.size >= n_l  # every leaf keeps n_l public points
            continue
        length = hi - lo
        assert length[f] == length.max()  # a longest edge
        assert part.threshold[v] == (lo[f] + hi[f]) / 2  # its midpoint
        go = Xp[idx, f] < part.threshold[v]
        members[part.left[v]], members[part.right[v]] = idx[go], idx[~go]
        gains = []
        for k in np.flatnonzero(length == length.max()):
            g = Xp[idx, k] < (lo[k] + hi[k]) / 2
            if min(g.sum(), (~g).sum()) >= n_l:
                gains.append(_sse(yp[idx]) - _sse(yp[idx][g]) - _sse(yp[idx][~g]))
        chosen = _sse(yp[idx]) - _sse(yp[idx][go]) - _sse(yp[idx][~go])
        assert chosen >= max(gains) - 1e-9  # the largest variance reduction among the longest edges


def test_max_edge_on_ample_uniform_data_gives_dyadic_cells():
    """Spec 11: leaf side lengths are 2^-floor(p/d) or 2^-floor(p/d)-1 with enough public data."""
    rng = np.random.default_rng(1)
    Xp, yp = _data(rng, 20_000)
    for p in range(0, 7):
        part = grow_max_edge(Xp, yp, UNIT2, p, 1)
        assert part.n_leaves == 2 ** p and not any(part.leaf_stopped_early)
        for v, (lo, hi) in _boxes(part, UNIT2).items():
            if part.feature[v] < 0:
                sides = set(np.round(-np.log2(hi - lo), 9))
                assert sides <= {p // 2, p // 2 + (p % 2)}


def test_first_split_follows_the_public_signal():
    """y depends on x1 only: the root (both edges longest) must split x1."""
    rng = np.random.default_rng(2)
    Xp = rng.random((500, 2))
    yp = (Xp[:, 1] > 0.5).astype(float)
    part = grow_max_edge(Xp, yp, UNIT2, 1, 1)
    assert part.feature[0] == 1 and part.threshold[0] == 0.5


def test_partition_does_not_depend_on_private_data():
    rng = np.random.default_rng(3)
    Xp, yp = _data(rng, 400)
    X1, y1 = _data(rng, 300)
    X2, y2 = _data(rng, 300)
    m1 = LPDTRegressor(1.0, 4, 5, TB, UNIT2, random_state=0).fit(X1, y1, Xp, yp)
    m2 = LPDTRegressor(1.0, 4, 5, TB, UNIT2, random_state=0).fit(X2, -y2, Xp, yp)
    assert m1.partition_.structure() == m2.partition_.structure()
    assert m1.leaf_values_.tolist() != m2.leaf_values_.tolist()


def test_depth_beyond_what_public_data_supports_stops_and_says_so():
    rng = np.random.default_rng(4)
    Xp, yp = _data(rng, 12)
    X, y = _data(rng, 100)
    m = LPDTRegressor(1.0, max_depth=10, min_samples_leaf=3, target_bounds=TB, bounds=UNIT2,
                      random_state=0).fit(X, y, Xp, yp)
    assert m.depth_limited_by_public_data_ and m.depth_ < 10
    assert m.n_leaves_ <= 4 and m.n_leaves_stopped_early_ == m.n_leaves_
    assert min(m.partition_.leaf_public_count) >= 3


def test_regular_partition_is_the_grid():
    part = regular_partition(UNIT2, 4)
    pts = np.array([[a, b] for a in np.linspace(0.05, 0.95, 8) for b in np.linspace(0.05, 0.95, 8)])
    cells = part.apply(pts)
    grid = (np.floor(pts[:, 0] * 4) * 4 + np.floor(pts[:, 1] * 4)).astype(int)
    assert part.n_leaves == 16 and len(set(zip(cells, grid))) == 16


# --------------------------------------------------------------------------- the randomiser's law
def _rand(eps, L_depth=2, share=0.5):
    part = regular_partition(np.array([[0.0, 1.0]]), L_depth)  # 2**L_depth leaves on [0, 1]
    return LPDTRandomizer(eps, part, TB, share)


@pytest.mark.parametrize("eps", EPSILONS)
def test_exact_loss_equals_epsilon_at_the_worst_pair(eps):
    r = _rand(eps)
    worst = exact_loss(r, (0.1, -1.0), (0.9, 1.0))
    assert worst.epsilon == pytest.approx(eps, rel=1e-12)  # Theorem 3.1, attained (spec 4.1)
    assert exact_loss(r, (0.1, -1.0), (0.15, 1.0)).epsilon == pytest.approx(eps / 2)  # same leaf: label only
    assert exact_loss(r, (0.1, 0.3), (0.9, 0.3)).epsilon == pytest.approx(eps / 2)  # same label: bits only


@settings(max_examples=60, deadline=None)
@given(eps=st.sampled_from(EPSILONS), share=st.sampled_from((0.3, 0.5, 0.7)), x0=st.floats(-0.5, 1.5),
       x1=st.floats(-0.5, 1.5), y0=st.floats(-3, 3), y1=st.floats(-3, 3))
def test_exact_loss_never_exceeds_epsilon(eps, share, x0, x1, y0, y1):
    r = _rand(eps, 3, share)
    assert exact_loss(r, (x0, y0), (x1, y1)).epsilon <= eps * (1 + 1e-12)


def test_log_law_is_a_probability_law():
    """Sum of the report pmf over the bits and the label lattice within 60 (the rest is < e^-14)."""
    r = _rand(1.0, 2)
    ks = np.arange(-int(60 / r.label.grid), int(60 / r.label.grid) + 1)
    total = 0.0
    for bits in np.ndindex(*(2,) * r.n_leaves):
        mass = np.exp(r.log_law(np.r_[0.0, bits], (0.3, 0.2)) - r.label.logpmf(0.0, 0.2))
        centre = int(round_to_grid(0.2, r.label.grid))
        total += mass * np.exp(r.label.law(1).logpmf(ks - centre)).sum()
    assert total == pytest.approx(1.0, abs=1e-4)


@settings(max_examples=40, deadline=None)
@given(x0=st.floats(-0.5, 1.5), x1=st.floats(-0.5, 1.5), y0=st.floats(-3, 3), y1=st.floats(-3, 3),
       seed=st.integers(0, 2 ** 32 - 1))
def test_reports_attainable_from_any_other_user(x0, x1, y0, y1, seed):
    """Every report sampled for one user has positive probability for any other user, and the exact
    lattice pmfs give a log-ratio within epsilon (the float-noise report failed the first: Mironov 2012)."""
    r = _rand(1.0, 2)
    for out in r.batch((x0, y0), 10, np.random.default_rng(seed)):
        l0, l1 = r.log_law(out, (x0, y0)), r.log_law(out, (x1, y1))
        assert np.isfinite(l1) and abs(l0 - l1) <= 1.0 + 1e-9
        assert r.llr(out, (x0, y0), (x1, y1))[0] == pytest.approx(l0 - l1, abs=1e-9)


def test_sampled_reports_follow_the_law():
    """Label: Laplace(y, 4M/eps) by KS; bits: flip rate q by a binomial test. Seeded; false alarm <= 2e-3 total."""
    eps = 1.0
    r = _rand(eps, 2)
    out = r.batch((0.6, 0.25), 50_000, np.random.default_rng(5))
    assert r.label.scale == pytest.approx(4 * 1.0 / eps)  # b = 4M/eps with M = 1
    assert np.all(out[:, 0] / r.label.grid == np.round(out[:, 0] / r.label.grid))  # on the public lattice
    # the lattice law is Laplace(0.25, 4) up to the grid (2**-10 here): KS against the continuous law with
    # the grid's half-step jitter added back (its cdf differs by < 1e-3 / 4); false alarm 1e-3
    jitter = np.random.default_rng(6).uniform(-0.5, 0.5, out.shape[0]) * r.label.grid
    assert stats.kstest(out[:, 0] + jitter, stats.laplace(0.25, r.label.scale).cdf).pvalue > 1e-3
    flips = out[:, 1:] != r.one_hot(0.6)
    k, n = int(flips.sum()), flips.size
    assert stats.binomtest(k, n, 1 / (1 + math.exp(eps / 4))).pvalue > 1e-3  # false alarm 1e-3
    assert r.leaf_of(0.6) == 2 and set(np.unique(out[:, 1:])) <= {0.0, 1.0}


def test_plrv_is_bounded_and_the_tight_event_has_its_exact_frequency():
    """Spec 4.2: the closed-form LLR never exceeds eps; P(LLR = eps) = (1 - q)^2 / 2.
    Frequency checked by a binomial test, false alarm 1e-3."""
    eps = 1.0
    r = _rand(eps, 2)
    d0, d1 = (0.1, -1.0), (0.9, 1.0)
    out = r.batch(d0, 200_000, np.random.default_rng(6))
    llr = r.llr(out, d0, d1)
    assert llr.max() <= eps + 1e-9
    for o in out[:5]:
        assert llr[0] == pytest.approx(r.log_law(out[0], d0) - r.log_law(out[0], d1))
    k = int(np.sum(llr >= eps - 1e-9))
    assert stats.binomtest(k, out.shape[0], (1 - r.q) ** 2 / 2).pvalue > 1e-3


# --------------------------------------------------------------------------- many users: sums and unbiasedness
def test_summaries_are_unbiased_with_the_stated_variance():
    """Spec 5.2 T-unbiasedness: over R = 400 independent privatisations of one dataset,
    E[D_j] = c n_j, E[N_j] = c sum_{i in A_j} Y_i, Var(D_j) = n q (1 - q).
    Means by z-tests at |z| < 4.5 (two-sided false alarm 7e-6 each, 16 tests);
    variance by a chi-square interval at 1e-4 per leaf."""
    rng = np.random.default_rng(7)
    n, R = 2_000, 400
    r = _rand(2.0, 2)
    X = rng.random(n)
    y = np.clip(rng.normal(0.3, 0.4, n), -1, 1)
    leaves = r.partition.apply(X[:, None])
    D, N = np.empty((R, 4)), np.empty((R, 4))
    g = np.random.default_rng(8)
    for t in range(R):
        ones, w, tot = r.summarise(leaves, y, g)
        D[t], N[t] = ones - n * r.q, w - r.q * tot
    n_j = np.bincount(leaves, minlength=4)
    s_j = np.bincount(leaves, weights=y, minlength=4)
    for est, target in ((D, r.c * n_j), (N, r.c * s_j)):
        z = (est.mean(0) - target) / (est.std(0, ddof=1) / math.sqrt(R))
        assert np.all(np.abs(z) < 4.5), z
    var_ratio = D.var(0, ddof=1) / (n * r.q * (1 - r.q))
    lo, hi = stats.chi2.ppf([5e-5, 1 - 5e-5], R - 1) / (R - 1)
    assert np.all((var_ratio > lo) & (var_ratio < hi)), var_ratio


def test_dense_reports_and_summaries_agree_in_law():
    """The per-leaf summaries (never a users x leaves matrix) and the aggregation of dense per-user reports
    estimate the same leaf values: two-sample KS on 200 replicates of a leaf value, false alarm 1e-3."""
    rng = np.random.default_rng(9)
    Xp, yp = _data(rng, 400, d=1)
    X, y = _data(rng, 100, d=1)
    m = LPDTRegressor(4.0, 2, 5, TB, [(0, 1)], random_state=0).fit(X, y, Xp, yp)
    g = np.random.default_rng(10)
    summ, dense = [], []
    for t in range(200):
        summ.append(clone(m).set_params(random_state=int(g.integers(2**31))).fit(X, y, Xp, yp).leaf_values_[1])
        reports = np.array([m.randomizer(X[i], y[i], g) for i in range(X.shape[0])])
        dense.append(m.aggregate(reports)[1])
    assert stats.ks_2samp(summ, dense).pvalue > 1e-3


def test_estimator_is_consistent_for_large_n():
    """Leaf values approach the non-private leaf means (n = 200,000, eps = 8): a deterministic bound
    |LPDT - tree| < 0.05, far outside the estimator's sd (~0.006), false alarm < 1e-9."""
    rng = np.random.default_rng(11)
    Xp, yp = _data(rng, 2_000)
    X, y = _data(rng, 200_000)
    kw = dict(max_depth=3, min_samples_leaf=10, target_bounds=TB, bounds=UNIT2)
    m = LPDTRegressor(8.0, random_state=0, **kw).fit(X, y, Xp, yp)
    t = PublicPartitionTreeRegressor(**kw).fit(X, y, Xp, yp)
    assert np.max(np.abs(m.leaf_values_ - t.leaf_values_)) < 0.05
    assert not m.guarded_.any()


def test_non_private_public_partition_tree_is_charged_inf():
    """Issue 17, finding 3: exact private leaf means are not DP, and the ledger says so (total inf)."""
    rng = np.random.default_rng(18)
    Xp, yp = _data(rng, 50)
    X, y = _data(rng, 50)
    t = PublicPartitionTreeRegressor(2, 1, TB, UNIT2).fit(X, y, Xp, yp)
    assert t.private_ is False and t.privacy_ledger_.total_epsilon() == float("inf")
    m = LPDTRegressor(1.0, 2, 1, TB, UNIT2, random_state=0).fit(X, y, Xp, yp)
    assert m.privacy_ledger_.total_epsilon() == pytest.approx(1.0)  # the private learner stays finite


def test_non_positive_denominators_take_the_public_mean_and_values_are_clipped():
    rng = np.random.default_rng(12)
    Xp, yp = _data(rng, 200)
    X, y = _data(rng, 30)
    m = LPDTRegressor(0.5, 4, 2, TB, UNIT2, random_state=1).fit(X, y, Xp, yp)
    assert m.guarded_.any()  # n = 30 users at eps = 0.5: some D_j <= 0
    pub = np.asarray(m.partition_.leaf_public_mean)
    assert np.allclose(m.leaf_values_[m.guarded_], np.clip(pub[m.guarded_], *TB))
    assert np.all(m.D_[m.guarded_] <= 0) and np.all(m.D_[~m.guarded_] > 0)
    assert np.all((m.leaf_values_ >= -1) & (m.leaf_values_ <= 1))
    u = clone(m).set_params(clip_to_bound=False, denominator_guard="midpoint").fit(X, y, Xp, yp)
    assert np.all(u.leaf_values_[u.guarded_] == 0.0)
    assert np.abs(u.leaf_values_).max() > 1  # unclipped ratios escape the label range here


# --------------------------------------------------------------------------- privacy ledger and the flawed variant
@pytest.mark.parametrize("eps", (0.5, 2.0))
def test_ledger_total_is_epsilon(eps):
    rng = np.random.default_rng(13)
    Xp, yp = _data(rng, 300)
    X, y = _data(rng, 300)
    m = LPDTRegressor(eps, 3, 5, TB, UNIT2, random_state=0).fit(X, y, Xp, yp)
    assert m.privacy_ledger_.total_epsilon() == pytest.approx(eps)
    frame = m.privacy_ledger_.to_frame()
    assert set(frame.mechanism) == {"Laplace", "BitRandomizedResponse"} and (frame.epsilon == eps / 2).all()


@pytest.mark.parametrize("eps", (0.5, 1.0))
def test_per_leaf_fresh_noise_variant_is_not_epsilon_ldp(eps):
    part = regular_partition(np.array([[0.0, 1.0]]), 3)  # 8 leaves
    flawed = PerLeafNoiseRandomizer(eps, part, TB)
    loss = exact_loss(flawed, (0.05, -1.0), (0.95, 1.0)).epsilon
    assert loss == pytest.approx((8 + 1) * eps / 2) and loss > eps
    assert flawed.true_epsilon() == pytest.approx(loss)
    rng = np.random.default_rng(14)
    Xp, yp = _data(rng, 500, d=1)
    X, y = _data(rng, 500, d=1)
    with pytest.warns(RuntimeWarning, match="per_leaf"):
        m = LPDTRegressor(eps, 3, 1, TB, [(0, 1)], label_noise="per_leaf", random_state=0).fit(X, y, Xp, yp)
    assert m.privacy_ledger_.total_epsilon() == pytest.approx((m.n_leaves_ + 1) * eps / 2)


def test_per_leaf_variant_is_caught_by_sampling():
    """Sampled audit on the optimal statistic (the exact LLR, post-processing): alpha = 0.01 is the
    probability of a false violation for a correct mechanism; the flawed one (true loss 2.5) is flagged."""
    from audit import Claim, audit_pairs

    part = regular_partition(np.array([[0.0, 1.0]]), 2)
    flawed = PerLeafNoiseRandomizer(1.0, part, TB)
    d0, d1 = (0.1, -1.0), (0.9, 1.0)

    class Stat:
        def __call__(self, data, rng):
            return self.batch(data, 1, rng)[0]

        def batch(self, data, n, rng):
            return np.round(flawed.llr(flawed.batch(data, n, rng), d0, d1), 9)

    res = audit_pairs(Stat(), [(d0, d1)], Claim(1.0), n_samples=20_000, alpha=0.01, seed=0)
    assert res.violation and res.epsilon_lower > 1.5


# --------------------------------------------------------------------------- bad input and conventions
def test_target_bounds_is_a_public_fact():
    rng = np.random.default_rng(15)
    Xp, yp = _data(rng, 50)
    X, y = _data(rng, 50)
    for bad in (None, "private", "auto"):
        with pytest.raises(ValueError, match="target_bounds"):
            LPDTRegressor(1.0, 2, 1, bad, UNIT2).fit(X, y, Xp, yp)
    m = LPDTRegressor(1.0, 2, 1, "public", UNIT2, random_state=0).fit(X, y * 3, Xp, yp)
    assert m.target_bounds_ == (yp.min(), yp.max())  # from the public labels only
    assert not hasattr(m, "n_clipped_")  # an exact private count: not kept (issue 17, finding 7)


def test_bad_input_is_refused_with_the_parameter_named():
    rng = np.random.default_rng(16)
    Xp, yp = _data(rng, 50)
    X, y = _data(rng, 50)
    ok = dict(epsilon=1.0, max_depth=2, target_bounds=TB, bounds=UNIT2)
    with pytest.raises(ValueError, match="X_public has 3 features but X has 2"):
        LPDTRegressor(**ok).fit(X, y, rng.random((10, 3)), yp[:10])
    with pytest.raises(ValueError, match="X_public is empty"):
        LPDTRegressor(**ok).fit(X, y, np.empty((0, 2)), np.empty(0))
    with pytest.raises(ValueError, match="X_public and y_public are required"):
        LPDTRegressor(**ok).fit(X, y)
    with pytest.raises(ValueError, match="bounds is required"):
        LPDTRegressor(1.0, 2, 1, TB, None).fit(X, y, Xp, yp)
    for name, value in (("epsilon", 0.0), ("max_depth", -1), ("min_samples_leaf", 0), ("indicator_share", 1.0),
                        ("denominator_guard", "zero?"), ("label_noise", "none"), ("min_ratio", -1.0)):
        with pytest.raises(ValueError, match=name):
            LPDTRegressor(**{**ok, name: value}).fit(X, y, Xp, yp)
    with pytest.raises(ValueError, match="bounds has 3 ranges"):
        LPDTRegressor(**{**ok, "bounds": [(0, 1)] * 3}).fit(X, y, Xp, yp)


def test_labels_outside_target_bounds_are_clipped_never_counted_in_the_model():
    rng = np.random.default_rng(17)
    Xp, yp = _data(rng, 100)
    X, y = _data(rng, 100)
    y[:7] = 50.0
    m = LPDTRegressor(1.0, 2, 1, TB, UNIT2, random_state=0).fit(X, y, Xp, yp)
    assert not hasattr(m, "n_clipped_") and np.all(np.abs(m.predict(X)) <= 1)


def test_sklearn_conventions_and_release():
    rng = np.random.default_rng(18)
    Xp, yp = _data(rng, 100)
    X, y = _data(rng, 100)
    m = LPDTRegressor(2.0, 3, 2, TB, UNIT2, public_data=(Xp, yp), random_state=3)
    c = clone(m)
    assert c.get_params()["epsilon"] == 2.0 and np.array_equal(c.get_params()["public_data"][0], Xp)
    a, b = m.fit(X, y).release(), clone(m).fit(X, y).release()
    assert a == b and hash(a) == hash(b)  # same seed, same release; hashable
    assert clone(m).set_params(random_state=4).fit(X, y).release() != a
    assert m.predict(X).shape == (100,)


# --------------------------------------------------------------------------- PHIST
@pytest.mark.parametrize("randomizer", ("lpdt", "laplace"))
def test_phist_ledger_and_consistency(randomizer):
    """eps = 8, n = 100,000, 4 cells: leaf values within 0.1 of the exact cell means
    (their sd is below 0.02 for both randomisers; false alarm < 1e-6)."""
    rng = np.random.default_rng(19)
    X, y = _data(rng, 100_000, d=1)
    p = PHISTRegressor(8.0, 4, TB, [(0, 1)], randomizer=randomizer, random_state=0).fit(X, y)
    assert p.privacy_ledger_.total_epsilon() == pytest.approx(8.0)
    cells = np.minimum((X[:, 0] * 4).astype(int), 3)
    means = np.bincount(cells, weights=y) / np.bincount(cells)
    assert np.max(np.abs(p.leaf_values_ - means)) < 0.1
    with pytest.raises(ValueError, match="target_bounds"):
        PHISTRegressor(1.0, 4, None, [(0, 1)]).fit(X, y)
    with pytest.raises(ValueError, match="cells"):
        PHISTRegressor(1.0, 100, TB, [(0, 1)] * 3).fit(rng.random((10, 3)), y[:10])


def test_summaries_never_hold_a_dense_users_by_leaves_matrix():
    """50,000 users x 256 leaves: a dense float64 matrix is 98 MiB; the chunked path stays under 10 MiB."""
    import tracemalloc

    r = LPDTRandomizer(2.0, regular_partition(UNIT2, 8), TB)
    rng = np.random.default_rng(20)
    leaves = rng.integers(0, 256, 50_000)
    y = rng.uniform(-1, 1, 50_000)
    tracemalloc.start()
    ones, _, _ = r.summarise(leaves, y, rng)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 10 * 2**20
    assert ones.sum() == pytest.approx(50_000 * (1 + 254 * r.q), rel=0.01)  # E = (1 - q) + 255 q per user; sd ~ 1e-4 rel.


def test_target_exact_claims_pass_and_are_tight():
    from audit.targets.lpdt import exact_claims

    rows = exact_claims("quick", 0)
    assert [r["epsilon_claimed"] for r in rows] == list(EPSILONS)
    assert all(r["verdict"] == "pass" == r["expected"] for r in rows)
    assert all(r["tightness"] == pytest.approx(1.0) for r in rows)
