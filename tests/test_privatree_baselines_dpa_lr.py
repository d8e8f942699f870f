"""PrivaTree's poisoning-comparison baselines: Deep Partition Aggregation and DP logistic regression.

DPA (reference/baselines/dpa.py): the certificate of Levine and Feizi (2021, Theorem 1) against a brute-force
poisoning attack, its tightness on votes, the hash partition, P = 1 against the base tree.
DP-LR (reference/baselines/dp_logistic.py): the Gamma-norm noise of Chaudhuri et al. (2011, Algorithm 1), the
unit-ball map from public bounds, the sensitivity 2 / (n lambda) the claim rests on, and bad input.
"""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from sklearn.base import clone
from sklearn.tree import DecisionTreeClassifier

from reference.baselines.dp_logistic import DPLogisticRegression, GammaNormNoise, regularised_minimiser, unit_ball_map
from reference.baselines.dpa import (
    DeepPartitionAggregation,
    certified_accuracy,
    certified_radius_from_votes,
    partition_of,
)

# ----------------------------------------------------------------------------------------------- DPA
GRID = (0.0, 1.0, 2.0, 3.0)


def _poisoned_sets(X, y, pool, max_changes):
    """Every training set within symmetric difference ``max_changes``: delete a subset, insert a multiset."""
    n = len(y)
    for k_del in range(max_changes + 1):
        for dele in itertools.combinations(range(n), k_del):
            keep = np.setdiff1d(np.arange(n), dele)
            for k_ins in range(max_changes - k_del + 1):
                for ins in itertools.combinations_with_replacement(range(len(pool)), k_ins):
                    Xp = np.vstack([X[keep]] + [np.array([pool[i][0]]) for i in ins])
                    yp = np.concatenate([y[keep], np.array([pool[i][1] for i in ins], dtype=int)])
                    yield k_del + k_ins, Xp, yp


def _attack(X, y, P, probe, max_changes=2, learner=DeepPartitionAggregation):
    """Fit DPA on every poisoned set within ``min(max radius, max_changes)`` and check the certified points.

    Returns how many (poisoned set, point) checks were made per size ``s`` of the symmetric difference."""
    clean = learner(P, 1, classes=[0, 1]).fit(X, y)
    pred, radius = clean.predict(probe), clean.certified_radius(probe)
    R = min(int(radius.max()), max_changes)
    pool = [(v, c) for v in GRID for c in (0, 1)]  # the attacker inserts any grid record with any label
    checked = np.zeros(R + 1, dtype=int)
    for s, Xp, yp in _poisoned_sets(X, y, pool, R):
        if s == 0 or len(yp) == 0:
            continue
        covered = radius >= s
        poisoned = DeepPartitionAggregation(P, 1, classes=[0, 1]).fit(Xp, yp).predict(probe)
        assert np.array_equal(poisoned[covered], pred[covered]), (s, Xp.ravel(), yp)
        checked[s] += int(covered.sum())
    return checked


PROBE = np.array(GRID + (0.5, 1.5, 2.5))[:, None]


@settings(max_examples=8, deadline=None, derandomize=True)
@given(x=st.lists(st.sampled_from(GRID), min_size=8, max_size=8),
       noise=st.lists(st.sampled_from([False, False, False, True]), min_size=8, max_size=8),
       P=st.sampled_from([3, 5]))
def test_dpa_certificate_survives_brute_force_poisoning(x, noise, P):
    """No deletion/insertion set of size s <= r(t) changes the prediction at a point t certified for r(t).
    Labels are a threshold rule with about a quarter of them flipped, so that some certificates are positive."""
    X = np.array(x)[:, None]
    y = (X[:, 0] >= 1.5).astype(int) ^ np.array(noise, dtype=int)
    _attack(X, y, P, PROBE)


def test_dpa_certificate_survives_brute_force_poisoning_at_radius_2():
    """A case with certificates of 2 (P = 5, 12 records): every set of 1 or 2 deletions/insertions is tried."""
    X = (np.arange(12) / 3.0)[:, None]
    y = (X[:, 0] >= X[:, 0].mean()).astype(int)
    checked = _attack(X, y, 5, PROBE)
    assert checked.size == 3 and checked[1] > 0 and checked[2] > 0


