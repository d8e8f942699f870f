"""PrivaTree's exact law with JointExp's private bin edges and with categorical features (issue 36, item 2).

:func:`audit.privatree.exact_law.release_law` sums JointExp's edges (:mod:`audit.privatree.edge_law`) over the
pieces of its grid and composes the categorical order of section IV-A (:mod:`audit.privatree.node_law`). Each
goodness-of-fit test is a G-test (log-likelihood ratio) over the releases, cells of expected count below 5
pooled, a fixed seed; its false-alarm rate is 1e-3 per sampler (the threshold on the p-value). The batched
sampler draws 100,000 releases, the reference learner 3,000 fits.
"""
from __future__ import annotations

import collections
import itertools
import math

import numpy as np
import pytest
from scipy import stats

from audit.privatree.edge_law import jointexp_edges, stirling2
from audit.privatree.exact_law import pair_loss, release_law
from audit.privatree.node_law import feature_law
from reference.mechanisms import JointExp, TwoSidedGeometric
from reference.privatree import PrivaTreeClassifier
from reference.privatree.batch import PrivaTreeBatch

#: false-alarm rate of each goodness-of-fit test
ALPHA = 1e-3

JE = dict(bounds=[(0.0, 1.0)], classes=[0, 1], max_bins=2, epsilon_shares=(1 / 3, 1 / 3, 1 / 3))
CAT = dict(categories={0: [0, 1]}, classes=[0, 1], epsilon_shares=(0.0, 0.5, 0.5))
X4 = np.array([[0.25], [0.75], [0.75], [0.5]])
Y4 = np.array([0, 1, 0, 1])

CASES = {
    "JointExp depth 2": (dict(JE, epsilon=2.0, max_depth=2), X4, Y4),
    "JointExp depth 1, ties at the bounds": (dict(JE, epsilon=1.0, max_depth=1),
                                             np.array([[0.0], [1.0], [1.0]]), np.array([0, 1, 1])),
    "JointExp three bins (two private edges), depth 1": (dict(JE, max_bins=3, epsilon=4.0, max_depth=1),
                                                         np.array([[0.25], [0.75], [0.5]]), np.array([0, 1, 1])),
    "binary categorical depth 2": (dict(CAT, epsilon=1.0, max_depth=2), np.array([[0], [1], [1], [0]]),
                                   np.array([0, 1, 1, 1])),
    "JointExp + binary categorical": (dict(bounds=[(0.0, 1.0), None], categories={1: [0, 1]}, classes=[0, 1],
                                           max_bins=2, epsilon_shares=(0.2, 0.4, 0.4), epsilon=8.0, max_depth=1),
                                      np.array([[0.25, 0], [0.75, 1], [0.5, 1]], dtype=object), np.array([0, 1, 1])),
    "three categories, large epsilon": (dict(CAT, categories={0: [0, 1, 2]}, epsilon=8.0, max_depth=1),
                                        np.array([[0], [1], [2]]), np.array([0, 1, 1])),
}


def _gtest(law, counts) -> float:
    keys = list(law.upper)
    assert set(counts) <= set(keys), set(counts) - set(keys)  # nothing outside the law's support
    obs = np.array([counts.get(k, 0) for k in keys], dtype=float)
    p = np.array([law.lower[k] for k in keys])
    e = p / p.sum() * obs.sum()
    big = e >= 5
    o, ex = np.append(obs[big], obs[~big].sum()), np.append(e[big], e[~big].sum())
    keep = ex > 0
    assert o[~keep].sum() == 0
    return stats.power_divergence(o[keep], ex[keep], lambda_="log-likelihood").pvalue


def _batch(params, X, y, edges, n, seed):
    fast = PrivaTreeBatch(edges=edges, **params)
    prep = fast.prepare((X, y))
    return collections.Counter(fast.releases(fast.fit_trees((X, y), n, np.random.default_rng(seed), prepared=prep),
                                             prepared=prep))


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("edges", [None, 2])
def test_law_is_a_probability_and_matches_the_batched_sampler(name, edges):
    params, X, y = CASES[name]
    law = release_law(params, X, y, edges=edges)
    assert sum(law.lower.values()) <= 1.0 + 1e-12 <= sum(law.upper.values()) + 1e-11
    assert law.width < 1e-9
    assert _gtest(law, _batch(params, X, y, edges, 100_000, 36)) > ALPHA


@pytest.mark.parametrize("name", ["JointExp depth 2", "binary categorical depth 2"])
def test_law_matches_the_reference_learner(name):
    params, X, y = CASES[name]
    law = release_law(params, X, y, edges=2)
    fits = collections.Counter(PrivaTreeClassifier(**params, random_state=s).fit(X, y).release(2)
                               for s in range(3000))
    assert _gtest(law, fits) > ALPHA


