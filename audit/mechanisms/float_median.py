"""The private median as it was released before issue 17: a uniform float inside a data-defined gap.

:class:`FloatIntervalMedian` chooses gap ``I_i`` of the sorted values with probability
``∝ |I_i| exp(-epsilon |2i - N| / 2)`` (Consul and Williamson 2021, section 3.1) and returns
``left + U * width`` with ``U`` a 53-bit uniform. In real arithmetic it is epsilon-DP; in doubles
the attainable outputs of a gap are a lattice fixed by the gap's ends, which moves when a record
is added: with ``D = {0.9}`` and ``D' = {0.9, 0.3}`` on ``(0, 1)`` an output drawn from ``D`` is
almost never attainable from ``D'`` (Mironov 2012; issue 17 finding 2, epsilon >= 6.9 through a
learner's ``predict``). The fixed mechanism is :class:`reference.mechanisms.IntervalExponential`
(a public grid).

:func:`attainable` decides exactly whether a double ``r`` is an output of the float draw from a
dataset: ``r`` must equal ``left + (U * width)`` in double arithmetic for some ``U = k 2**-53``.
"""
from __future__ import annotations

import numpy as np

from reference.diprime.mechanisms import FloatGapMedian

__all__ = ["FloatIntervalMedian", "attainable"]


class FloatIntervalMedian(FloatGapMedian):
    """FLAWED in floating point (mutant): the Lebesgue median with ``r = left + U * width``.

    Parameters
    ----------
    epsilon : float
    bounds : (float, float)
    sensitivity : float, default 1.0
    """


def attainable(mech: FloatGapMedian, r: float, data) -> bool:
    """Whether ``numpy``'s ``rng.uniform(left, right)`` (``left + (right - left) * U``,
    ``U = k 2**-53``) can return exactly ``r`` for a gap of positive probability under ``data``.

    The map ``k -> left + width * k 2**-53`` is monotone in ``k``, so a bisection over ``k``
    finds the candidates next to ``r`` exactly."""
    left, right, log_p = mech.gaps(data)
    for a, b, lp in zip(left, right, log_p):
        if not lp > -np.inf or not a <= r <= b:
            continue
        w = b - a
        lo_k, hi_k = 0, 2 ** 53 - 1
        while lo_k < hi_k:  # the smallest k whose output is >= r
            mid = (lo_k + hi_k) // 2
            if a + w * (mid * 2.0 ** -53) < r:
                lo_k = mid + 1
            else:
                hi_k = mid
        if a + w * (lo_k * 2.0 ** -53) == r:
            return True
    return False
