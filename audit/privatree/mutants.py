"""Known-flawed variants of PrivaTree ("mutants"), each with where its flaw comes from.

Each mutant is :class:`reference.privatree.PrivaTreeClassifier` with one hook
overridden (or one option set) so that it reproduces a privacy flaw, and
:func:`mutant_cases` gives, for each, the tiny neighbouring datasets on which
the auditor must catch it. Sources: the "Fix privacy leaks" commit f2922ff of
the authors' repository as listed in ``spec/anchors.md`` A.1 (flaws 1-6) and
``spec/privatree.md`` sections 2.7 and 4.3; plus two generic flaws (public
bounds read from the data; leaf noise at half its scale).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from typing import Callable

import numpy as np

from audit.engine.estimation.neighbours import NeighbourPair
from reference.privatree import PrivaTreeClassifier

__all__ = ["MutantCase", "mutant_cases", "ExactCandidateFilter", "ExactCategoryOrder", "BoundsFromData",
           "HalfLeafNoise", "ExactEmptySideGini", "g1_pair", "pure_pair"]


class ExactCandidateFilter(PrivaTreeClassifier):
    """MUTANT (A.1 flaw 2): ``min_samples_leaf`` applied to the *true* child counts."""

    def _candidates_ok(self, nL, nR, exact_ordered):
        L = np.cumsum(exact_ordered, axis=0)[:-1].sum(axis=1)
        R = exact_ordered.sum() - L
        floor = max(self.min_samples_leaf, 1)
        return (L >= floor) & (R >= floor)


class ExactCategoryOrder(PrivaTreeClassifier):
    """MUTANT (A.1 flaw 4): categories sorted by their *exact* class-1 share."""

    @staticmethod
    def _category_order(H, exact):
        return PrivaTreeClassifier._category_order(exact.astype(float), exact)


class ExactEmptySideGini(PrivaTreeClassifier):
    """MUTANT (A.1 flaw 6, the empty-split Gini convention applied to exact counts): a candidate
    whose true side is empty is dropped, whatever its noisy counts say."""

    def _candidates_ok(self, nL, nR, exact_ordered):
        L = np.cumsum(exact_ordered, axis=0)[:-1].sum(axis=1)
        R = exact_ordered.sum() - L
        return super()._candidates_ok(nL, nR, exact_ordered) & (L > 0) & (R > 0)


class BoundsFromData(PrivaTreeClassifier):
    """MUTANT (spec A8 / G3: the experiments' "public" ranges were per-fold training min/max)."""

    def _bounds_for_fit(self, bounds, Z):
        out = {}
        for j in bounds:
            col = Z[:, j]
            out[j] = (float(col.min()), float(col.max()))
        return out


class HalfLeafNoise(PrivaTreeClassifier):
    """MUTANT: leaf permute-and-flip with half the noise scale (twice the charged epsilon)."""

    def _leaf_mechanism_epsilon(self, eps_leaf):
        return 2.0 * eps_leaf


@dataclass
class MutantCase:
    id: str
    description: str
    source: str
    epsilon: float
    make: Callable[[], PrivaTreeClassifier]
    pairs: list = field(default_factory=list)
    #: argument of ``release()`` the audit uses (None: the tree over bin ids)
    edges: object = None
    #: the release's exact law: ``"learner"`` (the published learner's,
    #: :func:`audit.privatree.exact_law.release_law`), a ``variant`` of it, or None (out of reach: ``no_law`` says why)
    law: str | None = None
    no_law: str = ""


def pure_pair():
    """Spec 4.3 G2: a pure node (all class 0, both bins) and the same plus one class-1 record."""
    X = np.array([[0.1], [0.2], [0.3], [0.4], [0.6], [0.7], [0.8], [0.9]])
    y = np.zeros(8, dtype=int)
    return NeighbourPair((X, y), (np.vstack((X, [[0.9]])), np.append(y, 1)), "pure node + one class-1 record")


def _one_bin_pair():
    """All records in bin 0 of a 2-bin feature, and the same plus one record in bin 1."""
    X = np.full((6, 1), 0.2)
    y = np.array([0, 1, 0, 1, 0, 1])
    return NeighbourPair((X, y), (np.vstack((X, [[0.9]])), np.append(y, 0)), "all in bin 0 + one record in bin 1")


def _category_pair():
    """Two categories whose exact class-1 shares swap order when one record is added."""
    # shares a 2/4, b 1/2 (tie, code order a, b), c 1: prefixes {a}, {a, b}
    X = np.array([[0], [0], [0], [0], [1], [1], [2], [2]], dtype=float)
    y = np.array([1, 1, 0, 0, 1, 0, 1, 1])
    X1 = np.vstack((X, [[1.0]]))
    y1 = np.append(y, 0)  # b: 1/3 < a: 1/2: order becomes b, a, c
    return NeighbourPair((X, y), (X1, y1), "category b's class-1 share drops below a's")


def _leaf_pair():
    X = np.full((2, 1), 0.5)
    y = np.array([0, 1])
    return NeighbourPair((X, y), (np.vstack((X, [[0.5]])), np.append(y, 1)), "(1, 1) -> (1, 2) class counts")


def _corner_pair():
    X = np.array([[0.3], [0.4], [0.5], [0.6]])
    y = np.array([0, 1, 0, 1])
    return NeighbourPair((X, y), (np.vstack((X, [[1.0]])), np.append(y, 0)), "add a record at the upper bound")


def g1_pair(m: int):
    """Spec 4.3 G1: m features, 2 public bins, all rows in bin 0; neighbour adds a row in bin 1 of every feature."""
    X = np.full((4, m), 0.25)
    y = np.array([0, 1, 0, 1])
    return NeighbourPair((X, y), (np.vstack((X, np.full((1, m), 0.9))), np.append(y, 0)),
                         f"all rows in bin 0 of {m} features + one row in bin 1 of every feature")


def _uniform(cls, eps, depth, m, **kw):
    base = dict(epsilon=eps, max_depth=depth, bounds=[(0.0, 1.0)] * m, classes=[0, 1], binning="uniform", max_bins=2,
                epsilon_shares=(0.0, 0.5, 0.5))
    base.update(kw)
    return partial(cls, **base)  # picklable, for --jobs


#: where most flaws come from: the authors' repository before its fix
_CODE = 'the authors\' code (github.com/tudelft-cda-lab/PrivaTree) before commit f2922ff "Fix privacy leaks"'


def mutant_cases(epsilon: float = 1.0) -> list[MutantCase]:
    """Every PrivaTree mutant with the neighbouring datasets that expose it."""
    e = epsilon
    return [
        MutantCase("privatree/paper-stopping", "Algorithm 1 line 7: stop on pure nodes and nodes of <= 1 record",
                   "the paper's Algorithm 1 line 7 (G2); " + _CODE + ", which removed it", e,
                   _uniform(PrivaTreeClassifier, e, 1, 1, accounting="paper", stopping="paper"), [pure_pair()],
                   law="learner"),
        MutantCase("privatree/exact-min-samples-leaf", "candidate filter on true child counts",
                   _CODE, e,
                   _uniform(ExactCandidateFilter, e, 1, 1), [_one_bin_pair()], law="exact-min-samples-leaf"),
        MutantCase("privatree/per-feature-node-budget", "Eqs. 9-10 per feature: each feature's histogram gets the "
                   "level's whole budget (paper accounting, 4 features)",
                   "the paper's Eqs. 9-10 and Theorem 3 (G1); " + _CODE, 2 * e,
                   _uniform(PrivaTreeClassifier, 2 * e, 1, 4, accounting="paper", stopping="depth"), [g1_pair(4)],
                   law="learner"),
        MutantCase("privatree/exact-category-order", "binary categorical order from exact class-1 shares",
                   _CODE + " (the sort it removed)", e,
                   partial(ExactCategoryOrder, epsilon=e, max_depth=1, categories={0: [0.0, 1.0, 2.0]},
                           classes=[0, 1], epsilon_shares=(0.0, 0.5, 0.5)), [_category_pair()],
                   no_law="a categorical feature: the exact law covers numerical features only"),
        MutantCase("privatree/exact-empty-side", "candidates with an exactly empty side dropped (empty-split Gini "
                   "convention on exact counts)", _CODE + " (the fix defines an empty side's Gini)", e,
                   _uniform(ExactEmptySideGini, e, 1, 1), [_one_bin_pair()], law="exact-empty-side"),
        MutantCase("privatree/bounds-from-data", "numerical bounds read from the data (min, max)",
                   "the paper's experiments (feature ranges taken from the training data's min and max)", e,
                   _uniform(BoundsFromData, e, 1, 1, max_bins=4), [_corner_pair()], edges="exact",
                   no_law="the release holds the edges' values, which come from the data's range; the exact law "
                          "releases the tree over public bin ids"),
        MutantCase("privatree/half-leaf-noise", "leaf permute-and-flip at twice the charged epsilon",
                   "generic: noise at half its scale", e,
                   partial(HalfLeafNoise, epsilon=e, max_depth=0, bounds=[(0.0, 1.0)], classes=[0, 1]),
                   [_leaf_pair()], law="half-leaf-noise"),
    ]