def test_an_altered_edge_law_is_rejected():
    """The law at a quarter of the quantile budget (JointExp's edges nearly uniform) is not the sampler's:
    100,000 draws reject it at p < 1e-6."""
    params, X, y = CASES["JointExp depth 2"]
    wrong = release_law(dict(params, epsilon_shares=(1 / 12, 7 / 12, 1 / 3)), X, y, edges=2)
    honest = release_law(dict(params, epsilon_shares=(1 / 12, 7 / 12, 1 / 3)), X, y, edges=None)
    assert len(honest.upper) < len(wrong.upper)  # the edge cells are in the release
    draws = _batch(params, X, y, 2, 100_000, 37)
    assert _gtest(wrong, draws) < 1e-6


# --------------------------------------------------------------------------- the edge law against brute force
@pytest.mark.parametrize("levels", [[0.5], [1 / 3, 2 / 3]])
@pytest.mark.parametrize("G", [None, 3])
def test_edge_law_sums_the_grid_points_of_each_piece(levels, G):
    """On a 40-step grid, every sorted tuple of grid points with JointExp's own ``logpmf``, grouped by the
    bins and cells it gives, against the pieces' sum (Stirling weights for runs of equal pieces)."""
    col = np.array([0.1, 0.5, 0.5, 0.9, 0.3])
    bounds, eps, M = (0.0, 1.0), 1.5, 40
    mech = JointExp(eps, levels, bounds, grid=M)
    brute = collections.defaultdict(float)
    for k in itertools.combinations_with_replacement(range(M + 1), len(levels)):
        o = mech.points(np.array(k))
        e = np.unique(np.concatenate((o, [1.0])))
        cells = None if G is None else tuple(np.minimum((e * G).astype(int), G - 1).tolist())
        brute[(np.searchsorted(e, col, side="left").tobytes(), e.size, cells)] += math.exp(mech.logpmf(o, col))
    got = {(o.bins.tobytes(), o.n_bins, o.cells): o.weight for o in jointexp_edges(col, bounds, eps, levels, G, M)}
    assert got.keys() == brute.keys()
    for key, w in got.items():
        assert w == pytest.approx(brute[key], rel=1e-9, abs=1e-15)
    assert sum(got.values()) == pytest.approx(1.0, rel=1e-12)


def test_stirling_weights_sum_to_the_run_weight():
    assert [stirling2(4, r) for r in range(5)] == [0, 1, 7, 6, 1]
    for k, c in itertools.product(range(1, 5), range(1, 6)):  # sum_r C(c, r) r! S(k, r) = c^k
        assert sum(math.comb(c, r) * math.factorial(r) * stirling2(k, r) for r in range(k + 1)) == c ** k


# --------------------------------------------------------------------------- categorical order against brute force
@pytest.mark.parametrize("counts", [[[1, 0], [0, 2]], [[0, 0], [1, 1]], [[2, 1], [1, 2]]])
def test_binary_category_order_equals_the_enumeration(counts):
    """The sorted-share sum of a lone binary categorical feature equals the enumeration of every noisy
    histogram (the path taken with several features), at node epsilon 2."""
    alpha = TwoSidedGeometric(2.0, 1.0).alpha
    c = np.array(counts)
    fast, tr = feature_law(c, alpha, 1e-12, False, ordered=True)
    full, tr_full = feature_law(c, alpha, 1e-12, True, ordered=True)
    by_key = collections.defaultdict(float)
    for (key, _), w in full.items():
        by_key[key] += w
    assert tr < 1e-12 and tr_full < 1e-12
    for (key, _), w in fast.items():
        assert w == pytest.approx(by_key[key], abs=1e-11)


def test_out_of_reach_categorical_and_edges_say_why():
    with pytest.raises(ValueError, match=r"3 bins x 2 classes has [\d,]+ states"):
        release_law(dict(CAT, categories={0: [0, 1, 2]}, epsilon=1.0, max_depth=1), np.array([[0], [1]]),
                    np.array([0, 1]))
    with pytest.raises(ValueError, match="piece sequences"):
        release_law(dict(JE, max_bins=10, epsilon=1.0, max_depth=1), np.linspace(0.05, 0.95, 10)[:, None],
                    np.arange(10) % 2)
    with pytest.raises(ValueError, match="edges must be None, a positive integer"):
        release_law(dict(JE, epsilon=1.0, max_depth=1), X4, Y4, edges="exact")


