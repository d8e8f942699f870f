"""The fast-path protocol (reference.fast_path): learners declare a batched sampler of their releases,
``learner_mechanism`` uses it, and a subclass that changes a step of the algorithm never inherits it."""
import numpy as np
import pytest

from audit import learner_mechanism
from audit.compare import compare_distributions
from audit.results.learner_references import LEARNERS, fitted_mechanism
from audit.oracle_learner_cases import BudgetOffByOneLevel, ThresholdOffByOneBin
from reference.baselines.dp_ert import DPExtraTreesRegressor
from reference.diprime import DiPriMeForestClassifier, DiPriMeForestRegressor
from reference.diprime_batch import DiPriMeBatch
from reference.fast_path import batched_sampler, overrides_nothing
from reference.privatree import PrivaTreeClassifier
from reference.privatree_batch import PrivaTreeBatch

PT = LEARNERS["privatree"]
DP = LEARNERS["diprime-regressor"]


class Renamed(PrivaTreeClassifier):
    """The same algorithm under another name."""


class OwnFit(PrivaTreeClassifier):
    def fit(self, X, y):
        return super().fit(X, y)


def test_learner_mechanism_uses_the_declared_sampler():
    m = learner_mechanism(lambda: PrivaTreeClassifier(**PT.params))
    assert isinstance(m._sampler(), PrivaTreeBatch)
    out = m.batch(PT.inputs[1][1], 50, np.random.default_rng(0))
    assert len(out) == 50 and all(isinstance(o, tuple) and o[0] in ("node", "leaf") for o in out)
    assert isinstance(learner_mechanism(lambda: Renamed(**PT.params))._sampler(), PrivaTreeBatch)


@pytest.mark.parametrize("cls", [OwnFit, ThresholdOffByOneBin, BudgetOffByOneLevel])
def test_a_subclass_that_overrides_a_step_falls_back_to_its_own_code(cls):
    assert learner_mechanism(lambda: cls(**PT.params))._sampler() is None


def test_diprime_declares_its_batch_only_for_the_unchanged_classes():
    est = DiPriMeForestRegressor(**DP.params)
    assert isinstance(batched_sampler(est, bins=4, leaf_bins=4), DiPriMeBatch)
    assert batched_sampler(DPExtraTreesRegressor(**LEARNERS["dp-ert-regressor"].params), bins=4) is None
    assert overrides_nothing(type("Same", (DiPriMeForestClassifier,), {}), DiPriMeForestClassifier)
    assert not overrides_nothing(DPExtraTreesRegressor, DiPriMeForestRegressor)
    assert not overrides_nothing(PrivaTreeClassifier, DiPriMeForestRegressor)


@pytest.mark.parametrize("name", ["privatree", "diprime-regressor", "diprime-classifier", "random-trees"])
def test_the_fast_path_has_the_slow_paths_law(name):
    # 1,000 draws per side and public input, G tests Holm-corrected at alpha = 0.01: false-alarm rate <= 0.01
    ref = LEARNERS[name]
    fast = fitted_mechanism(ref.load(), ref.params, ref, True)
    slow = fitted_mechanism(ref.load(), ref.params, ref, True, fast=False)
    assert fast._sampler() is not None and slow._sampler() is None
    res = compare_distributions(fast, slow, ref.inputs, n_samples=1000, alpha=0.01, seed=2)
    assert not res.rejected, res.summary()


def test_random_forest_declares_its_batch_only_for_the_unchanged_class():
    from reference.random_trees import RandomDecisionForestClassifier

    params = LEARNERS["random-trees"].params
    assert batched_sampler(RandomDecisionForestClassifier(**params)) is not None

    class Louder(RandomDecisionForestClassifier):
        def _noise_scale(self, k):
            return super()._noise_scale(k) / 2

    assert batched_sampler(Louder(**params)) is None


def test_a_learner_finds_its_batched_sampler_through_the_registry():
    """DiPriMe's forest reaches its batch through ``reference.fast_path.registered`` (no import of the batch's
    module, which imports the forest); a class without one is a LookupError naming it."""
    from reference.diprime import DiPriMeBatch, DiPriMeForestClassifier, DiPriMeForestRegressor
    from reference.fast_path import registered

    assert registered(DiPriMeForestRegressor) is DiPriMeBatch and registered(DiPriMeForestClassifier) is DiPriMeBatch
    with pytest.raises(LookupError, match="'dict'"):
        registered(dict)
