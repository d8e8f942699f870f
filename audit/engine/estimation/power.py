"""The power statement of a pass: the smallest loss this audit would have caught.

For the winning pair and event of an audit, with ``p1`` the event's frequency
on the denominator input (add-half smoothed) and ``n`` outputs per input, a
true loss ``L`` on that event means ``p0 = e^L p1 + delta`` on the other input.
:func:`detectable_loss` returns the smallest ``L`` (on a grid of 0.01) at
which the audit's lower bound at its level exceeds the claim with
probability >= ``power``: for the Clopper-Pearson bound estimated by simulating
the two binomial counts with a fixed seed, for the joint bound
(:mod:`audit.engine.estimation.joint`) computed exactly. The reading follows
the bound the result was taken with (``EstimateResult.bound``). It speaks of
that event and pair only: a loss elsewhere is not covered.
"""
from __future__ import annotations

import math

import numpy as np

from audit.engine.estimation.bounds import epsilon_lower_bound
from audit.engine.estimation.joint import joint_power

__all__ = ["POWER_MARGIN", "detection_probability", "detectable_loss", "power_statement", "pass_power",
           "conclusive_n"]

#: a pass is conclusive when a loss of (1 + POWER_MARGIN) times the claim would have been caught with
#: probability 0.9 (``run`` and ``check`` alike)
POWER_MARGIN = 0.25


def detection_probability(loss: float, p1: float, n: int, *, claim: float, alpha: float, delta: float = 0.0,
                          sims: int = 2000, seed: int = 0, bound: str = "cp") -> float:
    """The probability that ``epsilon_lower > claim`` when the event has probabilities
    ``min(1, e^loss p1 + delta)`` and ``p1`` on ``n`` outputs per input: by Monte Carlo (``sims`` simulated
    pairs of counts, ``seed``) for the Clopper-Pearson bound, ``bound="cp"``; exactly for the joint bound,
    ``bound="joint"`` (:func:`audit.engine.estimation.joint.joint_power`, pure DP)."""
    p0 = min(1.0, math.exp(loss) * p1 + delta)
    if bound == "joint" and delta == 0.0:
        return joint_power(p0, p1, n, n, claim=claim, alpha=alpha)
    rng = np.random.default_rng(seed)
    k0 = rng.binomial(n, p0, sims)
    k1 = rng.binomial(n, p1, sims)
    lower = epsilon_lower_bound(k0, n, k1, n, delta=delta, alpha=alpha)
    return float(np.mean(np.asarray(lower) > claim))


def detectable_loss(p1: float, n: int, *, claim: float, alpha: float, delta: float = 0.0, power: float = 0.9,
                    sims: int = 2000, seed: int = 0, cap: float = 20.0, bound: str = "cp") -> float:
    """The smallest loss (grid 0.01) detected with probability >= ``power`` by ``bound``'s lower bound
    (:func:`detection_probability`); ``inf`` if none up to where ``p0`` reaches 1 or ``cap``."""
    if not 0.0 < p1 < 1.0:
        raise ValueError(f"p1 must lie in (0, 1), got {p1!r}")
    top = min(cap, math.log(max((1.0 - delta) / p1, 1.0)) if p1 > 0 else cap)
    if detection_probability(top, p1, n, claim=claim, alpha=alpha, delta=delta, sims=sims, seed=seed,
                             bound=bound) < power:
        return math.inf
    lo, hi = claim, top
    while hi - lo > 0.01:
        mid = (lo + hi) / 2
        if detection_probability(mid, p1, n, claim=claim, alpha=alpha, delta=delta, sims=sims, seed=seed,
                                 bound=bound) >= power:
            hi = mid
        else:
            lo = mid
    return math.ceil(hi * 100) / 100


def _bound(result) -> str:
    """The bound ``result`` was taken with (``"cp"`` for results that predate the choice)."""
    return getattr(result, "bound", "cp")


def power_statement(result, *, claim: float, delta: float = 0.0, power: float = 0.9) -> tuple[float, str]:
    """``(loss, sentence)`` for an :class:`audit.engine.estimation.estimate.EstimateResult` (the winning pair's)."""
    c = result.counts
    n = int(c["n1"])
    p1 = (c["k1"] + 0.5) / (n + 1)
    level = result.alpha / 2  # the estimate shares its alpha over both directions
    loss = detectable_loss(p1, n, claim=claim, alpha=level, delta=delta, power=power, bound=_bound(result))
    if math.isinf(loss):
        text = (f"power: on the winning pair and event (frequency {p1:.3g} on the other input) no loss up to "
                f"{min(20.0, math.log(1 / p1)):.3g} would be caught with probability {power:g} at n = {n:,}")
    else:
        text = (f"power: a loss of {loss:.3g} or more on the winning pair and event [{result.event}] "
                f"(frequency {p1:.3g} on the other input) would be caught with probability >= {power:g} "
                f"at n = {n:,} per input")
    return loss, text


def pass_power(result, *, claim: float, delta: float = 0.0) -> tuple[dict, str]:
    """A sampled pass's power as report fields and a sentence: ``({"power", "detectable_loss"}, text)``.

    ``power`` is ``"conclusive"`` when a loss of ``claim * (1 + POWER_MARGIN)`` on the winning pair and event
    would have been caught with probability 0.9 at the row's sample size, else ``"inconclusive"`` (the pass
    says little: the claim is not refuted, but a loss somewhat above it would likely have passed too);
    ``detectable_loss`` is the smallest loss so caught (None: none). ``result`` is the winning pair's
    :class:`audit.engine.estimation.estimate.EstimateResult`."""
    loss, text = power_statement(result, claim=claim, delta=delta)
    fields = {"power": "conclusive" if loss <= claim * (1.0 + POWER_MARGIN) else "inconclusive",
              "detectable_loss": None if math.isinf(loss) else loss}
    return fields, text


def conclusive_n(result, *, claim: float, target: float, delta: float = 0.0, power: float = 0.9,
                 cap: int = 10 ** 9):
    """The smallest ``n`` (doubling from the result's own) at which the winning event, at its observed
    frequency on the other input, would catch a loss of ``target`` (above ``claim``) with probability
    ``power``; ``None`` when even ``cap`` outputs per input would not."""
    c = result.counts
    n = max(int(c["n1"]), 1)
    p1 = (c["k1"] + 0.5) / (n + 1)
    level = result.alpha / 2
    while n <= cap:
        if detectable_loss(p1, n, claim=claim, alpha=level, delta=delta, power=power, bound=_bound(result)) <= target:
            return n
        n *= 2
    return None
