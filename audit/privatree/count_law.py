"""Strict PrivaTree's release law as a function of the count vector, on boxes of count vectors (all sizes).

One numerical feature of two public bins (``binning="uniform"``, ``max_bins=2``), two classes, strict
accounting, ``min_samples_leaf <= 1``: every dataset enters Algorithm 1 of PrivaTree (Vos et al.) only
through its four counts ``c[b, k]`` (bin ``b``, class ``k``; cell ``2 b + k``), so the law is a function
of ``c`` and :func:`audit.engine.exact_law.allsizes.certify_all_sizes` can bound the loss over every dataset of
any size (any feature values: they enter only through their bin).

The law (the same as :func:`audit.privatree.exact_law.release_law`, written as factors)
------------------------------------------------------------------------------------------
A node holds the records of a set of bins (the root both; a split sends bin 0 left and bin 1 right, so
below the root one side of the only candidate is always empty). With ``alpha`` the node level's
geometric ratio (``node_num`` of :func:`reference.privatree.budget_split`) and ``q = (1 + alpha)^-K``,
a side of ``n`` records passes the filter (its noisy count, a sum of clamped noisy cells, is at least 1)
with probability ``s(n) = 1 - q alpha^n``: the side fails only when every clamped cell is 0, of
probability ``prod_k alpha^(c_k) / (1 + alpha)`` (Eq. 4). So ``P(r | c)`` is a product of

* ``S = s(n_L) s(n_R)`` at an inner node (it splits);
* ``N = 1 - s(n_L) s(n_R)`` at a leaf above the maximum depth (it did not split);
* ``g(d)`` at every leaf, the two-class monotone permute-and-flip's probability of its label, ``d`` the
  label's count minus the other class's (:func:`audit.engine.exact_law.allsizes.pf2_step`).

Why the box intervals hold (every count in ``[lo, hi]``, ``hi`` possibly infinite)
------------------------------------------------------------------------------------
Adding a record to cell ``i`` changes only the factors of the nodes that hold ``i``; the change of a
release's log-probability is the sum of the factors' changes, so the sum of their intervals holds it.

* ``S``, record on the left side: ``ln s(n) - ln s(n + 1) = -h(q alpha^n)`` with
  ``h(x) = ln(1 - alpha x) - ln(1 - x)``, increasing in ``x`` (``h'(x) = 1/(1 - x) - alpha/(1 - alpha x) > 0``
  since ``alpha < 1``), and ``x = q alpha^n`` decreasing in ``n``: the interval is
  ``[-h(q alpha^lo), -h(q alpha^hi)]``, ``alpha^inf = 0``.
* ``N``, record on the left side, ``u = q alpha^(n_L)``, ``v = q alpha^(n_R)``:
  ``N(c) / N(c + e_i) = f(u, v) = (u (1 - v) + v) / (alpha u (1 - v) + v)``. With ``w = u (1 - v)``,
  ``d/dw (w + v)/(alpha w + v) = v (1 - alpha) / (alpha w + v)^2 >= 0``: ``f`` increases with ``u``; and
  ``d/dv`` has the sign of ``(1 - u)(alpha u + v (1 - alpha u)) - (1 - alpha u)(u + v (1 - u)) =
  -u (1 - alpha) <= 0``: ``f`` decreases with ``v``. The interval is ``[ln f(u_min, v_max), ln f(u_max, v_min)]``;
  it lies in ``[0, ln(1/alpha)]``, the upper end reached only as the other side grows without bound.
* ``g``: :func:`audit.engine.exact_law.allsizes.pf2_delta` (``ln g`` has non-increasing steps).

Limits (the supremum over all sizes)
------------------------------------
The search's bound over every size equals, up to rounding, the loss of a leaf at the root as the other
side's count grows without bound: its node factor ``N`` moves by ``ln f(u, v)``, which tends to
``ln(1/alpha) = epsilon_level`` as ``v -> 0`` and stays strictly below it at every finite count
(``f(u, v) < 1/alpha`` for ``v > 0``), and its label by ``epsilon_leaf`` (``2 epsilon_leaf`` under
substitution, the class difference moving by 2). So the supremum is ``epsilon_level + epsilon_leaf``
(depth 2, epsilon 1: 0.25 + 0.5 = 0.75; depth 1: 0.5 + 0.5 = 1, the whole epsilon), approached as the counts
grow. :attr:`PrivaTreeCountLaw.limits` states it beside the search's bound at depths 1, 2 and 3, where the
search meets it (depth 3, epsilon 1: 1/6 + 1/2, with ``ln(1/alpha)`` of the implementation's ``alpha``); the search
does not use it. At depth 3 the search closes only when each box is cut on its best coordinate
(``split="best"`` of :func:`audit.engine.exact_law.allsizes.certify_all_sizes`): cut on an infinite coordinate first, a box
whose bin-1 counts span 0 and 1 keeps a split factor at ``n = 0`` and a leaf at ``d = -1`` together, which no
count vector has (bound 0.6853 against 2/3, for ever). Beyond depth 3 no limit is stated.

The releases' sums are evaluated at once (an incidence matrix of releases and distinct factors,
:func:`_sums`), each widened by its own rounding.
"""
from __future__ import annotations