def test_public_edges_gain_their_cells_and_nothing_else():
    """Uniform edges are public: ``edges=2`` only prefixes every release with the same cells."""
    params = dict(JE, binning="uniform", epsilon=1.0, max_depth=2, epsilon_shares=(0.0, 0.5, 0.5))
    plain, cells = release_law(params, X4, Y4), release_law(params, X4, Y4, edges=2)
    assert {r[0] for r in cells.upper} == {((0, (1, 1)),)}  # the edge 0.5 opens cell 1
    assert {r[1]: p for r, p in cells.lower.items()} == plain.lower


def test_strict_jointexp_pair_loss_is_within_epsilon():
    params = dict(JE, epsilon=1.0, max_depth=2, epsilon_shares=(0.25, 0.25, 0.5))
    d0 = (np.array([[0.25], [0.75]]), np.array([0, 1]))
    d1 = (np.array([[0.25], [0.75], [0.75]]), np.array([0, 1, 1]))
    for edges in (None, 2):
        loss = pair_loss_edges(params, d0, d1, edges)
        assert 0.0 < loss.lower <= loss.upper <= 1.0


def pair_loss_edges(params, d0, d1, edges):
    from audit.engine.exact_law.laws import laws_pair_loss

    return laws_pair_loss(*(release_law(params, *d, edges=edges) for d in (d0, d1)))


def test_pair_loss_of_the_default_release_is_unchanged():
    params = dict(JE, binning="uniform", epsilon=1.0, max_depth=1, epsilon_shares=(0.0, 0.5, 0.5))
    d0 = (np.array([[0.25], [0.75]]), np.array([0, 1]))
    d1 = (np.array([[0.25], [0.75], [0.75]]), np.array([0, 1, 1]))
    assert pair_loss(params, d0, d1).upper == pair_loss_edges(params, d0, d1, None).upper


# --------------------------------------------------------------------------- the exact grid index, lumped
D0 = (np.array([[0.25], [0.75]]), np.array([0, 1]))
D1 = (np.array([[0.25], [0.75], [0.6]]), np.array([0, 1, 1]))


def test_lumped_grid_law_has_the_ratio_of_every_grid_point():
    """On a 40-step grid: every grid point's JointExp probability ratio between the two datasets equals the
    ratio of its lump (pieces cut at both datasets' values), so the lumped law's loss is the exact index's."""
    bounds, eps, M = (0.0, 1.0), 1.5, 40
    cols = [D0[0][:, 0], D1[0][:, 0]]
    cuts = np.concatenate(cols)
    laws = [jointexp_edges(c, bounds, eps, [0.5], "grid", M, cuts=cuts) for c in cols]
    lumps = [{o.cells: o.weight for o in law} for law in laws]
    assert lumps[0].keys() == lumps[1].keys()
    mech = JointExp(eps, [0.5], bounds, grid=M)
    seen = set()
    for k in range(M + 1):
        o = mech.points(np.array([k]))
        (lump,) = [key for key in lumps[0] if key[0][0] <= k < key[0][0] + key[0][1]]
        seen.add(lump)
        point = mech.logpmf(o, cols[0]) - mech.logpmf(o, cols[1])
        assert point == pytest.approx(math.log(lumps[0][lump] / lumps[1][lump]), abs=1e-12)
    assert seen == set(lumps[0])


def test_lumped_grid_law_matches_the_sampler_exact_edges():
    """The batched sampler's ``release(edges="exact")`` (6 decimals: one value per grid point on [0, 1]) mapped
    to its lump, 100,000 draws, G-test; and the pair's lumped loss is within epsilon."""
    params = dict(JE, epsilon=2.0, max_depth=1)
    cuts = {0: np.concatenate([D0[0][:, 0], D1[0][:, 0]])}
    law = release_law(params, *D0, edges="grid", cuts=cuts)
    lumps = {key[0][0][1] for key in law.upper}  # (((0, lump),), tree), lump = ((first index, points, 1),)

    def lump_of(edges):
        k = round(edges[0] * 2 ** 16) if len(edges) == 2 else 2 ** 16  # the inner edge (hi when merged)
        (lump,) = [lp for lp in lumps if lp[0][0] <= k < lp[0][0] + lp[0][1]]
        return lump

    assert min(lp[0][0] for lp in lumps) == 0 and max(sum(lp[0][:2]) for lp in lumps) == 2 ** 16 + 1
    draws = _batch(params, *D0, "exact", 100_000, 38)
    mapped = collections.Counter()
    for (((_, edges),), tree), n in draws.items():
        mapped[(((0, lump_of(edges)),), tree)] += n
    assert _gtest(law, mapped) > ALPHA
    grid, cells = pair_loss(params, D0, D1, edges="grid"), pair_loss(params, D0, D1, edges=2)
    assert cells.upper <= grid.upper + 1e-12 <= 2.0  # a finer release loses at least as much, within epsilon
