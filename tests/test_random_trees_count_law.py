"""The strict random forest over every dataset of any size (audit.random_trees.count_law).

The bound on every box is the law's own supremum (k trees x the leaf suprema of the moves the structures allow),
held against an enumeration of the leaves' events (rays of noisy counts and the invalid set) and against the privacy
proof's bound; the points' lower ends are the listed-dataset law's. Hypothesis draws count vectors (a failing
example is a real counterexample: the checks are exact up to float slack, no statistics).
"""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from audit.engine.exact_law.allsizes import INF, certify_all_sizes, point_loss
from audit.random_trees.certificate import _BASE, all_sizes
from audit.engine.exact_law.count_leaf_law import leaf_cutoff, leaf_law
from audit.random_trees.count_law import ForestCountLaw, leaf_moves, leaf_supremum
from audit.random_trees.exact_law import _counts, forest_setup, pair_loss, structure_classes
from hypothesis import given, settings, strategies as st


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
    from audit.results.certify import certify_domain
    from audit.random_trees.certificate import domains

    ref = certify_domain(domains()[0])
    res = certify_all_sizes(ForestCountLaw(dict(_BASE, neighbouring="add-remove")), tol=1e-12, max_records=6)
    assert not res.complete  # the one-pair boxes keep the law's bound 1 > their lower ends
    assert res.lower == pytest.approx(ref.worst["lower"], abs=1e-12) and res.upper == pytest.approx(1.0)


def _leaf_sides(c0: tuple, c1: tuple, rate: float, rule: str) -> tuple[float, float]:
    """``(max_E ln P0(E)/P1(E), max_E ln P1(E)/P0(E))`` over the leaf's unrounded events (every ray of noisy counts
    within the cut-off, and the invalid set), from the enumerated leaf laws of both count vectors."""
    hmax = leaf_cutoff(c0 + c1, rate)
    a, b = leaf_law(c0, rate, rule, hmax), leaf_law(c1, rate, rule, hmax)
    ratios = [math.log(a.rays[r] / b.rays[r]) for r in a.rays if a.rays[r] > 0 and b.rays.get(r, 0.0) > 0]
    ratios.append(math.log(a.invalid / b.invalid))
    return max(ratios), max(-v for v in ratios)


def _enumerated_loss(params: dict, c0: tuple, c1: tuple) -> float:
    """The forest's loss on the unrounded release of the count vectors ``c0``, ``c1`` (cells: x = 0.25, 0.75 by
    class 0, 1), written from the structures and the leaves' enumerated events: ``k`` times the worst direction of
    the worst structure class's summed leaf log-ratios."""
    k, h, bounds, _, _, rate, rule = forest_setup(params, np.zeros((0, 1)), [])
    (X0, y0), (X1, y1) = _dataset(c0), _dataset(c1)
    worst = 0.0
    for nodes, w in structure_classes(bounds.tolist(), [[0.25, 0.75]], h):
        if w <= 0:
            continue
        up = down = 0.0
        for a, b in zip(_counts(X0, y0.tolist(), nodes, h), _counts(X1, y1.tolist(), nodes, h)):
            if a != b:
                u, d = _leaf_sides(a, b, rate, rule)
                up, down = up + u, down + d
        worst = max(worst, up, down)
    return k * worst


_COUNTS = st.lists(st.integers(0, 3), min_size=4, max_size=4).map(tuple)


@settings(max_examples=25, deadline=None)
@given(c=_COUNTS, data=st.data())
def test_the_law_bound_covers_the_enumerated_loss_and_is_at_most_the_proofs(c, data):
    """At every small count vector and move, under both relations: the enumerated loss of the unrounded release is at
    most the law's bound (the same on every box), which is at most the proof's ``k r |c - c'|_1``; and the enumeration reaches the bound at every count vector (module docstring:
    a class changed within a leaf is approached by the rays ``(p, 1)``, whose truncated sums keep the atom ``t = 1``
    alone once ``2 p`` passes the cut-off)."""
    relation = data.draw(st.sampled_from(["add-remove", "substitute"]))
    params = dict(_BASE, neighbouring=relation)
    law = ForestCountLaw(params)
    if relation == "add-remove":
        move = (data.draw(st.integers(0, 3)),)
        c0, c1 = c, tuple(v + (j == move[0]) for j, v in enumerate(c))
    else:
        move = tuple(sorted(data.draw(st.lists(st.integers(0, 3), min_size=2, max_size=2, unique=True))))
        c0 = tuple(v + (j == move[0]) for j, v in enumerate(c))
        c1 = tuple(v + (j == move[1]) for j, v in enumerate(c))
    bound = law.law_bound(move)
    (lo, up), = law.pair_delta(c, c, move).values()
    assert up == bound
    proof = law.k * law.rate * sum(abs(a - b) for a, b in zip(c0, c1)) * (1 + 1e-12)
    assert bound <= proof
    exact = _enumerated_loss(params, c0, c1)
    assert lo <= exact + 1e-9 and exact <= bound + 1e-9, (c0, c1, lo, exact, bound)
    assert exact >= bound - 1e-9, (c0, c1, exact, bound)


def test_the_leaf_suprema_and_moves_are_as_stated():
    assert leaf_supremum("add", 0.5) == leaf_supremum("remove", 0.5) == 0.5 and leaf_supremum("swap", 0.5) == 1.0
    with pytest.raises(ValueError, match="kind"):
        leaf_supremum("move", 0.5)
    route = (0, 1)  # grid value 0 in leaf 0, value 1 in leaf 1; two classes
    assert leaf_moves(route, 2, (3,)) == [(1, "add")]
    assert leaf_moves(route, 2, (0, 1)) == [(0, "swap")]
    assert leaf_moves(route, 2, (0, 2)) == [(0, "remove"), (1, "add")]
    assert leaf_moves((0, 0), 2, (0, 2)) == []  # the same class, the same leaf: nothing moves
