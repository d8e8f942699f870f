"""A lower bound on epsilon from one exact test of the two counts jointly: coupled thinning and Fisher's test.

The reference bound (:func:`audit.engine.estimation.bounds.epsilon_lower_bound`) puts a one-sided
Clopper-Pearson bound on each probability at level ``alpha / 2`` and divides them: a union bound over two
intervals, each conservative, whose false-alarm rate at the boundary of the claim was measured at 30 to 100
times below its nominal level. :func:`epsilon_lower_joint` spends the whole ``alpha`` on one test.

**The test.** An event ``S`` fixed before counting has ``k0`` of ``n0`` outputs on ``D`` and ``k1`` of ``n1`` on
``D'``: ``k0 ~ Bin(n0, p0)``, ``k1 ~ Bin(n1, p1)``, independent. An ``(epsilon, delta)``-DP mechanism has
``p0 <= e^epsilon p1 + delta``. With ``a = e^-epsilon`` and ``r = delta a / (1 + delta a)``:

* keep each of ``D``'s ``k0`` outputs in ``S`` with probability ``a (1 - r) = a / (1 + delta a)``: ``k0'`` is
  ``Bin(n0, q0)`` with ``q0 = p0 a / (1 + delta a)``;
* count each of ``D'``'s ``n1 - k1`` outputs outside ``S`` as in it with probability ``r``: ``k1'`` is
  ``Bin(n1, q1)`` with ``q1 = p1 (1 - r) + r``.

Under the claim ``q0 <= (p1 + delta a) / (1 + delta a) = q1``. So the claim at ``epsilon`` implies
``q0 <= q1`` for two independent binomials, and Fisher's exact test of that hypothesis (one-sided, conditional on
the table's margins: the probability of at least ``k0'`` successes on ``D``'s side under the hypergeometric
law) rejects it with probability at most ``alpha`` (Lehmann and Romano 2005, section 4.5: the conditional test
is of level ``alpha`` for every ``q0 <= q1``). For ``delta = 0`` the transform is the plain thinning of ``D``'s
count by ``e^-epsilon``.

**The bound.** The thinning is coupled across ``epsilon``: one uniform per output, drawn once from ``rng``, so
``k0'`` and ``k1'`` are step functions of ``epsilon`` that change only at known break points. The bound is the
left end of the first interval of ``epsilon`` (from 0 up) on which the test does not reject. If the true loss
``epsilon*`` is below it, the test rejected at ``epsilon*``, which happens with probability at most ``alpha``:
``P(epsilon_lower > epsilon*) <= alpha`` for every mechanism that is ``(epsilon*, delta)``-DP on this event,
whatever the test's monotonicity in ``epsilon``. Every break point is tested at once (a vectorised
hypergeometric tail), so the bound is exact, not bisected.

**Power.** For ``delta = 0`` the thinned count ``k0'`` falls as epsilon grows while ``k1' = k1`` stays, and
Fisher's p-value rises as ``k0'`` falls (one success fewer on ``D``'s side, the other side fixed), so the test
rejects on all of ``[0, epsilon]`` exactly when it rejects at ``epsilon``: ``P(epsilon_lower > c)`` is the
probability that the test rejects at ``c``, with ``k0' ~ Bin(n0, p0 e^-c)`` and ``k1 ~ Bin(n1, p1)``
independent. :func:`joint_power` computes it exactly (a sum over ``k1`` of binomial tails past the critical
``k0'``), where the reference bound's power takes a Monte Carlo simulation.

**Cost and randomness.** ``k0 + (n1 - k1)`` uniforms and as many tail probabilities; the same ``rng`` state
gives the same bound. The randomisation is the price of using the whole ``alpha``: two audits of the same counts
with different seeds may differ slightly.

References
----------
E. L. Lehmann and J. P. Romano, *Testing Statistical Hypotheses*, 3rd ed., Springer, 2005, section 4.5.
R. A. Fisher, *The Design of Experiments*, 1935 (the exact test of a 2 x 2 table).
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from scipy.stats import binom, hypergeom

__all__ = ["epsilon_lower_joint", "joint_p_values", "joint_power"]


def _check(k0, n0, k1, n1, delta, alpha) -> None:
    for name, k, n in (("k0", k0, n0), ("k1", k1, n1)):
        if not (0 <= k <= n) or n < 1:
            raise ValueError(f"{name} must lie in [0, n] with n >= 1, got {name}={k}, n={n}")
    if not 0 <= delta < 1:
        raise ValueError(f"delta must lie in [0, 1), got {delta!r}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha!r}")


def _breaks(u0: np.ndarray, u1: np.ndarray, delta: float) -> np.ndarray:
    """The ``epsilon >= 0`` at which a kept or converted output changes, with 0 first, ascending."""
    with np.errstate(divide="ignore", invalid="ignore"):
        keep = -np.log(u0 / (1.0 - delta * u0))  # a / (1 + delta a) = u
        conv = -np.log(u1 / (delta * (1.0 - u1))) if delta > 0 else np.empty(0)  # delta a / (1 + delta a) = u
    points = np.concatenate(([0.0], keep, conv))
    return np.unique(points[np.isfinite(points) & (points >= 0.0)])


def joint_p_values(k0: int, n0: int, k1: int, n1: int, *, delta: float = 0.0, rng=None):
    """``(epsilons, p_values)``: Fisher's one-sided p-value of the thinned table on each interval of epsilon
    that starts at ``epsilons[i]`` (module docstring), for the uniforms ``rng`` draws (``k0`` for ``D``'s outputs
    in the event, then ``n1 - k1`` for ``D'``'s outside it)."""
    rng = np.random.default_rng(rng)
    u0 = np.sort(rng.random(int(k0)))
    u1 = np.sort(rng.random(int(n1 - k1)))
    eps = _breaks(u0, u1, delta)
    inside = np.append((eps[:-1] + eps[1:]) / 2.0, eps[-1] + 1.0)  # each interval read at its middle, not at a
    a = np.exp(-inside)                                             # break point, where rounding decides
    kept = np.searchsorted(u0, a / (1.0 + delta * a), side="left")  # uniforms below the keep probability
    conv = np.searchsorted(u1, delta * a / (1.0 + delta * a), side="left") if delta > 0 else 0
    t0, t1 = kept, k1 + conv
    p = hypergeom.sf(t0 - 1, n0 + n1, t0 + t1, n0)  # P(X >= t0), X the successes on D's side given the margins
    return eps, np.where(t0 <= 0, 1.0, np.minimum(p, 1.0))


def epsilon_lower_joint(k0: int, n0: int, k1: int, n1: int, *, delta: float = 0.0, alpha: float = 0.05,
                        rng=None) -> float:
    """A ``(1 - alpha)`` lower confidence bound on epsilon from one event's counts, spending the whole ``alpha``
    on one exact test of both counts (module docstring).

    Parameters
    ----------
    k0, n0 : int
        Outputs in the event, and outputs, on ``D``.
    k1, n1 : int
        The same on ``D'``.
    delta : float
        The claim's delta (0 for pure DP).
    alpha : float
        The bound's error probability.
    rng : numpy.random.Generator, int or SeedSequence
        The thinning's uniforms (the same state gives the same bound).

    Returns
    -------
    float
        ``epsilon_lower >= 0``: for an ``(epsilon, delta)``-DP mechanism, ``P(epsilon_lower > epsilon) <= alpha``.
    """
    _check(k0, n0, k1, n1, delta, alpha)
    if k0 == 0:
        return 0.0
    eps, p = joint_p_values(int(k0), int(n0), int(k1), int(n1), delta=float(delta), rng=rng)
    fails = np.flatnonzero(p > alpha)
    return float(eps[fails[0]]) if fails.size else math.inf


@lru_cache(maxsize=512)
def _critical(kmin: int, kmax: int, n0: int, n1: int, alpha: float) -> np.ndarray:
    """For each ``k1`` from ``kmin`` to ``kmax``, the least ``t0`` at which Fisher's one-sided test of the table ``(t0, n0; k1, n1)``
    rejects at ``alpha`` (``n0 + 1`` where none does): a bisection, the p-value falling as ``t0`` grows. It does not
    depend on the event's probabilities, so a search over the loss reuses it (cached)."""
    k1 = np.arange(kmin, kmax + 1)
    lo = np.zeros_like(k1)  # p(lo) > alpha or lo == 0 (t0 = 0 never rejects)
    hi = np.full_like(k1, n0 + 1)  # p(hi) <= alpha, or hi = n0 + 1 (none does)
    while np.any(hi - lo > 1):
        mid = (lo + hi) // 2
        p = hypergeom.sf(mid - 1, n0 + n1, mid + k1, n0)
        rejects = (mid > 0) & (p <= alpha)
        hi = np.where(rejects, mid, hi)
        lo = np.where(rejects, lo, mid)
    return hi


