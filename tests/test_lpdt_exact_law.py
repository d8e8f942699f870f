"""LPDT's report law (audit.lpdt.exact_law) against the randomiser's own law and its sampler, and the
certificate.

The goodness-of-fit test: chi-square over (label offset from the centre in grid units, clipped to
+-6; the indicator bits) for 40,000 reports of one user, fixed seed, false-alarm rate 1e-3; a
randomiser whose bits spend 1.5 times their share must be rejected at p < 1e-6.
"""
from __future__ import annotations

import collections
import itertools
import math

import numpy as np
import pytest
from scipy import stats

from audit.results.certify import certify_domain
from audit.engine.exact_law.exact import privacy_loss
from audit.lpdt.certificate import domains
from audit.lpdt.exact_law import randomizer_of, report_logpmf, report_pair_loss
from reference.mechanisms import BitRandomizedResponse, round_to_grid

BASE = dict(epsilon=1.0, bounds=[(0.0, 1.0)], n_bins=2, target_bounds=(0.0, 1.0))
RECORDS = [(np.array([x]), y) for x in (0.2, 0.8) for y in (0.0, 0.4, 1.0)]


@pytest.mark.parametrize("extra", [{}, {"indicator_share": 0.3}, {"per_leaf_noise": True}, {"epsilon": 3.0}])
def test_pair_loss_is_the_randomisers_exact_loss(extra):
    params = dict(BASE, **extra)
    r = randomizer_of(params)
    for a, b in itertools.combinations(RECORDS, 2):
        got = report_pair_loss(params, (a[0][None], [a[1]]), (b[0][None], [b[1]]))
        assert got.lower <= privacy_loss(r, a, b) * (1 + 1e-9) and privacy_loss(r, a, b) <= got.upper * (1 + 1e-9)
        assert got.upper <= r.privacy_map(1) + 1e-12 or extra.get("per_leaf_noise")


def test_report_logpmf_matches_the_randomisers_law():
    rng = np.random.default_rng(5)
    for extra in ({}, {"per_leaf_noise": True}):
        params = dict(BASE, **extra)
        r = randomizer_of(params)
        for rec in RECORDS:
            for out in r.batch(rec, 30, rng):
                assert report_logpmf(params, out, rec) == pytest.approx(r.log_law(out, rec), abs=1e-9)


def _categories(r, reports, centre):
    units = np.round(reports[:, 0] / r.label.grid).astype(np.int64) - centre
    off = np.clip(units, -6, 6)
    return collections.Counter(zip(off.tolist(), map(tuple, reports[:, 1:].astype(int).tolist())))


def _expected(params, r, rec, centre):
    out = {}
    for off in range(-6, 7):
        for bits in itertools.product((0, 1), repeat=r.n_leaves):
            if abs(off) < 6:
                p = math.exp(report_logpmf(params, [(centre + off) * r.label.grid, *bits], rec))
            else:  # the clipped tail: sum of the label's law beyond 5 units, times the bits' law
                law = r.label.law(1)
                a = math.exp(-law.rate)
                tail = math.exp(law.log_norm) * a ** 6 / (1 - a)
                p = tail * math.exp(report_logpmf(params, [centre * r.label.grid, *bits], rec)
                                    - law.log_norm)
            out[(off, bits)] = p
    return out


def _pvalue(exp, counts, n):
    keys = list(exp)
    assert set(counts) <= set(keys)
    obs = np.array([counts.get(k, 0) for k in keys], dtype=float)
    e = np.array([exp[k] for k in keys]) * n
    big = e >= 5
    o, ex = np.append(obs[big], obs[~big].sum()), np.append(e[big], e[~big].sum())
    keep = ex > 0
    return stats.chisquare(o[keep], ex[keep] / ex[keep].sum() * o[keep].sum()).pvalue


def test_law_matches_the_sampler_and_rejects_an_altered_one():
    params = dict(BASE, epsilon=2.0)
    r = randomizer_of(params)
    rec = RECORDS[1]
    centre = int(round_to_grid(rec[1], r.label.grid))
    exp = _expected(params, r, rec, centre)
    assert math.fsum(exp.values()) == pytest.approx(1.0, abs=1e-9)
    n = 40_000
    reports = r.batch(rec, n, np.random.default_rng(20261125))
    assert _pvalue(exp, _categories(r, reports, centre), n) > 1e-3
    altered = randomizer_of(params)
    altered.bits = BitRandomizedResponse(1.5 * altered.epsilon * altered.indicator_share, sensitivity=2)
    altered.q = altered.bits.p_flip
    bad = altered.batch(rec, n, np.random.default_rng(7))
    assert _pvalue(exp, _categories(r, bad, centre), n) < 1e-6


def test_profile_is_a_valid_bound():
    """delta(eps) from the profile against direct summation of the randomiser's own law (two leaves)."""
    params = dict(BASE, epsilon=1.0)
    r = randomizer_of(params)
    a, b = (np.array([0.2]), 0.0), (np.array([0.8]), 1.0)
    got = report_pair_loss(params, (a[0][None], [a[1]]), (b[0][None], [b[1]]))
    law = r.label.law(1)
    t = math.ceil(35 / law.rate)  # the label's law beyond t units of the centres: below 1e-15
    ks = np.arange(-t, int(round(1 / r.label.grid)) + t + 1)
    outs = np.array([[k * r.label.grid, *bits] for bits in itertools.product((0, 1), repeat=2) for k in ks.tolist()])
    centre = int(round_to_grid(a[1], r.label.grid))  # the randomiser's own law, vectorised: label pmf, bits, llr
    u = r.one_hot(a[0])
    n_flip = (outs[:, 1:] != u).sum(axis=1)
    q = r.bits.p_flip
    logp0 = (law.logpmf(np.round(outs[:, 0] / r.label.grid) - centre) + n_flip * math.log(q)
             + (2 - n_flip) * math.log1p(-q))
    p0 = np.exp(logp0)
    p1 = np.exp(logp0 - r.llr(outs, a, b))
    assert p0.sum() > 1 - 1e-9
    for eps in (0.0, 0.4, 0.8):
        true = max(np.maximum(0, p0 - math.exp(eps) * p1).sum(), np.maximum(0, p1 - math.exp(eps) * p0).sum())
        assert true - 1e-9 <= got.delta(eps) <= true + 3e-3
    assert got.delta(got.upper) == 0.0 and law.rate > 0


def test_one_record_per_side():
    with pytest.raises(ValueError, match="two user records"):
        report_pair_loss(BASE, (np.zeros((2, 1)), [0.0, 1.0]), (np.zeros((1, 1)), [0.0]))


def test_certificate_domains_meet_the_issue():
    for domain in domains():
        res = certify_domain(domain)
        assert res.as_expected, (domain.name, res.worst)
        if domain.expected == "certified":
            assert res.n_pairs >= 300 and res.worst["upper"] <= domain.epsilon_claimed + 1e-12
        else:
            assert res.worst["lower"] == pytest.approx(2.5, rel=1e-9)  # (L + 1) eps / 2 with L = 4
