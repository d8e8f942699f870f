"""The DiPriMe cell laws of two datasets (audit.diprime.cell_law) against the batched sampler and pair_loss.

Each sampler test draws 20,000 full releases (``bins=None``) with a fixed seed and runs the one-sample G test
(:func:`audit.engine.comparison.exact_oracle.one_sample_test`) at level 1e-3: a sampler with the law's distribution fails
it with probability at most 1e-3 per test (plus ``n`` times the law's total-variation slack, about 2e-5 here),
so the 12 acceptance tests raise a false alarm with probability at most about 1.2%.
"""
from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from audit.diprime.cell_law import cell_loss, pair_cell_laws
from audit.diprime.claims import _strict_pairs
from audit.diprime.exact_law import pair_loss
from audit.engine.comparison.exact_oracle import OTHER, one_sample_test
from reference.diprime import DiPriMeForestClassifier, DiPriMeForestRegressor
from reference.diprime.batch import DiPriMeBatch

N = 20_000
LEVEL = 1e-3
TASKS = {"classification": (DiPriMeForestClassifier, {"classes": [0, 1]}),
         "regression": (DiPriMeForestRegressor, {"target_bounds": (0.0, 1.0)})}
CONFIGS = [(task, variant) for task in TASKS for variant in ("flip", "exp", "base")]


def _params(task, variant, eps, **kw):
    return dict(n_estimators=1, max_depth=1, max_features=2, bounds=[(0.0, 1.0)] * 2, epsilon=eps, variant=variant,
                **TASKS[task][1], **kw)


def _laws(task, variant, eps, pair):
    return pair_cell_laws(_params(task, variant, eps), pair.d0, pair.d1, cls=TASKS[task][0])


def _counts(task, params, data, seed):
    return Counter(DiPriMeBatch(task, bins=None, leaf_bins=None, **params).batch(data, N,
                                                                                np.random.default_rng(seed)))


@pytest.mark.parametrize("task,variant", CONFIGS)
def test_the_batched_sampler_follows_the_cell_laws(task, variant):
    pair = _strict_pairs(task)[1]  # add a record at the corner (0, 0)
    laws = _laws(task, variant, 1.0, pair)
    for k, (law, data) in enumerate(zip(laws, (pair.d0, pair.d1))):
        counts = _counts(task, _params(task, variant, 1.0), data, 200 + k)
        assert sum(v for r, v in counts.items() if law.cell(r) == OTHER) == 0  # every node is named
        _, _, p, diffs = one_sample_test(law, counts, seed=k)
        assert p > LEVEL, (k, p, diffs)


@pytest.mark.parametrize("task,variant", CONFIGS)
def test_a_sampler_at_another_epsilon_is_rejected(task, variant):
    pair = _strict_pairs(task)[1]
    law = _laws(task, variant, 1.0, pair)[0]
    counts = _counts(task, _params(task, variant, 1.5), pair.d0, 7)
    _, _, p, _ = one_sample_test(law, counts, seed=0)
    assert p < LEVEL


@pytest.mark.parametrize("task,variant", CONFIGS)
def test_the_cells_loss_is_within_the_release_loss(task, variant):
    for eps in (1.0, 2.0):
        for pair in _strict_pairs(task):
            law0, law1 = _laws(task, variant, eps, pair)
            assert set(law0.upper) == set(law1.upper)
            lo, up = cell_loss(law0, law1)
            exact = pair_loss(_params(task, variant, eps), pair.d0, pair.d1, cls=TASKS[task][0])
            assert lo <= exact.upper + 1e-9  # coarsening is post-processing
            assert lo >= exact.lower - 1e-8  # and the cells keep its lower end (they hold its witness values)
            assert lo <= up


def test_one_dataset_twice_gives_one_law_of_loss_zero():
    # audit.oracle.exact_laws.diprime_cell_law (compare --exact's DiPriMeFlip reference) is this law
    pair = _strict_pairs("classification")[0]
    law0, law1 = pair_cell_laws(_params("classification", "flip", 4.0), pair.d0, pair.d0)
    assert law0.lower == law1.lower and law0.upper == law1.upper
    assert cell_loss(law0, law1)[0] == 0.0


