"""The scale family (audit.engine.scale): leaks that need thousands of records.

The pre-fix JointExp inside PrivaTree (``UnderflowPrivaTree``, epsilon 2 with shares 1/2, 1/4,
1/4, so JointExp runs at epsilon 1) releases spread-out bins up to 29,805 tied records and every
edge at the lower bound from 29,806 on (and, from about 7,500 tied records, draws some edges far
from their ideal law: partial underflow). Grown to a fixed 32,000 records (so that the result does
not depend on the machine's speed, as it did with a time budget), the family must find the pair
29,805 vs 29,806 by bisection, and the confirmation (``audit_pairs``, alpha 0.05, 300 fresh outputs per input, fixed seed) must flag
it; on the fixed learner the pairs it proposes are confirmed as passes (false-alarm rate at most
alpha by construction: the pairs are chosen on samples the confirmation never sees).
"""
from __future__ import annotations

from functools import partial

import numpy as np
import pytest

from audit import Claim, audit_pairs, learner_mechanism
from audit.engine.scale import SCALE_PATTERNS, pattern_data, scale_pairs
from audit.privatree.underflow_jointexp import UnderflowPrivaTree
from reference.privatree import PrivaTreeClassifier

PARAMS = dict(epsilon=2.0, max_depth=1, bounds=[(0.0, 1.0)], classes=[0, 1], epsilon_shares=(0.5, 0.25, 0.25))


@pytest.mark.parametrize("pattern", SCALE_PATTERNS)
def test_patterns_grow_by_one_record(pattern):
    X0, y0 = pattern_data(pattern, 50, [(0.0, 1.0), (-2.0, 2.0)], ["a", "b"])
    X1, y1 = pattern_data(pattern, 51, [(0.0, 1.0), (-2.0, 2.0)], ["a", "b"])
    assert X0.shape == (50, 2) and X1.shape == (51, 2)
    if pattern != SCALE_PATTERNS[3]:  # the pure region's last record is the one of the other class
        np.testing.assert_array_equal(X1[:50], X0)
        assert y1[:50].tolist() == y0.tolist()
    assert np.all((X0[:, 1] >= -2.0) & (X0[:, 1] <= 2.0)) and set(y1.tolist()) <= {"a", "b"}


def test_scale_family_finds_the_underflow_threshold_and_confirms_it():
    mech = learner_mechanism(partial(UnderflowPrivaTree, **PARAMS))
    found = scale_pairs(mech, [(0.0, 1.0)], [0, 1], n_max=32_000, patterns=SCALE_PATTERNS[:1], seed=0)
    pair, = found.pairs
    n0, n1 = len(pair.d0[1]), len(pair.d1[1])
    assert (n0, n1) == (29_805, 29_806), pair.description
    assert found.sizes[SCALE_PATTERNS[0]][-1] == 32_000
    v = audit_pairs(mech, [pair], Claim(epsilon=2.0), n_samples=300, seed=3)
    assert v.violation and v.epsilon_lower > 3.0


def test_fixed_n_max_must_be_lo_times_a_power_of_two():
    mech = learner_mechanism(partial(PrivaTreeClassifier, **PARAMS))
    with pytest.raises(ValueError, match="n_max must be lo"):
        scale_pairs(mech, [(0.0, 1.0)], [0, 1], n_max=3_000)


def test_scale_family_on_the_fixed_learner_confirms_passes():
    mech = learner_mechanism(partial(PrivaTreeClassifier, **PARAMS))
    found = scale_pairs(mech, [(0.0, 1.0)], [0, 1], n_max=4_000, seed=0)
    # every pattern either gave a pair or was left unbisected (its law moved at no interval), never both
    assert len(found.pairs) + len(found.flat) == len(SCALE_PATTERNS) and found.n_max == 4_000
    assert not set(found.flat) & {p.description.split("] ")[0][len("[scale: "):] for p in found.pairs}
    if found.pairs:
        v = audit_pairs(mech, found.pairs, Claim(epsilon=2.0), n_samples=300, seed=3)
        assert not v.violation


def test_a_pattern_whose_law_never_moves_is_not_bisected():
    """A mechanism whose output law is the same at every size: no interval scores above 0, so no pattern is
    bisected (only the five sizes 1,000 to 16,000 are drawn) and the family offers no pair."""
    def mech(data, rng):
        return int(rng.integers(0, 2))

    found = scale_pairs(mech, [(0.0, 1.0)], [0, 1], n_max=16_000, seed=0)
    assert found.pairs == [] and found.flat == list(SCALE_PATTERNS) and found.best() is None
    assert all(sizes == [1_000, 2_000, 4_000, 8_000, 16_000] for sizes in found.sizes.values())
    assert "not bisected" in found.summary()
