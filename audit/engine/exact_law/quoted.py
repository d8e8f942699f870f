"""All-sizes entries whose upper end is a paper's bound and whose lower end comes from the listed-dataset law.

Some strict configurations have an exact law on listed datasets (``law(params, X, y)``, the laws of
:mod:`audit.engine.exact_law.domain`'s domains) but no count law bounded on boxes of unbounded counts: the release depends on
the counts through a comparison or an order statistic that no monotone factor bound covers yet (JointExp's private
edge, the order of a binary categorical feature's categories by noisy class share). For these,
:class:`QuotedBoundLaw` gives :func:`audit.engine.exact_law.allsizes.certify_all_sizes` the privacy proof's bound on every
box (the entry's ``upper_method`` is ``"proof"``, its ``upper_note`` says which proof and why no law bound) and the
exact loss of the listed law at every count vector of at most ``max_point_records`` records (the lower end). The
search then states the best bounds it has: ``U`` the proof's, ``L`` the worst pair of the listed law found; it
closes only where the listed law reaches the proof's bound (the loss is then exact at every size).
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from audit.engine.exact_law.allsizes import CountLaw
from audit.engine.exact_law.laws import pair_interval

__all__ = ["QuotedBoundLaw"]


class QuotedBoundLaw(CountLaw):
    """The proof's bound on every box, the listed law's exact loss at small count vectors (module docstring).

    Parameters
    ----------
    law : callable
        ``law(params, X, y)``: the interval law of the release on a listed dataset.
    params : dict
        The learner's parameters.
    grid : sequence of sequences
        Each feature's public values; a cell is a grid point (every combination) and a class.
    classes : sequence
        The public classes.
    bound : float
        The proof's bound on the loss of every pair under the relation (add/remove; a substitution pair is
        bounded by twice it, a removal and an addition).
    max_point_records : int
        Count vectors of at most this many records (the larger dataset) get the listed law's exact loss; above,
        the lower end is 0.
    """

    def __init__(self, law, params: dict, grid, classes, bound: float, max_point_records: int):
        if not bound > 0:
            raise ValueError(f"bound must be positive, got {bound!r}")
        if int(max_point_records) != max_point_records or max_point_records < 1:
            raise ValueError(f"max_point_records must be a positive integer, got {max_point_records!r}")
        self.law, self.params, self.bound = law, dict(params), float(bound)
        self.classes = list(classes)
        points = [()]
        for values in grid:
            points = [p + (v,) for p in points for v in values]
        self.points = points
        self.max_point_records = int(max_point_records)
        self.cells = tuple(f"x = {p if len(p) > 1 else p[0]!r}, class {c!r}" for p in points for c in self.classes)
        self.releases = ("loss",)
        self.limits = {}
        self._law_of = lru_cache(maxsize=4096)(self._law_at)

    def _dataset(self, c: tuple):
        K = len(self.classes)
        rows = [self.points[j // K] for j in range(len(c)) for _ in range(c[j])]
        X = np.array(rows, dtype=float).reshape(-1, len(self.points[0]))
        y = np.array([self.classes[j % K] for j in range(len(c)) for _ in range(c[j])])
        return X, y

    def _law_at(self, c: tuple):
        return self.law(self.params, *self._dataset(c))

    def pair_delta(self, lo: tuple, hi: tuple, move: tuple) -> dict:
        """``{"loss": (L, U)}``: ``U`` the proof's bound (twice it for a substitution), ``L`` the listed law's lower
        end of the pair's exact loss at a point of at most ``max_point_records`` records (else 0); the entry is the
        loss itself."""
        upper = self.bound * (1 if len(move) == 1 else 2) * (1 + 1e-12)
        lower = 0.0
        if lo == hi and sum(lo) + 1 <= self.max_point_records:
            c0 = lo if len(move) == 1 else tuple(v + (j == move[0]) for j, v in enumerate(lo))
            c1 = tuple(v + (j == move[-1]) for j, v in enumerate(lo))
            low, _, _ = pair_interval(self._law_of(tuple(c0)), self._law_of(tuple(c1)))
            lower = min(low, upper)
        return {"loss": (lower, upper)}

    def delta(self, lo: tuple, hi: tuple, i: int) -> dict:
        return self.pair_delta(lo, hi, (i,))
