"""The determinism test along a ladder of round sizes: structure that switches at an exact record count.

Ordinary code changes what it does at round numbers of records: ``bins = 10 if n < 1000 else 20``, a
flag set at ``len(y) == 1024``, a summary kept from 10,000 records on. The tiny candidates of the neighbour
search never reach those sizes, and the scale family (:mod:`audit.gate.scale`) bisects towards where the
*sampled* law moves most, which need not be the size where the structure switches. Such a switch is a
deterministic function of the exact count, so the determinism test (:func:`audit.gate.determinism.probe_determinism`)
finds it, if only it looks there: :func:`ladder_pairs` gives the neighbouring pairs one record either side of
each size of :data:`ROUND_SIZES` (powers of ten and of two, multiples of 1,000) up to the scale family's
largest size, in a pattern of the scale family (``D(n + 1)`` is ``D(n)`` plus one record; under substitution
the last record is replaced).
"""
from __future__ import annotations

import numpy as np

from audit.engine.estimation.neighbours import NeighbourPair
from audit.gate.scale import SCALE_PATTERNS, pattern_data

__all__ = ["ROUND_SIZES", "PATTERN", "round_sizes", "ladder_pairs"]

#: the sizes the ladder looks at, one record either side: powers of ten, of two, multiples of 1,000
ROUND_SIZES = (10, 16, 32, 64, 100, 128, 256, 512, 1_000, 1_024, 2_000, 2_048, 4_096, 5_000, 8_192, 10_000)
#: the pattern of the ladder's datasets: both classes alternate, five levels of each feature
PATTERN = SCALE_PATTERNS[2]


def round_sizes(n_max: int) -> list[int]:
    """The sizes of :data:`ROUND_SIZES` whose upper neighbour (``n + 1`` records) is at most ``n_max``."""
    return [n for n in ROUND_SIZES if n + 1 <= n_max]


def _pair(n: int, bounds, classes, relation: str) -> NeighbourPair:
    X0, y0 = pattern_data(PATTERN, n, bounds, classes)
    X1, y1 = pattern_data(PATTERN, n + 1, bounds, classes)
    if relation == "substitute":
        X1, y1 = np.vstack((X0[:-1], X1[-1:])), np.append(y0[:-1], y1[-1:])
        return NeighbourPair((X0, y0), (X1, y1), f"[round size] {n:,} records, the last one replaced", relation)
    return NeighbourPair((X0, y0), (X1, y1), f"[round size] {n:,} records vs {n + 1:,}", relation)


def ladder_pairs(bounds, classes, relation: str = "add-remove", n_max: int = 16_000) -> list[NeighbourPair]:
    """The pairs ``(D(n - 1), D(n))`` and ``(D(n), D(n + 1))`` for every round size ``n`` up to ``n_max``
    (under substitution, ``D(n)`` against itself with its last record replaced, and the same at ``n - 1``)."""
    return [_pair(m, bounds, classes, relation) for n in round_sizes(n_max) for m in (n - 1, n)]
