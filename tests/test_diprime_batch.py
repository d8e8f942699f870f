"""The batched DiPriMe path (reference.diprime_batch) against the reference learner.

(a) With every mechanism made deterministic by a huge epsilon, the batched
    path and the reference put the same records in the same leaves with the
    same leaf values, on hypothesis-generated tiny datasets.
(b) With noise on, ``audit.compare.compare_distributions`` accepts the batched
    path's releases against the audit target's wrapped reference on the
    target's tiny inputs. Each comparison is Holm-corrected at ``alpha``
    with a fixed seed: a correct implementation is rejected with probability
    at most ``alpha`` (written beside each).
(c) Deliberately wrong variants (leaf noise scale x 1.5; the median computed
    as if one more record sat at the lower bound) are rejected at the same
    sample size as the correct path is accepted.
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scipy import stats

from audit.compare import compare_distributions
from audit.targets.diprime import (X_TINY, Y_CLF, Y_REG, ReleaseMechanism, _forest, _gap_pair, _in_gap,
                                   _strict_pairs)
from reference.diprime import DiPriMeForestClassifier, DiPriMeForestRegressor
from reference.diprime_batch import DiPriMeBatch
from reference.diprime_batch_medians import (median_authors_flip, median_flip_grid, median_index_v000,
                                             median_lebesgue)
from reference.diprime_mechanisms import AuthorsFlipMedian, IndexMedianV000
from reference.diprime_tree import FLIP_GRID
from reference.mechanisms import IntervalExponential, PermuteAndFlip

B1, B2 = [(0.0, 1.0)], [(0.0, 1.0)] * 2
HUGE = 1e9


def _facts(task, n_classes=2):
    return {"target_bounds": (0.0, 1.0)} if task == "regression" else {"classes": list(range(n_classes))}


def _target_inputs(task, both=False):
    """The audit target's strict-claim datasets: X_TINY and, with ``both``, its first neighbour."""
    pair = _strict_pairs(task)[0]
    return [("X_TINY", pair.d0), (pair.description, pair.d1)] if both else [("X_TINY", pair.d0)]


# --------------------------------------------------------------------------- (a) noise off
def _reference_leaves(node, X, idx):
    if node.is_leaf:
        return [(tuple(idx.tolist()), np.atleast_1d(node.value))]
    left = X[idx, node.feature] < node.threshold
    return _reference_leaves(node.left, X, idx[left]) + _reference_leaves(node.right, X, idx[~left])


def _batch_leaves(forests, run, tree, X, idx, h=0):
    if forests.kind[run, tree, h] == 2:
        return [(tuple(idx.tolist()), np.atleast_1d(forests.value[run, tree, h]))]
    left = X[idx, forests.feature[run, tree, h]] < forests.threshold[run, tree, h]
    return (_batch_leaves(forests, run, tree, X, idx[left], 2 * h + 1)
            + _batch_leaves(forests, run, tree, X, idx[~left], 2 * h + 2))


def _same_leaves(a, b):
    assert [r for r, _ in a] == [r for r, _ in b]
    for (records, va), (_, vb) in zip(a, b):
        if records:  # an empty leaf's value is a fresh draw (uniform, or normalised noise), even at huge epsilon
            np.testing.assert_allclose(va, vb, atol=1e-6)


def _check_noise_off(task, X, y, depth, trees, seed, n_classes=2, **params):
    params = dict(epsilon=HUGE, n_estimators=trees, max_depth=depth, max_features=2, partition=trees == 1,
                  bounds=[(0.0, 1.0)] * X.shape[1], **_facts(task, n_classes), **params)
    cls = DiPriMeForestRegressor if task == "regression" else DiPriMeForestClassifier
    ref = cls(random_state=seed, **params).fit(X, y)
    fast = DiPriMeBatch(task, **params)
    forests = fast.fit_forests((X, y), 3, np.random.default_rng(seed))
    idx = np.arange(X.shape[0])
    for tree in range(trees):
        expected = _reference_leaves(ref.estimators_[tree], X, idx)
        for run in range(3):
            _same_leaves(_batch_leaves(forests, run, tree, X, idx), expected)


