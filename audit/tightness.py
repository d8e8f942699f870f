"""The best epsilon lower bound any event could give, from a mechanism's exact law.

With ``n`` counting samples per side and error ``alpha``, an event ``S``
would at best yield the bound computed from its expected counts
``n P0(S)`` and ``n P1(S)``. Maximising over events ranked by their exact
likelihood ratio (optimal by the Neyman-Pearson lemma) gives the bound the
auditor can hope for at that sample size; the ratio of the measured bound to
it is the auditor's tightness.
"""
from __future__ import annotations

import numpy as np
from scipy import stats

from .bounds import epsilon_lower_bound

__all__ = ["attainable_from_pmf", "attainable_laplace", "attainable"]


def attainable_from_pmf(p0, p1, n: int, alpha: float, delta: float = 0.0) -> float:
    """Best bound over the outcome sets ranked by ``p0/p1`` (both directions)."""
    p0, p1 = np.asarray(p0, float), np.asarray(p1, float)
    best = 0.0
    for a, b in ((p0, p1), (p1, p0)):
        with np.errstate(divide="ignore"):
            order = np.argsort(-(np.log(a) - np.log(b)), kind="stable")
        pa, pb = np.cumsum(a[order]), np.cumsum(b[order])
        best = max(best, float(np.max(epsilon_lower_bound(n * pa, n, n * pb, n, delta=delta, alpha=alpha))))
    return best


def attainable_laplace(x0: float, x1: float, scale: float, n: int, alpha: float, delta: float = 0.0) -> float:
    """Best bound for scalar Laplace outputs centred at ``x0`` and ``x1`` (one-sided events are optimal)."""
    t = np.linspace(min(x0, x1) - 20 * scale, max(x0, x1) + 20 * scale, 20001)
    best = 0.0
    for lo, hi in ((x0, x1), (x1, x0)):
        a = stats.laplace(lo, scale)
        b = stats.laplace(hi, scale)
        for pa, pb in ((a.cdf(t), b.cdf(t)), (a.sf(t), b.sf(t))):
            best = max(best, float(np.max(epsilon_lower_bound(n * pa, n, n * pb, n, delta=delta, alpha=alpha))))
    return best


def attainable(mechanism, d0, d1, n: int, alpha: float, delta: float = 0.0):
    """The attainable bound for the mechanisms whose law this module can enumerate, else ``None``."""
    from reference.mechanisms import Laplace, TwoSidedGeometric, _Selection, RandomizedResponse

    if type(mechanism) is Laplace and np.ndim(d0) == 0:
        return attainable_laplace(float(d0), float(d1), mechanism.scale, n, alpha, delta)
    if isinstance(mechanism, TwoSidedGeometric):
        ks = np.arange(min(d0, d1) - 200, max(d0, d1) + 201)
        p0 = np.exp([mechanism.logpmf(k, d0) for k in ks])
        p1 = np.exp([mechanism.logpmf(k, d1) for k in ks])
        return attainable_from_pmf(p0, p1, n, alpha, delta)
    if isinstance(mechanism, (_Selection, RandomizedResponse)):
        return attainable_from_pmf(mechanism.pmf(d0), mechanism.pmf(d1), n, alpha, delta)
    return None
