"""Ledger composition, with every total worked out by hand in the comments."""
import itertools
import math

import pytest

from reference.ledger import PrivacyLedger, Scope

ROOT = Scope.root()


def split(scope, tree, cell):
    return scope.child(f"{tree}:split", cell)


def test_sequential_charges_on_the_same_records_add():
    led = PrivacyLedger()
    led.charge("quantiles", "jointexp", 0.1, scope=ROOT)
    led.charge("histogram", "geometric", 0.4, scope=ROOT)
    assert led.total_epsilon() == pytest.approx(0.5)  # 0.1 + 0.4


def test_parallel_cells_of_one_split_take_the_max():
    led = PrivacyLedger()
    led.charge("leaf", "laplace", 0.3, scope=split(ROOT, "t0", "L"))
    led.charge("leaf", "laplace", 0.5, scope=split(ROOT, "t0", "R"))
    assert led.total_epsilon() == pytest.approx(0.5)  # max(0.3, 0.5)


def test_features_of_the_same_records_are_sequential():
    """Two features' histograms read the same node's records: they add up,
    even though each looks at a different column."""
    led = PrivacyLedger()
    node = split(ROOT, "t0", "L")
    led.charge("histogram[feature 0]", "geometric", 0.2, scope=node)
    led.charge("histogram[feature 1]", "geometric", 0.2, scope=node)
    led.charge("histogram[feature 0]", "geometric", 0.2, scope=split(ROOT, "t0", "R"))
    assert led.total_epsilon() == pytest.approx(0.4)  # max(0.2 + 0.2, 0.2)


def test_tree_of_depth_two():
    """root split 0.1; depth-1 splits 0.1 each; leaves 0.5 each.
    Worst record: 0.1 (root) + 0.1 (its depth-1 node) + 0.5 (its leaf) = 0.7."""
    led = PrivacyLedger()
    led.charge("split", "em", 0.1, scope=ROOT)
    for a in "LR":
        node = split(ROOT, "t0", a)
        led.charge("split", "em", 0.1, scope=node)
        for b in "LR":
            led.charge("leaf", "pf", 0.5, scope=split(node, "t0", b))
    assert led.total_epsilon() == pytest.approx(0.7)
    assert len(led) == 1 + 2 + 4
    frame = led.to_frame()
    assert list(frame.columns)[:7] == ["component", "mechanism", "epsilon", "delta", "sensitivity",
                                       "neighbouring", "scope"]
    assert frame["scope"].iloc[-1] == "t0:split=R/t0:split=R"


def test_two_trees_on_the_same_data_compose_sequentially():
    """Trees 0 and 1 split the same records differently: tree0's L and tree1's R
    may share records, so nothing is parallel across trees: 0.5 + 0.5."""
    led = PrivacyLedger()
    for tree in ("t0", "t1"):
        for cell in "LR":
            led.charge("leaf", "laplace", 0.5, scope=split(ROOT, tree, cell))
    assert led.total_epsilon() == pytest.approx(1.0)


def test_forest_on_disjoint_record_partitions_is_parallel():
    led = PrivacyLedger()
    for tree in range(4):
        part = ROOT.child("forest:records", f"tree{tree}", by_value=False)
        led.charge("split", "em", 0.2, scope=part)
        for cell in "LR":
            led.charge("leaf", "laplace", 0.8, scope=split(part, f"t{tree}", cell))
    assert led.total_epsilon() == pytest.approx(1.0)  # 0.2 + 0.8, any one tree


def test_substitution_moves_a_record_between_value_cells():
    """Under substitution a replaced record can leave cell L and enter cell R
    (0.3 + 0.5), or flip its label inside R (2 x 0.5): the ledger takes 2 x max = 1.0;
    record-identity partitions keep the max."""
    led = PrivacyLedger("substitute")
    led.charge("leaf", "laplace", 0.3, scope=split(ROOT, "t0", "L"))
    led.charge("leaf", "laplace", 0.5, scope=split(ROOT, "t0", "R"))
    assert led.total_epsilon() == pytest.approx(1.0)
    led2 = PrivacyLedger("substitute")
    for i, e in enumerate((0.3, 0.5)):
        led2.charge("tree", "laplace", e, scope=ROOT.child("forest:records", str(i), by_value=False))
    assert led2.total_epsilon() == pytest.approx(0.5)


