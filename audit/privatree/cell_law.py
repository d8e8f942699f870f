"""PrivaTree's release law as the exact oracle's cells (``compare --exact`` and the claims' law-based audit).

:func:`privatree_cell_law` presents :func:`audit.privatree.exact_law.release_law` as a
:class:`audit.engine.comparison.exact_oracle.CellLaw`: each tree is a cell, and the releases only the truncated noise
tails reach share one cell, :data:`audit.engine.comparison.exact_oracle.OTHER`, of probability at most the truncated mass.
"""
from __future__ import annotations

from audit.engine.comparison.exact_oracle import OTHER, CellLaw
from audit.privatree.exact_law import release_law

__all__ = ["privatree_cell_law"]


def privatree_cell_law(params: dict, X, y, law=None) -> CellLaw:
    """PrivaTree's release law (:func:`audit.privatree.exact_law.release_law`, or ``law`` when it is already
    computed) as cells: each tree, and :data:`OTHER` for the releases only the truncated noise tails reach
    (probability at most ``truncated``)."""
    law = release_law(params, X, y) if law is None else law
    lower, upper = dict(law.lower), dict(law.upper)
    if law.truncated > 0:
        lower[OTHER], upper[OTHER] = 0.0, min(1.0, law.truncated)
    known = set(upper)
    return CellLaw(lower, upper, lambda r: r if r in known else OTHER)
