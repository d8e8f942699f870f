"""The law of one PrivaTree node's choice (Algorithm 1 lines 11-12 of Vos et al. 2023; Eq. 4; section IV-A).

A node draws, for every feature, a histogram of per-class counts in each bin with two-sided geometric noise
clamped at 0 (Eq. 4), at the feature's own node budget (``budget_split``'s ``node_num`` for a numerical
feature, ``node_cat`` for a categorical one), and keeps the (feature, candidate) of least Gini on the noisy
counts among candidates whose noisy sides hold at least ``max(min_samples_leaf, 1)`` records; the first
feature and first candidate win ties, compared exactly (:mod:`reference.ties`; here by Gini keys that order
as the exact ratios, :func:`exact_gini_keys`). A numerical feature's candidates are its bin boundaries (key: the last
bin id of the left side); a categorical feature's bins are its category codes, ordered by their noisy class-1
share when there are two classes (section IV-A, :meth:`reference.privatree.PrivaTreeClassifier._category_order`;
key: the sorted tuple of left codes), kept in code order otherwise (key as for a numerical feature).
:func:`choice_law` sums the choice out over every noisy histogram; :mod:`audit.privatree.exact_law` composes
the nodes into the release's law.

Costs
-----
* One feature of two bins alone at a node, numerical or categorical with more than two classes: only the
  candidate's filter matters, a finite sum (exact, no truncation), ``O(t^2)`` for ``t = ceil(floor)``.
* One binary categorical feature of two categories alone, two classes (section IV-A's order): each row's two
  noisy counts are enumerated up to their cut-offs (``(Hmax + 1)^2`` states a row: about ``1.5e4`` at node
  epsilon 1/4) and ``P(left = (0,))`` is the sum over row 0's states of its mass times the mass of row 1's
  states of larger or equal share (a sorted cumulative sum): time ``O(S log S)`` and memory ``O(S)`` for
  ``S`` states a row, milliseconds at node epsilon 1/4 (about ``2.3e4`` states a row with
  :data:`CATEGORY_TAIL`). The truncated mass (at most ``4 CATEGORY_TAIL``) widens the intervals; the sums run
  in extended precision.
* One numerical feature of three bins alone, two classes: :mod:`audit.privatree.three_bin_law` separates the
  two boundaries' comparison, ``O(Hmax^4 log Hmax)``.
* Otherwise every noisy histogram of a feature is enumerated: ``prod_cells (Hmax_c + 1)`` states, refused
  above :data:`MAX_CELLS_STATES` (an error naming the count). Three bins by two classes at node epsilon 1/4
  is about ``10^12`` states: out of reach beside another feature (alone, the three-bin sum above); a
  categorical feature of three categories needs a node epsilon of about 3 or more with a few records.
"""
from __future__ import annotations

import itertools
import math
from functools import lru_cache
from typing import NamedTuple

import numpy as np

from audit.privatree.three_bin_law import choice_law as three_bin_choice_law

__all__ = ["MAX_CELLS_STATES", "TAIL", "CATEGORY_TAIL", "NO_SPLIT", "GINI_DENOMINATOR", "clamped_pmf", "feature_law",
           "choice_law", "exact_gini_keys"]

#: largest number of noisy histograms of one feature enumerated at one node
MAX_CELLS_STATES = 3_000_000
#: target truncated mass per noisy count
TAIL = 1e-13
#: the same for a lone binary categorical feature (its rows are enumerated apart, so a finer cut-off is cheap:
#: the strict learner's loss there is its whole epsilon, which the certificate resolves only with a thin width)
CATEGORY_TAIL = 1e-16
#: the mutants whose candidate filter reads the exact counts (:mod:`audit.privatree.exact_law`, "Mutants")
EXACT_FILTERS = ("exact-min-samples-leaf", "exact-empty-side")
#: the candidate key of "no candidate passes the filter"
NO_SPLIT = -1
#: bound on a Gini's denominator ``N n_L n_R`` below which float keys order as the exact ratios (sqrt(2^53))
GINI_DENOMINATOR = 94_906_265


