"""``check --exact`` on code whose uniform draws are not noise: random thresholds drawn from public bounds,
shifted and scaled, kept in the release and compared with the records (``audit.engine.exact_code``: the release's
law given the draws, by cells; the coupling given the draws, box by box).

Each exact value is checked against a closed form written here from the subject's definition: with a threshold
``t`` uniform on ``[0, 1)``, the records below ``t`` are fixed on each cell between the data's values, so the loss
is the worst cell's (epsilon per unit the noisy count moves; infinite where a count without noise moves).
"""
import functools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from audit.engine.exact_code.undecided import Undecided
from audit.gate.exact import exact_check, pair_exact
from tests.subjects import exact_thresholds as subjects

VALUES = (0.0, 0.25, 0.5, 0.75, 1.0)


def _threshold_count_loss(d0, d1, epsilon, noisy):
    """The closed form: the largest change of ``#{x < t}`` over the cells of ``t``, times epsilon (noisy), or
    infinite when it changes at all (no noise)."""
    cuts = sorted({0.0, 1.0} | {x for x in d0 + d1 if 0.0 < x < 1.0})
    move = max(abs(sum(x <= a for x in d0) - sum(x <= a for x in d1)) for a, b in zip(cuts, cuts[1:]))
    if noisy:
        return epsilon * move
    return math.inf if move else 0.0


@settings(max_examples=25, deadline=None)
@given(st.lists(st.sampled_from(VALUES), min_size=1, max_size=3), st.integers(0, 2), st.booleans())
def test_property_threshold_counts_match_the_closed_form(records, drop, noisy):
    d1 = tuple(records)
    d0 = d1[:drop % len(d1)] + d1[drop % len(d1) + 1:]
    truth = _threshold_count_loss(d0, d1, 1.0, noisy)
    res = pair_exact(functools.partial(subjects.threshold_count, noisy=noisy), d0, d1)
    if math.isinf(truth):
        assert math.isinf(res.lower), (d0, d1, res)
    else:
        assert res.lower <= truth + 1e-9 and res.upper >= truth - 1e-9, (d0, d1, res, truth)
        assert res.upper - res.lower <= 1e-9, (d0, d1, res, truth)  # decided: the interval is the value


def test_a_random_stump_is_proved_and_its_exact_side_count_refuted():
    ok = exact_check(subjects.RandomStump, 1.0, "add-remove", bounds=[(0.0, 1.0)], classes=[0, 1], records=3)
    assert ok.verdict == "proved" and abs(ok.lower - 1.0) <= 1e-9 and ok.upper <= 1.0 + 1e-9, ok
    bad = exact_check(subjects.RandomStumpExactSide, 1.0, "add-remove", bounds=[(0.0, 1.0)], classes=[0, 1],
                      records=2)
    assert bad.verdict == "refuted" and math.isinf(bad.lower), bad
    assert ok.seconds <= 60 and bad.seconds <= 60


def test_threshold_mechanism_verdicts_over_a_domain():
    ok = exact_check(subjects.threshold_count, 1.0, "add-remove", classes=[0.0, 0.25, 0.5, 1.0], records=2)
    assert ok.verdict == "proved" and abs(ok.lower - 1.0) <= 1e-9, ok
    bad = exact_check(functools.partial(subjects.threshold_count, noisy=False), 1.0, "add-remove",
                      classes=[0.0, 0.5, 1.0], records=2)
    assert bad.verdict == "refuted" and math.isinf(bad.lower), bad


def test_a_point_of_the_segment_is_a_uniform_draw_and_of_the_triangle_undecided():
    res = pair_exact(subjects.segment_point, (0,), ())
    assert abs(res.lower - 1.0) <= 1e-9 and abs(res.upper - 1.0) <= 1e-9, res
    with pytest.raises(Undecided) as info:
        exact_check(functools.partial(subjects.segment_point, classes=3), 1.0, "add-remove", classes=[0], records=1)
    assert "dirichlet" in str(info.value) and "exact_thresholds.py:" in info.value.site


def test_uniform_draws_keep_their_law_through_affine_maps():
    """``c - u``, ``u * -2 + 1`` and a comparison on each: the decision's probability is the cut's length."""
    def mech(data, rng):
        u = rng.random()
        t = 1.0 - u  # decreasing map: t < 0.25 is u > 0.75
        s = u * -2.0 + 1.0  # s < 0 is u > 0.5
        return bool(t < 0.25), bool(s < 0.0), len(data)

    law = pair_exact(mech, (0,), (0,))
    assert law.lower == 0.0 and law.upper <= 1e-11, law  # the intervals' widths only
    from audit.engine.exact_code.explore import explore

    ex = explore(lambda: mech((0,), np.random.default_rng()))
    probs = {p.labels: p.prob for p in ex.paths}
    assert math.isclose(sum(probs.values()), 1.0)
    assert sorted(round(v, 12) for v in probs.values()) == [0.25, 0.25, 0.5], probs
