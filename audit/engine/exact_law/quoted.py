"""All-sizes entries whose upper end is a paper's bound and whose lower end comes from the listed-dataset law.

Some strict configurations have an exact law on listed datasets (``law(params, X, y)``, the laws of
:mod:`audit.engine.exact_law.domain`'s domains) but no count law bounded on boxes of unbounded counts: the release depends on
the counts through a comparison or an order statistic that no monotone factor bound covers yet (JointExp's private
edge, the order of a binary categorical feature's categories by noisy class share). For these,
:class:`QuotedBoundLaw` gives :func:`audit.engine.exact_law.allsizes.certify_all_sizes` the privacy proof's bound on every
box (the entry's ``upper_method`` is ``"proof"``, its ``upper_note`` says which proof and why no law bound) and the
exact loss of the listed law at every count vector of at most ``max_point_records`` records (the lower end), and at
the ``witnesses``: pairs of any size found by analysis (a family whose loss tends to the proof's bound as its
counts grow), evaluated by the same law or a coarser-tailed one (``witness_law``; its intervals still hold the exact
loss). The search then states the best bounds it has: ``U`` the proof's, ``L`` the worst pair found; it closes only
where a pair reaches the proof's bound (the loss is then exact at every size). Where the analysis shows the proof's
bound is the supremum, approached as the counts grow and reached by no pair, ``limit`` states it beside the search
(:attr:`audit.engine.exact_law.allsizes.CountLaw.limits`: reported, never used).
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
        the lower end is 0 (except at the witnesses).
    witnesses : sequence of (count vector, cell)
        Add/remove pairs ``(c, c + e_cell)`` of any size whose exact loss the search evaluates first
        (:attr:`audit.engine.exact_law.allsizes.CountLaw.witnesses`).
    witness_law : callable, optional
        The law the witnesses are evaluated by (default ``law``): e.g. ``law`` with a coarser truncation, faster on
        large counts (its intervals are wider, still valid).
    limit : (float, str), optional
        The supremum of the add/remove loss and why (module docstring), or ``None``.
    """

    def __init__(self, law, params: dict, grid, classes, bound: float, max_point_records: int, witnesses=(),
                 witness_law=None, limit=None):
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
        m = len(self.cells)
        ws = []
        for c, cell in witnesses:
            c = tuple(int(v) for v in c)
            if len(c) != m or min(c) < 0 or int(cell) != cell or not 0 <= cell < m:
                raise ValueError(f"witnesses: each must be a count vector of {m} non-negative counts and a cell in "
                                 f"0..{m - 1}, got {(c, cell)!r}")
            ws.append((c, (int(cell),)))
        self.witnesses = tuple(ws)
        self._witness_keys = frozenset(ws)
        if limit is not None and not (len(limit) == 2 and 0 < float(limit[0]) <= self.bound and limit[1]):
            raise ValueError(f"limit must be (value in (0, bound], note), got {limit!r}")
        self.limits = {} if limit is None else {"add-remove": (float(limit[0]), str(limit[1]))}
        self._law_of = lru_cache(maxsize=4096)(self._law_at)
        self._witness_law = law if witness_law is None else witness_law
        self._witness_law_of = lru_cache(maxsize=64)(self._witness_law_at)

    def _dataset(self, c: tuple):
        K = len(self.classes)
        rows = [self.points[j // K] for j in range(len(c)) for _ in range(c[j])]
        X = np.array(rows, dtype=float).reshape(-1, len(self.points[0]))
        y = np.array([self.classes[j % K] for j in range(len(c)) for _ in range(c[j])])
        return X, y

    def _law_at(self, c: tuple):
        return self.law(self.params, *self._dataset(c))

    def _witness_law_at(self, c: tuple):
        return self._witness_law(self.params, *self._dataset(c))

    def pair_delta(self, lo: tuple, hi: tuple, move: tuple) -> dict:
        """``{"loss": (L, U)}``: ``U`` the proof's bound (twice it for a substitution), ``L`` the listed law's lower
        end of the pair's exact loss at a point of at most ``max_point_records`` records (else 0); the entry is the
        loss itself."""
        upper = self.bound * (1 if len(move) == 1 else 2) * (1 + 1e-12)
        lower = 0.0
        listed = lo == hi and sum(lo) + 1 <= self.max_point_records
        if listed or (lo == hi and (tuple(lo), tuple(move)) in self._witness_keys):
            law_of = self._law_of if listed else self._witness_law_of
            c0 = lo if len(move) == 1 else tuple(v + (j == move[0]) for j, v in enumerate(lo))
            c1 = tuple(v + (j == move[-1]) for j, v in enumerate(lo))
            low, _, _ = pair_interval(law_of(tuple(c0)), law_of(tuple(c1)))
            lower = min(low, upper)
        return {"loss": (lower, upper)}

    def delta(self, lo: tuple, hi: tuple, i: int) -> dict:
        return self.pair_delta(lo, hi, (i,))