def test_brute_force_attack_refutes_a_certificate_one_too_large():
    """The attack has power: claiming r(t) + 1 instead of r(t) is refuted on the radius-2 case."""
    class Overclaiming(DeepPartitionAggregation):
        def certified_radius(self, X):
            return super().certified_radius(X) + 1

    X = (np.arange(12) / 3.0)[:, None]
    with pytest.raises(AssertionError):
        _attack(X, (X[:, 0] >= X[:, 0].mean()).astype(int), 5, PROBE, max_changes=1, learner=Overclaiming)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(votes=st.lists(st.integers(0, 6), min_size=2, max_size=4))
def test_dpa_radius_is_exact_on_votes(votes):
    """On vote counts the Theorem 1 radius is tight: moving r votes never flips the plurality (ties to the lowest
    index), and moving r + 1 votes from the winner to its best rival does (when the winner has them)."""
    V = np.array([votes])
    pred, r = certified_radius_from_votes(V)
    c, r = int(pred[0]), int(r[0])
    assert c == int(np.argmax(V[0])) and r >= 0

    def winner(v):
        return int(np.argmax(v))

    K = V.shape[1]
    # every way of changing r single votes (each: one vote moves from a class to another class)
    moves = [(a, b) for a in range(K) for b in range(K) if a != b]
    for seq in itertools.combinations_with_replacement(moves, r):
        v = V[0].copy()
        ok = True
        for a, b in seq:
            if v[a] == 0:
                ok = False
                break
            v[a] -= 1
            v[b] += 1
        if ok:
            assert winner(v) == c
    if V[0, c] >= r + 1:
        best = None
        for k in range(K):
            if k != c:
                v = V[0].copy()
                v[c] -= r + 1
                v[k] += r + 1
                best = best or winner(v) != c
        assert best


def test_dpa_partition_depends_on_the_record_alone():
    rng = np.random.default_rng(3)
    X, y = rng.normal(size=(50, 3)), rng.integers(0, 2, 50)
    part = partition_of(X, y, 7)
    perm = rng.permutation(50)
    assert np.array_equal(partition_of(X[perm], y[perm], 7), part[perm])
    extra = np.vstack((X, rng.normal(size=(10, 3))))
    assert np.array_equal(partition_of(extra, np.append(y, np.ones(10, int)), 7)[:50], part)
    # -0.0 and 0.0 are the same value, hence the same record
    Z = np.zeros((1, 3))
    assert partition_of(-Z, [0], 101)[0] == partition_of(Z, [0], 101)[0]
    # the label is part of the record; all partitions are used
    assert np.bincount(partition_of(X, y, 7), minlength=7).min() >= 1


def test_dpa_input_order_does_not_matter():
    rng = np.random.default_rng(4)
    X = rng.integers(0, 5, size=(120, 2)).astype(float)
    y = (X[:, 0] + X[:, 1] + rng.integers(0, 3, 120) > 5).astype(int)
    probe = rng.integers(0, 5, size=(40, 2)).astype(float)
    a = DeepPartitionAggregation(6, 3, classes=[0, 1]).fit(X, y)
    perm = rng.permutation(120)
    b = DeepPartitionAggregation(6, 3, classes=[0, 1]).fit(X[perm], y[perm])
    assert np.array_equal(a.vote_counts(probe), b.vote_counts(probe))
    assert a.release() == b.release()


def test_dpa_with_one_partition_is_the_base_tree():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(200, 4))
    y = np.where(X[:, 0] + X[:, 1] ** 2 + 0.3 * rng.normal(size=200) > 0.8, "b", "a")
    probe = rng.normal(size=(300, 4))
    dpa = DeepPartitionAggregation(1, 3, classes=["a", "b"]).fit(X, y)
    tree = DecisionTreeClassifier(max_depth=3, random_state=0).fit(X, y)
    assert np.array_equal(dpa.predict(probe), tree.predict(probe))
    assert np.all(dpa.certified_radius(probe) == 0)  # one vote, margin 1 vs 0 (+1 tie term or floor(1/2))


