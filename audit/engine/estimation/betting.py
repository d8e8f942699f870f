"""Evidence against a privacy claim that accumulates over outputs and over runs: a test martingale (testing by betting).

For a pair of neighbouring inputs ``(D, D')``, a direction, and events ``S_1, S_2, ...`` each chosen from outputs
drawn *before* the step that uses it (a predictable choice: the event of a batch is chosen on earlier batches, or
on a pilot of the same run), step ``t`` draws one output of ``M(D)`` and one of ``M(D')`` and observes
``x_t = 1[M(D) in S_t]``, ``y_t = 1[M(D') in S_t]``. If ``M`` is ``(epsilon, delta)``-DP,
``P[M(D) in S] <= e^epsilon P[M(D') in S] + delta`` for every ``S``, so

    Z_t = x_t - e^epsilon y_t - delta

has ``E[Z_t | past] <= 0`` and ``Z_t >= -(e^epsilon + delta)``. For a fixed ``lam`` in
``[0, 1 / (e^epsilon + delta))`` the wealth ``W_t(lam) = prod_{s <= t} (1 + lam Z_s)`` is then a non-negative
supermartingale with ``W_0 = 1``, and so is any average of such wealths: over the fixed grid of bets
:data:`BETS` and over both directions (each direction's events chosen for it). Ville's inequality gives

    P[ sup_t W_t >= 1 / a ] <= a      for a claim that holds,

whatever the stopping rule, and whether the steps were drawn in one run or in many: a run that stops early, a run
that adds a few outputs to the evidence of the runs before it, a history of a hundred runs with different seeds,
all stay at ``a``. Where the subject changes between runs the same holds for the claim "every version holds it"
(``E[Z_t | past] <= 0`` at every step, whichever version drew it).

A bet on the grid fits violations of every size: a loss far above the claim is refuted by the largest bets in a
few tens of outputs, a loss near it by a small bet in thousands, at the price of ``ln`` of the grid's size in the
wealth (mixture method). The state is a list of log-wealths, plain numbers, kept in JSON between runs.

References
----------
Ville, J. (1939). *Etude critique de la notion de collectif*. Gauthier-Villars (the maximal inequality).
Shafer, G. (2021). Testing by betting: a strategy for statistical and scientific communication. *Journal of the
Royal Statistical Society A* 184(2), 407-431.
Waudby-Smith, I. and Ramdas, A. (2024). Estimating means of bounded random variables by betting. *Journal of the
Royal Statistical Society B* 86(1), 1-27 (the mixture of fixed bets, section 5).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

__all__ = ["BETS", "Martingale", "wealth_threshold"]

#: the bets, as shares of the largest bet ``1 / (e^epsilon + delta)``: 0.8 times powers of 2^(-1/2), 16 of them
BETS = tuple(0.8 * 2.0 ** (-k / 2) for k in range(16))
#: the kinds of step, in the order of :attr:`Martingale.counts`: both outputs in the event, only the first
#: input's, only the second's, neither
KINDS = ("both", "only_d", "only_d1", "neither")


def wealth_threshold(alpha: float) -> float:
    """The wealth at which a claim is refuted at error ``alpha`` (Ville): ``1 / alpha``."""
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha!r}")
    return 1.0 / alpha


@dataclass
class Martingale:
    """The steps taken in, by direction and kind (``counts[direction]`` in the order of :data:`KINDS`), with the
    runs they came from. A bet is fixed, so its wealth is a product over steps in which only the number of
    steps of each kind matters: the counts are the whole state, and the wealth can be read at any claimed
    epsilon (:meth:`wealth`), hence the loss the evidence refutes (:meth:`epsilon_lower`). :meth:`to_dict` and
    :meth:`from_dict` keep it between runs.

    Examples
    --------
    >>> m = Martingale()
    >>> m.update(0, both=0, only_d=90, only_d1=0, neither=10)  # 90 of 100 steps in S on D, none on D'
    >>> m.wealth(1.0) > 20.0
    True
    """

    counts: list = field(default_factory=lambda: [[0, 0, 0, 0] for _ in range(2)])
    runs: int = 0

    @property
    def outputs(self) -> int:
        """Outputs per input taken in (each direction counts the same paired steps once)."""
        return int(max(sum(row) for row in self.counts))

    def update(self, direction: int, *, both: int, only_d: int, only_d1: int, neither: int) -> None:
        """Take in a batch of paired steps of one direction: ``both`` steps with both outputs in the event,
        ``only_d`` with only the first input's (``D`` of this direction), ``only_d1`` with only the second's,
        ``neither``. The batch's event must have been chosen before any of its outputs was drawn."""
        if direction not in (0, 1):
            raise ValueError(f"direction must be 0 or 1, got {direction!r}")
        add = [both, only_d, only_d1, neither]
        if any(int(c) != c or c < 0 for c in add):
            raise ValueError(f"counts must be non-negative integers, got {add}")
        self.counts[direction] = [int(c + a) for c, a in zip(self.counts[direction], add)]

    def log_wealth(self, epsilon: float, delta: float = 0.0) -> float:
        """``ln`` of the wealth against the claim ``(epsilon, delta)``: the mean over both directions and every
        bet of :data:`BETS` (a test supermartingale when the claim holds)."""
        e = math.exp(min(epsilon, 700.0))
        z = np.array([1.0 - e - delta, 1.0 - delta, -e - delta, -delta])  # Z of each kind of step
        lam = np.array(BETS)[:, None] / (e + delta)
        counts = np.array(self.counts, dtype=float)  # (2, 4)
        logs = np.log1p(lam * z[None, :])  # (bets, 4)
        flat = (counts @ logs.T).ravel()  # (2 * bets,)
        top = float(flat.max())
        return top + math.log(float(np.exp(flat - top).mean()))

    def wealth(self, epsilon: float, delta: float = 0.0) -> float:
        """The e-value of everything taken in so far against ``(epsilon, delta)``: at least ``1 / a`` with
        probability at most ``a`` when the claim holds, at every stopping time."""
        return math.exp(min(self.log_wealth(epsilon, delta), 700.0))

    def epsilon_lower(self, threshold: float, delta: float = 0.0) -> float:
        """The largest epsilon the evidence refutes at ``threshold`` (``sup {e : wealth(e) >= threshold}``, 0 when
        none): the wealth falls as the claimed epsilon grows, so for the true loss ``e*`` this exceeds ``e*`` only
        when ``wealth(e*) >= threshold``, with probability at most ``1 / threshold``."""
        target = math.log(threshold)
        if self.log_wealth(0.0, delta) < target:
            return 0.0
        lo, hi = 0.0, 1.0
        while self.log_wealth(hi, delta) >= target and hi < 64.0:
            lo, hi = hi, 2.0 * hi
        for _ in range(50):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if self.log_wealth(mid, delta) >= target else (lo, mid)
        return lo

    def point(self, delta: float = 0.0) -> float:
        """The larger direction's ``ln((P_D(S) - delta) / P_D'(S))`` on the steps' counts, smoothed by a half: a
        description of the evidence, not a bound."""
        best = 0.0
        for both, only_d, only_d1, neither in self.counts:
            n = both + only_d + only_d1 + neither
            if n:
                p0, p1 = (both + only_d + 0.5) / (n + 1), (both + only_d1 + 0.5) / (n + 1)
                best = max(best, math.log(max(p0 - delta, 1e-300) / p1))
        return best

    def to_dict(self) -> dict:
        return {"counts": [[int(c) for c in row] for row in self.counts], "runs": int(self.runs)}

    @classmethod
    def from_dict(cls, d: dict) -> "Martingale":
        counts = [[int(c) for c in row] for row in d["counts"]]
        if len(counts) != 2 or any(len(row) != len(KINDS) or min(row) < 0 for row in counts):
            raise ValueError(f"a stored martingale holds 2 rows of {len(KINDS)} non-negative counts, got {counts}")
        return cls(counts, int(d.get("runs", 0)))
