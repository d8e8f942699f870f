"""PrivaTree's exact release law (audit.privatree.exact_law) against its two samplers, and the certificate.

The law is a second implementation of Algorithm 1 (noisy histograms summed out, permute-and-flip
leaves), written from the mechanisms' laws; the reference learner and the batched path sample
the same release. Each goodness-of-fit test: chi-square over the releases, cells of expected count
below 5 pooled, fixed seed, false-alarm rate 1e-3 per sampler. A deliberately altered sampler (the
``HalfLeafNoise`` mutant: leaves at twice their epsilon) must be rejected at p < 1e-6.
"""
from __future__ import annotations

import collections
import math
import subprocess
import sys

import numpy as np
import pytest
from scipy import stats

from audit.results.certify import certify_domain, enumerate_pairs
from audit.privatree.certificate import domains
from audit.privatree.exact_law import pair_loss, release_law
from audit.privatree.mutants import HalfLeafNoise
from reference.privatree import PrivaTreeClassifier
from reference.privatree.batch import PrivaTreeBatch

ONE = dict(bounds=[(0.0, 1.0)], classes=[0, 1], binning="uniform", max_bins=2, epsilon_shares=(0.0, 0.5, 0.5))
TWO = dict(ONE, bounds=[(0.0, 1.0)] * 2)
X1 = np.array([[0.25], [0.75], [0.75]])
Y1 = np.array([0, 1, 0])
X2 = np.array([[0.25, 0.25], [0.25, 0.75], [0.75, 0.75]])
Y2 = np.array([0, 1, 1])

CASES = {
    "strict depth 1": (dict(ONE, epsilon=1.0, max_depth=1), X1, Y1),
    "strict depth 2": (dict(ONE, epsilon=2.0, max_depth=2), X1, Y1),
    "paper stopping": (dict(ONE, epsilon=2.0, max_depth=2, accounting="paper", stopping="paper"), X1, Y1),
    "two features": (dict(TWO, epsilon=4.0, max_depth=1), X2, Y2),
    "PrivaTree*": (dict(bounds=[(0.0, 1.0)], classes=[0, 1], max_bins=2, epsilon_shares=(0.0, 0.5, 0.5), epsilon=4.0,
                        max_depth=1, accounting="paper", stopping="depth", use_private_quantiles=False),
                   np.array([[0.1], [0.5], [0.9]]), np.array([0, 1, 1])),
}


def _pvalue(law, counts) -> float:
    keys = list(law.upper)
    assert sum(counts.values()) == sum(counts.get(k, 0) for k in keys)  # nothing outside the law's support
    obs = np.array([counts.get(k, 0) for k in keys], dtype=float)
    p = np.array([law.lower[k] for k in keys])
    e = p / p.sum() * obs.sum()
    big = e >= 5
    o = np.append(obs[big], obs[~big].sum())
    ex = np.append(e[big], e[~big].sum())
    keep = ex > 0
    assert o[~keep].sum() == 0
    return stats.chisquare(o[keep], ex[keep]).pvalue


@pytest.mark.parametrize("name", sorted(CASES))
def test_law_is_a_probability_and_matches_both_samplers(name):
    params, X, y = CASES[name]
    assert_law_matches_samplers(params, X, y, seed=29)


def assert_law_matches_samplers(params, X, y, seed):
    """The law sums to 1 within its width, and fits 40,000 batched draws and 3,000 reference fits (chi-square,
    false-alarm rate 1e-3 each). Returns the law."""
    law = release_law(params, X, y)
    assert sum(law.lower.values()) <= 1.0 + 1e-12 <= sum(law.upper.values()) + 2e-12
    assert law.width < 1e-9
    fast = PrivaTreeBatch(edges=None, **params)
    prep = fast.prepare((X, y))
    trees = fast.fit_trees((X, y), 40_000, np.random.default_rng(seed), prepared=prep)
    assert _pvalue(law, collections.Counter(fast.releases(trees, prepared=prep))) > 1e-3
    ref = collections.Counter(PrivaTreeClassifier(**params, random_state=s).fit(X, y).release() for s in range(3000))
    assert _pvalue(law, ref) > 1e-3
    return law


def test_an_altered_sampler_is_rejected():
    """Leaves at twice their epsilon (``HalfLeafNoise``): the law of the unaltered learner rejects it."""
    params, X, y = CASES["strict depth 1"]
    law = release_law(params, X, y)
    bad = collections.Counter(HalfLeafNoise(**params, random_state=s).fit(X, y).release() for s in range(3000))
    p = _pvalue(law, bad)
    assert p < 1e-6, p


