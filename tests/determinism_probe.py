"""The determinism probe on a one-feature noisy-count subject, as the determinism tests call it."""
from __future__ import annotations

from audit.gate.determinism import probe_determinism
from audit.gate.outputs import probe_grid
from audit.gate.search import candidate_pairs

BOUNDS, CLASSES = [(0.0, 1.0)], [0, 1]
GRID = probe_grid(BOUNDS)


def probe(cls, relation="add-remove"):
    """The determinism report of ``cls(epsilon=1.0)`` on the candidate pairs of the unit interval (seed 0)."""
    pairs = candidate_pairs(BOUNDS, CLASSES, relation, seed=0)
    return probe_determinism(lambda: cls(epsilon=1.0), pairs, grid=GRID, classes=CLASSES, epsilon=1.0,
                             relation=relation)
