"""The random decision forest's exact release law (audit.random_trees.exact_law) against its samplers.

The law is a second implementation of Algorithm 2 (structure classes, noisy leaf counts summed out
into atoms and the uniform draw); the reference learner and the batched path sample the same release.
Each goodness-of-fit test: chi-square over (structure class, left leaf value, right leaf value), cells
of expected count below 5 pooled, fixed seed, false-alarm rate 1e-3 per sampler. A deliberately altered
sampler (noise scale 1.25 times the learner's) must be rejected at p < 1e-6.
"""
from __future__ import annotations

import collections
import math
import subprocess
import sys

import numpy as np
import pytest

from law_fit import pooled_pvalue

from audit.results.certify import certify_domain
from audit.random_trees.certificate import domains
from audit.random_trees.exact_law import (MAX_STRUCTURES, leaf_law, pair_loss, structure_classes)
from reference.mechanisms import TwoSidedGeometric
from reference.random_trees import RandomDecisionForestClassifier
from reference.random_trees.forest import _ForestBatch

PARAMS = dict(n_estimators=1, max_depth=1, epsilon=2.0, bounds=[(0.0, 1.0)], classes=[0, 1])
X = np.array([[0.25], [0.75], [0.75]])
Y = np.array([0, 1, 0])
GRID = [[0.25, 0.75]]


def _rate(params):
    est = RandomDecisionForestClassifier(**params)
    return TwoSidedGeometric(1.0 / est._noise_scale(params["n_estimators"]), 1.0).noise_law.rate


