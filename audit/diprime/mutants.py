"""DiPriMe's known-flawed variants, as mutants the auditor must catch (to be merged into audit.mutants).

Each case is an :class:`audit.mutants.Case`: a mechanism, its neighbouring
inputs, the epsilon it claims and where the flaw comes from. They are the
published forms of spec/diprime.md section 2.4:

* ``diprime-v000-index-median``: V000's median over sorted indices, without
  gap-length weighting (Consul and Williamson 2020, Algorithm 3, lines 42-47;
  spec 2.4 (iii)); a value added inside a gap concentrates the output there.
* ``diprime-authors-flip-median``: the authors' DiPriMeFlip median,
  permute-and-flip with score ``2 ln|I| - |2i - N|`` (spec A6, 2.4 (iv)).
* ``diprime-count-scaled-leaf``: the regression leaf ``mean + Lap(R/(N eps))``
  with ``Uniform(B_L, B_U)`` when empty (V000 section 3, V003 section 3,
  authors' code; spec 2.4 (ii)); its atoms at the bounds exist only with data.

The outputs are post-processed to a public indicator (does ``r`` fall in the
gap; is the leaf at its upper bound), so a few thousand samples suffice. The
indicator's exact law (:meth:`Indicator.law`) comes from the inner mechanism's
own law (the gap medians' ``cdf``, the leaf's atom), so each mutant row shows
the exact loss of its release, the indicator.
"""
from __future__ import annotations

import math

import numpy as np

from audit.engine.comparison.exact_oracle import CellLaw
from reference.validation import check_generator
from reference.diprime.mechanisms import AuthorsFlipMedian, CountScaledLeafMean, IndexMedianV000
from reference.papers import cite

from audit.mechanisms.mutants import Case

__all__ = ["Indicator", "mutant_cases"]

GAP = 1e-3
#: relative width of an indicator's probability interval: the inner laws are exact in real arithmetic, and the
#: samplers' doubles (a uniform drawn in a gap; Laplace noise, then clipping) move a probability by far less
SLACK = 1e-9


class Indicator:
    """``m(data, rng) = int(low <= inner(data) <= high)``: a public post-processing of ``inner``."""

    def __init__(self, inner, low, high):
        self.inner, self.low, self.high = inner, low, high

    def __call__(self, data, rng):
        return int(self.batch(data, 1, rng)[0])

    def batch(self, data, n, rng):
        check_generator(rng)
        out = np.asarray(self.inner.batch(data, n, rng), dtype=float)
        return ((out >= self.low) & (out <= self.high)).astype(np.int64)

    def __repr__(self):
        return f"1[{self.low:g} <= {self.inner!r} <= {self.high:g}]"

    def probability(self, data) -> float:
        """``P(low <= inner(data) <= high)`` in real arithmetic, from the inner mechanism's law: the gap
        medians' ``cdf`` (no atom: a gap of zero length gets no mass), or the count-scaled leaf's atom at one
        of its bounds (none for an empty leaf, whose uniform has no atom)."""
        inner = self.inner
        if callable(getattr(inner, "cdf", None)):
            return float(np.clip(inner.cdf(self.high, data) - inner.cdf(self.low, data), 0.0, 1.0))
        if isinstance(inner, CountScaledLeafMean) and self.low == self.high and self.low in inner.target_bounds:
            return math.exp(inner.log_law(self.low, data))
        raise ValueError(f"no exact law for {self!r}: the inner mechanism needs a cdf, or the indicator must be "
                         "a count-scaled leaf's atom at one of its target bounds")

    def law(self, data) -> CellLaw:
        """The indicator's law on the cells 0 and 1, each probability within a relative :data:`SLACK`."""
        p = self.probability(data)
        ends = {1: (p * (1 - SLACK), min(1.0, p * (1 + SLACK))), 0: ((1 - p) * (1 - SLACK), min(1.0, (1 - p) * (1 + SLACK)))}
        return CellLaw({c: lo for c, (lo, _) in ends.items()}, {c: hi for c, (_, hi) in ends.items()})


class _LeafBatch(CountScaledLeafMean):
    def batch(self, data, n, rng):
        return np.array([self.sample(data, rng) for _ in range(int(n))])


def _gap_pairs():
    from audit.engine.estimation.neighbours import NeighbourPair

    return [NeighbourPair([0.5], [0.5, 0.5 + GAP], f"a value added {GAP:g} above the only one")]


def _leaf_pairs():
    from audit.engine.estimation.neighbours import NeighbourPair

    return [NeighbourPair([], [1.0], "an empty leaf vs one record at the upper target bound")]


def mutant_cases(epsilon: float = 1.0) -> list[Case]:
    """The flawed DiPriMe mechanisms at ``epsilon``; the auditor must flag each."""
    return [
        Case("diprime-v000-index-median", "V000 index median without gap-length weighting",
             f"{cite('diprime-v000')}, Algorithm 3, lines 42-47", epsilon,
             lambda: Indicator(IndexMedianV000(epsilon, (0.0, 1.0)), 0.5, 0.5 + GAP), _gap_pairs),
        Case("diprime-authors-flip-median", "DiPriMeFlip median: permute-and-flip with score 2 ln|I| - |2i - N|",
             "the authors' code (github.com/shoryaconsul/DiPriMeFlip_Forest); at half of epsilon, since at exactly 1 its gap weight "
             "|I|^eps cancels the gap's length", 0.5 * epsilon,
             lambda: Indicator(AuthorsFlipMedian(0.5 * epsilon, (0.0, 1.0)), 0.5, 0.5 + GAP), _gap_pairs),
        Case("diprime-count-scaled-leaf", "regression leaf with Laplace scale R/(N eps) and a uniform empty leaf",
             f"{cite('diprime-v000')} and {cite('diprime-v003')}, section 3", epsilon,
             lambda: Indicator(_LeafBatch(epsilon, (0.0, 1.0), 1.0), 1.0, 1.0), _leaf_pairs),
    ]
