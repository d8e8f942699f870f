"""The split utility the categorical baselines (DPGDF, BDPT) share."""
from __future__ import annotations

import numpy as np


def one_vs_rest_gini_utility(codes: np.ndarray, idx: np.ndarray, yy: np.ndarray, cand) -> np.ndarray:
    """``0.5 - weighted Gini`` of each candidate split ``x_j == c`` against the rest, for binary labels ``yy``
    of the records ``idx`` (spec/privatree.md 3.3-3.4)."""
    util = np.empty(len(cand))
    for i, (j, c) in enumerate(cand):
        go = codes[idx, j] == c
        g = 0.0
        for side in (go, ~go):
            ns = side.sum()
            if ns:
                p1 = yy[side].mean()
                g += ns * (1 - p1 ** 2 - (1 - p1) ** 2)
        util[i] = 0.5 - g / idx.size
    return util
