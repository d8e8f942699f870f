"""PHIST's report law (audit.baselines_law.phist_report) against the randomisers' own laws and PHIST's fit,
and the certificate domains.

Goodness of fit, fixed seeds, false-alarm rate 1e-3 each, cells of expected count below 5 pooled
(tests/law_fit.py):

* ``randomizer="lpdt"``: chi-square over a coarse category of ``PHISTRegressor.release()`` for one user
  (per leaf: the fallback value, the clipped ends, or below / above the midpoint), whose law is the
  push-forward of the report law (bits times lattice label), 4,000 fits;
* ``randomizer="laplace"``: the release clips and merges the report, so the fit's sums ``D_`` (= ``W``) and
  ``N_`` (= ``Z``) of one user are tested (per cell, ``W`` in {<= 0, 1, >= 2} and ``Z`` below, within or
  above +-1/2), 4,000 fits.

A seeded mutant spending twice its epsilon must be rejected at p < 1e-6.
"""
from __future__ import annotations

import collections
import itertools
import math

import numpy as np
import pytest

from audit.baselines_law.phist_report import laplace_mechanisms, lpdt_params, pair_loss
from audit.results.certify import certify_domain
from audit.engine.exact_law.exact import privacy_loss
from audit.lpdt.certificate import domains
from audit.lpdt.exact_law import randomizer_of
from law_fit import pooled_pvalue, twice_epsilon
from reference.baselines.phist import PHISTRegressor
from reference.mechanisms import round_to_grid

BASE = dict(epsilon=1.0, bounds=[(0.0, 1.0)], n_bins=2, target_bounds=(0.0, 1.0))
RECORDS = [(np.array([x]), y) for x in (0.2, 0.8) for y in (0.0, 0.4, 1.0)]
REC = (np.array([0.2]), 0.375)


def _one(rec):
    return rec[0][None, :], [rec[1]]


def _cdf(law, c: int, k):
    """``P(c + DLap <= k)`` of a discrete-Laplace law (rate, grid units)."""
    a = math.exp(-law.rate)
    m = k - c
    return a ** (-m) / (1 + a) if m < 0 else 1 - a ** (m + 1) / (1 + a)


def test_lpdt_pair_loss_is_the_randomisers_exact_loss():
    r = randomizer_of(lpdt_params(BASE))
    for a, b in itertools.combinations(RECORDS, 2):
        got = pair_loss(dict(BASE, randomizer="lpdt"), _one(a), _one(b))
        exact = privacy_loss(r, a, b)
        assert got.lower <= exact * (1 + 1e-9) and exact <= got.upper * (1 + 1e-9) and got.upper <= 1 + 1e-12


def test_laplace_pair_loss_against_the_mechanisms_own_laws():
    """The loss at the centres, from the mechanisms' scalar log-likelihood ratios, per cell."""
    params = dict(BASE, randomizer="laplace")
    z, w = laplace_mechanisms(params)
    for a, b in itertools.combinations(RECORDS, 2):
        got = pair_loss(params, _one(a), _one(b))
        cells = [(int(a[0][0] > 0.5) == j, int(b[0][0] > 0.5) == j) for j in range(2)]
        cz = [(int(round_to_grid(a[1], z.grid)) * i0, int(round_to_grid(b[1], z.grid)) * i1) for i0, i1 in cells]
        llr = sum(float(z.llr_units(c0 * z.grid, c0, c1)) for c0, c1 in cz)
        llr += sum(w.logpmf(int(i0), int(i0)) - w.logpmf(int(i0), int(i1)) for i0, i1 in cells)
        assert got.lower <= llr * (1 + 1e-9) + 1e-15 and llr <= got.upper * (1 + 1e-9) + 1e-15
        assert got.upper <= 1.0


def _lpdt_category(release):
    return tuple("m" if v == 0.5 else "lo" if v == 0.0 else "hi" if v == 1.0 else "a" if v < 0.5 else "b"
                 for v in release[2])