# Records off every threshold a depth-2 tree can draw: the grid points of a node range are multiples of 2**-32
# (2**16 points on (0, 1), then on a range whose ends are such points), and a threshold drawn exactly at a record's
# value sends it right, an event of probability about 1/2,049 per node even at huge epsilon (hypothesis found
# x = 0.5, 0.53125 with an empty left leaf). Off the grid, every split is the balanced one.
_distinct = st.lists(st.floats(0.001, 0.999).filter(lambda v: (v * 2.0 ** 32) % 1.0 != 0.0), min_size=8, max_size=8,
                     unique=True)


@given(x=_distinct, y=st.lists(st.floats(0.0, 1.0), min_size=8, max_size=8),
       labels=st.lists(st.integers(0, 2), min_size=8, max_size=8), size=st.sampled_from([4, 8]),
       depth=st.integers(1, 2), trees=st.integers(1, 2), seed=st.integers(0, 2**16),
       config=st.sampled_from([dict(variant="base"), dict(variant="exp"),
                               dict(variant="base", accounting="paper"), dict(variant="exp", accounting="paper"),
                               dict(version="v000", accounting="paper")]))
@settings(max_examples=40, deadline=None)
def test_noise_off_same_leaves_as_reference(x, y, labels, size, depth, trees, seed, config):
    """Huge epsilon: every median takes the balanced gap (distinct values, 4 or 8 records so that every
    node has an even count), the attribute choice is a tie between two identical columns that send
    the same records left, and the leaves carry their exact statistics (noise scale ~1e-9)."""
    xs = np.array(x[:size])
    X = np.column_stack((xs, xs))
    _check_noise_off("regression", X, np.array(y[:size]), depth, trees, seed, **config)
    _check_noise_off("classification", X, np.minimum(labels[:size], 1), depth, trees, seed, **config)
    _check_noise_off("classification", X, np.array(labels[:size]), depth, trees, seed, n_classes=3, **config)


def test_runs_in_chunks_same_law(monkeypatch):
    """Many chunks of one run each give n independent forests of the right shape (huge epsilon: all equal)."""
    import reference.diprime_batch as mod

    monkeypatch.setattr(mod, "_CHUNK_ELEMENTS", 1)
    xs = np.array([0.1, 0.3, 0.6, 0.7])
    m = DiPriMeBatch("classification", epsilon=HUGE, n_estimators=2, max_depth=2, partition=False, bounds=B2,
                     classes=[0, 1, 2])
    f = m.fit_forests((np.column_stack((xs, xs)), Y_CLF), 5, np.random.default_rng(0))
    assert f.kind.shape == (5, 2, 7) and f.value.shape == (5, 2, 7, 3)
    assert (f.kind == 2).sum(axis=2).tolist() == [[4, 4]] * 5
    np.testing.assert_allclose(f.value[:, :, 3:], np.broadcast_to(f.value[0, 0, 3:], (5, 2, 4, 3)), atol=1e-6)
    np.testing.assert_allclose(f.value[0, 0, 3:, 1], Y_CLF, atol=1e-6)  # one record per leaf
    with pytest.raises(ValueError, match="vectorises numerical features only"):
        DiPriMeBatch("regression", epsilon=1.0, bounds=[None], categories={0: [0, 1]},
                     target_bounds=(0, 1)).fit_forests((np.zeros((2, 1)), np.zeros(2)), 2, np.random.default_rng(0))


@given(x=st.lists(st.floats(0.001, 0.999), min_size=2, max_size=6, unique=True), y=st.lists(st.floats(0.0, 1.0),
       min_size=6, max_size=6), seed=st.integers(0, 2**16), paper=st.booleans())