def clamped_pmf(alpha: float, c: int, hmax: int) -> np.ndarray:
    """``P(max(c + Z, 0) = h)`` for ``h = 0..hmax``, ``Z`` two-sided geometric with ratio ``alpha``."""
    h = np.arange(hmax + 1)
    p = (1.0 - alpha) / (1.0 + alpha) * alpha ** np.abs(h - c)
    p[0] = alpha ** c / (1.0 + alpha)
    return p


def _hmax(alpha: float, c: int, tail: float = TAIL) -> int:
    """Cut-off with tail ``alpha^(hmax - c + 1) / (1 + alpha) <= tail``."""
    return int(c + max(0, math.ceil(math.log(tail) / math.log(alpha))))


def _tail(alpha: float, c: int, hmax: int) -> float:
    return alpha ** (hmax - c + 1) / (1.0 + alpha)


def _is_split(key) -> bool:
    return not (isinstance(key, int) and key == NO_SPLIT)


def _candidate_keys(B: int, ordered: bool) -> list:
    """Every structurally possible candidate key of a feature of ``B`` bins (module docstring)."""
    if not ordered:
        return list(range(B - 1))
    return [c for r in range(1, B) for c in itertools.combinations(range(B), r)]


def _below(row, alpha: float, t: int) -> float:
    """``P(sum of the row's noisy counts < t)``: a finite sum."""
    dist = np.array([1.0])
    for c in row:
        dist = np.convolve(dist, clamped_pmf(alpha, int(c), t - 1))[:t]
    return float(dist.sum())


def _shares(H: np.ndarray) -> np.ndarray:
    """Noisy class-1 share of each row of ``H`` (``(..., B, 2)``), 0.5 for an empty row: the learner's
    :meth:`~reference.privatree.PrivaTreeClassifier._category_order` arithmetic."""
    tot = H.sum(axis=-1)
    return np.divide(H[..., 1], tot, out=np.full(tot.shape, 0.5), where=tot != 0)


def _binary_category_law(counts: np.ndarray, alpha: float, floor: float):
    """A two-category, two-class categorical feature alone at its node (module docstring, "Costs"):
    ``{((0,) or (1,), None): mass, (NO_SPLIT, inf): mass}`` and the truncated mass. The left side is the
    category of the smaller noisy class-1 share, category 0 on ties (a stable ``argsort``)."""
    t = int(math.ceil(floor))
    rows, truncated = [], 0.0
    for c0, c1 in counts.tolist():
        h0, h1 = _hmax(alpha, c0, CATEGORY_TAIL), _hmax(alpha, c1, CATEGORY_TAIL)
        truncated = 1.0 - (1.0 - truncated) * (1.0 - _tail(alpha, c0, h0)) * (1.0 - _tail(alpha, c1, h1))
        mass = np.outer(clamped_pmf(alpha, c0, h0), clamped_pmf(alpha, c1, h1)).astype(np.longdouble)
        H = np.stack(np.meshgrid(np.arange(h0 + 1), np.arange(h1 + 1), indexing="ij"), axis=-1).astype(float)
        keep = H.sum(axis=-1) >= t  # the noisy side must hold max(min_samples_leaf, 1) records
        rows.append((_shares(H)[keep], mass[keep]))
    (s0, m0), (s1, m1) = rows
    order = np.argsort(s1, kind="stable")
    s1, m1 = s1[order], m1[order]
    # sums of up to S = (Hmax + 1)^2 positive terms, in extended precision (relative error below S 2^-64 where
    # long double has a 64-bit significand) so the double results carry a few ulps only
    zero = np.zeros(1, dtype=np.longdouble)
    above = np.concatenate((np.cumsum(m1[::-1])[::-1], zero))  # mass of row 1's states from index i on
    below = np.concatenate((zero, np.cumsum(m1)))  # mass of row 1's states before index i
    i = np.searchsorted(s1, s0, side="left")  # row 1's states of smaller share come first
    left0 = float(np.sum(m0 * above[i]))  # share0 <= share1
    left1 = float(np.sum(m0 * below[i]))
    none = 1.0 - (1.0 - _below(counts[0], alpha, t)) * (1.0 - _below(counts[1], alpha, t))
    return {((0,), None): left0, ((1,), None): left1, (NO_SPLIT, math.inf): none}, truncated


