"""The oracle on whole learner releases (audit.oracle_learner_cases): fast paths accepted, subtle bugs rejected.

Every comparison is a G test per public input, Holm-corrected, at alpha = 0.01 with a fixed seed: a correct
candidate is rejected with probability at most 0.01 (its false-alarm rate). The wrong candidates' sample
sizes are the smallest of the oracle report's sweep at which they are caught (reports/oracle/report.md).
"""
import numpy as np
import pytest

import reference.privatree.learner as privatree_module
from audit.compare import compare_distributions
from audit.oracle_learner_cases import (PRIVATREE_INPUTS, PRIVATREE_PARAMS, BudgetOffByOneLevel, ThresholdOffByOneBin,
                                        TiesToLastFeature, learner_cases, learner_references)
from reference.privatree import PrivaTreeClassifier

pytestmark = pytest.mark.filterwarnings("ignore:ks_2samp. Exact calculation unsuccessful:RuntimeWarning")

ALPHA = 0.01
CASES = {cid: (ref, make, expected) for cid, ref, _, make, expected in learner_cases()}


def _compare(cid, n, seed):
    ref, make, _ = CASES[cid]
    factory, params, inputs = learner_references()[ref]
    return compare_distributions(make(), factory(**params), inputs, n_samples=n, alpha=ALPHA, seed=seed)


@pytest.mark.parametrize("cid", ["privatree-batched", "diprime-batched"])
def test_fast_paths_are_accepted(cid):
    # 1,000 releases per side; false-alarm rate <= ALPHA = 0.01
    res = _compare(cid, 1000, seed=3)
    assert not res.rejected, res.summary()


@pytest.mark.parametrize("cid", ["privatree-budget-off-by-one-level", "privatree-threshold-off-by-one-bin",
                                 "privatree-ties-to-last-feature"])
def test_subtly_wrong_privatree_is_rejected(cid):
    # 1,000 releases per side (the smallest n of the report's sweep; the measured p-values there are < 1e-40)
    res = _compare(cid, 1000, seed=3)
    assert res.rejected, res.summary()


@pytest.mark.release
def test_diprime_leaf_noise_ten_percent_too_large_is_rejected():
    # 20,000 releases per side (caught from 5,000 in the report's sweep); the correct path at the same size
    # is accepted (false-alarm rate <= 0.01)
    assert _compare("diprime-leaf-noise-1.1", 20_000, seed=4).rejected
    assert not _compare("diprime-batched", 20_000, seed=4).rejected


# ----------------------------------------------------------------------------- the candidates do what they say
NOISE_OFF = dict(PRIVATREE_PARAMS, epsilon=1e9)


def test_threshold_candidate_moves_the_boundary_one_bin_with_the_noise_off():
    X, y = PRIVATREE_INPUTS[0][1]  # the best boundary is x <= 0.5, in the middle of the 4 bins
    ref = PrivaTreeClassifier(random_state=0, **NOISE_OFF).fit(X, y).release()
    off = ThresholdOffByOneBin(random_state=0, **NOISE_OFF).fit(X, y).release()
    assert ref[0] == off[0] == "node" and ref[1] == off[1]
    assert off[2] == min(ref[2] + 1, NOISE_OFF["max_bins"] - 2) and off[2] != ref[2]


def test_ties_candidate_equals_the_reference_when_there_is_no_tie():
    X, y = PRIVATREE_INPUTS[1][1]
    # x1 is x0 reversed: its boundary 2 is the mirror image of x0's boundary 0, an exact tie (the float formula
    # once rounded it apart); the reference takes the first feature, the candidate the last
    assert PrivaTreeClassifier(random_state=0, **NOISE_OFF).fit(X, y).release()[1:3] == (0, 0)
    assert TiesToLastFeature(**NOISE_OFF)((X, y), np.random.default_rng(0))[1:3] == (1, 2)
    X = np.column_stack((X[:, 0], np.full(len(y), 0.3)))  # x1 in one bin: no candidate there, so no tie
    ref = PrivaTreeClassifier(random_state=0, **NOISE_OFF).fit(X, y).release()
    assert TiesToLastFeature(**NOISE_OFF)((X, y), np.random.default_rng(0)) == ref
    Xt, yt = PRIVATREE_INPUTS[0][1]  # twin features: an exact tie, the reference takes feature 0
    assert PrivaTreeClassifier(random_state=0, **NOISE_OFF).fit(Xt, yt).release()[1] == 0
    assert TiesToLastFeature(**NOISE_OFF)((Xt, yt), np.random.default_rng(0))[1] == 1


def test_budget_candidate_spends_d_over_d_plus_one_of_the_node_budget_and_restores_the_rule():
    X, y = PRIVATREE_INPUTS[0][1]
    params = dict(PRIVATREE_PARAMS, max_depth=2)
    ref = PrivaTreeClassifier(random_state=0, **params).fit(X, y)
    off = BudgetOffByOneLevel(random_state=0, **params).fit(X, y)
    assert off.budget_["node_num"] == pytest.approx(ref.budget_["node_num"] * 2 / 3)
    assert off.budget_["leaf"] == ref.budget_["leaf"]
    assert off.privacy_ledger_.total_epsilon() < ref.privacy_ledger_.total_epsilon() <= params["epsilon"] + 1e-12
    assert privatree_module.budget_split.__name__ == "budget_split"  # the module's rule is restored
    with pytest.raises(ValueError):
        BudgetOffByOneLevel(**dict(params, epsilon=-1.0)).fit(X, y)
    assert privatree_module.budget_split.__name__ == "budget_split"  # restored after an error too
