"""The law of PrivaTree's bin edges of one numerical feature, and the bins they induce (Algorithm 1 lines 3-5).

PrivaTree (Vos et al. 2023, Algorithm 1 lines 3-5 and section IV-B) bins each numerical feature once, at the
root, with the edges ``np.unique(inner + [hi])``: ``inner`` the JointExp private quantiles at levels
``1/B, ..., (B-1)/B`` (Gillenwater, Joseph, Kulesza, "Differentially Private Quantiles", ICML 2021;
:class:`reference.mechanisms.JointExp`, points of the public grid ``t_k = lo + (hi - lo) k / M``,
``k = 0..M``, ``M = 2**16``), or public uniform edges, or PrivaTree*'s exact quantiles. A record ``x`` goes to
bin ``#{edges < x}``. Each call returns the feature's *edge outcomes*: every value of (the bin of each
record, the number of bins, the released edge cells) with its probability. The tree's law depends on the
edges only through the bins, so ``P(edge cells, tree | D) = sum over outcomes of P_JointExp(outcome | D)
P(tree | bins)`` (:mod:`audit.privatree.exact_law`).

Summing over gaps, not grid points
----------------------------------
JointExp's law on sorted grid vectors is ``P(o) ∝ exp(rate u(o)) / prod_v mult_o(v)!`` with the utility
``u`` a function of the ranks ``#{x < o_j}`` (:mod:`reference.mechanisms.jointexp`, "Public grid"). The grid
is cut into *pieces*: maximal runs of consecutive grid points with the same rank ``#{x < t}``, the same
``#{x <= t}`` (so the same bins: a record is right of every point of a piece or of none), the same released
cell ``min(floor((t - lo) / (hi - lo) G), G - 1)``; the last point ``t_M`` (the upper bound ``hi``, which
``np.unique`` merges with the appended ``hi``) is a piece of its own. At most ``2 n + G + 2`` pieces for
``n`` records instead of ``M + 1 = 65,537`` points. ``m`` sorted outputs fall in pieces ``p_1 <= ... <= p_m``;
a run of ``k`` outputs in a piece of ``c`` grid points takes ``r`` distinct points (``r`` edges, ``r - 1``
empty bins between them) with total weight ``C(c, r) r! S(k, r) / k!`` (``S`` the Stirling numbers of the
second kind: the sorted ``k``-tuples of ``r`` distinct values each weighted ``1 / prod mult!``; summed over
``r`` they give the ``c^k / k!`` of the sampler's forward pass). The law of a piece sequence and its ``r``'s
is ``exp(rate u(representatives) - log W)`` times these weights.

The exact grid index
--------------------
With ``G = "grid"`` the release holds the edges' grid points themselves. Within a piece cut also at the
other dataset's values (``cuts``), every sorted grid tuple with the same pieces and the same number of
distinct points per piece has, under *both* datasets, the same probability up to the data-independent factor
``1 / prod mult!`` (the utility depends only on the ranks, which are constant on the common pieces), so the
ratio of its probabilities is one number per lump. The lumped law (outcome key: each piece's first grid
index, size and number of distinct edges) therefore gives exactly the exact-index release's pair loss and
privacy profile (every term ``max(0, P0 - e^eps P1)`` scales by the same factor within a lump): the law of
the grid indices without enumerating ``65,537`` points per edge. It is a pair's law
(:func:`audit.privatree.exact_law.pair_loss` with ``edges="grid"``), not one dataset's.

Exactness and cost
------------------
The edge law is JointExp's exact law (the mechanism's definition, which its sampler draws up to its stated
residual delta, :attr:`reference.mechanisms.JointExp.residual_delta`, about ``5e-8`` of total variation at
``m = 9``; the interval holds the exact law, not that floating-point departure). The probabilities are doubles
from one log-normaliser (split-log forward pass) and one utility per piece sequence: relative error well below
:data:`EDGE_ROUNDING`, kept as interval width. Time ``O(M)`` vectorised for the pieces (a few milliseconds),
then ``C(P + m - 1, m)`` piece sequences, each with the product over its runs of ``min(k, c)`` choices of
``r``; memory ``O(M + n x outcomes)``. One private edge (``max_bins = 2``, ``m = 1``): ``P <= 2 n + G + 2``
outcomes before merging those with equal bins and cells, milliseconds for a few records.
"""
from __future__ import annotations

import itertools
import math
from collections import Counter
from dataclasses import dataclass

import numpy as np

from reference.mechanisms.grid import DEFAULT_GRID
from reference.mechanisms.jointexp import JointExp
from reference.privatree.learner import edge_cells

__all__ = ["EDGE_ROUNDING", "MAX_EDGE_SEQUENCES", "EdgeOutcome", "public_edges", "category_bins", "jointexp_edges", "stirling2"]

#: relative width kept around each JointExp edge probability (its floating-point evaluation)
EDGE_ROUNDING = 1e-12
#: largest number of piece sequences ``C(P + m - 1, m)`` enumerated for one feature
MAX_EDGE_SEQUENCES = 20_000


@dataclass(frozen=True)
class EdgeOutcome:
    """One value of a feature's binning: its probability ``weight``, each record's ``bins``, ``n_bins`` and
    the released ``cells`` of its edges (``None`` when the release omits them, or for a categorical feature)."""

    weight: float
    bins: np.ndarray
    n_bins: int
    cells: tuple | None


def _cells(e, bounds, G):
    if G == "grid":  # public edges: their values
        return tuple(float(v) for v in e)
    return None if G is None else tuple(int(v) for v in edge_cells(e, bounds, G))


