"""Neighbouring inputs, named by the relation they belong to.

Tabular data ``(X, y)``:

* add/remove: remove one record; add one record at a corner of the public
  domain (the worst case for bound clipping) with each class;
* substitute: replace one record by a domain corner, flip one label, move one
  record across a bin edge.

Query vectors (the patterns of the DP-testing literature, e.g. StatDP):
one above, one below, one above and the rest below, one below and the rest
above, half and half, all above, all below, and the X shape.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from reference.validation import check_neighbouring, shown

__all__ = ["NeighbourPair", "add_remove_pairs", "substitute_pairs", "query_pairs", "QUERY_PATTERNS"]


@dataclass(frozen=True)
class NeighbourPair:
    """Two neighbouring inputs and how they differ."""

    d0: Any
    d1: Any
    description: str
    relation: str = "add-remove"

    def __post_init__(self):
        check_neighbouring(self.relation)

    def swapped(self) -> "NeighbourPair":
        return NeighbourPair(self.d1, self.d0, f"swapped: {self.description}", self.relation)


def _corners(bounds: Sequence[tuple[float, float]], limit: int = 4) -> list[np.ndarray]:
    corners = [np.array(c, dtype=float) for c in itertools.product(*[(lo, hi) for lo, hi in bounds])]
    return corners[:limit]


def add_remove_pairs(X, y, *, bounds, classes, remove: Sequence[int] | None = None, corners: int = 2):
    """Pairs ``(D, D minus record i)`` and ``(D, D plus a corner record of each class)``.

    Parameters
    ----------
    X, y : the base dataset
    bounds : public ``(low, high)`` per feature, for the corner records
    classes : public class labels (or, for regression, the target's extreme values)
    remove : indices of records to remove (default: the first and the last)
    corners : how many domain corners to add records at
    """
    X, y = np.asarray(X, dtype=float), np.asarray(y)
    remove = [0, len(y) - 1] if remove is None else list(remove)
    pairs = []
    for i in dict.fromkeys(remove):
        keep = np.arange(len(y)) != i
        pairs.append(NeighbourPair((X, y), (X[keep], y[keep]), f"remove record {i}"))
    for corner in _corners(bounds, corners):
        for c in classes:
            X1 = np.vstack((X, corner))
            y1 = np.append(y, c)
            pairs.append(NeighbourPair((X, y), (X1, y1), f"add record {corner.tolist()} with label {shown(c)}"))
    return pairs


def substitute_pairs(X, y, *, bounds, classes, records: Sequence[int] | None = None, bin_edges=None):
    """Pairs differing in one record's value: a corner, a flipped label, or a move across a bin edge.

    ``bin_edges`` (optional) maps a feature index to its public bin edges; a
    record is then moved from just below to just above an edge.
    """
    X, y = np.asarray(X, dtype=float), np.asarray(y)
    records = [0] if records is None else list(records)
    pairs = []
    for i in records:
        for corner in _corners(bounds, 2):
            X1 = X.copy()
            X1[i] = corner
            pairs.append(NeighbourPair((X, y), (X1, y), f"record {i} -> corner {corner.tolist()}", "substitute"))
        for c in classes:
            if c != y[i]:
                y1 = y.copy()
                y1[i] = c
                pairs.append(NeighbourPair((X, y), (X, y1), f"record {i} label {shown(y[i])} -> {shown(c)}", "substitute"))
        for j, edges in (bin_edges or {}).items():
            inner = np.asarray(edges, dtype=float)[1:-1]
            if inner.size == 0:
                continue
            e = inner[np.argmin(np.abs(inner - X[i, j]))]
            width = (bounds[j][1] - bounds[j][0]) * 1e-3
            X0, X1 = X.copy(), X.copy()
            X0[i, j], X1[i, j] = e - width, e + width
            pairs.append(NeighbourPair((X0, y), (X1, y), f"record {i} feature {j} moved across bin edge {e:g}",
                                       "substitute"))
    return pairs


def _patterns(n: int) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    ones = np.ones(n)
    half = n // 2
    e0 = np.zeros(n)
    e0[0] = 1.0
    pm = -np.ones(n)
    pm[0] = 1.0
    hh = np.r_[np.ones(half), -np.ones(n - half)]
    x0 = np.r_[np.ones(half), np.zeros(n - half)]
    return {
        "one above": (ones, ones + e0),
        "one below": (ones, ones - e0),
        "one above, rest below": (ones, ones + pm),
        "one below, rest above": (ones, ones - pm),
        "half above, half below": (ones, ones + hh),
        "all above": (ones, ones + 1.0),
        "all below": (ones, ones - 1.0),
        "X shape": (x0, 1.0 - x0),
    }


QUERY_PATTERNS = tuple(_patterns(4))


def query_pairs(n: int, patterns: Sequence[str] | None = None, *, both_orders: bool = False):
    """Query-answer vectors of length ``n`` differing by at most 1 per coordinate.

    Each pair is neighbouring for queries of per-coordinate sensitivity 1
    (counting queries), the setting of sparse-vector and noisy-max tests.
    """
    if n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    table = _patterns(n)
    names = QUERY_PATTERNS if patterns is None else patterns
    unknown = [p for p in names if p not in table]
    if unknown:
        raise ValueError(f"unknown query patterns {unknown}; choose from {QUERY_PATTERNS}")
    pairs = [NeighbourPair(*table[p], p) for p in names]
    if both_orders:
        pairs += [p.swapped() for p in pairs]
    return pairs
