"""Baselines of PrivaTree (reference/baselines/): non-private histogram CART as its epsilon -> infinity limit."""
from __future__ import annotations

import math

import numpy as np
import pytest

from reference.baselines.cart import HistogramCARTClassifier
from reference.ledger import PrivacyLedger
from reference.privatree import PrivaTreeClassifier


def _mixed(seed, n=80):
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.random(n), rng.normal(size=n), rng.integers(0, 4, n)]).astype(float)
    score = X[:, 0] + 0.3 * X[:, 1] + 0.4 * (X[:, 2] == 1) + 0.3 * rng.standard_normal(n)
    return X, (score > 0.7).astype(int)


def _leaf_ties(tree, X, y, cart):
    """True when some leaf of the CART tree has tied top counts (PF then picks uniformly among them)."""
    leaves = {}
    for row, label in zip(X, y):
        b = [cart.categories_[j].index(v) if j in cart.categories_ else
             int(np.searchsorted(cart.bin_edges_[j], v, side="left")) for j, v in enumerate(row)]
        node = tree
        path = ""
        while node[0] == "node":
            _, j, key, left, right = node
            go = (b[j] in key) if isinstance(key, tuple) else (0 <= b[j] <= key)
            node, path = (left, path + "L") if go else (right, path + "R")
        leaves.setdefault(path, []).append(label)
    for labels in leaves.values():
        c = np.bincount(labels, minlength=2)
        if np.sort(c)[-1] == np.sort(c)[-2]:
            return True
    return False


@pytest.mark.parametrize("binning", ["quantile", "uniform"])
@pytest.mark.parametrize("seed", range(6))
def test_privatree_star_at_infinite_epsilon_equals_histogram_cart(seed, binning):
    X, y = _mixed(seed, n=301)
    bounds = [(0.0, 1.0), (-4.0, 4.0), None]
    cats = {2: [0.0, 1.0, 2.0, 3.0]}
    cart = HistogramCARTClassifier(3, bounds=bounds, categories=cats, classes=[0, 1], binning=binning).fit(X, y)
    if _leaf_ties(cart.release(), X, y, cart):
        pytest.skip("a CART leaf has tied counts: the limit is then uniform over the tied labels")
    pt = PrivaTreeClassifier(1e7, 3, bounds=bounds, categories=cats, classes=[0, 1], use_private_quantiles=False,
                             binning=binning, epsilon_shares=(0.0, 0.5, 0.5), accounting="paper", stopping="depth",
                             random_state=seed).fit(X, y)
    assert pt.release() == cart.release()
    assert np.array_equal(pt.predict(X), cart.predict(X))
    for j, e in cart.bin_edges_.items():
        assert np.array_equal(pt.bin_edges_[j], e)


def test_at_moderate_epsilon_privatree_differs_from_cart_sometimes():
    """Negative control for the equality test: noise does change the tree."""
    X, y = _mixed(0)
    bounds = [(0.0, 1.0), (-4.0, 4.0), None]
    cats = {2: [0.0, 1.0, 2.0, 3.0]}
    cart = HistogramCARTClassifier(3, bounds=bounds, categories=cats, classes=[0, 1]).fit(X, y).release()
    diffs = sum(PrivaTreeClassifier(0.5, 3, bounds=bounds, categories=cats, classes=[0, 1],
                                    use_private_quantiles=False, epsilon_shares=(0.0, 0.5, 0.5),
                                    accounting="paper", stopping="depth", random_state=s).fit(X, y).release() != cart for s in range(5))
    assert diffs >= 1


def test_cart_accuracy_and_bad_input():
    X, y = _mixed(1, n=400)
    cart = HistogramCARTClassifier(4, bounds=[(0, 1), (-4, 4), None], categories={2: [0.0, 1.0, 2.0, 3.0]},
                                   classes=[0, 1]).fit(X, y)
    assert np.mean(cart.predict(X) == y) > 0.8
    with pytest.raises(ValueError, match="max_depth"):
        HistogramCARTClassifier(-1, bounds=[(0, 1)], classes=[0, 1]).fit(X[:, :1], y)
    with pytest.raises(ValueError, match="classes"):
        HistogramCARTClassifier(2, bounds=[(0, 1)]).fit(X[:, :1], y)
    with pytest.raises(ValueError, match="label"):
        HistogramCARTClassifier(2, bounds=[(0, 1)], classes=[0, 1]).fit(X[:, :1], y + 5)


# ----------------------------------------------------------------------------- DiffPrivLib-style random tree
from reference.baselines.diffprivlib_tree import RandomTreePFClassifier  # noqa: E402


def test_random_tree_ledger_and_structure_independent_of_data():
    X, y = _mixed(2)
    b = [(0, 1), (-4, 4), (0, 3)]
    a = RandomTreePFClassifier(1.0, 3, bounds=b, classes=[0, 1], random_state=4).fit(X, y)
    assert a.privacy_ledger_.total_epsilon() == pytest.approx(1.0)
    # same seed, other data: same structure (features and thresholds) - the structure never reads the data
    other = RandomTreePFClassifier(1.0, 3, bounds=b, classes=[0, 1], random_state=4).fit(X[::-1] * 0.5, 1 - y[::-1])

    def shape(node):
        return node[:3] + (shape(node[3]), shape(node[4])) if node[0] == "node" else ("leaf",)
    assert shape(a.release(thresholds=True)) == shape(other.release(thresholds=True))