@pytest.mark.parametrize("bad,name", [(dict(max_depth=2), "max_depth"), (dict(n_estimators=2), "n_estimators"),
                                      (dict(accounting="paper", variant="exp"), "accounting")])
def test_parameters_beyond_the_law_are_named(bad, name):
    pair = _strict_pairs("classification")[0]
    params = dict(_params("classification", "flip", 1.0), **bad)
    with pytest.raises(ValueError, match=name):
        pair_cell_laws(params, pair.d0, pair.d1)


def test_a_variant_beyond_the_law_is_named():
    pair = _strict_pairs("classification")[0]
    with pytest.raises(ValueError, match="variant"):
        pair_cell_laws(dict(_params("classification", "flip", 1.0), variant="nope"), pair.d0, pair.d1)


# ------------------------------------------------------------------ DiPriMeFlip at depth 2: the extra record's path
def _depth2_pair(task):
    """The depth-2 rows' data of audit.diprime.claims (seed 0): 8 records, the last one removed."""
    from audit.engine.estimation.neighbours import add_remove_pairs

    rng = np.random.default_rng(0)
    X8 = np.round(rng.random((8, 2)), 3)
    y8 = np.round(rng.random(8), 3) if task == "regression" else rng.integers(0, 2, 8)
    return add_remove_pairs(X8, y8, bounds=[(0.0, 1.0)] * 2, classes=[0, 1], remove=[7], corners=1)[0]


@pytest.mark.parametrize("task", list(TASKS))
def test_the_path_laws_follow_the_sampler_and_keep_the_whole_loss_at_depth_2(task):
    """Sampler against the path law (2 x 20,000 draws, level 1e-3 each), a sampler at 1.5 times epsilon rejected,
    and the path cells' loss equal to the release's (the cells off the path are the same under both datasets)."""
    from audit.diprime.cell_law import path_cell_laws

    pair = _depth2_pair(task)
    params = dict(_params(task, "flip", 1.0), max_depth=2)
    laws = path_cell_laws(params, pair.d0, pair.d1, cls=TASKS[task][0])
    for k, (law, data) in enumerate(zip(laws, (pair.d0, pair.d1))):
        _, _, p, diffs = one_sample_test(law, _counts(task, params, data, 300 + k), seed=k)
        assert p > LEVEL, (k, p, diffs)
    _, _, p, _ = one_sample_test(laws[0], _counts(task, dict(params, epsilon=1.5), pair.d0, 9), seed=0)
    assert p < LEVEL
    loss = pair_loss(params, pair.d0, pair.d1, cls=TASKS[task][0])
    lo, _ = cell_loss(*laws)
    assert loss.lower - 1e-8 <= lo <= loss.upper + 1e-8


def test_the_path_law_needs_add_remove_neighbours_and_flip():
    from audit.diprime.cell_law import path_cell_laws

    pair = _depth2_pair("classification")
    params = dict(_params("classification", "flip", 1.0), max_depth=2)
    with pytest.raises(ValueError, match="add/remove neighbours"):
        path_cell_laws(params, pair.d0, pair.d0)
    with pytest.raises(ValueError, match="variant='flip'"):
        path_cell_laws(dict(params, variant="exp"), pair.d0, pair.d1)


def test_a_strict_claim_row_with_its_law_passes_and_shows_the_truth():
    """One strict row of the diprime target at the quick budget (10,000 draws per input, alpha 0.01: a false
    alarm has probability at most 0.01 and is fixed by the seed): the bound stays under the exact loss, which
    stays under the claim, and reaches at least 0.8 of the attainable bound."""
    from audit.diprime.claims import N_LAW, _batch, _pair_law, _params as claim_params
    from audit.engine.estimation.estimate import Claim
    from audit.engine.exact_law.law_event import audit_pairs_by_law

    pairs = _strict_pairs("classification")
    params = claim_params("classification", epsilon=1.0, variant="flip")
    res = audit_pairs_by_law(_batch("classification", bins=None, leaf_bins=None, epsilon=1.0, variant="flip"), pairs,
                             [_pair_law("classification", params, p) for p in pairs], Claim(1.0),
                             n_samples=N_LAW["quick"], alpha=0.01, seed=0)
    lo, hi = res.exact_loss
    assert not res.violation and 0 < res.epsilon_lower <= hi <= 1.0
    assert res.tightness >= 0.8