def test_dpa_tie_goes_to_the_lowest_class_and_empty_partitions_abstain():
    X = np.array([[0.0], [1.0]])
    y = np.array([1, 0])
    dpa = DeepPartitionAggregation(50, 1, classes=[0, 1]).fit(X, y)
    V = dpa.vote_counts(np.array([[0.0]]))
    assert V.sum() == 2 and dpa.partition_counts_.sum() == 2
    assert sum(t is None for t in dpa.trees_) == 50 - np.count_nonzero(dpa.partition_counts_)
    if V[0, 0] == V[0, 1]:
        assert dpa.predict(np.array([[0.0]]))[0] == 0


def test_dpa_certified_accuracy_and_ledger():
    correct = np.array([True, True, False, True])
    radius = np.array([0, 3, 5, 1])
    assert np.allclose(certified_accuracy(correct, radius, [0, 1, 2, 4]), [0.75, 0.5, 0.25, 0.0])
    dpa = DeepPartitionAggregation(3, 2, classes=[0, 1]).fit(np.eye(4), [0, 1, 0, 1])
    assert dpa.privacy_ledger_.total_epsilon() == math.inf
    assert clone(dpa).get_params() == dpa.get_params()


@pytest.mark.parametrize("kw, match", [
    (dict(n_partitions=0), "n_partitions must be a positive integer, got 0"),
    (dict(n_partitions=2.5), "n_partitions must be a positive integer, got 2.5"),
    (dict(max_depth=-1), "max_depth must be a non-negative integer, got -1"),
    (dict(max_depth=0), "max_depth must be at least 1 for DPA's base trees, got 0"),
    (dict(classes=None), "classes must list at least two distinct labels, got None"),
])
def test_dpa_bad_parameters(kw, match):
    params = dict(n_partitions=3, max_depth=2, classes=[0, 1]) | kw
    with pytest.raises(ValueError, match=match):
        DeepPartitionAggregation(**params).fit(np.eye(3), [0, 1, 0])


def test_dpa_bad_data():
    with pytest.raises(ValueError, match="X must be finite.*nan"):
        DeepPartitionAggregation(3, classes=[0, 1]).fit([[0.0], [np.nan]], [0, 1])
    with pytest.raises(ValueError, match="y holds the label 2"):
        DeepPartitionAggregation(3, classes=[0, 1]).fit([[0.0], [1.0]], [0, 2])


# ----------------------------------------------------------------------------------------------- DP-LR
X6 = np.array([[0.1, 0.7], [0.3, 0.2], [0.45, 0.5], [0.6, 0.9], [0.8, 0.35], [0.95, 0.05]])
Y6 = np.array([0, 0, 1, 0, 1, 1])
B6 = [(0.0, 1.0), (0.0, 1.0)]


def test_dp_lr_noise_norm_follows_the_gamma_law():
    """coef_ - w* over 1500 fits: its norm is Gamma(dim, 2 / (n lambda eps)) (KS test) and its direction uniform
    (for dim = 3 a coordinate of a uniform direction is uniform on [-1, 1], Archimedes). Each KS test flags a
    correct implementation with probability 0.001 over seeds; the seed is fixed."""
    eps, lam, n = 0.7, 0.2, len(Y6)
    w_star = regularised_minimiser(unit_ball_map(X6, B6), np.where(Y6 == 1, 1.0, -1.0), lam)
    rng = np.random.default_rng(12)
    est = DPLogisticRegression(eps, lam, bounds=B6, classes=[0, 1])
    b = np.array([est.set_params(random_state=rng).fit(X6, Y6).coef_[0] - w_star for _ in range(1500)])
    norms = np.linalg.norm(b, axis=1)
    assert stats.kstest(norms, stats.gamma(a=3, scale=2.0 / (n * lam * eps)).cdf).pvalue > 0.001
    assert stats.kstest(b[:, 0] / norms, stats.uniform(-1, 2).cdf).pvalue > 0.001
    # and the noise law the estimator exposes is that one
    assert est.noise_.beta == pytest.approx(n * lam * eps / 2) and est.noise_.dim == 3


