"""The strict random forest over every dataset of any size (audit.random_trees.count_law).

The bound on every box is the noise's analytic ratio bound (k trees x rate x the record's L1 move); the points'
lower ends are the listed-dataset law's. No randomness.
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from audit.engine.exact_law.allsizes import INF, certify_all_sizes, point_loss
from audit.random_trees.certificate import _BASE, all_sizes
from audit.random_trees.count_law import ForestCountLaw
from audit.random_trees.exact_law import pair_loss


def _dataset(c):
    X = np.array([[0.25 if j < 2 else 0.75] for j in range(4) for _ in range(c[j])], dtype=float).reshape(-1, 1)
    y = np.array([j % 2 for j in range(4) for _ in range(c[j])])
    return X, y


def test_point_lower_ends_are_the_listed_laws_and_the_box_bound_is_the_claim():
    params = dict(_BASE, neighbouring="add-remove")
    law = ForestCountLaw(params)
    for c in itertools.product(range(3), repeat=4):
        if sum(c) > 3:
            continue
        for i in range(4):
            c1 = tuple(v + (j == i) for j, v in enumerate(c))
            ref = pair_loss(params, _dataset(c), _dataset(c1), grid=[[0.25, 0.75]])
            lo, up, _ = point_loss(law, c, i)
            assert lo == pytest.approx(ref.lower, abs=1e-12) and ref.upper <= up <= 1.0 + 1e-9
    (lo, up), = law.pair_delta((0, 0, 0, 0), (INF,) * 4, (0,)).values()
    assert lo == 0.0 and up == pytest.approx(1.0)


def test_every_size_is_bounded_by_the_claim_and_a_pair_comes_within_1e_5():
    d = all_sizes()[0]
    res = certify_all_sizes(d.law(d.params), relation=d.relation, tol=d.tol)
    assert res.complete and 1.0 - 1e-5 <= res.lower <= 1.0 <= res.upper <= 1.0 + 1e-9
    assert d.verdict(res) == "certified"
    sub = all_sizes()[1]
    res = certify_all_sizes(sub.law(sub.params), relation="substitute", tol=5e-5, max_records=3)
    assert res.complete and 1.0 - 5e-5 <= res.lower and res.upper <= 1.0 + 1e-9


@pytest.mark.parametrize("bad,name", [(dict(bounds=[(0.0, 1.0)] * 2), "bounds"), (dict(accounting="paper"),
                                                                                  "accounting")])
def test_out_of_reach_configurations_are_refused_by_name(bad, name):
    with pytest.raises(ValueError, match=name):
        ForestCountLaw(dict(_BASE, neighbouring="add-remove", **bad))


def test_the_search_capped_at_six_records_visits_every_pair_and_finds_the_listed_maximum():
    """With a tolerance below the leaves' slack the capped search splits down to single pairs: its best lower end is
    the listed certificate's (the same law at the same pairs), and the bound stays the claim."""
    from audit.certify import certify_domain
    from audit.random_trees.certificate import domains

    ref = certify_domain(domains()[0])
    res = certify_all_sizes(ForestCountLaw(dict(_BASE, neighbouring="add-remove")), tol=1e-12, max_records=6)
    assert not res.complete  # the one-pair boxes keep the analytic bound 1 > their lower ends
    assert res.lower == pytest.approx(ref.worst["lower"], abs=1e-12) and res.upper == pytest.approx(1.0)
