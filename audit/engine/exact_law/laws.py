"""The generic pieces of an exact release law: interval laws, their composition, a pair's loss and profile.

Every exact law of the project (the papers' learners in ``audit/<paper>/exact_law.py``, the baselines'
in :mod:`audit.baselines_law`) is a finite *interval law*: for every release ``r`` of positive
probability, ``lower[r] <= P(release = r) <= upper[r]``, the interval holding the implementation's true
probability (its width carries the rounding of the floating-point products and the mass a truncated
enumeration left out). This module holds what does not depend on the learner:

* :class:`ReleaseLaw`, the interval law, and :func:`add_interval` / :func:`join_children`, the
  composition of independent parts of a release (a node's choice and its children's laws);
* :func:`pair_interval`, the exact loss ``max_r |ln P(r | D) - ln P(r | D')|`` of two interval laws
  as an interval, and :func:`profile`, upper bounds on the privacy profile
  ``delta(epsilon) = max over directions of sum_r max(0, P(r | D) - e^epsilon P(r | D'))``;
* :class:`PairLoss` / :func:`laws_pair_loss`, the same packaged with the release attaining it.

Why the intervals are valid: a log-ratio ``ln(p0 / p1)`` with ``p0 in [l0, u0]`` and ``p1 in [l1, u1]``
lies in ``[ln(l0 / u1), ln(u0 / l1)]`` (the logarithm is increasing); the maximum over releases of the
upper ends bounds the maximum of the true values, and the maximum of the lower ends is attained by some
release, hence is below the true maximum.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

__all__ = ["ROUNDING", "ReleaseLaw", "add_interval", "join_children", "pair_interval", "profile", "PairLoss",
           "laws_pair_loss", "log_ratio"]

#: relative rounding slack of every computed probability (exp, products, sums of a few terms)
ROUNDING = 1e-12


@dataclass
class ReleaseLaw:
    """``lower[r] <= P(release = r) <= upper[r]`` for every release ``r`` of positive probability
    (``lower`` may be 0 for releases only the truncated tails can produce); ``width`` is the
    largest ``upper - lower``; ``truncated`` the total mass the truncation left out."""

    lower: dict = field(default_factory=dict)
    upper: dict = field(default_factory=dict)
    truncated: float = 0.0

    @property
    def width(self) -> float:
        return max((self.upper[r] - self.lower[r] for r in self.upper), default=0.0)

    @classmethod
    def from_intervals(cls, law: dict, truncated: float = 0.0) -> "ReleaseLaw":
        """``{release: (lower, upper)}`` as a law, widened by the relative rounding slack :data:`ROUNDING` of
        the products and sums that computed it."""
        res = cls(truncated=truncated)
        for r, (lo, hi) in law.items():
            res.lower[r] = max(0.0, lo * (1.0 - ROUNDING))
            res.upper[r] = min(1.0, hi * (1.0 + ROUNDING) + 1e-300)
        return res


def add_interval(out: dict, r, lo: float, hi: float) -> None:
    """``out[r] += (lo, hi)``."""
    a, b = out.get(r, (0.0, 0.0))
    out[r] = (a + lo, b + hi)


def join_children(out: dict, w: tuple, left: dict, right: dict, make) -> None:
    """Add to ``out`` the releases ``make(left release, right release)`` of a choice of probability in
    ``w = (lower, upper)`` whose children's laws ``left`` and ``right`` are independent given the choice."""
    for (rl, (l0, u0)), (rr, (l1, u1)) in itertools.product(left.items(), right.items()):
        add_interval(out, make(rl, rr), w[0] * l0 * l1, min(1.0, w[1]) * u0 * u1)


def log_ratio(a: float, b: float) -> float:
    """``ln(a / b)`` with ``ln(0 / b) = -inf`` and ``ln(a / 0) = inf`` for ``a > 0``."""
    if a <= 0:
        return -math.inf
    if b <= 0:
        return math.inf
    return math.log(a / b)


def _releases(law0, law1) -> list:
    """The releases of either law in the order of their ``repr``: the worst release of a tie, and every sum,
    do not depend on the hash seed."""
    return sorted(set(law0.upper) | set(law1.upper), key=repr)


def pair_interval(law0, law1):
    """``(lower, upper, release)`` of the exact loss between two interval laws (module docstring: why the
    interval holds the true loss)."""
    lo_best, hi_best, arg = 0.0, 0.0, None
    for r in _releases(law0, law1):
        l0, u0 = law0.lower.get(r, 0.0), law0.upper.get(r, 0.0)
        l1, u1 = law1.lower.get(r, 0.0), law1.upper.get(r, 0.0)
        lo_best = max(lo_best, log_ratio(l0, u1), log_ratio(l1, u0))
        hi = max(log_ratio(u0, l1), log_ratio(u1, l0))
        if arg is None or hi > hi_best:
            hi_best, arg = hi, r
    return lo_best, max(hi_best, 0.0), arg


def profile(law0, law1, epsilons) -> list[float]:
    """Upper bounds on ``delta(epsilon)`` (module docstring) at each epsilon: each term
    ``max(0, P0(r) - e^epsilon P1(r))`` is at most ``max(0, upper0(r) - e^epsilon lower1(r))``."""
    rs = _releases(law0, law1)
    out = []
    for e in epsilons:
        best = 0.0
        for a, b in ((law0, law1), (law1, law0)):
            best = max(best, math.fsum(max(0.0, a.upper.get(r, 0.0) - math.exp(e) * b.lower.get(r, 0.0))
                                       for r in rs))
        out.append(min(best, 1.0))
    return out


@dataclass(frozen=True)
class PairLoss:
    """The exact loss ``max_r |ln P(r | D) - ln P(r | D')|`` as an interval, with the release that
    attains the upper end, and the two laws."""

    lower: float
    upper: float
    release: tuple
    p0: tuple
    p1: tuple
    law0: ReleaseLaw
    law1: ReleaseLaw

    def delta(self, epsilon: float) -> float:
        """Upper bound on the privacy profile ``delta(epsilon) = max over directions of
        sum_r max(0, P(r | D) - e^epsilon P(r | D'))``, from the intervals."""
        best = 0.0
        for a, b in ((self.law0, self.law1), (self.law1, self.law0)):
            tot = 0.0
            for r in set(a.upper) | set(b.upper):
                tot += max(0.0, a.upper.get(r, 0.0) - math.exp(epsilon) * b.lower.get(r, 0.0))
            best = max(best, tot)
        return min(best, 1.0)


def laws_pair_loss(law0: ReleaseLaw, law1: ReleaseLaw) -> PairLoss:
    """:class:`PairLoss` of two interval laws of one learner's release (any learner's), from
    :func:`pair_interval`, the certificate's own computation (releases in ``repr`` order: ties give the same
    release whatever the hash seed)."""
    lo, hi, r = pair_interval(law0, law1)
    return PairLoss(lo, hi, r, (law0.lower.get(r, 0.0), law0.upper.get(r, 0.0)),
                    (law1.lower.get(r, 0.0), law1.upper.get(r, 0.0)), law0, law1)