import math

import numpy as np

from audit.engine.exact_law.allsizes import INF, CountLaw, pf2_delta
from reference.mechanisms import TwoSidedGeometric
from reference.privatree import PrivaTreeClassifier, budget_split

__all__ = ["PrivaTreeCountLaw", "count_vector"]

#: relative and absolute slack added to every computed interval end (a few roundings of exp/log1p)
REL, ABS = 1e-12, 1e-15


def _widen(a: float, b: float) -> tuple[float, float]:
    return a - REL * abs(a) - ABS, b + REL * abs(b) + ABS


class PrivaTreeCountLaw(CountLaw):
    """Strict PrivaTree's law on the four counts (module docstring).

    Parameters
    ----------
    params : dict
        The learner's parameters: one numerical feature (``bounds`` of length 1), ``binning="uniform"``,
        ``max_bins=2``, two ``classes``, strict accounting, ``stopping`` ``"depth"`` (the strict default) and
        ``min_samples_leaf <= 1``; otherwise a ValueError names the parameter.
    """

    def __init__(self, params: dict):
        params = {k: v for k, v in params.items() if k != "random_state"}
        est = PrivaTreeClassifier(**params)
        eps, depth = est._check_params()
        classes, cats, _bounds = est._check_schema(1)
        checks = [("bounds", len(est.bounds) == 1, "one feature"), ("binning", est.binning == "uniform", "'uniform'"),
                  ("max_bins", est.max_bins == 2, "2"), ("classes", classes.size == 2, "two classes"),
                  ("accounting", est.accounting == "strict", "'strict'"),
                  ("stopping", (est.stopping or "depth") == "depth", "'depth'"),
                  ("min_samples_leaf", est.min_samples_leaf <= 1, "at most 1"), ("categories", not cats, "none")]
        for name, ok, want in checks:
            if not ok:
                raise ValueError(f"{name}={getattr(est, name, None)!r}: PrivaTree's count law covers {want} here")
        budget = budget_split(eps, depth, 2, m_num=1, m_cat=0, n_public=est.n_public, E_max=est.E_max,
                              max_leaf_share=est.max_leaf_share, epsilon_shares=est.epsilon_shares,
                              private_quantiles=False, accounting="strict")
        self.depth = depth
        self.K = 2
        self.eps_leaf = float(budget["leaf"])
        self.eps_level = float(budget["node_num"]) if depth > 0 else 0.0
        self.alpha = TwoSidedGeometric(self.eps_level, 1.0).alpha if depth > 0 else 0.0
        self.log_alpha = math.log(self.alpha) if depth > 0 else -INF
        self.log_q = -self.K * math.log1p(self.alpha)
        self.cells = tuple(f"bin {b}, class {classes.tolist()[k]!r}" for b in (0, 1) for k in range(2))
        self.releases_factors = self._subtrees((0, 1), 0)
        self.releases = tuple(r for r, _ in self.releases_factors)
        self._incidence = None  # built on first use (:func:`_incidence`)
        level = -self.log_alpha if depth > 0 else 0.0
        why = (f"a leaf at the root: its node factor moves by up to ln(1/alpha) = {level:.6g}, only as the other "
               f"side's count grows without bound, and its label by {{}}epsilon_leaf = {{:g}}")
        self.limits = {"add-remove": (level + self.eps_leaf, why.format("", self.eps_leaf)),
                       "substitute": (level + 2 * self.eps_leaf, why.format("2 ", 2 * self.eps_leaf))} \
            if depth <= 3 else {}

    # ------------------------------------------------------------------ releases as factor lists
    def _subtrees(self, bins: tuple, depth: int) -> list:
        K = self.K
        left = tuple(0 * K + k for k in range(K)) if 0 in bins else ()
        right = tuple(1 * K + k for k in range(K)) if 1 in bins else ()
        by_class = [tuple(b * K + k for b in bins) for k in range(K)]
        leaves = [(("leaf", k), [("leaf", by_class[k], by_class[1 - k])]) for k in range(K)]
        if depth == self.depth:
            return leaves
        out = [(r, f + [("nosplit", left, right)]) for r, f in leaves]
        for rl, fl in self._subtrees(tuple(b for b in bins if b == 0), depth + 1):
            for rr, fr in self._subtrees(tuple(b for b in bins if b == 1), depth + 1):
                out.append((("node", 0, 0, rl, rr), [("split", left, right)] + fl + fr))
        return out

    # ------------------------------------------------------------------ one factor on a box
    def _log_side(self, cells: tuple, lo: tuple, hi: tuple) -> tuple[float, float]:
        """``ln(q alpha^n)`` at the side's smallest and largest count (``-inf`` for an infinite count)."""
        n_lo = sum(lo[j] for j in cells)
        n_hi = sum(hi[j] for j in cells)
        return self.log_q + n_lo * self.log_alpha, (self.log_q + n_hi * self.log_alpha if n_hi < INF else -INF)

    def _h(self, log_x: float) -> float:
        x = math.exp(log_x)
        return math.log1p(-self.alpha * x) - math.log1p(-x)

    def _log_f(self, log_u: float, log_v: float) -> float:
        """``ln f(u, v)`` (module docstring), through ``t = u (1 - v) / v``: ``ln((t + 1) / (alpha t + 1))``,
        exact at ``u = 0`` (0) and ``v = 0`` (``ln(1/alpha)``)."""
        if log_u == -INF:
            return 0.0
        if log_v == -INF:
            return -self.log_alpha
        lt = log_u + math.log1p(-math.exp(log_v)) - log_v
        if lt > 0:
            e = math.exp(-lt)
            return -self.log_alpha + math.log1p(e) - math.log1p(e / self.alpha)
        t = math.exp(lt)
        return math.log1p(t) - math.log1p(self.alpha * t)

    def _factor(self, kind: str, a: tuple, b: tuple, lo: tuple, hi: tuple, i: int) -> tuple[float, float]:
        if kind == "leaf":  # a: the label's class cells, b: the other class's
            if i not in a and i not in b:
                return 0.0, 0.0
            d_lo = sum(lo[j] for j in a) - sum(hi[j] for j in b)
            d_hi = sum(hi[j] for j in a) - sum(lo[j] for j in b)
            return pf2_delta(self.eps_leaf, d_lo, d_hi, i in a)
        if i not in a and i not in b:  # the record is not in this node
            return 0.0, 0.0
        own, other = (a, b) if i in a else (b, a)
        own_lo, own_hi = self._log_side(own, lo, hi)  # ln u at the largest / smallest u
        if kind == "split":
            return -self._h(own_lo), -self._h(own_hi)
        oth_lo, oth_hi = self._log_side(other, lo, hi)  # ln v at the largest / smallest v
        return self._log_f(own_hi, oth_lo), self._log_f(own_lo, oth_hi)

    def delta(self, lo: tuple, hi: tuple, i: int) -> dict:
        """``{release: (L, U)}`` bounding ``ln P(r | c) - ln P(r | c + e_i)`` on the box (module docstring)."""
        return _delta(self, tuple(lo), tuple(hi), i)

    def box_upper(self, lo: tuple, hi: tuple, move: tuple) -> float:
        """``max_r max(|L_r|, |U_r|)`` of :meth:`pair_delta` on the box (the engine's box bound), vectorised."""
        lo, hi = tuple(lo), tuple(hi)
        if len(move) == 1:
            L, U = _sums(self, lo, hi, move[0])
        else:  # substitution: [L_j - U_i, U_j - L_i] (:meth:`CountLaw.pair_delta`)
            Li, Ui = _sums(self, lo, hi, move[0])
            Lj, Uj = _sums(self, lo, hi, move[1])
            L, U = Lj - Ui, Uj - Li
        return float(max(np.abs(L).max(), np.abs(U).max())) if L.size else 0.0


