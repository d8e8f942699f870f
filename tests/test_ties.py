"""Exact ties (reference.ties): mathematically equal Gini scores tie, and the first minimum wins.

Mirror images are the ties that double precision breaks: a histogram whose bins read the same backwards gives
boundaries ``s`` and ``B - 2 - s`` equal weighted Gini (the sides swap), which the float formula
``(nL - SL / nL + nR - SR / nR) / N`` can round apart. The learner, its batched path, the exact law's keys and
the CART baseline must all keep the first.
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from hypothesis import given, settings, strategies as st

from audit.privatree.node_law import exact_gini_keys
from reference.baselines.cart import HistogramCARTClassifier
from reference.privatree import PrivaTreeClassifier
from reference.privatree.batch import PrivaTreeBatch
from reference.ties import first_minimum, share_order, weighted_gini


def _float_gini(L, R):
    nL, nR = L.sum(), R.sum()
    return (nL - (L ** 2).sum() / nL + nR - (R ** 2).sum() / nR) / (nL + nR)


def _sides(H):
    L = np.cumsum(H, axis=0)[:-1]
    return L, H.sum(axis=0)[None, :] - L


#: (class-0, class-1) counts of one half of a histogram; the whole is the half, an optional middle, the mirror
halves = st.lists(st.tuples(st.integers(0, 40), st.integers(0, 40)), min_size=1, max_size=4)


def _mirrored(half, middle):
    half = np.array(half, dtype=np.int64)
    parts = [half] + ([np.array([middle])] if middle is not None else []) + [half[::-1]]
    return np.concatenate(parts)


def test_weighted_gini_is_the_exact_value():
    # sides (3, 1) | (1, 2): 4/7 * (1 - 9/16 - 1/16) + 3/7 * (1 - 1/9 - 4/9) = 3/14 + 4/21 = 17/42
    assert weighted_gini([3, 1], [1, 2]) == Fraction(17, 42)
    assert weighted_gini([2, 2], [2, 2]) == Fraction(1, 2)


def test_a_known_mirror_tie_that_floats_round_apart_goes_to_the_first():
    """The noisy-labels input's mirror pair: equal ratios, floats apart by one unit; exactly, the first."""
    found = None
    for a in range(1, 30):
        for b in range(0, 30):
            for c in range(0, 30):
                H = np.array([[a, b], [c, c], [b, a]], dtype=float)
                L, R = _sides(H)
                if _float_gini(L[1], R[1]) < _float_gini(L[0], R[0]):  # the float formula picks the second
                    found = H
                    break
            if found is not None:
                break
        if found is not None:
            break
    assert found is not None, "no mirror pair rounds apart in the searched range"
    L, R = _sides(found)
    assert weighted_gini(L[0], R[0]) == weighted_gini(L[1], R[1])
    floats = [_float_gini(L[i], R[i]) for i in range(2)]
    assert first_minimum(floats, lambda i: weighted_gini(L[i], R[i])) == 0
    # the learner, noise off, on records laid out in those bins: the first boundary
    X = np.concatenate([np.full(int(found[b].sum()), (b + 0.5) / 3) for b in range(3)])[:, None]
    y = np.concatenate([np.repeat([0, 1], found[b].astype(int)) for b in range(3)])
    params = dict(epsilon=1e9, max_depth=1, bounds=[(0.0, 1.0)], classes=[0, 1], binning="uniform", max_bins=3,
                  epsilon_shares=(0.0, 0.5, 0.5))
    assert PrivaTreeClassifier(random_state=0, **params).fit(X, y).release()[:3] == ("node", 0, 0)
    assert all(t[:3] == ("node", 0, 0) for t in PrivaTreeBatch(**params).batch((X, y), 3, np.random.default_rng(0)))


def _first_least(H):
    """``(L, R, ok, exact, want)`` of histogram ``H``: each boundary's sides, whether both hold a record, its exact
    Gini (Fractions; None when a side is empty) and the first boundary of the least one; None when no boundary
    has a record on both sides."""
    L, R = _sides(H)
    ok = (L.sum(axis=1) >= 1) & (R.sum(axis=1) >= 1)
    if not ok.any():
        return None
    exact = [weighted_gini(L[i], R[i]) if ok[i] else None for i in range(len(L))]
    least = min(e for e in exact if e is not None)
    return L, R, ok, exact, next(i for i, e in enumerate(exact) if e == least)


