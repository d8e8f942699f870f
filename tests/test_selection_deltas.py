"""Every float-drawn selection charged its residual delta (issue 26 finding 5), re-run as tests.

Permute-and-flip's batched sampler runs the published algorithm over all draws at once (no floating-point
exponential noise), so it has the one-draw sampler's law and bounded residual delta; every learner's
permute-and-flip charge carries that delta. Goodness of fit: chi-square, 60,000 draws, fixed seed,
false-alarm rate 1e-3 per test.
"""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from reference.baselines.diffprivlib_tree import RandomTreePFClassifier
from reference.mechanisms import PermuteAndFlip
from reference.mechanisms.grid import selection_delta
from reference.privatree import PrivaTreeClassifier


@pytest.mark.parametrize("u, eps, mono", [(np.array([0.0, 1.0, 3.0, 3.0, -40.0]), 1.0, False),
                                          (np.array([5.0, 0.0, 2.0]), 0.3, True),
                                          (np.arange(12.0), 2.0, False)])
def test_batched_permute_and_flip_has_the_exact_law(u, eps, mono):
    pf = PermuteAndFlip(eps, 1.0, monotonic=mono)
    draws = pf.batch(u, 60_000, np.random.default_rng(2605))
    obs = np.bincount(draws, minlength=u.size)
    p = pf.pmf(u)
    big = p * 60_000 >= 5
    o, e = np.append(obs[big], obs[~big].sum()), np.append(p[big], p[~big].sum()) * 60_000
    keep = e > 0
    assert stats.chisquare(o[keep], e[keep] * o[keep].sum() / e[keep].sum()).pvalue > 1e-3


def test_residual_delta_of_permute_and_flip_is_charged_by_the_leaves():
    X, y = np.array([[0.2], [0.8], [0.7]]), np.array([0, 1, 1])
    pt = PrivaTreeClassifier(epsilon=1.0, max_depth=1, bounds=[(0, 1)], classes=[0, 1], binning="uniform",
                             epsilon_shares=(0.0, 0.5, 0.5), random_state=0).fit(X, y)
    leaves = [c for c in pt.privacy_ledger_.charges if c.mechanism.startswith("PermuteAndFlip")]
    assert leaves and all(c.delta == selection_delta(2, c.epsilon) > 0 for c in leaves)
    rt = RandomTreePFClassifier(epsilon=1.0, max_depth=1, bounds=[(0, 1)], classes=[0, 1], random_state=0).fit(X, y)
    assert all(c.delta > 0 for c in rt.privacy_ledger_.charges if c.mechanism.startswith("PermuteAndFlip"))
    assert PermuteAndFlip(1.0).residual_delta(2) == selection_delta(2, 1.0) < 1e-13
