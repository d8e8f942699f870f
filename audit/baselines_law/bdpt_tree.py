"""The exact law of BDPT's release on tiny inputs (issue 29).

:class:`reference.baselines.bdpt.BDPTClassifier` (Guan et al. 2020 as re-implemented by the PrivaTree
authors: Vos et al. 2023 Table I and section VI; spec/privatree.md section 3.3 and A16) written a
second time, as a law composed from the mechanisms' laws, independently of the sampling code. The release
is ``("node", feature, category_or_group, left, right)`` / ``("leaf", class)``.

Composition (spec 3.3, GROW and LEAF)
-------------------------------------
* Numerical features are merged from the data's own sorted unique values in runs of ``merge_samples``
  (no noise): a deterministic function of the data, written here again. The number of groups is visible
  in the release (a group index only some datasets have): the published leak, infinite loss.
* A node at depth ``t`` is a leaf at ``t = d``, when pure (or empty), or with fewer than 2 records: a
  deterministic function of the data (infinite loss where a neighbour flips it).
* Otherwise a hidden noisy count ``n~ = max(1, n + Z)``, ``Z`` two-sided geometric with ``eps_t`` (the
  ratio ``alpha`` of :class:`reference.mechanisms.TwoSidedGeometric`), sets the "smooth" sensitivity
  ``2 n~ / (n~ + 1)^2`` of the exponential mechanism (``eps_node = eps / (2 d)``, non-monotone) over every
  one-vs-rest candidate, utility ``0.5 - Gini``. ``n~`` is not released: it is summed out,
  ``P(choice) = sum_h P(n~ = h) EM_h(choice)`` with ``P(n~ = 1) = P(Z <= 1 - n)``, over ``h <= Hmax``; the
  mass ``P(n + Z > Hmax) = alpha^(Hmax - n + 1) / (1 + alpha)`` left out (below :data:`TAIL`) goes into the
  width of the choice's interval ``[sum, sum + tail]``.
* A leaf's label is 1 iff ``N_1 + Z_1 >= N_0 + Z_0`` (independent two-sided geometric noise, ``eps_t``):
  ``P = sum_z0 P(Z_0 = z0) P(Z_1 >= N_0 - N_1 + z0)`` over ``|z0| <= T``, the tail
  ``P(|Z_0| > T) = 2 alpha^(T + 1) / (1 + alpha)`` (below :data:`TAIL`) in the interval's width.

Limits: two classes, ``max_depth <=`` :data:`MAX_DEPTH`.
"""
from __future__ import annotations

import math
from numbers import Integral

import numpy as np

from audit.baselines_law._compose import category_codes_of, check_binary, learner_of, one_vs_rest_utility
from audit.engine.exact_law.laws import ReleaseLaw, join_children
from reference.baselines.bdpt import BDPTClassifier, depth_budgets
from reference.mechanisms import ExponentialMechanism, TwoSidedGeometric

__all__ = ["release_law", "leaf_law", "choice_law", "MAX_DEPTH", "TAIL"]

#: deepest tree enumerated
MAX_DEPTH = 3
#: target mass of each truncated noise tail
TAIL = 1e-15


def _cdf(alpha: float, m) -> np.ndarray:
    """``P(Z <= m)`` of the two-sided geometric law with ratio ``alpha`` (elementwise)."""
    m = np.asarray(m, dtype=float)
    return np.where(m < 0, alpha ** np.abs(m) / (1 + alpha), 1 - alpha ** (np.abs(m) + 1) / (1 + alpha))


def _cut(alpha: float) -> int:
    return max(1, math.ceil(math.log(TAIL * (1 + alpha) / 2) / math.log(alpha)))


