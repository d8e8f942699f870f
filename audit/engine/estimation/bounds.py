"""Clopper-Pearson confidence bounds and the epsilon lower bound built from them.

For an event ``S`` fixed before counting, ``k0`` of ``n0`` outputs on input
``D`` and ``k1`` of ``n1`` on ``D'`` fall in ``S``. With one-sided
Clopper-Pearson bounds at level ``alpha / 2`` each (a union bound, so the
pair holds with probability at least ``1 - alpha``)::

    p0_lo = lower bound of P[M(D) in S],  p1_hi = upper bound of P[M(D') in S]
    epsilon_lower = ln((p0_lo - delta) / p1_hi)     (0 when p0_lo <= delta)

If ``M`` is ``(epsilon, delta)``-DP then ``P[M(D) in S] <= e^epsilon P[M(D') in S] + delta``,
so ``epsilon_lower > epsilon`` happens with probability at most ``alpha``.
"""
from __future__ import annotations

import numpy as np
from statsmodels.stats.proportion import proportion_confint

__all__ = ["cp_lower", "cp_upper", "epsilon_lower_bound", "min_samples_for_a_bound"]


def cp_lower(k, n, level):
    """One-sided Clopper-Pearson lower bound at error ``level`` (0 when k = 0)."""
    k = np.asarray(k, dtype=float)
    lo = proportion_confint(k, n, alpha=2 * level, method="beta")[0]
    return np.where(k <= 0, 0.0, np.nan_to_num(lo, nan=0.0))


def cp_upper(k, n, level):
    """One-sided Clopper-Pearson upper bound at error ``level`` (1 when k = n)."""
    k = np.asarray(k, dtype=float)
    hi = proportion_confint(k, n, alpha=2 * level, method="beta")[1]
    return np.where(k >= n, 1.0, np.nan_to_num(hi, nan=1.0))


def epsilon_lower_bound(k0, n0, k1, n1, *, delta=0.0, alpha=0.05):
    """``max(0, ln((p0_lo - delta) / p1_hi))`` with each bound at level ``alpha / 2``."""
    p0_lo = cp_lower(k0, n0, alpha / 2)
    p1_hi = cp_upper(k1, n1, alpha / 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        eps = np.log(np.maximum(p0_lo - delta, 0.0)) - np.log(p1_hi)
    out = np.where(p0_lo > delta, np.maximum(eps, 0.0), 0.0)
    return out if out.ndim else float(out)


def point_estimate(k0, n0, k1, n1, *, delta=0.0) -> float:
    """``ln((p0 - delta) / p1)`` with add-half smoothing, so it stays finite when a count is 0."""
    p0 = (k0 + 0.5) / (n0 + 1)
    p1 = (k1 + 0.5) / (n1 + 1)
    return float(np.log(max(p0 - delta, 1e-300)) - np.log(p1))


def min_samples_for_a_bound(alpha: float, delta: float = 0.0) -> int:
    """The least ``n`` per side at which a perfect separation (``k0 = n, k1 = 0``)
    gives ``epsilon_lower > 0`` at level ``alpha``: below it nothing can be bounded."""
    n = 1
    while epsilon_lower_bound(n, n, 0, n, delta=delta, alpha=alpha) <= 0.0:
        n *= 2
        if n > 1 << 40:  # pragma: no cover - delta close to 1
            raise ValueError(f"no sample size bounds epsilon at alpha={alpha}, delta={delta}")
    lo, hi = n // 2, n
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if epsilon_lower_bound(mid, mid, 0, mid, delta=delta, alpha=alpha) > 0.0:
            hi = mid
        else:
            lo = mid
    return hi