@settings(max_examples=40, deadline=None)
def test_noise_off_flip_medians_same_leaves_as_reference(x, y, seed, paper):
    """DiPriMeFlip at huge epsilon, depth 1: the strict median (grid points, spec A6) when a grid point
    lies in the balanced gap; the authors' median (score 2 ln|I| - |2i - N|) when its best gap is unique."""
    xs = np.sort(np.array(x[:len(x) - len(x) % 2]))
    n = xs.size
    if paper:
        edges = np.concatenate(([0.0], xs, [1.0]))
        score = 2 * np.log(np.diff(edges)) - np.abs(2 * np.arange(n + 1) - n)
        top = np.sort(score)[-2:]
        assume(top[1] - top[0] > 1e-6)
    else:
        grid = np.arange(1, FLIP_GRID + 1) / (FLIP_GRID + 1)
        assume(np.any((grid > xs[n // 2 - 1]) & (grid <= xs[n // 2])))
    X = np.column_stack((xs, xs))
    _check_noise_off("regression", X, np.array(y[:n]), 1, 1, seed, variant="flip",
                     accounting="paper" if paper else "strict")


# --------------------------------------------------------------------------- the vectorised medians' laws
def _rows(x, n, extra=(0.95, 0.02)):
    """``n`` identical rows holding ``x`` plus non-member values (which must be ignored)."""
    values = np.broadcast_to(np.concatenate((x, extra)), (n, len(x) + len(extra)))
    member = np.broadcast_to(np.arange(values.shape[1]) < len(x), values.shape)
    return values, member, np.zeros(n), np.ones(n)


@pytest.mark.parametrize("fast, exact", [(median_lebesgue, IntervalExponential),
                                         (median_index_v000, IndexMedianV000),
                                         (median_authors_flip, AuthorsFlipMedian)])
def test_vectorised_gap_medians_have_the_mechanisms_law(fast, exact):
    # Kolmogorov-Smirnov against the mechanism's exact cdf, fixed seed: false-alarm rate 1e-3 per input
    rng = np.random.default_rng(12)
    for x in ([0.1, 0.15, 0.5, 0.52, 0.9], [0.3, 0.3, 0.7], []):
        r = fast(*_rows(np.array(x), 20_000), 1.5, rng)
        assert stats.kstest(r, lambda v: exact(1.5, (0.0, 1.0)).cdf(v, x)).pvalue > 1e-3


def test_grouped_flip_grid_median_has_the_permute_and_flip_law():
    # chi-square against PermuteAndFlip's exact pmf over the grid, fixed seed: false-alarm rate 1e-3 per input
    rng = np.random.default_rng(13)
    grid = np.arange(1, FLIP_GRID + 1) / (FLIP_GRID + 1)
    for x, eps in (([0.05, 0.3, 0.31, 0.62, 0.9], 2.0), ([0.5, 0.5, grid[3]], 0.7), ([], 1.0)):
        u = -np.abs(2.0 * np.searchsorted(np.sort(x), grid, side="left") - len(x))
        p = PermuteAndFlip(eps).pmf(u)
        r = median_flip_grid(*_rows(np.array(x), 50_000), eps, rng)
        k = np.rint(r * (FLIP_GRID + 1)).astype(int) - 1
        np.testing.assert_array_equal(r, grid[k])  # exactly the reference's grid points
        counts = np.bincount(k, minlength=FLIP_GRID)
        assert stats.chisquare(counts, 50_000 * p).pvalue > 1e-3


# --------------------------------------------------------------------------- formats and errors
def _shape_of(release, task, bins):
    """The release's skeleton, with the type (and grid membership) of every entry checked."""
    out = []
    for tree in release:
        assert isinstance(tree, tuple)
        for node in tree:
            if node[0] == "split":
                _, f, where = node
                assert type(f) is int and 0 <= f < 2
                assert (type(where) is float) if bins is None else (type(where) is int and 0 <= where < bins)
            else:
                _, v = node
                if task == "regression":
                    assert type(v) is float if bins is None else (v in ("low", "high") or
                                                                  (type(v) is int and 0 <= v < bins))
                else:
                    assert type(v) is tuple and len(v) == 2
                    assert all((type(c) is float) if bins is None else (type(c) is int and 0 <= c < bins) for c in v)
            out.append(node[0])
    return out


def test_release_format_is_the_targets():
    """Same tuples, types and grids as ReleaseMechanism's release of the reference, every draw."""
    rng = np.random.default_rng(1)
    for task, y in (("regression", Y_REG), ("classification", Y_CLF)):
        for bins in (2, None):
            ref = ReleaseMechanism(lambda t=task: _forest(t, epsilon=1.0, max_depth=2), bins, bins)
            fast = DiPriMeBatch(task, bins=bins, leaf_bins=bins, epsilon=1.0, n_estimators=1, max_depth=2,
                                max_features=2, bounds=B2, **_facts(task))
            skeleton = ["split", "split", "leaf", "leaf", "split", "leaf", "leaf"]
            for rel in [ref((X_TINY, y), rng) for _ in range(20)] + fast.batch((X_TINY, y), 200, rng):
                assert _shape_of(rel, task, bins) == skeleton
    out = DiPriMeBatch("regression", bins=2, leaf_bins=2, post=len, epsilon=1.0, n_estimators=3, max_depth=1,
                       bounds=B2, target_bounds=(0, 1)).batch((X_TINY, Y_REG), 5, rng)
    assert out == [(3,)] * 5  # wrapped in a 1-tuple, as ReleaseMechanism wraps it


def test_categorical_features_fall_back_to_the_reference():
    X = np.array([[0.0, 0.2], [1.0, 0.4], [2.0, 0.9], [1.0, 0.1]])
    m = DiPriMeBatch("classification", bins=2, epsilon=1.0, n_estimators=1, max_depth=2, bounds=[None, (0.0, 1.0)],
                     categories={0: [0, 1, 2]}, classes=[0, 1])
    assert not m.vectorised
    out = m.batch((X, Y_CLF), 20, np.random.default_rng(0))
    assert len(out) == 20 and all(rel[0][0][0] == "split" for rel in out)
    assert any(isinstance(rel[0][0][2], tuple) for rel in out)  # a categorical split: its categories sent left


@pytest.mark.parametrize("kwargs, match", [
    (dict(task="tree"), "task must be one of"),
    (dict(task="regression", random_state=0), "random_state is not a parameter"),
    (dict(task="regression", depth=2), r"takes no parameter\(s\) \['depth'\]"),
    (dict(task="regression", epsilon=-1.0), "epsilon"),
    (dict(task="regression", variant="flop"), "variant must be one of"),
    (dict(task="regression", bins=0), "bins must be an integer"),
])
def test_bad_parameters_name_themselves(kwargs, match):
    with pytest.raises(ValueError, match=match):
        DiPriMeBatch(**kwargs)


def test_bad_data_names_the_problem():
    m = DiPriMeBatch("regression", epsilon=1.0, bounds=B2)
    with pytest.raises(ValueError, match="target_bounds is required"):
        m.batch((X_TINY, Y_REG), 2, np.random.default_rng(0))
    m = DiPriMeBatch("classification", epsilon=1.0, bounds=B2, classes=[0, 1])
    with pytest.raises(ValueError, match="labels in classes"):
        m.batch((X_TINY, np.array([0, 1, 2, 0])), 2, np.random.default_rng(0))
    with pytest.raises(ValueError, match="n must be an integer"):
        m.batch((X_TINY, Y_CLF), 0, np.random.default_rng(0))


# --------------------------------------------------------------------------- (b) noise on, against the reference
#: releases per side of the default comparisons, (b) and (c) alike
N_POWER = 1500
STRICT = [(task, variant) for task in ("regression", "classification") for variant in ("base", "exp", "flip")]
PAPER = {  # the target's paper-mode configurations (one feature), regression
    "paper-leaf": dict(variant="base", accounting="paper"),
    "v000": dict(version="v000", accounting="paper"),
    "paper-flip": dict(variant="flip", accounting="paper"),
}
X_ONE = (np.array([[0.1], [0.45], [0.5], [0.8]]), np.array([0.2, 0.9, 0.4, 0.7]))


def _strict_pair(task, variant, eps=1.0, depth=1, bins=2, **kw):
    """The target's strict claim (depth 1, K = 2, bins 2) as the reference and as the batched path."""
    ref = ReleaseMechanism(lambda: _forest(task, epsilon=eps, variant=variant, max_depth=depth, **kw), bins, bins)
    params = dict(epsilon=eps, variant=variant, n_estimators=1, max_depth=depth, max_features=2, bounds=B2, **kw)
    return ref, dict(task=task, bins=bins, leaf_bins=bins, **params, **_facts(task))


def _paper_pair(config, bins=4):
    one = dict(n_estimators=1, max_depth=1, max_features=1, bounds=B1, target_bounds=(0.0, 1.0))
    ref = ReleaseMechanism(lambda: DiPriMeForestRegressor(epsilon=1.0, **one, **config), bins, bins)
    return ref, DiPriMeBatch("regression", bins=bins, leaf_bins=bins, epsilon=1.0, **one, **config)


@pytest.mark.parametrize("task, variant", STRICT)
def test_accepted_on_the_targets_input(task, variant):
    # N_POWER releases per side (as in (c)), alpha = 0.01: a correct batched path is rejected with probability <= 0.01
    ref, params = _strict_pair(task, variant)
    res = compare_distributions(DiPriMeBatch(**params), ref, _target_inputs(task), n_samples=N_POWER, alpha=0.01,
                                seed=3)
    assert not res.rejected, res.summary()


@pytest.mark.parametrize("name", sorted(PAPER))
def test_paper_modes_accepted(name):
    # N_POWER releases per side, alpha = 0.01: false-alarm rate <= 0.01
    ref, fast = _paper_pair(PAPER[name])
    res = compare_distributions(fast, ref, [("one feature", X_ONE)], n_samples=N_POWER, alpha=0.01, seed=4)
    assert not res.rejected, res.summary()


@pytest.mark.parametrize("name", ["v000", "paper-flip"])
def test_paper_claims_gap_indicator_accepted(name):
    """The target's paper claims as they run: unbinned release, post-processed to 'is the root threshold
    in the tiny gap', on its gap pair. N_POWER per side, alpha = 0.01 Holm over the two inputs:
    false-alarm rate <= 0.01."""
    one = dict(n_estimators=1, max_depth=1, max_features=1, bounds=B1, target_bounds=(0.0, 1.0))
    cfg = PAPER[name]
    ref = ReleaseMechanism(lambda: DiPriMeForestRegressor(epsilon=1.0, **one, **cfg), None, None, _in_gap())
    fast = DiPriMeBatch("regression", post=_in_gap(), epsilon=1.0, **one, **cfg)
    pair = _gap_pair()
    res = compare_distributions(fast, ref, [("one record", pair.d0), (pair.description, pair.d1)],
                                n_samples=N_POWER, alpha=0.01, seed=10)
    assert not res.rejected, res.summary()


# --------------------------------------------------------------------------- (c) wrong variants are rejected
class _LeafNoiseTooWide(DiPriMeBatch):
    """Wrong on purpose: leaf noise scale x 1.5 (leaf budget eps_l / 1.5)."""

    def _leaves(self, member, y, p, rng):
        bud = dataclasses.replace(p["budget"], eps_l=p["budget"].eps_l / 1.5)
        return super()._leaves(member, y, dict(p, budget=bud), rng)


def _median_with_a_phantom(values, member, lo, hi, eps, rng):
    """Wrong on purpose: the median as if one more record sat at the node's lower bound (rank off by one)."""
    values = np.column_stack((np.broadcast_to(lo[:, None], (lo.size, 1)), values))
    member = np.column_stack((np.ones((lo.size, 1), dtype=bool), member))
    return median_lebesgue(values, member, lo, hi, eps, rng)


class _MedianRankOff(DiPriMeBatch):
    def _median(self, est):
        return _median_with_a_phantom


#: a configuration that leaves room to see both flaws: epsilon 8, DiPriMeExp, depth 1, leaf grid of 4
POWER = dict(task="regression", variant="exp", eps=8.0, bins=4)


@pytest.mark.parametrize("candidate, wrong", [(DiPriMeBatch, False), (_LeafNoiseTooWide, True),
                                              (_MedianRankOff, True)], ids=["correct", "leaf-noise-x1.5",
                                                                           "median-rank-off"])
def test_wrong_variants_rejected_correct_accepted(candidate, wrong):
    # 1,500 releases per side, alpha = 0.01: the correct path is rejected with probability <= 0.01;
    # the wrong ones are rejected (their power at this size is shown by the slow sweep below)
    ref, params = _strict_pair(POWER["task"], POWER["variant"], POWER["eps"], bins=POWER["bins"])
    task = params.pop("task")
    res = compare_distributions(candidate(task, **params), ref, _target_inputs(task), n_samples=N_POWER, alpha=0.01,
                                seed=5)
    assert res.rejected == wrong, res.summary()


# --------------------------------------------------------------------------- slow: larger samples
@pytest.mark.release
@pytest.mark.parametrize("task, variant", STRICT)
def test_accepted_on_both_target_inputs_large(task, variant):
    # 6,000 releases per side on the target's dataset and its neighbour, for the depth-1 claim and the
    # depth-2 workload; alpha = 0.001 Holm over the two inputs: false-alarm rate <= 0.001 per comparison
    for depth in (1, 2):
        ref, params = _strict_pair(task, variant, depth=depth)
        res = compare_distributions(DiPriMeBatch(**params), ref, _target_inputs(task, both=True), n_samples=6_000,
                                    alpha=0.001, seed=6 + depth)
        assert not res.rejected, res.summary()


@pytest.mark.release
@pytest.mark.parametrize("name", sorted(PAPER))
def test_paper_modes_accepted_large(name):
    # 10,000 releases per side, alpha = 0.001: false-alarm rate <= 0.001
    ref, fast = _paper_pair(PAPER[name], bins=8)
    res = compare_distributions(fast, ref, [("one feature", X_ONE)], n_samples=10_000, alpha=0.001, seed=8)
    assert not res.rejected, res.summary()


@pytest.mark.release
def test_accepted_without_partition_and_with_three_trees():
    # paper partition (equal parts) and no partition, 3 trees: 4,000 per side, alpha = 0.001 each
    for extra in (dict(accounting="paper", partition=True), dict(partition=False)):
        make = (lambda e=extra: DiPriMeForestClassifier(epsilon=4.0, n_estimators=3, max_depth=1, max_features=2,
                                                        bounds=B2, classes=[0, 1], **e))
        ref = ReleaseMechanism(make, 2, 2)
        fast = DiPriMeBatch("classification", bins=2, leaf_bins=2, epsilon=4.0, n_estimators=3, max_depth=1,
                            max_features=2, bounds=B2, classes=[0, 1], **extra)
        X = np.vstack((X_TINY, X_TINY[::-1] * 0.9))
        res = compare_distributions(fast, ref, [("8 records", (X, np.tile(Y_CLF, 2)))], n_samples=4_000,
                                    alpha=0.001, seed=9)
        assert not res.rejected, res.summary()


@pytest.mark.release
def test_the_targets_verdicts_through_the_batched_path():
    """What the switch would give: the target's strict claims pass and its paper claims are violations,
    at the target's standard sample sizes, with the batched path as the mechanism (alpha = 0.01 each:
    a pass claim is wrongly flagged with probability <= 0.01)."""
    from audit.estimate import Claim, audit_pairs
    from audit.targets.diprime import ALPHA, N_PAPER, N_SAMPLES

    for task, variant in STRICT:
        fast = DiPriMeBatch(task, bins=2, leaf_bins=2, epsilon=1.0, variant=variant, n_estimators=1, max_depth=1,
                            max_features=2, bounds=B2, **_facts(task))
        res = audit_pairs(fast, _strict_pairs(task), Claim(1.0), n_samples=N_SAMPLES["standard"], alpha=ALPHA, seed=11)
        assert not res.violation, (task, variant, res.epsilon_lower)
    # the three cases of audit.targets.diprime.paper_claims, with the batched path
    one = dict(n_estimators=1, max_depth=1, max_features=1, bounds=B1, target_bounds=(0.0, 1.0))
    empty_leaf = ((np.array([[0.0]]), np.array([0.5])), (np.array([[0.0], [1.0]]), np.array([0.5, 1.0])))
    cases = [(PAPER["paper-leaf"], 2, None, [empty_leaf]), (PAPER["v000"], None, _in_gap(), [_gap_pair()]),
             (PAPER["paper-flip"], None, _in_gap(), [_gap_pair()])]
    for cfg, bins, post, pairs in cases:
        fast = DiPriMeBatch("regression", bins=bins, leaf_bins=bins, post=post, epsilon=1.0, **one, **cfg)
        res = audit_pairs(fast, pairs, Claim(1.0), n_samples=N_PAPER["standard"], alpha=ALPHA, seed=12)
        assert res.violation, (cfg, res.epsilon_lower)
