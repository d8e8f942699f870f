"""The goodness-of-fit test the exact-law tests share: a sampler's releases against a law's probabilities."""
from __future__ import annotations

import collections

import numpy as np
from scipy import stats


def pooled_pvalue(probs: dict, counts) -> float:
    """Chi-square p-value of ``counts`` (release category -> draws) against ``probs`` (category -> probability),
    the categories of expected count below 5 pooled into one cell. A category the law does not hold fails."""
    keys = list(probs)
    assert set(counts) <= set(keys), set(counts) - set(keys)
    obs = np.array([counts.get(k, 0) for k in keys], dtype=float)
    e = np.array([probs[k] for k in keys]) * obs.sum()
    big = e >= 5
    o, ex = np.append(obs[big], obs[~big].sum()), np.append(e[big], e[~big].sum())
    keep = ex > 0
    return stats.chisquare(o[keep], ex[keep] / ex[keep].sum() * o[keep].sum()).pvalue


def depth_one_counts(releases, probs: dict, node_cat, leaf_cat=lambda v: v) -> collections.Counter:
    """Draws per category ``(node category, left leaf, right leaf)`` of one-tree, depth-1 releases: the threshold
    mapped by ``node_cat``, each leaf value by ``leaf_cat``, a leaf category ``probs`` does not hold for that node
    counted as ``"other"``."""
    known = collections.defaultdict(set)
    for c, a, b in probs:
        known[c, 0].add(a)
        known[c, 1].add(b)
    counts = collections.Counter()
    for (tree,) in releases:
        (_, _, thr), (_, left), (_, right) = tree
        c = node_cat(thr)
        left, right = leaf_cat(left), leaf_cat(right)
        counts[(c, left if left in known[c, 0] else "other", right if right in known[c, 1] else "other")] += 1
    return counts


def twice_epsilon(cls):
    """A seeded mutant of the learner class ``cls``: its fit spends twice the stated epsilon (every mechanism
    at twice its share), the rest unchanged; the unaltered learner's law must reject its releases."""

    class TwiceEpsilon(cls):
        def fit(self, X, y):
            eps = self.epsilon
            self.epsilon = 2 * eps
            try:
                return super().fit(X, y)
            finally:
                self.epsilon = eps

    TwiceEpsilon.__name__ = TwiceEpsilon.__qualname__ = f"TwiceEpsilon{cls.__name__}"
    return TwiceEpsilon