def _lpdt_category_law(params, rec):
    r = randomizer_of(lpdt_params(params))
    law, g = r.label.law(1), r.label.grid
    c = int(round_to_grid(rec[1], g))
    mid, hi = int(0.5 / g), int(1.0 / g)
    F = lambda k: _cdf(law, c, k)  # noqa: E731
    label = {"lo": F(0), "a": F(mid - 1) - F(0), "m": F(mid) - F(mid - 1), "b": F(hi - 1) - F(mid), "hi": 1 - F(hi - 1)}
    u, q = r.one_hot(rec[0]), r.q
    out = collections.defaultdict(float)
    for bits in itertools.product((0, 1), repeat=r.n_leaves):
        pb = math.prod(q if b != v else 1 - q for b, v in zip(bits, u))
        for cat, pl in label.items():
            out[tuple(cat if b else "m" for b in bits)] += pb * pl
    return dict(out)


def test_lpdt_release_law_matches_phists_fit_and_rejects_a_mutant():
    params = dict(BASE, randomizer="lpdt")
    law = _lpdt_category_law(params, REC)
    assert math.fsum(law.values()) == pytest.approx(1.0, abs=1e-12)
    fits = collections.Counter(_lpdt_category(PHISTRegressor(**params, random_state=s).fit(*_one(REC)).release())
                               for s in range(4000))
    assert pooled_pvalue(law, fits) > 1e-3
    bad = collections.Counter(_lpdt_category(twice_epsilon(PHISTRegressor)(**params, random_state=s)
                                             .fit(*_one(REC)).release()) for s in range(4000))
    p = pooled_pvalue(law, bad)
    assert p < 1e-6, p


def _laplace_category(model):
    W = tuple(int(min(max(v, 0), 2)) for v in model.D_)
    Z = tuple(int(np.sign(v)) if abs(v) > 0.5 else 0 for v in model.N_)
    return W + Z


def _laplace_category_law(params, rec):
    z, w = laplace_mechanisms(params)
    lz, lw, h = z.law(1), w.noise_law, int(0.5 / z.grid)
    cell = int(rec[0][0] > 0.5)
    per_w, per_z = [], []
    for j in range(2):
        u, cz = int(j == cell), int(round_to_grid(rec[1], z.grid)) * int(j == cell)
        pw = [_cdf(lw, u, 0), _cdf(lw, u, 1) - _cdf(lw, u, 0), 1 - _cdf(lw, u, 1)]
        pz = {-1: _cdf(lz, cz, -h - 1), 0: _cdf(lz, cz, h) - _cdf(lz, cz, -h - 1), 1: 1 - _cdf(lz, cz, h)}
        per_w.append(pw)
        per_z.append(pz)
    out = {}
    for w0, w1, z0, z1 in itertools.product(range(3), range(3), (-1, 0, 1), (-1, 0, 1)):
        out[(w0, w1, z0, z1)] = per_w[0][w0] * per_w[1][w1] * per_z[0][z0] * per_z[1][z1]
    return out


def test_laplace_report_law_matches_phists_fit_and_rejects_a_mutant():
    params = dict(BASE, randomizer="laplace")
    law = _laplace_category_law(params, REC)
    fits = collections.Counter(_laplace_category(PHISTRegressor(**params, random_state=s).fit(*_one(REC)))
                               for s in range(4000))
    assert pooled_pvalue(law, fits) > 1e-3
    bad = collections.Counter(_laplace_category(twice_epsilon(PHISTRegressor)(**params, random_state=s)
                                                .fit(*_one(REC))) for s in range(4000))
    p = pooled_pvalue(law, bad)
    assert p < 1e-6, p


def test_beyond_the_limits_a_value_error_names_the_parameter():
    with pytest.raises(ValueError, match="randomizer='gauss'"):
        pair_loss(dict(BASE, randomizer="gauss"), _one(RECORDS[0]), _one(RECORDS[1]))
    with pytest.raises(ValueError, match="n_bins=300"):
        pair_loss(dict(BASE, bounds=[(0.0, 1.0)] * 2, n_bins=300), (np.zeros((1, 2)), [0.0]), (np.ones((1, 2)), [1.0]))
    with pytest.raises(ValueError, match="two user records"):
        pair_loss(dict(BASE, randomizer="laplace"), (np.zeros((2, 1)), [0.0, 1.0]), _one(RECORDS[0]))


def test_certificate_domains_certify_phist():
    for domain in [d for d in domains() if d.name.startswith("PHIST")]:
        res = certify_domain(domain)
        assert res.verdict == "certified" and res.n_pairs >= 300, (domain.name, res.worst)
        assert res.worst["upper"] <= domain.epsilon_claimed + 1e-12
