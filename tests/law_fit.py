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
