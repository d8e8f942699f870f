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

from audit.engine.estimation.bounds import epsilon_lower_bound

__all__ = ["attainable_from_pmf", "attainable_laplace", "attainable_lattice", "attainable"]


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


def attainable_lattice(law, c0: int, c1: int, n: int, alpha: float, delta: float = 0.0, width: float = 40.0) -> float:
    """Best bound for two discrete Laplace laws (``law``: :class:`reference.mechanisms.discrete_noise.DiscreteLaplaceLaw`)
    centred at the integers ``c0`` and ``c1``, over ``width`` scales either side (the tails beyond hold
    less than ``exp(-width)`` of the mass)."""
    reach = int(np.ceil(width / law.rate))
    ks = np.arange(min(c0, c1) - reach, max(c0, c1) + reach + 1)
    return attainable_from_pmf(np.exp(law.logpmf(ks - c0)), np.exp(law.logpmf(ks - c1)), n, alpha, delta)


def attainable(mechanism, d0, d1, n: int, alpha: float, delta: float = 0.0):
    """The attainable bound for the mechanisms whose law this module can enumerate, else ``None``."""
    from reference.mechanisms import Laplace, TwoSidedGeometric, Selection, RandomizedResponse, round_to_grid

    if type(mechanism) is Laplace and np.ndim(d0) == 0:
        c0, c1 = (int(round_to_grid(d, mechanism.grid)) for d in (d0, d1))
        return attainable_lattice(mechanism.law(1), c0, c1, n, alpha, delta)
    if isinstance(mechanism, TwoSidedGeometric):
        return attainable_lattice(mechanism.noise_law, int(d0), int(d1), n, alpha, delta)
    if isinstance(mechanism, (Selection, RandomizedResponse)):
        return attainable_from_pmf(mechanism.pmf(d0), mechanism.pmf(d1), n, alpha, delta)
    return None
