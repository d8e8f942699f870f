"""What the baselines' tree laws share beyond PrivaTree's law's own pieces (a node's law as ``{release:
(lower, upper)}``, joined over the children of each choice by
:func:`audit.engine.exact_law.laws.join_children` and finished by
:meth:`audit.engine.exact_law.laws.ReleaseLaw.from_intervals`): leaf laws, utilities, codes and checks."""
from __future__ import annotations

import math

import numpy as np


__all__ = ["leaf_law_of", "one_vs_rest_utility", "category_codes_of", "check_binary",
           "learner_of"]


def leaf_law_of(probs) -> dict:
    """``{("leaf", k): (p_k, p_k)}`` of a leaf's label law (probabilities; zeros dropped)."""
    return {("leaf", k): (float(p), float(p)) for k, p in enumerate(probs) if p > 0}


def one_vs_rest_utility(codes, y, idx, cand) -> list:
    """``0.5 - weighted Gini`` of each one-vs-rest candidate ``x_j == c`` on the records ``idx`` (binary
    labels ``y``), from the class counts of each side (spec/privatree.md sections 3.3-3.4; written here
    again, not taken from the learners' helper)."""
    n = idx.size
    out = []
    for j, c in cand:
        go = codes[idx, j] == c
        g = 0.0
        for side in (go, ~go):
            ns = int(side.sum())
            if ns:
                p1 = float(y[idx][side].mean())
                g += ns * (1 - p1 ** 2 - (1 - p1) ** 2)
        out.append(0.5 - g / n)
    return out


def category_codes_of(X, categories: dict, m: int):
    """Each value's index among its feature's public categories (a value outside them: ValueError)."""
    codes = np.empty((len(X), m), dtype=np.int64)
    for j in range(m):
        lookup = {v: c for c, v in enumerate(categories[j])}
        for i, v in enumerate(X[:, j].tolist() if len(X) else []):
            if v not in lookup:
                raise ValueError(f"X[:, {j}] holds {v!r}, not among categories[{j}]")
            codes[i, j] = lookup[v]
    return codes


def check_binary(name: str, classes) -> list:
    """The two public classes of a binary learner (DPGDF, BDPT), or a ValueError naming ``classes``."""
    if classes is None or len(set(classes)) != 2:
        raise ValueError(f"classes={classes!r}: {name} is binary, its exact law needs exactly two classes")
    return list(classes)


def learner_of(cls, params: dict, name: str, max_depth: int, why: str = ""):
    """``(estimator, epsilon, max_depth)`` of ``cls(**params)`` (``random_state`` dropped), or a ValueError naming
    the parameter beyond the law's limits (``epsilon`` positive and finite, ``max_depth`` in ``0..max_depth``)."""
    est = cls(**{k: v for k, v in params.items() if k != "random_state"})
    eps = float(est.epsilon)
    if not (math.isfinite(eps) and eps > 0):
        raise ValueError(f"epsilon={est.epsilon!r}: must be positive and finite")
    d = est.max_depth
    if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or not 0 <= d <= max_depth:
        raise ValueError(f"max_depth={d!r}: {name}'s exact law covers max_depth in 0..{max_depth}{why}")
    return est, eps, int(d)