def test_gamma_norm_noise_logpdf_is_the_sampled_density():
    # dim 1: the Laplace density with scale 1 / beta
    g1 = GammaNormNoise(2.5, 1)
    t = np.linspace(-3, 3, 13)[:, None]
    assert np.allclose(g1.logpdf(t), stats.laplace(scale=1 / 2.5).logpdf(t[:, 0]))
    # dim 2: integrates to 1 on a grid, and the norm of sampled vectors matches norm_law() (KS, false alarm 0.001)
    g2 = GammaNormNoise(1.3, 2)
    h = 0.02
    grid = np.arange(-15, 15, h) + h / 2
    gx, gy = np.meshgrid(grid, grid)
    total = np.exp(g2.logpdf(np.stack((gx, gy), axis=-1))).sum() * h * h
    assert total == pytest.approx(1.0, abs=2e-3)
    draws = g2.batch(3000, np.random.default_rng(8))
    assert stats.kstest(np.linalg.norm(draws, axis=1), g2.norm_law().cdf).pvalue > 0.001
    with pytest.raises(ValueError, match="last dimension 2"):
        g2.logpdf(np.zeros(3))


@settings(max_examples=60, deadline=None, derandomize=True)
@given(seed=st.integers(0, 10_000), lam=st.sampled_from([0.01, 0.1, 1.0]))
def test_dp_lr_minimiser_moves_at_most_2_over_n_lambda_under_substitution(seed, lam):
    """Chaudhuri et al. (2011) Corollary 8, the premise of the claim: replacing one record (any values, even out
    of bounds, any label) moves the exact minimiser by at most 2 / (n lambda)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 12))
    X = rng.uniform(-0.5, 1.5, size=(n, 2))
    y = rng.integers(0, 2, n)
    X1, y1 = X.copy(), y.copy()
    X1[0] = rng.uniform(-3, 3, size=2)
    y1[0] = 1 - y[0]
    w0 = regularised_minimiser(unit_ball_map(X, B6), np.where(y == 1, 1.0, -1.0), lam)
    w1 = regularised_minimiser(unit_ball_map(X1, B6), np.where(y1 == 1, 1.0, -1.0), lam)
    assert np.linalg.norm(w0 - w1) <= 2.0 / (n * lam) * (1 + 1e-9)


def test_dp_lr_minimiser_is_exact():
    Z = unit_ball_map(X6, B6)
    s = np.where(Y6 == 1, 1.0, -1.0)
    w = regularised_minimiser(Z, s, 0.05)
    p = 1 / (1 + np.exp(s * (Z @ w)))
    grad = -(Z.T @ (s * p)) / len(s) + 0.05 * w
    assert np.linalg.norm(grad) < 1e-10
    # and it fits the data: the noise-free direction separates the classes the way the data do
    assert np.mean((Z @ w > 0) == (Y6 == 1)) >= 5 / 6


def test_unit_ball_map_uses_the_declared_bounds():
    X = np.array([[0.0, 10.0], [5.0, 20.0], [-7.0, 99.0], [2.5, 15.0]])
    bounds = [(0.0, 5.0), (10.0, 20.0)]
    Z = unit_ball_map(X, bounds, fit_intercept=False)
    assert np.all(np.linalg.norm(Z, axis=1) <= 1 + 1e-12)
    # the low corner maps to (-1, -1) / sqrt(2), the high corner to (1, 1) / sqrt(2), the centre to 0
    assert np.allclose(Z[0], -Z[1]) and np.allclose(np.abs(Z[0]), 1 / math.sqrt(2))
    assert np.allclose(Z[3], 0.0)
    # out-of-bounds values are clipped to the bound (row 2 equals the corner (low, high))
    assert np.allclose(Z[2], unit_ball_map([[0.0, 20.0]], bounds, fit_intercept=False)[0])
    # other bounds, other map: the map reads the declared bounds, not the data
    assert not np.allclose(unit_ball_map(X, [(-10.0, 10.0), (0.0, 100.0)], False), Z)
    Zi = unit_ball_map(X, bounds, fit_intercept=True)
    assert Zi.shape == (4, 3) and np.all(np.linalg.norm(Zi, axis=1) <= 1 + 1e-12) and np.all(Zi[:, 2] > 0)


@pytest.mark.parametrize("kw, X, match", [
    (dict(epsilon=0.0), X6, "epsilon must be a positive finite number, got 0.0"),
    (dict(epsilon=-1.0), X6, "epsilon must be a positive finite number, got -1.0"),
    (dict(reg_lambda=0.0), X6, "reg_lambda must be a positive finite number, got 0.0"),
    (dict(reg_lambda=-0.5), X6, "reg_lambda must be a positive finite number, got -0.5"),
    (dict(bounds=None), X6, "bounds is required"),
    (dict(bounds=[(0.0, 1.0)]), X6, r"bounds must have shape \(2, 2\).*got shape \(1, 2\)"),
    (dict(bounds=[0.0, 1.0]), X6, r"bounds must have shape \(2, 2\).*got shape \(2,\)"),
    (dict(bounds=[(0.0, 1.0), (1.0, 1.0)]), X6, r"bounds\[1\] must have low < high, got \(1.0, 1.0\)"),
    (dict(bounds=[(0.0, 1.0), (0.0, np.nan)]), X6, "bounds must be finite"),
    (dict(classes=[1]), X6, "classes must list at least two distinct labels, got \\[1\\]"),
    (dict(), np.where(X6 > 0.9, np.nan, X6), "X must be finite.*nan"),
])
def test_dp_lr_bad_input_names_parameter_and_value(kw, X, match):
    params = dict(epsilon=1.0, reg_lambda=0.1, bounds=B6, classes=[0, 1]) | kw
    with pytest.raises(ValueError, match=match):
        DPLogisticRegression(**params).fit(X, Y6)


def test_dp_lr_ledger_release_and_multiclass():
    est = DPLogisticRegression(1.0, 0.1, bounds=B6, classes=[0, 1], random_state=0).fit(X6, Y6)
    ledger = est.privacy_ledger_
    assert ledger.neighbouring == "substitute" and ledger.total_epsilon() == pytest.approx(1.0)
    assert ledger.charges[0].sensitivity == pytest.approx(2 / (6 * 0.1))
    r = est.release()
    assert r.ndim == 1 and r.dtype == float and r.size == 3
    assert np.array_equal(r, DPLogisticRegression(1.0, 0.1, bounds=B6, classes=[0, 1], random_state=0)
                          .fit(X6, Y6).release())
    assert clone(est).get_params() == est.get_params()
    # three classes: one-vs-rest with epsilon / 3 each, composed sequentially to epsilon
    y3 = np.array([0, 1, 2, 0, 1, 2])
    m = DPLogisticRegression(1.5, 0.1, bounds=B6, classes=[0, 1, 2], random_state=1).fit(X6, y3)
    assert m.coef_.shape == (3, 3) and m.privacy_ledger_.total_epsilon() == pytest.approx(1.5)
    assert [c.epsilon for c in m.privacy_ledger_.charges] == pytest.approx([0.5] * 3)
    assert set(m.predict(X6)) <= {0, 1, 2} and np.allclose(m.predict_proba(X6).sum(axis=1), 1.0)


def test_dp_lr_large_epsilon_recovers_the_non_private_fit():
    """At epsilon -> infinity the noise vanishes: accuracy of an easy linear problem is that of the exact fit."""
    rng = np.random.default_rng(2)
    X = rng.uniform(0, 1, size=(300, 2))
    y = (X[:, 0] > X[:, 1]).astype(int)
    m = DPLogisticRegression(1e9, 0.001, bounds=B6, classes=[0, 1], random_state=0).fit(X, y)
    assert np.mean(m.predict(X) == y) > 0.95


def test_remembered_minimisers_give_the_same_fits_and_forget_on_leaving():
    # deterministic (fixed seeds): the auditor's memo of the minimiser changes no release
    from reference.baselines import dp_logistic

    rng = np.random.default_rng(3)
    X, y = rng.random((40, 3)), rng.integers(0, 2, 40)
    make = lambda r: DPLogisticRegression(1.0, 0.1, bounds=[(0.0, 1.0)] * 3, classes=[0, 1], random_state=r)  # noqa: E731
    plain = [make(r).fit(X, y).coef_ for r in range(3)]
    calls = []
    original = dp_logistic._newton_minimiser
    try:
        dp_logistic._newton_minimiser = lambda *a: calls.append(1) or original(*a)
        with dp_logistic.remembered_minimisers():
            memo = [make(r).fit(X, y).coef_ for r in range(3)]
        assert len(calls) == 1  # one dataset, one minimiser computed
        make(0).fit(X, y)
        assert len(calls) == 2  # outside the block: computed again
    finally:
        dp_logistic._newton_minimiser = original
    for a, b in zip(plain, memo):
        np.testing.assert_array_equal(a, b)