def joint_power(p0: float, p1: float, n0: int, n1: int, *, claim: float, alpha: float) -> float:
    """``P(epsilon_lower_joint > claim)`` for ``delta = 0``, exactly, when the event has probability ``p0`` on
    ``D`` (``n0`` outputs) and ``p1`` on ``D'`` (``n1`` outputs): the probability that the test rejects at
    ``claim`` (module docstring, **Power**).

    Parameters
    ----------
    p0, p1 : float
        The event's probabilities on the two inputs.
    n0, n1 : int
        Outputs per input.
    claim : float
        The epsilon the bound must exceed.
    alpha : float
        The bound's error probability.

    Returns
    -------
    float
        The probability, in [0, 1].
    """
    if not (0.0 <= p0 <= 1.0 and 0.0 <= p1 <= 1.0):
        raise ValueError(f"p0 and p1 must lie in [0, 1], got p0={p0!r}, p1={p1!r}")
    n0, n1 = int(n0), int(n1)
    q0 = p0 * math.exp(-claim)
    lo, hi = binom.ppf(1e-12, n1, p1), binom.isf(1e-12, n1, p1)  # k1 beyond these carries below 2e-12 in all
    kmin, kmax = int(max(lo, 0)), int(min(hi, n1))
    weight = binom.pmf(np.arange(kmin, kmax + 1), n1, p1)
    tail = binom.sf(_critical(kmin, kmax, n0, n1, float(alpha)) - 1, n0, q0)  # P(k0' >= the critical count)
    return float(min(1.0, np.sum(weight * tail)))
