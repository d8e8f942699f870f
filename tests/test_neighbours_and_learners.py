"""Neighbouring inputs and the estimator wrapper."""
import numpy as np
import pytest
from sklearn.tree import DecisionTreeClassifier

from audit import Claim, audit_pairs, learner_mechanism
from audit.neighbours import QUERY_PATTERNS, NeighbourPair, add_remove_pairs, query_pairs, substitute_pairs
from reference.mechanisms import RandomizedResponse

X = np.array([[0.1, 0.2], [0.4, 0.9], [0.8, 0.5]])
y = np.array([0, 1, 1])
BOUNDS = [(0.0, 1.0), (0.0, 1.0)]


def test_query_patterns_differ_by_at_most_one_per_coordinate():
    pairs = query_pairs(6, both_orders=True)
    assert len(pairs) == 2 * len(QUERY_PATTERNS)
    for p in pairs:
        assert np.max(np.abs(p.d0 - p.d1)) <= 1.0 and np.any(p.d0 != p.d1)
    with pytest.raises(ValueError, match="unknown query patterns"):
        query_pairs(3, ["sideways"])


def test_add_remove_pairs_differ_by_one_record():
    pairs = add_remove_pairs(X, y, bounds=BOUNDS, classes=[0, 1])
    assert {p.relation for p in pairs} == {"add-remove"}
    for p in pairs:
        (X0, y0), (X1, y1) = p.d0, p.d1
        assert abs(len(y0) - len(y1)) == 1
        small, big = (X0, X1) if len(y0) < len(y1) else (X1, X0)
        # every record of the smaller dataset is in the larger one
        assert all(any(np.array_equal(r, s) for s in big) for r in small)
    corners = [p for p in pairs if p.description.startswith("add")]
    assert any("[0.0, 0.0]" in p.description for p in corners)


def test_substitute_pairs_change_one_record():
    pairs = substitute_pairs(X, y, bounds=BOUNDS, classes=[0, 1], records=[0, 2],
                             bin_edges={0: [0.0, 0.5, 1.0]})
    assert {p.relation for p in pairs} == {"substitute"}
    kinds = {p.description.split(" ")[2] for p in pairs}
    assert {"->", "label", "feature"} <= kinds
    for p in pairs:
        (X0, y0), (X1, y1) = p.d0, p.d1
        assert len(y0) == len(y1)
        changed = np.any(X0 != X1, axis=1) | (y0 != y1)
        assert changed.sum() == 1


class NoisyMajority:
    """A tiny DP learner: the majority label, released by randomized response (eps-DP under
    substitution since one record can change the majority)."""

    def __init__(self, epsilon=1.0, random_state=None):
        self.epsilon, self.random_state = epsilon, random_state

    def get_params(self, deep=False):
        return {"epsilon": self.epsilon, "random_state": self.random_state}

    def set_params(self, **p):
        for k, v in p.items():
            setattr(self, k, v)
        return self

    def fit(self, X, y):
        rng = np.random.default_rng(self.random_state)
        self.label_ = RandomizedResponse(self.epsilon, 2).sample(int(np.mean(y) > 0.5), rng)
        return self

    def release(self):
        return (self.label_,)


def test_learner_mechanism_passes_a_private_learner_and_flags_a_plain_tree():
    """alpha = 0.05 each; the plain tree's release changes deterministically, so its
    loss is unbounded and the bound is far above 1."""
    pairs = substitute_pairs(X, y, bounds=BOUNDS, classes=[0, 1], records=[1])
    private = audit_pairs(learner_mechanism(lambda: NoisyMajority(1.0)), pairs,
                          Claim(1.0, neighbouring="substitute"), n_samples=4_000, seed=0)
    assert not private.violation
    probe = np.array([[0.1, 0.1], [0.5, 0.5], [0.9, 0.9]])
    tree = learner_mechanism(lambda: DecisionTreeClassifier(max_depth=2), probe=probe)
    plain = audit_pairs(tree, pairs, Claim(1.0, neighbouring="substitute"), n_samples=2_000, seed=0)
    assert plain.violation and plain.epsilon_lower > 3.0


def test_learner_mechanism_output_kinds():
    rng = np.random.default_rng(0)

    class Floaty(NoisyMajority):
        def release(self):
            return (("split", 1), 0.25, 0.75)

    np.testing.assert_array_equal(learner_mechanism(Floaty)((X, y), rng), [1.0, 0.25, 0.75])
    assert learner_mechanism(Floaty, output="discrete")((X, y), rng) == (("split", 1), 0.25, 0.75)
    with pytest.raises(ValueError, match="vector"):
        learner_mechanism(Floaty, output="vector")((X, y), rng)
    with pytest.raises(ValueError, match="probe"):
        learner_mechanism(DecisionTreeClassifier)((X, y), rng)
    with pytest.raises(ValueError, match="output"):
        learner_mechanism(Floaty, output="table")
    with pytest.raises(TypeError, match="make_estimator"):
        learner_mechanism(3)


def test_neighbour_pair_relation_is_checked():
    with pytest.raises(ValueError, match="neighbouring"):
        NeighbourPair(0, 1, "x", "swap")
