"""The DiffPrivLib-style random tree's exact law (audit.baselines_law.random_tree_pf) against its sampler,
and its certificate domains.

Goodness of fit: chi-square over the releases of ``RandomTreePFClassifier.release()`` (4,000 fits, fixed
seeds), cells of expected count below 5 pooled (tests/law_fit.py), false-alarm rate 1e-3 per configuration.
A seeded mutant spending twice its epsilon (leaves at 2 epsilon) must be rejected at p < 1e-6.
"""
from __future__ import annotations

import collections
import math

import numpy as np
import pytest
from scipy import integrate

from audit.baselines_law.random_tree_pf import pair_loss, release_law, structure_classes
from audit.results.certify import certify_domain, enumerate_pairs
from audit.privatree.certificate import baseline_domains
from law_fit import pooled_pvalue, twice_epsilon
from reference.baselines.diffprivlib_tree import RandomTreePFClassifier

ONE = dict(epsilon=1.0, max_depth=2, bounds=[(0.0, 1.0)], classes=[0, 1])
TWO = dict(epsilon=1.0, max_depth=2, bounds=[(0.0, 1.0), (0.0, 2.0)], classes=[0, 1])
X1, Y1 = np.array([[0.25], [0.75], [0.75]]), np.array([0, 1, 0])
X2, Y2 = np.array([[0.25, 0.5], [0.25, 1.5], [0.75, 1.5]]), np.array([0, 1, 1])


def _releases(cls, params, X, y, n=4000):
    return collections.Counter(cls(**params, random_state=s).fit(X, y).release() for s in range(n))


@pytest.mark.parametrize("bounds,cuts", [(((0.0, 1.0),), ((0.25, 0.75),)),
                                         (((0.0, 1.0), (0.0, 2.0)), ((0.25, 0.75), (0.5, 1.0, 1.5)))])
def test_structure_classes_sum_to_one_and_match_the_nested_integral(bounds, cuts):
    classes = structure_classes(bounds, cuts, 2)
    assert math.fsum(w for _, w in classes) == pytest.approx(1.0, abs=1e-12)
    # one class by numerical quadrature of the nested uniforms: root in (0.25, 0.75), both children on feature 0
    (lo, hi), m = bounds[0], len(bounds)
    f = lambda t: ((t - 0.25) / (t - lo)) * ((0.75 - t) / (hi - t))  # noqa: E731 (both children in the root's gap)
    want = integrate.quad(f, 0.25, 0.75, epsabs=1e-14)[0] / (hi - lo) / m ** 3
    got = dict(classes)[((0, (0.25, 0.75)), (0, (0.25, 0.75)), (0, (0.25, 0.75)))]
    assert got == pytest.approx(want, rel=1e-9)


@pytest.mark.parametrize("params,X,y", [(ONE, X1, Y1), (TWO, X2, Y2)], ids=["one feature", "two features"])
def test_law_matches_the_sampler(params, X, y):
    law = release_law(params, X, y)
    assert sum(law.lower.values()) <= 1.0 <= sum(law.upper.values()) + 1e-12 and law.width < 1e-8
    assert pooled_pvalue(dict(law.lower), _releases(RandomTreePFClassifier, params, X, y)) > 1e-3


def test_an_altered_sampler_is_rejected():
    law = release_law(ONE, X1, Y1)
    p = pooled_pvalue(dict(law.lower), _releases(twice_epsilon(RandomTreePFClassifier), ONE, X1, Y1))
    assert p < 1e-6, p


def test_beyond_the_limits_a_value_error_names_the_parameter():
    with pytest.raises(ValueError, match="max_depth=3"):
        release_law(dict(ONE, max_depth=3), X1, Y1)


def test_pair_loss_is_at_most_epsilon_and_attains_it():
    """Adding a record to an empty leaf: permute-and-flip's ratio e^epsilon on the other label."""
    empty = (np.zeros((0, 1)), np.array([], dtype=int))
    res = pair_loss(ONE, empty, (X1[:1], Y1[:1]), grid=[[0.25, 0.75]])
    assert 1.0 - 1e-8 <= res.lower <= res.upper <= 1.0 + 1e-12
    assert res.delta(1.0) < 1e-8 and res.delta(0.0) > 0.0


def test_certificate_domains():
    for domain in baseline_domains()[:2]:
        assert len(enumerate_pairs(domain)) >= 300
        res = certify_domain(domain)
        assert res.verdict == "certified" and res.worst["upper"] <= 1.0 + 1e-12, res.worst
