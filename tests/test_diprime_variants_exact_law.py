"""The exact laws of DiPriMeExp, base DiPriMe, the strict DiPriMe regressor and DP-ERT (audit.diprime.exact_law,
issue 29) against their samplers, and their certificate domains.

Each goodness-of-fit test draws depth-1 trees (3000 reference fits, and 20000 from the batched path where the
learner has one) and compares them with the law by chi-square over (threshold piece, left leaf, right leaf), the
classification leaves' values of probability below 1e-3 pooled, the regression leaves in six bins (the two clip
ends and four inner bins), cells of expected count below 5 pooled (tests/law_fit.py). Fixed seeds; the
false-alarm rate of each accepting assertion is 1e-3 (p > 1e-3). Each seeded mutant (leaves at three times their
budget) must be rejected at p < 1e-6; the measured p-values are in the commit message and the report of issue 29.
"""
from __future__ import annotations

import collections
import math

import numpy as np
import pytest

from law_fit import depth_one_counts, pooled_pvalue

from audit.results.certify import certify_domain
from audit.diprime.certificate import (TripleLeafBudget, TripleLeafBudgetRegressor, TripleLeafERTClassifier,
                                       domains)
from audit.diprime.exact_law import _gaps, ie_node, ie_pieces, forest_setup, leaf_atoms, pair_loss
from audit.diprime.regression_leaf import count_scaled_window_prob, strict_window_prob
from reference.baselines.dp_ert import DPExtraTreesClassifier, DPExtraTreesRegressor
from reference.diprime import DiPriMeForestClassifier, DiPriMeForestRegressor
from reference.diprime.mechanisms import CountScaledLeafMean
from reference.mechanisms import Laplace, TwoSidedGeometric
from reference.mechanisms.base import record_units, span_up

CLS = dict(n_estimators=1, max_depth=1, max_features=1, epsilon=4.0, bounds=[(0.0, 1.0)], classes=[0, 1])
REG = dict(n_estimators=1, max_depth=1, max_features=1, epsilon=4.0, bounds=[(0.0, 1.0)],
           target_bounds=(-1.0, 1.0))
X = np.array([[0.2], [0.3], [0.7], [0.8], [0.9]])
Y = np.array([0, 0, 1, 1, 0])
T = np.array([-1.0, -0.6, 0.4, 1.0, 0.9])
EDGES = (-0.5, 0.0, 0.5)  # the regression leaves' inner bins


def _node_cats(params, cls):
    """``[(cut, probability)]`` per node category: the threshold pieces (IntervalExponential) or gaps (DP-ERT),
    each named by its smallest threshold ``cut``."""
    s = forest_setup(params, cls)
    if s.variant == "ert":
        return [(t - q / 2, q) for t, q in _gaps(0.0, 1.0, X[:, 0].tolist())], s
    sizes = {t: size for t, size, _, _ in ie_pieces(s.eps_s, 0.0, 1.0, X[:, 0], X[:, 0])}
    return [(t, sizes[t] * math.exp(l0)) for _, t, l0, _ in ie_node(s, X, Y, X, Y, ((0.0, 1.0),), [0])], s


def _class_leaf(s, y):
    atoms, _ = leaf_atoms((int(np.count_nonzero(y == 0)), int(np.count_nonzero(y == 1))), s.rate)
    big = {v: p for v, p in atoms.items() if p >= 1e-3}
    big["other"] = 1.0 - sum(big.values())
    return big


def _reg_stats(eps_l):
    mech = Laplace(eps_l / 2.0, span_up(-1.0, 1.0) / 2.0)
    return mech, TwoSidedGeometric(eps_l / 2.0, 1.0).noise_law.rate


def _reg_bin(v):
    if v <= -1.0:
        return "low"
    if v >= 1.0:
        return "high"
    return int(np.searchsorted(EDGES, v, side="right"))


