"""The one-sample oracle (``compare --exact``, audit.engine.comparison.exact_oracle) against the exact laws.

Each acceptance test runs the one-sample G test at alpha 0.01 with a fixed seed: a correct sampler is
called different with probability at most 0.01 (the laws' interval widths are taken out of alpha). Each
rejection test uses a candidate that changes one detail of the algorithm; at 2,000 draws they are rejected
at the smallest Monte Carlo p-value. The slow test counts false alarms over 200 seeds.
"""
from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from functools import partial

import numpy as np
import pytest
from scipy import stats

from audit.engine.comparison.exact_oracle import OTHER, CellLaw, compare_exact, detectable_difference_one_sample, \
    g_test_one_sample, one_sample_test
from audit.engine.comparison.compare import detectable_difference
from audit.results.learner_references import LEARNERS, fitted_mechanism
from audit.oracle.exact_laws import EXACT_REFERENCES, exact_reference
from audit.oracle.learner_cases import BudgetOffByOneLevel, TiesToLastFeature, _Release
from audit.diprime.certificate import TripleLeafBudget
from audit.random_trees.claims import OneTreeScaleForest
from reference.privatree.batch import PrivaTreeBatch

P = EXACT_REFERENCES["privatree"]
R = EXACT_REFERENCES["random-trees"]
D = EXACT_REFERENCES["diprime-flip-classifier"]


def _laws(ref):
    return [ref.law(ref.params, *data) for _, data in ref.inputs]


def _learner(ref, cls, fast=True):
    return fitted_mechanism(cls, ref.params, ref.learner_reference(), True, fast=fast, output="discrete")


def test_cell_laws_are_probability_laws_within_their_widths():
    for ref in (P, R, D):
        for law in _laws(ref):
            assert sum(law.lower.values()) <= 1.0 + 1e-12 <= sum(law.upper.values()) + 2e-12
            assert sum(law.midpoints().values()) == pytest.approx(1.0, abs=1e-12)
            # 8,000 draws keep the widths' share of alpha 0.01 below 0.005 (module docstring)
            assert 8_000 * law.total_variation_slack < 0.005


def test_a_cell_law_refuses_intervals_that_hold_no_law():
    with pytest.raises(ValueError, match="lower and upper must name the same cells"):
        CellLaw({"a": 0.5}, {"b": 0.5})
    with pytest.raises(ValueError, match="cell 'a' has"):
        CellLaw({"a": 0.6, "b": 0.4}, {"a": 0.5, "b": 0.5})
    with pytest.raises(ValueError, match="upper ends to 0.9"):
        CellLaw({"a": 0.4, "b": 0.4}, {"a": 0.45, "b": 0.45})


def test_the_g_test_calibrates_and_rejects():
    p = np.array([0.5, 0.3, 0.2])
    assert g_test_one_sample([500, 300, 200], p)[1] == 1.0  # the expected counts themselves
    assert g_test_one_sample([600, 250, 150], p, n_permutations=999)[1] == pytest.approx(1e-3)
    # its Monte Carlo p-values are (about) uniform under the null: 300 draws, KS at 1e-3 (false alarm 1e-3)
    rng = np.random.default_rng(11)
    ps = [g_test_one_sample(rng.multinomial(200, p), p, n_permutations=499, seed=k)[1] for k in range(300)]
    assert stats.kstest(ps, "uniform").pvalue > 1e-3


def test_a_release_the_law_cannot_produce_fails_outright():
    law = CellLaw({"a": 0.5, "b": 0.5}, {"a": 0.5, "b": 0.5}, cell=lambda r: r if r in ("a", "b") else OTHER)
    test, _, p, _ = one_sample_test(law, Counter({"a": 10, "b": 9, "c": 1}))
    assert p == 0.0 and "impossible" in test


def test_one_sample_needs_half_the_draws_of_two_sample_at_worst():
    # the stated detectable differences: n one-sample draws against 2n per side
    for n in (1_000, 8_000):
        assert detectable_difference_one_sample(n, 0.01, 2) == pytest.approx(detectable_difference(2 * n, 0.01, 2))


@pytest.mark.parametrize("ref,make", [
    (P, lambda: _learner(P, LEARNERS["privatree"].load(), fast=False)),
    (P, lambda: PrivaTreeBatch(edges=None, **P.params)),
    (R, lambda: _learner(R, LEARNERS["random-trees"].load(), fast=False)),
    (R, lambda: _learner(R, LEARNERS["random-trees"].load())),
    (D, lambda: _learner(D, D.load(), fast=False)),
    (D, lambda: _learner(D, D.load())),
], ids=["privatree-fits", "privatree-batched", "random-trees-fits", "random-trees-batched", "diprime-fits",
        "diprime-batched"])