def test_random_tree_leaf_labels_follow_permute_and_flip():
    """Depth 0: one leaf labelled by monotone PF on (n0, n1); P(minority label) = e^(-eps gap)/2.
    Binomial test, false-alarm rate 0.001."""
    from scipy import stats
    X = np.full((5, 1), 0.5)
    y = np.array([0, 0, 0, 1, 1])
    n = 2000
    k = sum(RandomTreePFClassifier(1.0, 0, bounds=[(0, 1)], classes=[0, 1], random_state=s).fit(X, y).predict(X[:1])[0]
            for s in range(n))
    assert stats.binomtest(k, n, np.exp(-1.0) / 2).pvalue > 0.001


def test_random_tree_bad_input():
    X, y = _mixed(2)
    with pytest.raises(ValueError, match="bounds"):
        RandomTreePFClassifier(1.0, 2, classes=[0, 1]).fit(X, y)
    with pytest.raises(ValueError, match="epsilon"):
        RandomTreePFClassifier(0.0, 2, bounds=[(0, 1)] * 3, classes=[0, 1]).fit(X, y)
    with pytest.raises(ValueError, match="classes"):
        RandomTreePFClassifier(1.0, 2, bounds=[(0, 1)] * 3, classes=[1]).fit(X, y)


# ----------------------------------------------------------------------------- DPGDF
from reference.baselines.dpgdf import DPGDFClassifier  # noqa: E402


def _cat_data(n=200, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 3, size=(n, 3)).astype(float)
    y = ((X[:, 0] == 1) | (X[:, 1] == 2)).astype(int)
    return X, y


def _claimed_total(ledger):
    """The total of a ledger's finite charges: the budget the method claims, its leaks aside."""
    claimed = PrivacyLedger(ledger.neighbouring)
    for c in ledger.charges:
        if math.isfinite(c.epsilon):
            claimed.charge(c.component, c.mechanism, c.epsilon, scope=c.scope, sensitivity=c.sensitivity)
    return claimed.total_epsilon()


def _leaks_charged_inf(clf):
    """Every listed leak is charged epsilon = inf (issue 17, finding 3): the total is infinite."""
    frame = clf.privacy_ledger_.to_frame()
    leaks = frame[frame.epsilon == math.inf]
    assert clf.privacy_ledger_.total_epsilon() == math.inf
    assert sorted(m.removesuffix(" (not DP)") for m in leaks.mechanism) == sorted(clf.privacy_leaks_)


def test_dpgdf_learns_and_charges_its_claimed_budget():
    X, y = _cat_data()
    cats = {j: [0.0, 1.0, 2.0] for j in range(3)}
    clf = DPGDFClassifier(20.0, 3, categories=cats, classes=[0, 1], random_state=0).fit(X, y)
    assert np.mean(clf.predict(X) == y) > 0.9
    assert _claimed_total(clf.privacy_ledger_) <= 20.0 + 1e-9
    assert any("stopping" in s for s in clf.privacy_leaks_)
    _leaks_charged_inf(clf)


def test_dpgdf_pure_node_is_always_a_leaf():
    X, y = _cat_data(30)
    cats = {j: [0.0, 1.0, 2.0] for j in range(3)}
    y0 = np.zeros_like(y)
    assert all(DPGDFClassifier(1.0, 2, categories=cats, classes=[0, 1], random_state=s).fit(X, y0).release()[0] == "leaf"
               for s in range(10))
    y1 = y0.copy()
    y1[0] = 1
    assert all(DPGDFClassifier(1.0, 2, categories=cats, classes=[0, 1], random_state=s).fit(X, y1).release()[0] == "node"
               for s in range(10))


def test_dpgdf_bad_input():
    X, y = _cat_data(30)
    with pytest.raises(ValueError, match="categories"):
        DPGDFClassifier(1.0, 2, categories={0: [0.0, 1.0, 2.0]}, classes=[0, 1]).fit(X, y)
    with pytest.raises(ValueError, match="classes"):
        DPGDFClassifier(1.0, 2, categories={j: [0.0, 1.0, 2.0] for j in range(3)}, classes=[0, 1, 2]).fit(X, y)


# ----------------------------------------------------------------------------- BDPT
from reference.baselines.bdpt import BDPTClassifier, depth_budgets  # noqa: E402


def test_bdpt_depth_budgets_sum_and_example():
    b = depth_budgets(0.1, 4)
    assert b.sum() == pytest.approx(0.05)
    assert b[0] == pytest.approx(0.00598, abs=1e-5) and b[-1] == pytest.approx(0.01506, abs=1e-5)  # spec 3.3


def test_bdpt_path_budget_and_learning():
    X, y = _mixed(3, n=300)
    clf = BDPTClassifier(50.0, 3, categories={2: [0.0, 1.0, 2.0, 3.0]}, classes=[0, 1], random_state=0).fit(X, y)
    assert _claimed_total(clf.privacy_ledger_) <= 50.0 + 1e-9
    _leaks_charged_inf(clf)
    assert np.mean(clf.predict(X) == y) > 0.6
    assert len(clf.group_minima_[0]) == int(np.ceil(len(np.unique(X[:, 0])) / 5))


def test_bdpt_bad_input():
    X, y = _mixed(3)
    with pytest.raises(ValueError, match="classes"):
        BDPTClassifier(1.0, 2, classes=[0]).fit(X, y)
    with pytest.raises(ValueError, match="max_depth"):
        BDPTClassifier(1.0, -2, classes=[0, 1]).fit(X, y)