def _incidence(law: PrivaTreeCountLaw) -> tuple[list, np.ndarray]:
    """The distinct factors of the releases and how many times each release holds each (a release's log-probability
    change is the sum of its factors')."""
    keys, index = [], {}
    for _, factors in law.releases_factors:
        for f in factors:
            if f not in index:
                index[f] = len(keys)
                keys.append(f)
    M = np.zeros((len(law.releases_factors), len(keys)))
    for row, (_, factors) in enumerate(law.releases_factors):
        for f in factors:
            M[row, index[f]] += 1.0
    return keys, M


def _delta(law: PrivaTreeCountLaw, lo: tuple, hi: tuple, i: int) -> dict:
    L, U = _sums(law, lo, hi, i)
    return dict(zip(law.releases, zip(L.tolist(), U.tolist())))


def _sums(law: PrivaTreeCountLaw, lo: tuple, hi: tuple, i: int) -> tuple[np.ndarray, np.ndarray]:
    """Every release's interval ``(L, U)`` as arrays (in ``law.releases`` order): the sums of its factors' widened
    ends, widened again by the sum's own rounding (each of at most ``n`` additions errs by at most
    ``2^-53`` times the running sum of absolute values: ``4e-16 n`` times the sum of the terms' magnitudes bounds it)."""
    if law._incidence is None:
        law._incidence = _incidence(law)
    keys, M = law._incidence
    ends = np.array([_widen(*law._factor(kind, a, b, lo, hi, i)) for kind, a, b in keys])
    L, U = M @ ends[:, 0], M @ ends[:, 1]
    err = 4e-16 * M.sum(axis=1) * (M @ np.abs(ends).max(axis=1))
    return L - REL * np.abs(L) - ABS - err, U + REL * np.abs(U) + ABS + err


def count_vector(X, y, params: dict) -> tuple:
    """The four counts ``c[2 b + k]`` of a dataset (bins of :func:`audit.privatree.exact_law.release_law`'s uniform
    edges on the clipped feature; ``k`` the class's index in ``params["classes"]``)."""
    import numpy as np

    lo, hi = (float(v) for v in params["bounds"][0])
    edges = np.array([(lo + hi) / 2, hi])
    x = np.clip(np.asarray(X, dtype=float)[:, 0], lo, hi) if len(y) else np.zeros(0)
    b = np.searchsorted(edges, x, side="left")
    index = {c: k for k, c in enumerate(params["classes"])}
    c = [0] * 4
    for bi, yi in zip(b.tolist(), list(y)):
        c[2 * bi + index[yi]] += 1
    return tuple(c)
