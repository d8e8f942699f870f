"""DPGDF's and BDPT's exact laws (audit.baselines_law.dpgdf_tree, .bdpt_tree) against their samplers, and the
published gaps as exact losses.

Goodness of fit: chi-square over the releases of each learner's ``release()`` (3,000 fits, fixed seeds),
cells of expected count below 5 pooled (tests/law_fit.py), false-alarm rate 1e-3 per configuration. A
seeded mutant spending twice its epsilon must be rejected at p < 1e-6.
"""
from __future__ import annotations

import collections
import math

import numpy as np
import pytest

from audit.baselines_law import bdpt_tree, dpgdf_tree
from audit.results.certify import certify_domain
from audit.privatree.certificate import baseline_domains
from audit.privatree.exact_law import laws_pair_loss
from law_fit import pooled_pvalue, twice_epsilon
from reference.baselines.bdpt import BDPTClassifier
from reference.baselines.dpgdf import DPGDFClassifier

CATS = {0: [0, 1], 1: [0, 1]}
X, Y = np.array([[0, 1], [1, 1], [1, 0], [0, 0]]), np.array([0, 1, 1, 0])
DPGDF = dict(epsilon=2.0, max_depth=2, categories=CATS, classes=[0, 1], min_samples_split=2)
BDPT = dict(epsilon=2.0, max_depth=2, categories=CATS, classes=[0, 1])
BDPT_NUM = dict(epsilon=2.0, max_depth=1, classes=[0, 1], merge_samples=2)
XN, YN = np.array([[0.25], [0.5], [0.75]]), np.array([0, 1, 0])

CASES = {
    "DPGDF": (DPGDFClassifier, dpgdf_tree.release_law, DPGDF, X, Y),
    "BDPT categorical": (BDPTClassifier, bdpt_tree.release_law, BDPT, X, Y),
    "BDPT numerical": (BDPTClassifier, bdpt_tree.release_law, BDPT_NUM, XN, YN),
}


def _releases(cls, params, X, y, n=3000):
    return collections.Counter(cls(**params, random_state=s).fit(X, y).release() for s in range(n))


@pytest.mark.parametrize("name", sorted(CASES))
def test_law_matches_the_sampler(name):
    cls, law_of, params, X, y = CASES[name]
    law = law_of(params, X, y)
    assert sum(law.lower.values()) <= 1.0 <= sum(law.upper.values()) + 1e-12 and law.width < 1e-9
    assert pooled_pvalue(dict(law.lower), _releases(cls, params, X, y)) > 1e-3


@pytest.mark.parametrize("name", ["DPGDF", "BDPT categorical"])
def test_an_altered_sampler_is_rejected(name):
    cls, law_of, params, X, y = CASES[name]
    law = law_of(params, X, y)
    p = pooled_pvalue(dict(law.lower), _releases(twice_epsilon(cls), params, X, y))
    assert p < 1e-6, p


def test_beyond_the_limits_a_value_error_names_the_parameter():
    with pytest.raises(ValueError, match="max_depth=4"):
        dpgdf_tree.release_law(dict(DPGDF, max_depth=4), X, Y)
    with pytest.raises(ValueError, match="classes="):
        dpgdf_tree.release_law(dict(DPGDF, classes=[0, 1, 2]), X, Y)
    with pytest.raises(ValueError, match="categories="):
        dpgdf_tree.release_law(dict(DPGDF, categories={0: [0, 1]}), X, Y)
    with pytest.raises(ValueError, match="max_depth=4"):
        bdpt_tree.release_law(dict(BDPT, max_depth=4), X, Y)
    with pytest.raises(ValueError, match="merge_samples=0"):
        bdpt_tree.release_law(dict(BDPT_NUM, merge_samples=0), XN, YN)


def test_bdpt_leaf_law_against_direct_summation():
    """P(N_1 + Z_1 >= N_0 + Z_0) summed over a wide square of both noises."""
    alpha = math.exp(-0.7)
    z = np.arange(-120, 121)
    p = (1 - alpha) / (1 + alpha) * alpha ** np.abs(z)
    for counts in ((0, 0), (2, 1), (0, 3)):
        want = sum(p[i] * p[j] for i in range(z.size) for j in range(z.size) if counts[1] + z[j] >= counts[0] + z[i])
        lo, hi = bdpt_tree.leaf_law(counts, alpha)[("leaf", 1)]
        assert lo - 1e-12 <= want <= hi + 1e-12


def test_dpgdf_smooth_sensitivity_leaf_loss_is_the_closed_form():
    """Depth 0, epsilon 1: a majority of 5 against 6 loses ln((1 + e^(e^6)) / (1 + e^(e^5))) on the minority."""
    p = dict(epsilon=1.0, max_depth=0, categories={0: [0, 1]}, classes=[0, 1])
    d0 = (np.zeros((5, 1)), np.zeros(5, dtype=int))
    d1 = (np.zeros((6, 1)), np.zeros(6, dtype=int))
    res = laws_pair_loss(dpgdf_tree.release_law(p, *d0), dpgdf_tree.release_law(p, *d1))
    want = math.e ** 6 - math.e ** 5 + math.log1p(math.exp(-math.e ** 6)) - math.log1p(math.exp(-math.e ** 5))
    assert res.lower <= want <= res.upper and res.upper - res.lower < 1e-9


def test_bdpt_merge_alone_gives_infinite_loss():
    """Both datasets impure with at least 2 records (the stopping rule agrees): a third distinct value makes
    the group index 1 releasable (merge_samples = 2)."""
    p = dict(epsilon=1.0, max_depth=1, classes=[0, 1], merge_samples=2)
    d0 = (np.array([[0.25], [0.75]]), np.array([0, 1]))
    d1 = (np.array([[0.25], [0.5], [0.75]]), np.array([0, 0, 1]))
    res = laws_pair_loss(bdpt_tree.release_law(p, *d0), bdpt_tree.release_law(p, *d1))
    assert math.isinf(res.lower) and res.release[:3] == ("node", 0, 1)


def test_gap_domains_measure_the_published_gaps():
    out = {d.name: certify_domain(d) for d in baseline_domains()[2:]}
    for name, res in out.items():
        assert res.verdict == "gap", (name, res.worst)
    assert math.isinf(out["DPGDF stopping"].worst["lower"]) and math.isinf(out["BDPT stopping"].worst["lower"])
    assert 250 < out["DPGDF smooth-sensitivity leaf"].worst["lower"] < math.inf