def public_edges(e, col, bounds, G=None) -> list[EdgeOutcome]:
    """The one outcome of public (or data-determined) edges ``e``: ``bins = #{edges < x}``."""
    e = np.asarray(e, dtype=float)
    return [EdgeOutcome(1.0, np.searchsorted(e, col, side="left"), int(e.size), _cells(e, bounds, G))]


def category_bins(codes, n_categories: int) -> list[EdgeOutcome]:
    """A categorical feature: its category codes are its bins (section IV-A), nothing released about them."""
    return [EdgeOutcome(1.0, np.asarray(codes, dtype=np.int64), int(n_categories), None)]


def stirling2(k: int, r: int) -> int:
    """Stirling number of the second kind ``S(k, r)``: partitions of ``k`` items into ``r`` non-empty blocks."""
    return sum((-1) ** i * math.comb(r, i) * (r - i) ** k for i in range(r + 1)) // math.factorial(r)


def _run_weights(k: int, c: int) -> list[tuple[int, float]]:
    """``(r, C(c, r) r! S(k, r) / k!)`` for ``r = 1..min(k, c)`` (module docstring)."""
    return [(r, math.comb(c, r) * math.factorial(r) * stirling2(k, r) / math.factorial(k))
            for r in range(1, min(k, c) + 1)]


def _pieces(mech: JointExp, x: np.ndarray, G, cuts=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The pieces of the grid (module docstring), also cut at the public values ``cuts``: first grid index of
    each, grid-point counts, grid values."""
    lo, hi = mech.bounds
    M = mech.grid
    t = mech.points(np.arange(M + 1))
    keys = [np.searchsorted(x, t, side="left"), np.searchsorted(x, t, side="right"), t == hi]
    if cuts is not None:
        c = np.sort(np.clip(np.asarray(cuts, dtype=float), lo, hi))  # the values as the law sees them
        keys += [np.searchsorted(c, t, side="left"), np.searchsorted(c, t, side="right")]
    if isinstance(G, int):
        keys.append(edge_cells(t, mech.bounds, G))
    change = np.zeros(M, dtype=bool)
    for key in keys:
        change |= key[1:] != key[:-1]
    change[M - 1] = True  # t_M alone
    starts = np.concatenate(([0], np.flatnonzero(change) + 1))
    return starts, np.diff(np.concatenate((starts, [M + 1]))), t


def jointexp_edges(col, bounds, epsilon: float, levels, G=None, grid: int = DEFAULT_GRID,
                   cuts=None) -> list[EdgeOutcome]:
    """The edge outcomes of JointExp's private quantiles at ``levels`` with budget ``epsilon`` on the clipped
    column ``col`` (module docstring), outcomes of equal bins and cells merged.

    Parameters
    ----------
    col : 1-D array, the feature's values clipped into ``bounds``
    bounds : (lo, hi) with ``lo < hi``
    epsilon : float, the feature's quantile budget (``budget_split``'s ``quantile``)
    levels : the ``m = max_bins - 1`` levels ``1/B .. (B-1)/B``
    G : int, "grid" or None
        Resolution of the released edge cells (``release(edges=G)``); ``None``: the edges are not released;
        ``"grid"``: the edges' grid points, lumped (module docstring, "The exact grid index"): each outcome's
        ``cells`` is the tuple of ``(first grid index, grid points, distinct edges)`` of its pieces.
    grid : int, default ``2**16``
        JointExp's grid steps ``M`` (the learner's default; a coarser one lets tests enumerate every point).
    cuts : array, optional
        Public values at which the pieces are also cut (with ``"grid"``: the other dataset's values).
    """
    lo, hi = bounds
    if not lo < hi:
        raise ValueError(f"bounds must have lo < hi for JointExp's edges, got {bounds!r}")
    mech = JointExp(epsilon, levels, (lo, hi), grid=grid)  # the learner's mechanism and sensitivity
    x = np.sort(np.asarray(col, dtype=float))
    starts, counts, t = _pieces(mech, x, G, cuts)
    m = mech.quantiles.size
    n_seq = math.comb(starts.size + m - 1, m)
    if n_seq > MAX_EDGE_SEQUENCES:
        raise ValueError(f"PrivaTree's exact law is out of reach here: JointExp's {m} edges over {starts.size} pieces "
                         f"of the grid make {n_seq:,} piece sequences (limit {MAX_EDGE_SEQUENCES:,}); use max_bins=2 "
                         "(one private edge), fewer records or a coarser edge resolution")
    log_w = mech.log_normaliser(x)
    merged: dict = {}
    for seq in itertools.combinations_with_replacement(range(starts.size), m):
        base = math.exp(mech.rate * mech.utility(t[starts[list(seq)]], x) - log_w)
        runs = sorted(Counter(seq).items())
        for choice in itertools.product(*[_run_weights(k, int(counts[p])) for p, k in runs]):
            w = base * math.prod(v for _, v in choice)
            inner = np.concatenate([t[starts[p]: starts[p] + r] for (p, _), (r, _) in zip(runs, choice)])
            e = np.unique(np.concatenate((inner, [hi])))  # the learner's edges
            bins = np.searchsorted(e, col, side="left")
            cells = tuple((int(starts[p]), int(counts[p]), r) for (p, _), (r, _) in zip(runs, choice)) \
                if G == "grid" else _cells(e, bounds, G)
            key = (bins.tobytes(), int(e.size), cells)
            if key in merged:
                merged[key] = (merged[key][0] + w, bins)
            else:
                merged[key] = (w, bins)
    return [EdgeOutcome(w, bins, n, cells) for (_, n, cells), (w, bins) in merged.items()]
