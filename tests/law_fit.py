"""The goodness-of-fit test the exact-law tests share: a sampler's releases against a law's probabilities."""
from __future__ import annotations

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
