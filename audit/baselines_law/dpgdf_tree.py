"""The exact law of DPGDF's release on tiny categorical inputs (issue 29).

The release ``("node", feature, category, left, right)`` / ``("leaf", class)`` of
:class:`reference.baselines.dpgdf.DPGDFClassifier`, which follows Xin et al. (2019) as the PrivaTree authors
re-implemented it (Vos et al. 2023 Table I and section VI; spec/privatree.md section 3.4 and A15),
is written here as a law: each probability is composed from the mechanisms' own laws, not from the
learner's sampling code.

Composition (spec 3.4, GROW and LEAF)
-------------------------------------
* A node is a leaf at depth ``d``, when pure (or empty), with fewer than ``min_samples_split`` records or
  when no candidate is left: a deterministic function of the data, so a neighbour that flips it changes
  the release's support and the loss is infinite (the published gap: data-dependent stopping).
* Otherwise the candidates are the one-vs-rest pairs ``(j, c)`` not yet used on the path (``x_j == c`` goes
  left), utility ``0.5 - Gini`` on the exact counts, selected by non-monotone permute-and-flip with
  ``eps_node = eps / (2 d)`` and sensitivity 1/2 (:meth:`reference.mechanisms.PermuteAndFlip.logpmf_all`);
  the children are independent given the choice.
* A leaf draws its label by the exponential mechanism, monotone, ``eps_leaf = eps / 2`` (``eps`` at depth
  0), with the "smooth sensitivity" ``S = exp(-eps_leaf (N_(1) - N_(2)))`` on utilities
  ``1[N_k = N_(1)]`` (:meth:`reference.mechanisms.ExponentialMechanism.logpmf_all`); ``S < 1e-300`` is a
  point mass on the majority, as in the learner. The rate ``eps_leaf / S`` grows exponentially with the
  count gap: the loss between gaps ``g`` and ``g + 1`` is about ``eps_leaf e^(eps_leaf g) (e^eps_leaf - 1)``,
  unbounded (the published gap: smooth sensitivity is not a DP sensitivity, spec A15).

Exact: no truncation; a probability's interval is its rounding slack.

Limits: two classes, categorical features (``categories`` for every feature), ``max_depth <=``
:data:`MAX_DEPTH`.
"""
from __future__ import annotations

import math

import numpy as np

from audit.baselines_law._compose import (category_codes_of, check_binary, leaf_law_of, learner_of,
                                          one_vs_rest_utility)
from audit.engine.exact_law.laws import ReleaseLaw, join_children
from reference.baselines.dpgdf import DPGDFClassifier
from reference.mechanisms import ExponentialMechanism, PermuteAndFlip

__all__ = ["release_law", "MAX_DEPTH", "leaf_probabilities"]

#: deepest tree enumerated (every candidate's subtree is expanded)
MAX_DEPTH = 3


def leaf_probabilities(counts, eps_leaf: float) -> np.ndarray:
    """The law of a DPGDF leaf's label: smooth-sensitivity exponential mechanism (module docstring)."""
    n = np.asarray(counts, dtype=float)
    top = np.sort(n)[::-1]
    S = math.exp(-eps_leaf * (top[0] - top[1]))
    if S < 1e-300:
        p = np.zeros(n.size)
        p[int(np.argmax(n))] = 1.0
        return p
    return np.exp(ExponentialMechanism(eps_leaf, S, monotonic=True).logpmf_all((n == top[0]).astype(float)))


def release_law(params: dict, X, y) -> ReleaseLaw:
    """The law of ``DPGDFClassifier(**params).fit(X, y).release()`` (module docstring)."""
    est, eps, d = learner_of(DPGDFClassifier, params, "DPGDF", MAX_DEPTH)
    classes = check_binary("DPGDF", est.classes)
    cats = dict(est.categories or {})
    X = np.asarray(X, dtype=object)
    m = X.shape[1] if X.ndim == 2 else len(cats)
    if sorted(cats) != list(range(m)):
        raise ValueError(f"categories={est.categories!r}: DPGDF's exact law needs the categories of every feature")
    codes = category_codes_of(X.reshape(-1, m), cats, m)
    yk = np.array([classes.index(v) for v in np.asarray(y).tolist()], dtype=np.int64)
    eps_node = eps / (2 * d) if d else 0.0
    eps_leaf = eps / 2 if d else eps
    pairs = [(j, c) for j in range(m) for c in range(len(cats[j]))]

    def node(idx, depth, used) -> dict:
        yy = yk[idx]
        cand = [p for p in pairs if p not in used]
        if depth == d or idx.size < est.min_samples_split or np.unique(yy).size <= 1 or not cand:
            return leaf_law_of(leaf_probabilities(np.bincount(yy, minlength=2), eps_leaf))
        util = one_vs_rest_utility(codes, yk, idx, cand)
        probs = np.exp(PermuteAndFlip(eps_node, 0.5, monotonic=False).logpmf_all(np.asarray(util)))
        out = {}
        for (j, c), p in zip(cand, probs.tolist()):
            if p <= 0:
                continue
            go = codes[idx, j] == c
            used_here = used | {(j, c)}
            join_children(out, (p, p), node(idx[go], depth + 1, used_here), node(idx[~go], depth + 1, used_here),
                          lambda left, right: ("node", j, c, left, right))
        return out

    return ReleaseLaw.from_intervals(node(np.arange(yk.size), 0, frozenset()))