@settings(max_examples=200, deadline=None)
@given(half=halves, middle=st.one_of(st.none(), st.tuples(st.integers(0, 40), st.integers(0, 40))))
def test_mirror_image_ties_choose_the_first_minimum(half, middle):
    """On every mirrored histogram the chosen boundary is the first of the least exact Gini (brute force with
    Fractions): the helper, the learner's node (one feature, noise off) and the exact law's keys agree."""
    H = _mirrored(half, middle)
    found = _first_least(H)
    if found is None:
        return
    L, R, ok, exact, want = found
    floats = np.array([_float_gini(L[i].astype(float), R[i].astype(float)) if ok[i] else math.inf
                       for i in range(len(L))])
    assert first_minimum(floats, lambda i: exact[i]) == want
    keys, _ = exact_gini_keys(H[None], 1.0)
    assert int(np.argmin(keys[0])) == want
    mirror = len(L) - 1 - want  # the mirror image of the chosen boundary ties with it
    assert exact[mirror] == exact[want] and want <= mirror


@settings(max_examples=60, deadline=None)
@given(half=halves, middle=st.one_of(st.none(), st.tuples(st.integers(0, 12), st.integers(0, 12))))
def test_the_learner_batch_and_cart_keep_the_first_of_mirror_ties(half, middle):
    """Records laid out so that a feature's bin histogram is the mirrored one, the noise off (epsilon 1e9): the
    learner, its batched path and the CART baseline split at the first least-Gini boundary."""
    H = _mirrored([(a % 6, b % 6) for a, b in half], None if middle is None else (middle[0] % 6, middle[1] % 6))
    B = len(H)
    if B < 2 or B > 8:
        return
    X = np.concatenate([np.full(int(H[b].sum()), (b + 0.5) / B) for b in range(B)])[:, None]
    y = np.concatenate([np.repeat([0, 1], H[b]) for b in range(B)])
    if len(y) < 2:
        return
    found = _first_least(H)
    if found is None:
        return
    *_, exact, want = found
    params = dict(epsilon=1e9, max_depth=1, bounds=[(0.0, 1.0)], classes=[0, 1], binning="uniform", max_bins=B,
                  epsilon_shares=(0.0, 0.5, 0.5))
    tree = PrivaTreeClassifier(random_state=0, **params).fit(X, y).release()
    assert tree[:3] == ("node", 0, want)
    batch = PrivaTreeBatch(**params).batch((X, y), 3, np.random.default_rng(0))
    assert all(t[:3] == ("node", 0, want) for t in batch)
    cart = HistogramCARTClassifier(max_depth=1, bounds=[(0.0, 1.0)], classes=[0, 1], binning="uniform",
                                   max_bins=B).fit(X, y).release()
    assert cart[:3] == ("node", 0, want)


def test_twin_features_tie_to_the_first_feature():
    """Two identical columns: equal Ginis across features, the first feature wins (learner and batch)."""
    x = np.array([0.1, 0.2, 0.3, 0.45, 0.55, 0.7, 0.8, 0.9])
    X, y = np.column_stack((x, x)), np.array([0, 0, 1, 0, 1, 1, 0, 1])
    params = dict(epsilon=1e9, max_depth=1, bounds=[(0.0, 1.0)] * 2, classes=[0, 1], binning="uniform", max_bins=4,
                  epsilon_shares=(0.0, 0.5, 0.5))
    assert PrivaTreeClassifier(random_state=0, **params).fit(X, y).release()[1] == 0
    assert all(t[1] == 0 for t in PrivaTreeBatch(**params).batch((X, y), 4, np.random.default_rng(1)))


def test_share_order_is_exact_and_stable():
    H = np.array([[2, 1], [4, 2], [0, 0], [1, 1]])  # shares 1/3, 1/3, (empty) 1/2, 1/2
    assert share_order(H).tolist() == [0, 1, 2, 3]
