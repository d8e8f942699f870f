"""The strict random forest over every dataset of any size on a public grid (audit.engine.exact_law.allsizes).

Bojarski et al.'s forest (:mod:`audit.random_trees.exact_law`): every tree's structure is drawn without the
data, and every leaf's class counts get two-sided geometric noise of rate ``r`` (``epsilon / k`` under
add/remove, ``epsilon / (2k)`` under strict substitution accounting). A dataset on the grid enters the law
only through its counts per (grid value, class), so the loss of every pair of any size is bounded per box
of counts:

* *upper end, every box* (the analytic bound of :mod:`audit.random_trees.exact_law`, "Exactness"): under
  either dataset, every noisy count vector's probability ratio is ``a^(|n - c|_1 - |n - c'|_1)``, within
  ``e^(r |c - c'|_1)``, and so is every released value's (a sum over count vectors) and the uniform draw's;
  the record moves one leaf per tree by ``|c - c'|_1 = 1`` (add/remove) or at most 2 (substitution), so the
  loss is at most ``k r`` or ``2 k r``: ``epsilon`` for the strict forest, whatever the counts;
* *lower end, at a point*: the listed-dataset law's lower end (:func:`audit.random_trees.exact_law.pair_loss`
  on the datasets of those counts, enumerated atoms), up to :data:`MAX_POINT_RECORDS` records (0 above).

So the all-sizes bound is the claim itself, and the pair found reaches it up to the enumeration's and the
rounded uniform draw's slack (the value ``(1, 0)`` of a leaf is also a 6-decimal point of the uniform draw
of an invalid leaf, whose mass on it is only known within ``[0.99e-6, 1.01e-6]`` per unit of invalid mass).
"""
from __future__ import annotations

import numpy as np

from audit.engine.exact_law.allsizes import CountLaw
from audit.random_trees.exact_law import forest_setup, pair_loss

__all__ = ["ForestCountLaw", "MAX_POINT_RECORDS"]

#: largest dataset whose pair's lower end is computed at a point (the leaves' atoms are enumerated)
MAX_POINT_RECORDS = 120


class ForestCountLaw(CountLaw):
    """The strict forest's loss on counts per (grid value, class) of one feature (module docstring).

    Parameters
    ----------
    params : dict
        The forest's parameters (strict accounting, ``private=True``, two classes, one feature).
    grid : sequence of float
        The feature's public values.
    """

    def __init__(self, params: dict, grid=(0.25, 0.75)):
        est_k, _h, bounds, _X, _y, rate, _rule = forest_setup(params, np.zeros((0, 1)), [])
        if len(bounds) != 1:
            raise ValueError(f"bounds={params.get('bounds')!r}: the forest's count law covers one feature")
        if params.get("accounting", "strict") != "strict":
            raise ValueError(f"accounting={params.get('accounting')!r}: the forest's count law covers 'strict'")
        self.params, self.grid = dict(params), [float(v) for v in grid]
        self.k, self.rate = est_k, rate
        self.classes = list(params["classes"])
        self.cells = tuple(f"x = {v:g}, class {c!r}" for v in self.grid for c in self.classes)
        self.releases = ("forest",)
        self.limits = {}

    def _dataset(self, c):
        K = len(self.classes)
        X = np.array([[self.grid[j // K]] for j in range(len(c)) for _ in range(c[j])], dtype=float).reshape(-1, 1)
        y = np.array([self.classes[j % K] for j in range(len(c)) for _ in range(c[j])])
        return X, y

    def pair_delta(self, lo: tuple, hi: tuple, move: tuple) -> dict:
        """``{"forest": (L, U)}``: ``U = k r |c - c'|_1`` on every box, ``L`` the listed law's lower end of the
        loss at a point (module docstring); the entry is the loss itself."""
        upper = self.k * self.rate * (1 if len(move) == 1 else 2) * (1 + 1e-12)
        lower = 0.0
        if lo == hi and sum(lo) + 1 <= MAX_POINT_RECORDS:
            c0 = lo if len(move) == 1 else tuple(v + (j == move[0]) for j, v in enumerate(lo))
            c1 = tuple(v + (j == move[-1]) for j, v in enumerate(lo))
            ref = pair_loss(self.params, self._dataset(c0), self._dataset(c1), grid=[self.grid])
            lower = min(ref.lower, upper)
        return {"forest": (lower, upper)}

    def delta(self, lo: tuple, hi: tuple, i: int) -> dict:
        return self.pair_delta(lo, hi, (i,))