def test_delta_composes_like_epsilon_and_extend_nests():
    inner = PrivacyLedger()
    inner.charge("leaf", "gauss", 0.5, delta=1e-6, scope=split(ROOT, "t0", "L"))
    inner.charge("leaf", "gauss", 0.5, delta=1e-6, scope=split(ROOT, "t0", "R"))
    outer = PrivacyLedger()
    outer.charge("count", "laplace", 0.25, delta=1e-7, scope=ROOT)
    outer.extend(inner, under=ROOT.child("sample", "a", by_value=False))
    assert outer.total_epsilon() == pytest.approx(0.75)
    assert outer.total_delta() == pytest.approx(1.1e-6)
    with pytest.raises(AssertionError, match="exceeds"):
        outer.assert_within(0.7)
    outer.assert_within(0.75)


def test_scope_disjointness():
    a = split(ROOT, "t0", "L")
    assert a.disjoint(split(ROOT, "t0", "R"))
    assert not a.disjoint(split(a, "t0", "R"))  # a child overlaps its parent
    assert not a.disjoint(split(ROOT, "t1", "R"))  # different partitions of the same records
    assert not ROOT.disjoint(ROOT)
    assert str(ROOT) == "*"
    assert PrivacyLedger().total_epsilon() == 0.0


def test_a_call_that_is_not_private_makes_the_total_infinite():
    led = PrivacyLedger()
    led.charge("median", "index-em (v000, not DP)", float("inf"), scope=ROOT)
    led.charge("leaf", "laplace", 0.5, scope=split(ROOT, "t0", "L"))
    assert led.total_epsilon() == float("inf")


def _histogram_release_log_law(release, data, eps):
    """log P(release | data) of the tiny mechanism below: per cell c, the label histogram
    of the records in c, each count plus two-sided geometric noise of parameter eps[c]
    (pmf (1 - a) / (1 + a) * a^|k - count|, a = exp(-eps[c]))."""
    total = 0.0
    for c, e in eps.items():
        a = math.exp(-e)
        for label in (0, 1):
            count = sum(1 for cell, y in data if cell == c and y == label)
            total += math.log((1 - a) / (1 + a)) - e * abs(release[(c, label)] - count)
    return total


def test_two_times_max_bounds_a_label_flip_inside_the_larger_cell():
    """Cells charged unequally (L: 0.1, R: 1.0), each for a single count. Under
    substitution a record may stay in R and flip its label: both of R's counts move
    by one, so the exact loss is 2 x 1.0 = 2.0, above the two largest cells' sum 1.1.
    The loss is enumerated exactly over every release in a window that contains the
    maximising outputs (the ratio is constant beyond the counts)."""
    eps = {"L": 0.1, "R": 1.0}
    led = PrivacyLedger("substitute")  # one histogram charge per cell, for a single count
    for cell, e in eps.items():
        led.charge("histogram", "geometric", e, scope=split(ROOT, "t0", cell))
    d0 = [("R", 0), ("L", 1)]
    d1 = [("R", 1), ("L", 1)]  # the first record's label flipped; it stays in R
    window = range(-2, 4)
    keys = [(c, y) for c in eps for y in (0, 1)]
    loss = max(
        abs(_histogram_release_log_law(dict(zip(keys, out)), d0, eps)
            - _histogram_release_log_law(dict(zip(keys, out)), d1, eps))
        for out in itertools.product(window, repeat=len(keys))
    )
    assert loss == pytest.approx(2.0)
    assert loss > 0.1 + 1.0 + 1e-9  # the old two-largest-cells rule under-counts
    assert led.total_epsilon() == pytest.approx(2.0)  # 2 x max covers it exactly
    assert led.total_epsilon() >= loss - 1e-12