def _brute_leaf(c, rate, rule, box=400):
    """The leaf's release law by direct summation over noisy counts (independent of leaf_law)."""
    a = math.exp(-rate)
    norm = (1 - a) / (1 + a)
    atoms, invalid = collections.defaultdict(float), 0.0
    for i in range(-box, box):
        for j in range(-box, box):
            p = norm * a ** abs(i - c[0]) * norm * a ** abs(j - c[1])
            u, v = (max(i, 0), max(j, 0)) if rule == "clamp" else (i, j)
            if u < 0 or v < 0 or (u == 0 and v == 0):
                invalid += p
            else:
                g = math.gcd(u, v)
                atoms[(u // g, v // g)] += p
    return atoms, invalid


@pytest.mark.parametrize("rule", ["paper", "clamp"])
@pytest.mark.parametrize("counts", [(0, 0), (1, 0), (2, 3)])
def test_leaf_law_is_a_probability_and_matches_direct_summation(counts, rule):
    rate = 0.5
    law = leaf_law(counts, rate, rule)
    total = sum(law.atoms.values()) + law.invalid
    assert 1 - law.tail - 1e-12 <= total <= 1 + 1e-12
    assert law.tail < 1e-11
    atoms, invalid = _brute_leaf(counts, rate, rule)
    assert law.invalid == pytest.approx(invalid, rel=1e-9)
    for ray, p in sorted(atoms.items(), key=lambda kv: -kv[1])[:40]:
        assert law.rays[ray] == pytest.approx(p, rel=1e-9, abs=1e-15)


def test_structure_classes_are_a_probability():
    for bounds, grid, h in (([(0.0, 1.0)], GRID, 2), ([(0.0, 1.0)] * 2, GRID * 2, 2), ([(0.0, 2.0)], [[0.5]], 0)):
        classes = structure_classes(bounds, grid, h)
        assert math.fsum(w for _, w in classes) == pytest.approx(1.0, abs=1e-12)
    with pytest.raises(ValueError, match="structure classes"):
        structure_classes([(0.0, 1.0)] * 3, [[0.1, 0.2, 0.3, 0.4]] * 3, 4)
    assert MAX_STRUCTURES >= 10_000


def _category_probs(params, X, y):
    """Probability of each (gap, left value, right value) of a one-tree, height-1 forest; values whose
    probability is below 1e-3 are pooled in "other" (the uniform draw included)."""
    rate = _rate(params)
    out = {}
    for nodes, w in structure_classes(params["bounds"], GRID, 1):
        t = nodes[0][1]
        gap = int(t > 0.25) + int(t > 0.75)
        leaves = []
        for side in (0, 1):
            idx = [k for k, x in enumerate(X[:, 0]) if (x > t) == bool(side)]
            c = (sum(1 for k in idx if y[k] == 0), sum(1 for k in idx if y[k] == 1))
            law = leaf_law(c, rate, params.get("invalid_rule", "paper"))
            big = {v: p for v, p in law.atoms.items() if p >= 1e-3}
            big["other"] = 1.0 - sum(big.values())
            leaves.append(big)
        for (v0, p0) in leaves[0].items():
            for (v1, p1) in leaves[1].items():
                out[(gap, v0, v1)] = w * p0 * p1
    return out


def _observed(releases, probs):
    known = collections.defaultdict(set)  # (gap, side) -> the leaf values with a category of their own
    for gap, v0, v1 in probs:
        known[gap, 0].add(v0)
        known[gap, 1].add(v1)
    counts = collections.Counter()
    for r in releases:
        (_, structure), (_, leaves) = r
        t = structure[0][0][1]
        gap = int(t > 0.25) + int(t > 0.75)
        cats = tuple(v if v in known[gap, side] else "other" for side, v in enumerate(leaves[0]))
        counts[(gap,) + cats] += 1
    return counts




@pytest.mark.parametrize("rule", ["paper", "clamp"])
def test_law_matches_the_batched_path_and_the_reference(rule):
    params = dict(PARAMS, invalid_rule=rule)
    probs = _category_probs(params, X, Y)
    assert math.fsum(probs.values()) == pytest.approx(1.0, abs=1e-9)
    est = RandomDecisionForestClassifier(**params)
    batched = _ForestBatch(est).batch((X, Y), 20_000, np.random.default_rng(20261125))
    assert pooled_pvalue(probs, _observed(batched, probs)) > 1e-3
    ss = np.random.SeedSequence(20261126)
    fits = [RandomDecisionForestClassifier(**params, random_state=np.random.default_rng(s)).fit(X, Y).release()
            for s in ss.spawn(3000)]
    assert pooled_pvalue(probs, _observed(fits, probs)) > 1e-3


class _AlteredNoise(RandomDecisionForestClassifier):
    """Deliberately altered sampler: noise scale 1.25 times the learner's."""

    def _noise_scale(self, k):
        return 1.25 * super()._noise_scale(k)


def test_an_altered_sampler_is_rejected():
    probs = _category_probs(PARAMS, X, Y)
    altered = _ForestBatch(_AlteredNoise(**PARAMS)).batch((X, Y), 20_000, np.random.default_rng(7))
    assert pooled_pvalue(probs, _observed(altered, probs)) < 1e-6


def test_pair_loss_of_the_strict_forest_is_its_claim_and_the_gaps_exceed_it():
    base = dict(n_estimators=3, max_depth=2, epsilon=1.5, bounds=[(0.0, 1.0)], classes=[0, 1])
    d0 = (np.array([[0.25], [0.75]]), np.array([0, 1]))
    d1 = (np.array([[0.25], [0.75], [0.75]]), np.array([0, 1, 1]))
    r = pair_loss(dict(base, neighbouring="add-remove"), d0, d1, grid=GRID)
    assert r.upper == pytest.approx(1.5, abs=1e-12) and 1.5 - 1e-3 < r.lower <= r.upper
    sub = (np.array([[0.25], [0.25]]), np.array([0, 0]))
    strict = pair_loss(dict(base, neighbouring="substitute"), d0, sub, grid=GRID)
    paper = pair_loss(dict(base, neighbouring="substitute", accounting="paper"), d0, sub, grid=GRID)
    assert strict.upper == pytest.approx(1.5, abs=1e-12) and strict.lower > 1.5 - 1e-3
    assert paper.lower > 3.0 - 1e-3 and paper.upper == pytest.approx(3.0, abs=1e-12)


def test_profile_is_a_valid_bound_on_one_leaf():
    """One tree of height 0 (one leaf): delta(eps) from the profile against direct summation."""
    params = dict(n_estimators=1, max_depth=0, epsilon=1.0, bounds=[(0.0, 1.0)], classes=[0, 1])
    d0 = (np.zeros((0, 1)), np.array([], dtype=int))
    d1 = (np.array([[0.5]]), np.array([0]))
    r = pair_loss(params, d0, d1)
    rate = _rate(params)
    a0, i0 = _brute_leaf((0, 0), rate, "paper")
    a1, i1 = _brute_leaf((1, 0), rate, "paper")
    for eps in (0.0, 0.3, 0.7, 0.95):
        true = max(sum(max(0.0, p.get(k, 0.0) - math.exp(eps) * q.get(k, 0.0)) for k in set(p) | set(q))
                   + max(0.0, ip - math.exp(eps) * iq) for p, q, ip, iq in ((a0, a1, i0, i1), (a1, a0, i1, i0)))
        got = r.delta(eps)
        assert true - 1e-9 <= got <= true + 3e-3  # pessimistic: losses rounded up by at most 1e-3
    assert r.delta(r.upper) == 0.0
    assert r.delta(0.0) >= r.delta(0.5) >= r.delta(0.9)


def test_limits_are_clear_errors():
    d = (np.array([[0.5]]), np.array([0]))
    with pytest.raises(ValueError, match="two classes"):
        pair_loss(dict(PARAMS, classes=[0, 1, 2]), d, d)
    with pytest.raises(ValueError, match="private"):
        pair_loss(dict(PARAMS, private=False), d, d)


def test_certificate_domains_meet_the_issue():
    """Every strict domain certified on at least 300 pairs; every gap and mutant above its claim."""
    for domain in domains():
        res = certify_domain(domain)
        assert res.as_expected, (domain.name, res.worst)
        if domain.expected == "certified":
            assert res.n_pairs >= 300, domain.name
            assert res.worst["upper"] <= domain.epsilon_claimed + 1e-12
        else:
            assert res.worst["lower"] > domain.epsilon_claimed


def test_certify_command_writes_the_certificate(tmp_path):
    out = subprocess.run([sys.executable, "-m", "audit", "certify", "random-trees", "--out", str(tmp_path)],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    md = (tmp_path / "random-trees" / "certificate.md").read_text()
    assert "certified" in md and "gap" in md and "loss interval" in md
    assert (tmp_path / "random-trees" / "figures" / "certificate-0.png").exists()