def feature_law(counts: np.ndarray, alpha: float, floor: float, need_gini: bool, variant=None,
                ordered: bool = False, tail: float = TAIL):
    """Law of a feature's best candidate: ``{(key, gini): mass}`` (``key = NO_SPLIT``, ``gini = inf``: no
    candidate passes the filter) and the truncated mass, over every noisy histogram of the exact ``counts``
    (shape ``(B, K)``). ``ordered``: a categorical feature with two classes, its bins ordered by noisy
    class-1 share (module docstring). With two bins and ``need_gini`` False only the filter (and the order)
    matter (the Gini key is ``None``). ``variant``: an exact-count filter of a mutant
    (:mod:`audit.privatree.exact_law`, "Mutants"), on one numerical feature of two bins only. ``tail``: the
    truncated mass per noisy count (a lone binary categorical feature uses :data:`CATEGORY_TAIL`)."""
    B, K = counts.shape
    cells = counts.ravel()
    if B < 2:  # one bin (e.g. PrivaTree*'s edges on no data): no candidate boundary
        return {(NO_SPLIT, math.inf): 1.0}, 0.0
    if variant in EXACT_FILTERS:
        if B != 2 or need_gini or ordered:
            raise ValueError(f"the exact law of the mutant {variant!r} is written for one feature of two bins, "
                             f"numerical; got {B} bins{' and several features' if need_gini else ''}"
                             f"{' of a categorical feature' if ordered else ''}")
        flaw2 = variant == "exact-min-samples-leaf"
        # flaw 2: the exact sides must hold max(min_samples_leaf, 1) records; flaw 6: an exactly empty side
        # drops the candidate
        if min(int(counts[0].sum()), int(counts[1].sum())) < (max(floor, 1.0) if flaw2 else 1):
            return {(NO_SPLIT, math.inf): 1.0}, 0.0
        if flaw2:  # the noisy sides still enter through the Gini: an empty one gives 0/0, which loses every
            floor = 1.0  # comparison of the learner (nan < best is False), so they must hold at least one record
    if B == 2 and not need_gini:
        if ordered:
            return _binary_category_law(counts, alpha, floor)
        t = int(math.ceil(floor))
        ok = (1.0 - _below(counts[0], alpha, t)) * (1.0 - _below(counts[1], alpha, t))
        return {(0, None): ok, (NO_SPLIT, math.inf): 1.0 - ok}, 0.0
    hm = [_hmax(alpha, int(c), tail) for c in cells]
    truncated = 1.0 - math.prod(1.0 - _tail(alpha, int(c), h) for c, h in zip(cells, hm))
    if B == 3 and K == 2 and not need_gini and not ordered and variant is None and floor <= 1.0:
        # one feature of three bins: the comparison separates (audit.privatree.three_bin_law), O(Hmax^4 log Hmax)
        # with a coarser tail than the default (the report's laws), each bin's least likely noisy pairs, of mass at
        # most ``tail``, are left out too (about 3 times faster at node epsilon 1/3); their mass joins the truncated
        law3 = _three_bin_law(tuple(int(c) for c in cells), alpha, tuple(hm), tail if tail > TAIL else 0.0)
        return ({(0, None): law3[0], (1, None): law3[1], (NO_SPLIT, math.inf): law3[None]},
                min(truncated + law3["dropped"], 1.0))
    n_states = math.prod(h + 1 for h in hm)
    if n_states > MAX_CELLS_STATES:
        raise ValueError(f"PrivaTree's exact law is out of reach here: one feature's noisy histogram of {B} bins x "
                         f"{K} classes has {n_states:,} states after truncation (limit {MAX_CELLS_STATES:,}); use "
                         "one feature of two bins, fewer classes or a larger node epsilon")
    grids = np.stack([g.ravel() for g in np.meshgrid(*[np.arange(h + 1) for h in hm], indexing="ij")], axis=1)
    mass = np.ones(grids.shape[0])
    for i, (c, h) in enumerate(zip(cells, hm)):
        mass *= clamped_pmf(alpha, int(c), h)[grids[:, i]]
    H = grids.reshape(-1, B, K).astype(np.int64)
    if ordered:  # section IV-A: bins by noisy class-1 share, ties by code (float shares are exact here)
        order = np.argsort(_shares(H.astype(float)), axis=1, kind="stable")
        H = np.take_along_axis(H, order[:, :, None], axis=1)
    gini, ok = exact_gini_keys(H, floor)
    s = np.argmin(gini, axis=1)
    g = gini[np.arange(gini.shape[0]), s]
    s = np.where(np.isfinite(g), s, NO_SPLIT)
    if ordered:  # the key: the sorted codes of the left side, one code per (order, candidate)
        code = np.where(s >= 0, (order * B ** np.arange(B)).sum(axis=1) * B + s, NO_SPLIT)
        keys = {}
        for cv in np.unique(code[code >= 0]).tolist():
            i = int(np.flatnonzero(code == cv)[0])
            keys[cv] = tuple(sorted(int(b) for b in order[i, : s[i] + 1]))
        keys[NO_SPLIT] = NO_SPLIT
    else:
        code, keys = s, None
    law = {}
    for cv in np.unique(code).tolist():
        sel = code == cv
        gk, inv = np.unique(g[sel], return_inverse=True)
        sums = np.bincount(inv.ravel(), weights=mass[sel])
        key = keys[cv] if ordered else int(cv)
        for gv, w in zip(gk.tolist(), sums.tolist()):
            law[(key, gv)] = law.get((key, gv), 0.0) + w
    for cand in _candidate_keys(B, ordered):  # every structurally possible choice, even if only the tails reach it
        if not any(k[0] == cand for k in law):
            law[(cand, math.inf if truncated == 0 else math.nan)] = 0.0
    return law, truncated


