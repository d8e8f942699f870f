"""The strict DiPriMeFlip classifier (depth 1) over every dataset of any size (audit.diprime.count_law).

Held against the listed-dataset law (audit.diprime.exact_law, which enumerates the leaves' atoms and evaluates the
median's permute-and-flip on the datasets themselves) on every add/remove pair of up to 5 records; the search
capped at the listed certificate's 6 records must find its maximum; the median's tail bounds are checked against
the exact values far beyond the window. No randomness.
"""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from audit.results.certify import certify_domain
from audit.diprime.certificate import _BASE, all_sizes, domains
from audit.diprime.count_law import WINDOW, DiPriMeFlipCountLaw
from audit.diprime.exact_law import pair_loss
from audit.engine.exact_law.allsizes import INF, certify_all_sizes, point_loss


def _dataset(c):
    X = np.array([[0.25 if j < 2 else 0.75] for j in range(4) for _ in range(c[j])], dtype=float).reshape(-1, 1)
    y = np.array([j % 2 for j in range(4) for _ in range(c[j])])
    return X, y


def test_point_losses_match_the_listed_law_on_every_small_pair():
    law = DiPriMeFlipCountLaw(dict(_BASE))
    n = 0
    for c in itertools.product(range(5), repeat=4):
        if sum(c) > 4:
            continue
        for i in range(4):
            c1 = tuple(v + (j == i) for j, v in enumerate(c))
            ref = pair_loss(dict(_BASE), _dataset(c), _dataset(c1))
            lo, up, _ = point_loss(law, c, i)
            # the same upper end (both analytic in the leaves); this lower end uses the leaf's exact e^eps_l atom,
            # the listed law's its enumerated atoms: never below it, never above the upper end
            assert up == pytest.approx(ref.upper, abs=2e-8), (c, i)
            assert ref.lower - 2e-8 <= lo <= ref.upper + 2e-8, (c, i)
            n += 1
    assert n == 70 * 4


def test_the_search_capped_at_six_records_finds_the_listed_maximum():
    d = domains()[0]
    assert d.name == "strict flip, depth 1" and d.max_records == 6
    ref = certify_domain(d)
    res = certify_all_sizes(DiPriMeFlipCountLaw(d.params), tol=1e-8, max_records=6)
    assert res.complete and res.worst["records"] == 6
    assert abs(res.lower - ref.worst["lower"]) < 1e-8 and abs(res.upper - ref.worst["upper"]) < 1e-8


def test_every_size_tends_to_eps_s_plus_eps_l():
    d = all_sizes()[0]
    res = certify_all_sizes(d.law(d.params), relation=d.relation, tol=d.tol)
    # the values on listed datasets: 0.6686 at 6 records, 0.6823 at 8; the limit is 0.25 + 0.5
    assert res.complete and 0.7499999 <= res.lower <= 0.75 <= res.upper <= 0.75 + 1e-8
    assert res.limit == pytest.approx(0.75) and d.verdict(res) == "certified"
    capped = certify_all_sizes(d.law(d.params), tol=1e-8, max_records=8)
    assert capped.lower == pytest.approx(0.6823, abs=1e-4)


@pytest.mark.parametrize("m_lo", [0, 3, 40, 200, 1199])
def test_the_median_tail_bounds_hold_beyond_the_window(m_lo):
    law = DiPriMeFlipCountLaw(dict(_BASE))
    outer, middle = law._node_range(m_lo, INF)
    for m in range(m_lo, m_lo + WINDOW + 300, 7):
        if m > law.m_exact:
            break
        o, d = law._node(m)
        if math.isfinite(o) and math.isfinite(d):
            assert outer[0] - 1e-12 <= o <= outer[1] + 1e-12 and middle[0] - 1e-12 <= d <= middle[1] + 1e-12, m
    assert outer[1] <= law.eps_s + 1e-15  # never above eps_s: the supremum is a limit