def leaf_law(counts, alpha: float) -> dict:
    """``{("leaf", k): (lower, upper)}`` of a leaf with class counts ``counts = (N_0, N_1)``."""
    T = _cut(alpha)
    z0 = np.arange(-T, T + 1)
    pmf = (1 - alpha) / (1 + alpha) * alpha ** np.abs(z0)
    k = int(counts[0]) - int(counts[1])
    s = float(np.sum(pmf * (1 - _cdf(alpha, k + z0 - 1))))  # P(Z_1 >= k + z0) = 1 - P(Z_1 <= k + z0 - 1)
    tail = 2 * alpha ** (T + 1) / (1 + alpha)
    return {("leaf", 1): (s, min(1.0, s + tail)), ("leaf", 0): (max(0.0, 1 - s - tail), 1 - s)}


def choice_law(util, n: int, alpha: float, eps_node: float) -> tuple:
    """``(lower, upper)`` per candidate of the exponential mechanism whose sensitivity comes from the hidden
    noisy count (module docstring)."""
    hmax = n + _cut(alpha)
    h = np.arange(1, hmax + 1)
    ph = (1 - alpha) / (1 + alpha) * alpha ** np.abs(h - n)
    ph[0] = float(_cdf(alpha, 1 - n))
    tail = alpha ** (hmax - n + 1) / (1 + alpha)
    u = np.asarray(util, dtype=float)
    total = np.zeros(u.size)
    for w, hv in zip(ph.tolist(), h.tolist()):
        sens = 2 * float(hv) / (float(hv) + 1) ** 2
        total += w * np.exp(ExponentialMechanism(eps_node, sens).logpmf_all(u))
    return [(float(p), min(1.0, float(p) + tail)) for p in total]


def _codes(est, X, m: int):
    cats = dict(est.categories or {})
    merge = est.merge_samples
    if isinstance(merge, bool) or not isinstance(merge, Integral) or merge < 1:
        raise ValueError(f"merge_samples={merge!r}: must be a positive integer")
    codes = np.zeros((len(X), m), dtype=np.int64)
    n_cats = []
    if cats:
        codes_c = category_codes_of(X[:, sorted(cats)], {i: cats[j] for i, j in enumerate(sorted(cats))}, len(cats))
        for i, j in enumerate(sorted(cats)):
            codes[:, j] = codes_c[:, i]
    for j in range(m):
        if j in cats:
            n_cats.append(len(cats[j]))
            continue
        col = X[:, j].astype(float)
        minima = np.unique(col)[::merge]  # the leaky merge (spec A16): the data's own values
        codes[:, j] = np.maximum(np.searchsorted(minima, col, side="right") - 1, 0)
        n_cats.append(minima.size)
    return codes, n_cats


def release_law(params: dict, X, y) -> ReleaseLaw:
    """The law of ``BDPTClassifier(**params).fit(X, y).release()`` (module docstring)."""
    est, eps, d = learner_of(BDPTClassifier, params, "BDPT", MAX_DEPTH)
    classes = check_binary("BDPT", est.classes)
    X = np.asarray(X, dtype=object)
    m = X.shape[1] if X.ndim == 2 and X.shape[1] else max(len(est.categories or {}), 1)
    X = X.reshape(-1, m)
    codes, n_cats = _codes(est, X, m)
    yk = np.array([classes.index(v) for v in np.asarray(y).tolist()], dtype=np.int64)
    eps_t = depth_budgets(eps, d)
    alphas = [TwoSidedGeometric(float(e), 1.0).alpha for e in eps_t]
    eps_node = eps / (2 * d) if d else 0.0
    cand = [(j, c) for j in range(m) for c in range(n_cats[j])]
    truncated = [0.0]

    def node(idx, t) -> dict:
        yy = yk[idx]
        if t == d or idx.size < 2 or np.unique(yy).size <= 1:
            return leaf_law(np.bincount(yy, minlength=2), alphas[t])
        util = one_vs_rest_utility(codes, yk, idx, cand)
        out = {}
        for (j, c), w in zip(cand, choice_law(util, int(idx.size), alphas[t], eps_node)):
            truncated[0] = max(truncated[0], w[1] - w[0])
            go = codes[idx, j] == c
            join_children(out, w, node(idx[go], t + 1), node(idx[~go], t + 1),
                          lambda left, right: ("node", j, c, left, right))
        return out

    return ReleaseLaw.from_intervals(node(np.arange(yk.size), 0), truncated[0])
