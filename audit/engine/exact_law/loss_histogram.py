"""Privacy-loss distributions as histograms with pessimistic rounding, composed by convolution.

A :class:`LossHistogram` holds an *upper measure* of the privacy-loss distribution of ``P`` against ``Q``:
mass at losses ``ln(P(o) / Q(o))`` rounded *up* to multiples of :data:`PROFILE_STEP`, and the mass of
outcomes ``Q`` cannot produce (or that a truncation left out) at an infinite loss. The hockey-stick
divergence ``delta(epsilon) = sum_o max(0, P(o) - e^epsilon Q(o))`` only grows when a loss is rounded up,
when ``P(o)`` is raised or ``Q(o)`` lowered, so :meth:`LossHistogram.delta` is an upper bound of the true
profile, and stays one under composition (product laws: convolution) and mixtures over a public choice
with the same weights on both sides (a mixture's profile is at most the mixture of profiles).
The same guarantee as dp_accounting's pessimistic privacy-loss distributions (Meiser and Mohammadi 2018;
Koskela et al. 2020), written here for the exact laws' finite outcome lists.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["LossHistogram", "PROFILE_STEP"]

#: the loss grid: every log-likelihood ratio is rounded up to a multiple of it (pessimistic)
PROFILE_STEP = 1e-3


@dataclass
class LossHistogram:
    """Upper measure of a privacy-loss distribution: ``mass[i]`` at loss ``(lo + i) * PROFILE_STEP``
    and ``inf`` at an infinite loss."""

    lo: int
    mass: np.ndarray
    inf: float = 0.0

    @staticmethod
    def point() -> "LossHistogram":
        return LossHistogram(0, np.ones(1))

    def total(self) -> float:
        return float(self.mass.sum()) + self.inf

    def compose(self, other: "LossHistogram") -> "LossHistogram":
        finite = float(self.mass.sum()) * float(other.mass.sum())
        return LossHistogram(self.lo + other.lo, np.convolve(self.mass, other.mass),
                             self.total() * other.total() - finite)

    def add(self, other: "LossHistogram", w: float) -> "LossHistogram":
        lo = min(self.lo, other.lo)
        n = max(self.lo + self.mass.size, other.lo + other.mass.size) - lo
        out = np.zeros(n)
        out[self.lo - lo:self.lo - lo + self.mass.size] += self.mass
        out[other.lo - lo:other.lo - lo + other.mass.size] += w * other.mass
        return LossHistogram(lo, out, self.inf + w * other.inf)

    def delta(self, epsilon: float) -> float:
        loss = (self.lo + np.arange(self.mass.size)) * PROFILE_STEP
        return min(1.0, float(np.sum(self.mass * np.maximum(0.0, -np.expm1(epsilon - loss)))) + self.inf)

    @staticmethod
    def of(mass, loss, inf: float = 0.0) -> "LossHistogram":
        """Outcomes of probability (upper bound) ``mass`` at log-likelihood ratio (upper bound) ``loss``;
        ``inf``: mass at an infinite loss."""
        mass, loss = np.asarray(mass, dtype=float), np.asarray(loss, dtype=float)
        finite = np.isfinite(loss)
        inf = inf + float(mass[~finite].sum())
        if not finite.any():
            return LossHistogram(0, np.zeros(1), inf)
        idx = np.ceil(loss[finite] / PROFILE_STEP * (1 + 1e-12) + 1e-9).astype(np.int64)
        lo = int(idx.min())
        return LossHistogram(lo, np.bincount(idx - lo, weights=mass[finite]), inf)