def test_out_of_reach_configurations_say_why():
    # JointExp's edges are in the law (tests/test_privatree_jointexp_law.py), but ten bins give a node histogram
    # far beyond the enumeration: the error names the states (and the edge sequences before any tree is grown)
    with pytest.raises(ValueError, match="out of reach"):
        release_law(dict(bounds=[(0.0, 1.0)], classes=[0, 1], epsilon=1.0, max_depth=1, n_public=10), X1, Y1)
    with pytest.raises(ValueError, match="out of reach"):
        release_law(dict(ONE, bounds=[(0.0, 1.0)] * 2, max_bins=4, epsilon=0.5, max_depth=1), X2, Y2)


def test_pair_loss_of_the_stopping_gap_is_infinite_and_strict_is_within_epsilon():
    """G2: one record of the other class makes a pure node impure, so the tree grows: loss infinite."""
    paper = dict(ONE, epsilon=1.0, max_depth=1, accounting="paper", stopping="paper")
    d0 = (np.array([[0.25], [0.25]]), np.array([0, 0]))
    d1 = (np.array([[0.25], [0.25], [0.75]]), np.array([0, 0, 1]))
    assert math.isinf(pair_loss(paper, d0, d1).lower)
    strict = pair_loss(dict(ONE, epsilon=1.0, max_depth=1), d0, d1)
    assert 0.0 < strict.lower <= strict.upper <= 1.0
    assert strict.delta(1.0) == 0.0 and strict.delta(0.0) > 0.0


def test_certificate_of_strict_privatree_covers_300_pairs():
    strict = domains()[0]
    assert len(enumerate_pairs(strict)) >= 300
    res = certify_domain(strict)
    assert res.verdict == "certified" and res.worst["upper"] <= 1.0 and res.width < 1e-9
    gap = certify_domain(domains()[2])  # the paper's stopping rule
    assert gap.verdict == "gap" and math.isinf(gap.worst["lower"])


@pytest.mark.release
def test_certify_command_writes_a_certificate(tmp_path):
    out = subprocess.run([sys.executable, "-m", "audit", "certify", "privatree", "--out", str(tmp_path), "--quiet"],
                         capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stderr
    text = (tmp_path / "privatree" / "certificate.md").read_text()
    assert "certified" in text and "gap" in text and (tmp_path / "privatree" / "figures" / "certificate-0.png").exists()


# --------------------------------------------------------------------------- the mutants' laws (variant=...)
def _law_mutants():
    from audit.privatree.mutants import mutant_cases

    return [c for c in mutant_cases(1.0) if c.law is not None]


@pytest.mark.parametrize("case", _law_mutants(), ids=lambda c: c.id)
def test_each_mutant_law_matches_the_mutant_sampler_on_both_inputs(case):
    """The mutant class itself (3,000 fits per input, fixed seeds) against the law written from its definition;
    false-alarm rate 1e-3 per input. Each pair's exact loss exceeds the mutant's claim."""
    variant = None if case.law == "learner" else case.law
    params = case.make.keywords
    for pair in case.pairs:
        for X, y in (pair.d0, pair.d1):
            law = release_law(params, X, y, variant=variant)
            assert sum(law.lower.values()) <= 1.0 + 1e-12 <= sum(law.upper.values()) + 2e-12
            draws = collections.Counter(case.make(random_state=s).fit(X, y).release() for s in range(3000))
            assert _pvalue(law, draws) > 1e-3, (case.id, len(y))
        assert pair_loss_variant(params, pair, variant) > case.epsilon


def pair_loss_variant(params, pair, variant):
    from audit.privatree.exact_law import laws_pair_loss

    return laws_pair_loss(*(release_law(params, *d, variant=variant) for d in (pair.d0, pair.d1))).lower


def test_the_exact_filter_laws_differ_from_the_learner_only_where_an_exact_side_is_empty():
    params = dict(ONE, epsilon=1.0, max_depth=1)
    empty = (np.full((4, 1), 0.2), np.array([0, 1, 0, 1]))  # every record in bin 0
    for variant in ("exact-min-samples-leaf", "exact-empty-side"):
        law = release_law(params, *empty, variant=variant)
        assert all(r[0] == "leaf" for r in law.upper)  # the only candidate is never kept
        assert any(r[0] != "leaf" for r in release_law(params, *empty).upper)
    both = (X1, Y1)  # records on both sides: the empty-side filter changes nothing
    assert release_law(params, *both, variant="exact-empty-side").upper == release_law(params, *both).upper


def test_variants_out_of_their_reach_say_why():
    with pytest.raises(ValueError, match="variant must be one of"):
        release_law(CASES["strict depth 1"][0], X1, Y1, variant="half-noise")
    with pytest.raises(ValueError, match="one feature of two bins"):
        release_law(dict(TWO, epsilon=4.0, max_depth=1), X2, Y2, variant="exact-empty-side")