@lru_cache(maxsize=4096)
def _three_bin_law(cells: tuple, alpha: float, hm: tuple, drop: float) -> dict:
    """:func:`audit.privatree.three_bin_law.choice_law` of the exact ``cells`` (kept for every later node and
    dataset with the same counts: the report's four datasets meet the same node histograms many times), with the
    key ``"dropped"`` always present."""
    law = three_bin_choice_law([clamped_pmf(alpha, c, h) for c, h in zip(cells, hm)], drop)
    return {0: law[0], 1: law[1], None: law[None], "dropped": law.get("dropped", 0.0)}


def exact_gini_keys(H: np.ndarray, floor: float):
    """``(gini, ok)`` of every boundary of the integer histograms ``H`` (``(S, B, K)``): ``ok`` where both sides
    hold at least ``floor`` records, and there the weighted Gini ``num / den`` (integers: ``den = N n_L n_R``,
    ``num = den - S_L n_R - S_R n_L``) as one correctly rounded division, ``inf`` elsewhere.

    These floats compare as the exact rationals do (the learner's exact tie rule, :mod:`reference.ties`): equal
    ratios give equal quotients, and two different ratios of denominators below :data:`GINI_DENOMINATOR` differ by
    more than ``2^-53``, the spacing of doubles in ``[1/2, 1)``, so their quotients differ in the same order. A
    larger denominator is an error (out of the law's reach)."""
    L = np.cumsum(H, axis=1)[:, :-1, :]
    R = H.sum(axis=1)[:, None, :] - L
    nL, nR = L.sum(axis=2), R.sum(axis=2)
    ok = (nL >= floor) & (nR >= floor)
    den = (nL + nR) * nL * nR
    top = int(den[ok].max()) if ok.any() else 0
    if top >= GINI_DENOMINATOR:
        raise ValueError(f"PrivaTree's exact law is out of reach here: a Gini denominator of {top:,} (noisy sides of "
                         f"up to {int((nL + nR).max()):,} records) is not below {GINI_DENOMINATOR:,}, where float "
                         "keys compare as the exact ratios do; use a larger node epsilon")
    num = den - (L ** 2).sum(axis=2) * nR - (R ** 2).sum(axis=2) * nL
    gini = np.divide(num, den, out=np.full(den.shape, math.inf), where=ok)
    return gini, ok


def _gini_cdf(law: dict):
    """Sorted Gini values of a feature's law (``inf``: no candidate), their cumulative masses and the
    total: ``P(G > g) = total - cum[#values <= g - 1]`` by binary search."""
    items = sorted((g, w) for (_, g), w in law.items() if not math.isnan(g))
    values = np.array([g for g, _ in items], dtype=float)
    cum = np.cumsum([w for _, w in items]) if items else np.zeros(0)
    return values, cum, float(cum[-1]) if items else 0.0