def _reg_leaf(eps_l, y):
    """The strict leaf's bins from :func:`strict_window_prob` (the offset from the centre 0)."""
    mech, rate_n = _reg_stats(eps_l)
    c = int(record_units(y, mech.grid, mech.grid_sensitivity).sum())
    ends = (-math.inf, -1.0) + EDGES + (1.0, math.inf)
    out = {}
    for k, (a, b) in enumerate(zip(ends[:-1], ends[1:])):
        name = "low" if k == 0 else "high" if k == len(ends) - 2 else k - 1
        # the clip ends are atoms ("low": t <= -1, "high": t >= 1); the inner bins [a, b) exclude them
        lo = a + 1e-12 if name == 0 else a
        hi = b if name in ("low", "high") else b - 1e-12
        out[name] = strict_window_prob(c, len(y), lo, hi, mech.law(1).rate, rate_n, mech.grid)[0]
    return out


def _law(params, cls):
    nodes, s = _node_cats(params, cls)
    reg = not s.classes
    yy = T if reg else Y
    out = {}
    for cut, pn in nodes:
        sides = []
        for mask in (X[:, 0] < cut + 1e-12, X[:, 0] >= cut + 1e-12):
            sides.append(_reg_leaf(_eps_l(params, cls), yy[mask]) if reg else _class_leaf(s, yy[mask]))
        for a, pa in sides[0].items():
            for b, pb in sides[1].items():
                out[(round(cut, 6), a, b)] = pn * pa * pb
    return out


def _eps_l(params, cls):
    est = cls(**params)
    return est._budget(float(est.epsilon), 1).eps_l


def _observed(releases, probs):
    cuts = sorted({k[0] for k in probs})
    return depth_one_counts(releases, probs, lambda thr: cuts[int(np.searchsorted(cuts, thr + 1e-9, "right")) - 1],
                            lambda v: _reg_bin(v) if isinstance(v, float) else v)


def _fits(cls, params, seed, n=3000):
    ss = np.random.SeedSequence(seed)
    y = T if issubclass(cls, DiPriMeForestRegressor) else Y
    return [cls(**params, random_state=np.random.default_rng(c)).fit(X, y).release() for c in ss.spawn(n)]


CASES = {
    "exp classifier": (DiPriMeForestClassifier, dict(CLS, variant="exp")),
    "base classifier": (DiPriMeForestClassifier, dict(CLS, variant="base")),
    "exp regressor": (DiPriMeForestRegressor, dict(REG, variant="exp")),
    "DP-ERT classifier": (DPExtraTreesClassifier, CLS),
    "DP-ERT regressor": (DPExtraTreesRegressor, REG),
}


@pytest.mark.parametrize("name", list(CASES))
def test_law_matches_the_reference_and_the_batched_path(name):
    cls, params = CASES[name]
    probs = _law(params, cls)
    assert math.fsum(probs.values()) == pytest.approx(1.0, abs=1e-6)
    p_ref = pooled_pvalue(probs, _observed(_fits(cls, params, 20261125), probs))
    assert p_ref > 1e-3, p_ref
    batch = cls(**params).batched_release_sampler()
    if cls in (DPExtraTreesClassifier, DPExtraTreesRegressor):
        assert batch is None  # DP-ERT has no batched path
        return
    y = T if cls is DiPriMeForestRegressor else Y
    p_batch = pooled_pvalue(probs, _observed(batch.batch((X, y), 20_000, np.random.default_rng(3)), probs))
    assert p_batch > 1e-3, p_batch


@pytest.mark.parametrize("y", [np.array([]), np.array([-1.0, 0.4, 1.0])])
def test_count_scaled_leaf_law_matches_its_sampler(y):
    """The papers' leaf (the measured gap's law) against :class:`CountScaledLeafMean` itself: 20000 draws in the
    six bins, false-alarm rate 1e-3."""
    eps, lo, hi = 0.5, -1.0, 1.0
    mech = CountScaledLeafMean(eps, (lo, hi), 2.0)
    stats = (y.size, float(y.mean()) if y.size else 0.0)
    ends = (-math.inf, lo) + EDGES + (hi, math.inf)
    probs = {}
    for k, (a, b) in enumerate(zip(ends[:-1], ends[1:])):
        name = "low" if k == 0 else "high" if k == len(ends) - 2 else k - 1
        a, b = (-math.inf, lo) if name == "low" else (hi, math.inf) if name == "high" else (a + 1e-12, b - 1e-12)
        probs[name] = count_scaled_window_prob(stats, a, b, 2.0, eps, lo, hi)
    assert math.fsum(probs.values()) == pytest.approx(1.0, abs=1e-9)
    rng = np.random.default_rng(11)
    counts = collections.Counter(_reg_bin(round(mech.sample(y, rng), 6)) for _ in range(20_000))
    assert pooled_pvalue(probs, counts) > 1e-3