def test_the_reference_and_its_batched_paths_are_accepted(ref, make):
    res = compare_exact(make(), ref.inputs, _laws(ref), n_samples=2_000, alpha=0.01, seed=5)
    assert not res.rejected, res.summary()


@pytest.mark.parametrize("ref,make", [
    (P, lambda: _Release(partial(BudgetOffByOneLevel, **P.params))),
    (P, lambda: TiesToLastFeature(**P.params)),
    (R, lambda: _learner(R, OneTreeScaleForest)),
    (D, lambda: _learner(D, TripleLeafBudget)),
], ids=["budget-off-by-one-level", "ties-to-last-feature", "one-tree-scale", "diprime-triple-leaf-budget"])
def test_the_oracles_wrong_candidates_are_rejected(ref, make):
    res = compare_exact(make(), ref.inputs, _laws(ref), n_samples=2_000, alpha=0.01, seed=5)
    assert res.rejected and min(r.p_adjusted for r in res.rows) <= 1e-3, res.summary()


def test_too_many_draws_for_the_laws_widths_is_an_error():
    with pytest.raises(ValueError, match="use at most"):
        compare_exact(_learner(R, LEARNERS["random-trees"].load()), R.inputs, _laws(R), n_samples=10**6, alpha=0.01)


def test_unknown_exact_reference_lists_those_with_a_law():
    with pytest.raises(ValueError, match="references with one: privatree, random-trees, diprime-flip-classifier"):
        exact_reference("lpdt")


def _cli(*args, tmp_path):
    return subprocess.run([sys.executable, "-m", "audit", "compare", *args, "--out", str(tmp_path), "--quiet",
                           "--samples", "1000"], capture_output=True, text=True)


def test_cli_accepts_the_reference_and_rejects_a_wrong_class(tmp_path):
    ok = _cli("reference.random_trees:RandomDecisionForestClassifier", "--reference", "random-trees", "--exact",
              "--format", "json", tmp_path=tmp_path)
    assert ok.returncode == 0, ok.stderr
    report = json.loads((tmp_path / "compare-reference.random_trees-RandomDecisionForestClassifier-vs-random-trees-exact"
                         / "report.json").read_text())
    assert report["comparisons"][0]["verdict"] == "same"
    bad = _cli("audit.random_trees.claims:OneTreeScaleForest", "--reference", "random-trees", "--exact",
               tmp_path=tmp_path)
    assert bad.returncode == 1, bad.stderr


@pytest.mark.parametrize("args,message", [
    (["--reference", "lpdt", "--exact"], "no exact law for the reference 'lpdt'"),
    (["--reference", "privatree", "--exact", "--noise", "off"], "takes neither --noise off"),
    (["--reference", "privatree", "--exact", "--params", '{"max_bins": 4}'], "out of reach"),
])
def test_cli_errors_name_the_problem(args, message, tmp_path):
    res = _cli("reference.privatree:PrivaTreeClassifier", *args, tmp_path=tmp_path)
    assert res.returncode == 2 and message in res.stderr, res.stderr


@pytest.mark.release
@pytest.mark.parametrize("ref,make", [(P, lambda: PrivaTreeBatch(edges=None, **P.params)),
                                      (R, lambda: _learner(R, LEARNERS["random-trees"].load())),
                                      (D, lambda: _learner(D, D.load()))],
                         ids=["privatree-batched", "random-trees-batched", "diprime-batched"])
def test_false_alarm_rate_over_200_seeds(ref, make):
    """A batched path (the reference's law) at alpha 0.05, 1,000 draws per input and 200 seeds: the false
    alarms are at most Binomial(200, 0.05)'s 0.999 quantile, 21 (this test's own false-alarm rate 1e-3;
    measured: 7, 11 and 9 alarms; the forest 10 before its leaf values (0, 1) and (1, 0) got cells of their own)."""
    laws, cand = _laws(ref), make()
    alarms = sum(compare_exact(cand, ref.inputs, laws, n_samples=1_000, alpha=0.05, seed=s).rejected
                 for s in range(200))
    assert alarms <= stats.binom.ppf(0.999, 200, 0.05), alarms