@pytest.mark.parametrize("bad,name", [(dict(variant="exp"), "variant"), (dict(max_depth=2), "max_depth"),
                                      (dict(bounds=[(0.0, 1.0)] * 2), "bounds")])
def test_out_of_reach_configurations_are_refused_by_name(bad, name):
    with pytest.raises(ValueError, match=name):
        DiPriMeFlipCountLaw(dict(_BASE, **bad))


def test_a_bad_grid_and_a_bad_relation_are_refused_by_name():
    with pytest.raises(ValueError, match="grid"):
        DiPriMeFlipCountLaw(dict(_BASE), grid=(0.75, 0.25))
    with pytest.raises(ValueError, match="relation"):
        certify_all_sizes(DiPriMeFlipCountLaw(dict(_BASE)), relation="swap")


def _sub_pair(c, i, j):
    return (tuple(v + (k == i) for k, v in enumerate(c)), tuple(v + (k == j) for k, v in enumerate(c)))


def test_substitution_point_losses_match_the_listed_law_on_every_small_pair():
    """Substitution pairs (c + e_i, c + e_j) of up to 4 records: the count law's interval holds the listed law's
    (which enumerates the leaves' atoms), and its upper end is the listed law's analytic one."""
    law = DiPriMeFlipCountLaw(dict(_BASE))
    n = 0
    for c in itertools.product(range(4), repeat=4):
        if sum(c) > 3:
            continue
        for i, j in itertools.combinations(range(4), 2):
            c0, c1 = _sub_pair(c, i, j)
            ref = pair_loss(dict(_BASE), _dataset(c0), _dataset(c1))
            lo, up, _ = point_loss(law, c, (i, j))
            assert up == pytest.approx(ref.upper, abs=2e-8), (c, i, j)
            assert ref.lower - 2e-8 <= lo <= ref.upper + 2e-8, (c, i, j)
            n += 1
    assert n == 35 * 6


def test_substitution_search_capped_at_four_records_finds_the_listed_maximum():
    d = next(x for x in domains() if x.name == "strict flip, substitution")
    assert d.max_records == 4
    ref = certify_domain(d)
    res = certify_all_sizes(DiPriMeFlipCountLaw(d.params), relation="substitute", tol=1e-8, max_records=4)
    assert res.complete and abs(res.lower - ref.worst["lower"]) < 1e-8 and abs(res.upper - ref.worst["upper"]) < 1e-8


@pytest.mark.parametrize("move", [(0, 1), (0, 2), (0, 3), (1, 2), (2, 3)])
def test_substitution_box_intervals_hold_at_random_points_of_random_boxes(move):
    law = DiPriMeFlipCountLaw(dict(_BASE))
    rng = np.random.default_rng(1)
    for _ in range(150):
        lo = tuple(int(v) for v in rng.integers(0, 40, 4))
        hi = tuple(INF if rng.random() < 0.3 else int(l + rng.integers(0, 40)) for l in lo)
        box = law.pair_delta(lo, hi, move)
        for _ in range(4):
            c = tuple(int(l + rng.integers(0, 10 ** int(rng.integers(1, 5)))) if h == INF
                      else int(rng.integers(l, h + 1)) for l, h in zip(lo, hi))
            for r, (a, b) in law.pair_delta(c, c, move).items():
                assert box[r][0] <= a + 1e-9 and b <= box[r][1] + 1e-9, (lo, hi, c, move, r)


def test_every_size_under_substitution_tends_to_eps_s_plus_twice_eps_l():
    d = all_sizes()[1]
    assert d.relation == "substitute" and d.epsilon_claimed == 2.0
    res = certify_all_sizes(d.law(d.params), relation=d.relation, tol=d.tol)
    # a record of the class absent elsewhere moved to the other value, an outer threshold: 0.25 + 2 * 0.5
    assert res.complete and 1.25 - 1e-8 <= res.lower <= 1.25 <= res.upper <= 1.25 + 1e-8
    assert res.limit == pytest.approx(1.25) and d.verdict(res) == "certified"