class _FeatureLaw(NamedTuple):
    """A feature's law as arrays for :func:`choice_law`: its candidate keys (``keys``); for every (key, Gini)
    entry of a candidate, in the law's order, the key's index (``index``) and mass (``mass``); the entries'
    Gini values sorted (``g_sorted``) with the order that sorts them (``order``); the mass of no candidate
    (``none``); the Gini distribution of :func:`_gini_cdf` (with several features); the truncated mass."""

    keys: list
    index: np.ndarray
    mass: np.ndarray
    g_sorted: np.ndarray
    order: np.ndarray
    none: float
    cdf: tuple | None
    truncated: float

    @classmethod
    def of(cls, law: dict, truncated: float, need_gini: bool) -> "_FeatureLaw":
        entries = [(sv, g, w) for (sv, g), w in law.items() if _is_split(sv)]
        keys = list(dict.fromkeys(sv for sv, _, _ in entries))
        where = {sv: i for i, sv in enumerate(keys)}
        g = np.array([e[1] for e in entries], dtype=float)
        order = np.argsort(g, kind="stable")  # sorted needles: numpy's binary search starts from the last hit
        return cls(keys, np.array([where[sv] for sv, _, _ in entries], dtype=np.int64),
                   np.array([e[2] for e in entries], dtype=float), g[order], order,
                   sum(v for (sv, _), v in law.items() if not _is_split(sv)),
                   _gini_cdf(law) if need_gini else None, truncated)


def choice_law(hists: list, alphas: list, floor: float, variant=None, ordered=None, cache: dict | None = None,
               tail: float = TAIL):
    """``{(feature, key) or None: mass}`` of a node's choice (the first least Gini over features, module
    docstring) and the truncated mass. ``alphas[j]``: the noise ratio of feature ``j``'s histogram;
    ``ordered[j]``: feature ``j`` is categorical with two classes (its bins ordered by noisy share).
    ``cache``: a dict that keeps each feature's law (as arrays, with its Gini distribution) for the next
    nodes: a feature's law is a pure function of its exact counts and these arguments, and the nodes of one
    release law (one per binning of JointExp's edges) meet the same few histograms of a feature many times.
    ``tail``: as in :func:`feature_law`."""
    ordered = ordered or [False] * len(hists)
    need_gini = len(hists) > 1
    seen = {} if cache is None else cache
    keys = []
    for counts, alpha, od in zip(hists, alphas, ordered):
        # features alike: one law
        key = (counts.shape, np.ascontiguousarray(counts).tobytes(), alpha, od, floor, need_gini, variant, tail)
        if key not in seen:
            seen[key] = _FeatureLaw.of(*feature_law(counts, alpha, floor, need_gini, variant, od, tail), need_gini)
        keys.append(key)
    feats = [seen[key] for key in keys]

    def survival(j, jj, side):
        """``P(G_jj > g)`` (side "right") or ``P(G_jj >= g)`` ("left") at each of feature ``j``'s entries."""
        skey = ("survival", keys[j], keys[jj], side)
        if skey not in seen:
            f, (values, cum, total) = feats[j], feats[jj].cdf
            k = np.empty(f.order.size, dtype=np.int64)
            k[f.order] = np.searchsorted(values, f.g_sorted, side=side)
            seen[skey] = total - np.where(k > 0, cum[np.maximum(k - 1, 0)], 0.0)
        return seen[skey]

    out = {}
    for j, f in enumerate(feats):
        if not f.keys:
            continue
        w = f.mass
        if need_gini:
            for jj in range(len(feats)):
                if jj != j:  # an earlier feature wins ties: P(G_jj > g); a later one loses them: P(G_jj >= g)
                    w = w * survival(j, jj, "right" if jj < j else "left")
        # the entries' masses summed by key in the law's order (bincount adds in order, as a loop would)
        for sv, v in zip(f.keys, np.bincount(f.index, weights=w, minlength=len(f.keys)).tolist()):
            out[(j, sv)] = v
    out[None] = math.prod(f.none for f in feats)
    return out, min(sum(f.truncated for f in feats), 1.0)
