"""Issue 26 finding 1, re-run as tests: JointExp at ordinary data sizes, and its pre-fix mutant.

The pre-fix forward pass (kept as :class:`audit.privatree.underflow_jointexp.UnderflowJointExp`)
underflowed on tied data: at epsilon 4 with 9 levels, 7,451 records at 0.5 gave spread-out
quantiles and 7,452 gave every quantile at the lower bound, with probability 1. The fixed
mechanism's law on both is the same Binomial split of the edges, so the event "every edge at the
lower bound" has probability about ``(1 / 65537)^9`` under both.

Statistics: :func:`audit.audit_pairs` at its default alpha 0.05 (Clopper-Pearson, both directions,
event chosen on a pilot batch and counted on fresh samples), seeds fixed, so each verdict below is
deterministic; a violation means the (1 - alpha) lower confidence bound on the loss exceeds the
claim. 400 outputs per input: the mutant's event is certain on one side and impossible on the
other, so its lower bound is ``ln(p_lo / p_hi)`` with ``p_lo`` near 0.99 and ``p_hi`` near 0.009
(about 4.7 > 4); the fixed mechanism's lower bound is 0 unless an event separates its samples.
"""
from __future__ import annotations

from functools import partial

import numpy as np

from audit import Claim, audit_pairs
from audit.engine.estimation.neighbours import NeighbourPair
from audit.privatree.underflow_jointexp import UnderflowJointExp, UnderflowPrivaTree
from reference.mechanisms import JointExp
from reference.privatree import PrivaTreeClassifier

LEVELS = np.linspace(0, 1, 11)[1:-1]
N = 7_452  # the first size at which the pre-fix pass underflows entirely at epsilon 4


class _AtLowerBound:
    """Post-processing of a quantile mechanism: whether every quantile is the lower bound."""

    def __init__(self, mech):
        self.mech = mech

    def __call__(self, data, rng):
        return bool(np.all(self.mech.sample(data, rng) == self.mech.bounds[0]))

    def batch(self, data, n, rng):
        return [bool(v) for v in np.all(self.mech.batch(data, n, rng) == self.mech.bounds[0], axis=1)]


def _tied_pair():
    return NeighbourPair(np.full(N - 1, 0.5), np.full(N, 0.5), f"{N - 1} vs {N} records, all at 0.5")


def test_mutant_underflows_between_neighbours_and_is_flagged():
    pair = _tied_pair()
    rng = np.random.default_rng(0)
    mutant = UnderflowJointExp(4.0, LEVELS, (0.0, 1.0))
    assert not np.any(np.all(mutant.batch(pair.d0, 50, rng) == 0.0, axis=1))
    assert np.all(mutant.batch(pair.d1, 50, rng) == 0.0)
    v = audit_pairs(_AtLowerBound(mutant), [pair], Claim(epsilon=4.0), n_samples=400, seed=1)
    assert v.violation and v.epsilon_lower > 4.0


def test_fixed_jointexp_keeps_its_claim_on_the_same_pair():
    pair = _tied_pair()
    fixed = JointExp(4.0, LEVELS, (0.0, 1.0))
    v = audit_pairs(_AtLowerBound(fixed), [pair], Claim(epsilon=4.0), n_samples=400, seed=1)
    assert not v.violation and v.epsilon_lower == 0.0
    assert np.isfinite(fixed.log_normaliser(pair.d1))
    low = np.zeros(LEVELS.size)
    # the lower-bound output has the same tiny probability under both neighbours (loss <= epsilon)
    assert abs(fixed.logpmf(low, pair.d0) - fixed.logpmf(low, pair.d1)) <= 4.0 + 1e-9


def _privatree(cls):
    # epsilon 8 with shares (1/2, 1/4, 1/4): the one feature's JointExp gets epsilon 4
    return partial(cls, epsilon=8.0, max_depth=1, bounds=[(0.0, 1.0)], classes=[0, 1],
                   epsilon_shares=(0.5, 0.25, 0.25))


class _EdgesAtLowerBound:
    """Post-processing of a PrivaTree fit: whether every released bin edge below the upper bound is 0."""

    def __init__(self, make):
        self.make = make

    def __call__(self, data, rng):
        X, y = data
        est = self.make(random_state=int(rng.integers(2 ** 62))).fit(X, y)
        (_, edges), = est.release(edges="exact")[0]
        return all(e == 0.0 for e in edges[:-1])


def _pf_pair():
    y = np.arange(N) % 2
    X = np.full((N, 1), 0.5)
    return NeighbourPair((X[:-1], y[:-1]), (X, y), f"{N - 1} vs {N} records at x = 0.5")


def test_underflow_mutant_is_flagged_through_privatree_and_strict_privatree_is_not():
    """The same leak inside a whole learner: strict PrivaTree's released edges (``release(edges="exact")``)."""
    pair = _pf_pair()
    v = audit_pairs(_EdgesAtLowerBound(_privatree(UnderflowPrivaTree)), [pair], Claim(epsilon=8.0),
                    n_samples=400, seed=2)
    assert v.epsilon_lower > 4.0  # the quantile step alone loses more than its share
    fixed = audit_pairs(_EdgesAtLowerBound(_privatree(PrivaTreeClassifier)), [pair], Claim(epsilon=8.0),
                        n_samples=400, seed=2)
    assert fixed.epsilon_lower == 0.0
    est = _privatree(PrivaTreeClassifier)(random_state=0).fit(*pair.d1)
    assert est.privacy_ledger_.total_epsilon() <= 8.0 + 1e-12


def test_strict_privatree_on_100000_tied_records_releases_edges_with_the_exact_law():
    """Issue 26 "done when": strict PrivaTree on 100,000 records all at 0.5 (epsilon_q = 1, 9
    levels) releases bin edges whose number at or below 0.5 follows JointExp's exact law,
    Binomial(9, c0 / (c0 + c1)) with ``c0 = 32,769`` grid points at or below 0.5 and ``c1 = 32,768``
    above it (every split has the same utility), through the reference (150 fits) and the batched
    path (600 runs). Released edges are distinct values (equal draws merge: probability below
    0.2%, negligible at these sizes). Chi-square, cells below 5 expected pooled, fixed seeds,
    false-alarm rate 1e-3 per path."""
    from scipy import stats

    from reference.privatree.batch import PrivaTreeBatch

    n = 100_000
    X = np.full((n, 1), 0.5)
    y = np.arange(n) % 2
    params = dict(epsilon=2.0, max_depth=1, bounds=[(0.0, 1.0)], classes=[0, 1], epsilon_shares=(0.5, 0.25, 0.25))
    p = stats.binom.pmf(np.arange(10), 9, 32769 / 65537)

    def pvalue(below):
        obs = np.bincount(below, minlength=10)
        big = p * obs.sum() >= 5
        o = np.append(obs[big], obs[~big].sum())
        e = np.append(p[big], p[~big].sum()) * obs.sum()
        return stats.chisquare(o, e * o.sum() / e.sum()).pvalue

    ref = [np.sum(np.array(PrivaTreeClassifier(**params, random_state=s).fit(X, y).release(edges="exact")[0][0][1])
                  <= 0.5) for s in range(150)]
    assert pvalue(np.array(ref)) > 1e-3
    fast = PrivaTreeBatch(edges="exact", **params)
    prep = fast.prepare((X, y))
    trees = fast.fit_trees((X, y), 600, np.random.default_rng(7), prepared=prep)
    below = np.array([np.sum(np.array(r[0][0][1]) <= 0.5) for r in fast.releases(trees, prepared=prep)])
    assert pvalue(below) > 1e-3