MUTANTS = {
    "exp classifier": (TripleLeafBudget, DiPriMeForestClassifier, dict(CLS, variant="exp")),
    "exp regressor": (TripleLeafBudgetRegressor, DiPriMeForestRegressor, dict(REG, variant="exp")),
    "DP-ERT classifier": (TripleLeafERTClassifier, DPExtraTreesClassifier, CLS),
}


@pytest.mark.parametrize("name", list(MUTANTS))
def test_a_mutant_sampler_is_rejected(name):
    mutant, cls, params = MUTANTS[name]
    probs = _law(params, cls)
    p = pooled_pvalue(probs, _observed(_fits(mutant, params, 7), probs))
    assert p < 1e-6, p


def test_pair_loss_properties():
    d0 = (np.array([[0.25], [0.75]]), np.array([-1.0, 1.0]))
    d1 = (np.array([[0.25], [0.75], [0.75]]), np.array([-1.0, 1.0, 1.0]))
    base = dict(REG, epsilon=1.0, variant="exp")
    r = pair_loss(base, d0, d1, cls=DiPriMeForestRegressor)
    assert 0 < r.lower <= r.upper <= 1.0
    assert r.upper == pytest.approx(0.5, abs=1e-8)  # the leaf's sum and count: eps_l / 2 each
    assert pair_loss(base, d0, d0, cls=DiPriMeForestRegressor).upper == pytest.approx(0.0, abs=1e-8)
    paper = pair_loss(dict(base, accounting="paper"), (d0[0][:1], d0[1][:1]), (d0[0][:0], d0[1][:0]),
                      cls=DiPriMeForestRegressor)
    assert paper.lower > 1.0  # an empty leaf (uniform) against one record (Laplace with atoms at the ends)
    ert = pair_loss(dict(CLS, epsilon=1.0, max_depth=2), (d0[0], np.array([0, 1])), (d1[0], np.array([0, 1, 0])),
                    cls=DPExtraTreesClassifier)
    assert ert.upper == pytest.approx(1.0, abs=1e-12)  # the whole budget on one leaf's counts


def test_limits_are_clear_errors():
    d = (np.array([[0.5]]), np.array([0.0]))
    with pytest.raises(ValueError, match="max_depth=1"):
        pair_loss(dict(REG, variant="base", max_depth=2), d, d, cls=DiPriMeForestRegressor)
    with pytest.raises(ValueError, match="target_bounds"):
        pair_loss(dict(REG, target_bounds=(-1.0, 1.0000001)), d, d, cls=DiPriMeForestRegressor)
    with pytest.raises(ValueError, match="strict accounting"):
        pair_loss(dict(REG, variant="flip", accounting="paper"), d, d, cls=DiPriMeForestRegressor)
    with pytest.raises(ValueError, match="bounds"):
        pair_loss(dict(CLS, variant="exp", bounds=[(0.0, 0.01)]), d, (np.array([[0.005]]), np.array([0])))


def test_certificate_domains_meet_the_issue():
    names = {"strict exp, depth 1", "strict base, depth 1", "strict regressor (exp), depth 1",
             "DP-ERT classifier, depth 2", "DP-ERT regressor, depth 2", "paper: count-scaled regression leaf",
             "mutant: regressor, three times the leaf budget", "mutant: DP-ERT, three times the leaf budget",
             "paper: DP-ERT, count-scaled regression leaf"}
    for domain in domains():
        if domain.name not in names:
            continue
        res = certify_domain(domain)
        assert res.as_expected, (domain.name, res.worst)
        if domain.expected == "certified":
            assert res.worst["upper"] <= domain.epsilon_claimed + 1e-12
            assert res.n_pairs >= 300
        else:
            assert res.worst["lower"] > domain.epsilon_claimed
