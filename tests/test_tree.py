"""reference.tree, the one fitted-tree structure: routing, bin splits and the nested release, and every tree learner
on it (issue 20)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reference.tree import Node, bin_split, heap_tree, leaf, nested, predict_values, preorder, route, route_heap, split


def _walk(node: Node, row) -> object:
    """The rule row by row, written out: numerical ``x < threshold``, categorical ``x in left_categories``."""
    while not node.is_leaf:
        x = row[node.feature]
        go = (x in node.left_categories) if node.categorical else (x < node.threshold)
        node = node.left if go else node.right
    return node.value


@st.composite
def bin_trees(draw, n_features=3, n_bins=5, depth=4):
    counter = iter(range(10 ** 6))

    def grow(d):
        if d == depth or draw(st.booleans()):
            return leaf(next(counter))
        j = draw(st.integers(0, n_features - 1))
        if draw(st.booleans()):
            key = tuple(sorted(draw(st.sets(st.integers(0, n_bins - 1), min_size=1, max_size=n_bins - 1))))
        else:
            key = draw(st.integers(0, n_bins - 2))
        left = grow(d + 1)
        return bin_split(j, key, left, grow(d + 1))
    return grow(0)


@settings(max_examples=150, deadline=None)
@given(tree=bin_trees(), seed=st.integers(0, 2 ** 32 - 1))
def test_vectorised_routing_is_the_rule_row_by_row(tree, seed):
    """Every row, bins -1 (an unseen category) to 4 included, reaches the leaf the written-out rule reaches; an
    integer key sends exactly the bins 0..key left (PrivaTree's ``b <= key``, the unseen -1 right)."""
    bins = np.random.default_rng(seed).integers(-1, 5, size=(64, 3))
    got = predict_values(tree, bins)
    assert got.tolist() == [_walk(tree, r) for r in bins]
    for node in preorder(tree):
        if not node.is_leaf and not isinstance(node.key, tuple):
            column = np.arange(-1, 5)
            assert node.goes_left(column).tolist() == [0 <= b <= node.key for b in column]


def test_nested_release_and_preorder():
    t = split(1, leaf(0), split(0, leaf(1), leaf(2), categories=(2,), key=2), threshold=0.5, key=3)
    assert nested(t) == ("node", 1, 3, ("leaf", 0), ("node", 0, 2, ("leaf", 1), ("leaf", 2)))
    assert [n.value for n in preorder(t) if n.is_leaf] == [0, 1, 2]
    X = np.array([[0.0, 0.2], [2.0, 0.9], [1.0, 0.9]])
    assert route(t, X, np.empty(3, dtype=int)).tolist() == [0, 1, 2]
    with pytest.raises(ValueError, match="exactly one of threshold and categories"):
        split(0, leaf(0), leaf(1))


def test_every_tree_learner_fits_a_reference_tree():
    """PrivaTree, DiPriMe (and its baselines), LPDT's partition and the histogram baselines all hold
    reference.tree.Node trees; their releases keep their published formats."""
    from reference.baselines.bdpt import BDPTClassifier
    from reference.baselines.cart import HistogramCARTClassifier
    from reference.baselines.diffprivlib_tree import RandomTreePFClassifier
    from reference.baselines.dpgdf import DPGDFClassifier
    from reference.baselines.median_forest import MedianForestClassifier
    from reference.diprime import DiPriMeForestClassifier
    from reference.lpdt import LPDTRegressor
    from reference.privatree import PrivaTreeClassifier

    rng = np.random.default_rng(0)
    X = rng.random((40, 2))
    y = (X[:, 0] > 0.5).astype(int)
    Xc = rng.integers(0, 3, (40, 2))
    yc = (Xc[:, 0] == 2).astype(int)
    b, cats = [(0.0, 1.0), (0.0, 1.0)], {0: [0, 1, 2], 1: [0, 1, 2]}
    trees = {
        "privatree": PrivaTreeClassifier(2.0, 2, bounds=b, classes=[0, 1], n_public=40, random_state=0).fit(X, y).tree_,
        "cart": HistogramCARTClassifier(2, bounds=b, classes=[0, 1]).fit(X, y).tree_,
        "diffprivlib": RandomTreePFClassifier(2.0, 2, bounds=b, classes=[0, 1], random_state=0).fit(X, y).tree_,
        "dpgdf": DPGDFClassifier(2.0, 2, categories=cats, classes=[0, 1], random_state=0).fit(Xc, yc).tree_,
        "bdpt": BDPTClassifier(2.0, 2, categories=cats, classes=[0, 1], random_state=0).fit(Xc, yc).tree_,
        "diprime": DiPriMeForestClassifier(2.0, n_estimators=1, max_depth=2, bounds=b, classes=[0, 1],
                                           random_state=0).fit(X, y).estimators_[0],
        "median forest": MedianForestClassifier(n_estimators=1, max_depth=2, bounds=b, classes=[0, 1],
                                                random_state=0).fit(X, y).estimators_[0],
        "lpdt": LPDTRegressor(2.0, max_depth=2, bounds=b, target_bounds=(0.0, 1.0), public_data=(X, X[:, 0]),
                              random_state=0).fit(X, X[:, 1]).partition_.root,
    }
    assert all(isinstance(t, Node) for t in trees.values()), {k: type(t) for k, t in trees.items()}
    est = PrivaTreeClassifier(2.0, 2, bounds=b, classes=[0, 1], n_public=40, random_state=0).fit(X, y)
    assert est.release() == nested(est.tree_) and est.release()[0] in ("node", "leaf")


@settings(max_examples=60, deadline=None)
@given(depth=st.integers(0, 5), n=st.sampled_from([7, 1500]), seed=st.integers(0, 2 ** 32 - 1))
def test_heap_arrays_route_as_their_node_tree(depth, n, seed):
    """A complete tree stored as heap arrays (random decision trees) sends every record, ties with a threshold
    included, to the leaf its Node form sends it to; both code paths of route_heap (few and many records)."""
    rng = np.random.default_rng(seed)
    attributes = rng.integers(0, 3, size=(2, 2 ** depth - 1))
    thresholds = rng.choice([0.25, 0.5, 0.75], size=attributes.shape)
    X = rng.choice([0.0, 0.25, 0.5, 0.6, 0.75, 1.0], size=(n, 3))
    leaves = route_heap(X, attributes, thresholds, depth)
    for t in range(2):
        node = heap_tree(attributes[t], thresholds[t], np.arange(2 ** depth))
        assert np.array_equal(predict_values(node, X), leaves[t])


def test_random_forest_trees_are_reference_trees():
    from reference.random_trees import RandomDecisionForestClassifier

    rng = np.random.default_rng(1)
    X, y = rng.random((30, 2)), rng.integers(0, 2, 30)
    m = RandomDecisionForestClassifier(n_estimators=3, max_depth=2, epsilon=1.0, bounds=[(0, 1), (0, 1)],
                                       classes=[0, 1], random_state=0).fit(X, y)
    theta = m.forest_.theta_at(X)[0]  # (k, n, C)
    for i, node in enumerate(m.trees()):
        assert isinstance(node, Node)
        assert np.array_equal(route(node, X, np.empty((len(X), 2))), theta[i])
