"""The one-sample oracle: a candidate's releases against the reference's *exact* law (issue 29, item 4).

The two-sample oracle (:mod:`audit.engine.comparison.compare`) samples the reference as well as the candidate, so
half of its noise is the reference's. Where the reference has an exact law
(:mod:`audit.oracle.exact_laws`), the candidate alone is sampled and its outcome counts are tested against
the known probabilities:

* the law is given on finitely many *cells* (:class:`CellLaw`): every release of probability at least a
  stated *floor* is a cell of its own (the floor is the law's: :attr:`audit.oracle.exact_laws.ExactReference.floor`,
  stated in the summary), the rest (continuous leaf values, truncated tails, rare values) pooled under ``OTHER``;
  each cell's probability is an interval ``[lower, upper]`` that contains the implementation's true probability;
* the test is the G test (likelihood-ratio goodness of fit) on the cells, the cells of expected count below
  5 grouped in order of probability (consecutive cells until a group expects 5 draws, the rarest remainder a
  group of its own: a candidate that moves mass between frequent and rare releases stays visible), with the
  p-value from the exact multinomial law under the null (sequential Monte Carlo, Besag and
  Clifford 1991, as :func:`audit.engine.comparison.compare.g_test_exact`): valid at every sample size, on sparse cells
  too;
* the null probabilities are the intervals' midpoints, normalised. The true law differs from them by at most
  ``w = sum of the cells' widths / 2`` in total variation, hence the law of ``n`` draws' counts by at most
  ``n w`` (a coupling of the draws one by one). The tests are therefore run at level ``alpha - n w`` (Holm
  over the inputs), so that a candidate with the reference's law is called different with probability at
  most ``alpha``; ``n w`` above ``alpha / 2`` is an error asking for fewer draws (it is below ``6e-3`` at
  8,000 draws on the shipped references).

Power: with the probabilities known there is no reference noise, so a deviation ``delta`` in the probability
of one event is detected at level ``alpha / k`` with power 0.9 from ``n`` draws when ``delta >=
(z_{1 - alpha / 2k} + z_0.9) sqrt(p (1 - p) / n)``, at most ``(z + z) / (2 sqrt n)`` (p = 1/2): the
two-sample oracle needs ``2 n`` draws of the candidate (and as many of the reference) for the same
``delta`` (:func:`audit.engine.comparison.compare.detectable_difference`).
"""
from __future__ import annotations

import math
import time
from collections import Counter
from dataclasses import dataclass
from typing import Callable

import numpy as np

from audit.engine.runs import checkpoint, progress
from audit.engine.comparison.compare import EXCEEDANCES, MIN_EXPECTED, N_PERMUTATIONS, Comparison, InputComparison, \
    detectable_difference, holm_adjust, sequential_pvalue
from audit.engine.estimation.sampling import collect, draw
from reference.validation import shown

__all__ = ["OTHER", "CellLaw", "g_test_one_sample", "one_sample_test", "ExactComparison", "compare_exact",
           "detectable_difference_one_sample", "pooled"]

#: the cell of every release the law does not name
OTHER = "(any other release)"


@dataclass
class CellLaw:
    """A release's law on finitely many cells: ``lower[c] <= P(cell c) <= upper[c]``.

    ``cell(release)`` maps a release to its cell (:data:`OTHER` for every release not named); ``lower`` and
    ``upper`` hold every cell, :data:`OTHER` included when it has positive probability.
    """

    lower: dict
    upper: dict
    cell: Callable = lambda r: r

    def __post_init__(self):
        if set(self.lower) != set(self.upper):
            raise ValueError("a CellLaw's lower and upper must name the same cells")
        bad = [c for c in self.upper if not 0.0 <= self.lower[c] <= self.upper[c] <= 1.0 + 1e-12]
        if bad:
            raise ValueError(f"a CellLaw needs 0 <= lower <= upper <= 1; cell {shown(bad[0])} has "
                             f"[{self.lower[bad[0]]}, {self.upper[bad[0]]}]")
        if sum(self.lower.values()) > 1.0 + 1e-9 or sum(self.upper.values()) < 1.0 - 1e-9:
            raise ValueError(f"a CellLaw's intervals must contain a probability law: the lower ends sum to "
                             f"{sum(self.lower.values()):.12g}, the upper ends to {sum(self.upper.values()):.12g}")

    @property
    def total_variation_slack(self) -> float:
        """``sum_c (upper - lower) / 2``: how far (in total variation) the midpoints may be from the truth."""
        return math.fsum(self.upper[c] - self.lower[c] for c in self.upper) / 2.0

    def midpoints(self) -> dict:
        """The intervals' midpoints, normalised to a probability law (the test's null)."""
        mid = {c: (self.lower[c] + self.upper[c]) / 2.0 for c in self.upper}
        total = math.fsum(mid.values())
        return {c: v / total for c, v in mid.items() if v > 0}


def pooled(cell) -> bool:
    """Whether ``cell`` pools releases: :data:`OTHER`, or a tuple with :data:`OTHER` in it (a forest's tree, a
    leaf of a tree)."""
    return cell == OTHER if not isinstance(cell, tuple) else any(pooled(c) for c in cell)


def _g(obs: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """G statistics ``2 sum o ln(o / e)`` of count rows ``obs`` (last axis: the cells) against ``expected``."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return 2.0 * np.where(obs > 0, obs * np.log(obs / expected), 0.0).sum(-1)


def g_test_one_sample(counts, probs, n_permutations: int = N_PERMUTATIONS, seed: int = 0,
                      exceedances: int = EXCEEDANCES) -> tuple[float, float]:
    """``(G, p)``: the G goodness-of-fit statistic of ``counts`` against the cell probabilities ``probs`` and
    its p-value from the multinomial law (sequential Monte Carlo: stop at the ``exceedances``-th null
    statistic at least as large, ``p = exceedances / L``, or after ``n_permutations`` draws with ``k``
    exceedances, ``p = (k + 1) / (n_permutations + 1)``; Besag and Clifford 1991)."""
    counts = np.asarray(counts, dtype=np.int64)
    p = np.asarray(probs, dtype=float)
    p = p / p.sum()
    n = int(counts.sum())
    e = n * p
    g = float(_g(counts, e))
    return g, sequential_pvalue(g, lambda m, rng: _g(rng.multinomial(n, p, size=m), e),
                                np.random.default_rng(seed), n_permutations, exceedances)


def one_sample_test(law: CellLaw, counts: Counter, n_permutations: int | None = None, seed: int = 0):
    """``(test name, G, p-value, most deviating cells)`` of release ``counts`` against ``law`` (module
    docstring); a release whose cell has probability 0 under the law gives ``p = 0``."""
    probs = law.midpoints()
    cells: Counter = Counter()
    for r, k in counts.items():
        cells[law.cell(r)] += k
    n = sum(cells.values())
    impossible = [c for c in cells if c not in probs]
    ranked = sorted(probs, key=lambda c: -probs[c])
    diffs = sorted(((c, round(probs.get(c, 0.0) * n, 1), cells.get(c, 0)) for c in [*ranked, *impossible]),
                   key=lambda t: -abs(t[1] - t[2]))[:5]
    if impossible:
        return f"impossible release ({cells[impossible[0]]} draws of a cell of probability 0)", math.inf, 0.0, diffs
    obs, p = [], []
    group_obs, group_p = 0, 0.0
    for c in ranked:  # most probable first: the cells of expected count below 5 grouped with their neighbours
        group_obs, group_p = group_obs + cells.get(c, 0), group_p + probs[c]
        if n * group_p >= MIN_EXPECTED:
            obs.append(group_obs)
            p.append(group_p)
            group_obs, group_p = 0, 0.0
    if group_p > 0:  # the rarest cells' remainder is a cell too (the Monte Carlo p-value needs no minimum count)
        obs.append(group_obs)
        p.append(group_p)
    if len(obs) < 2:
        return "G test (one cell)", 0.0, 1.0, diffs
    g, pv = g_test_one_sample(obs, p, n_permutations or N_PERMUTATIONS, seed)
    return f"G goodness of fit ({len(obs)} cells, Monte Carlo p)", g, pv, diffs


def detectable_difference_one_sample(n: int, alpha: float, k: int = 1, power: float = 0.9) -> float:
    """The smallest difference in one event's probability the one-sample test detects at level ``alpha / k``
    with probability ``power`` from ``n`` candidate draws (normal approximation, worst case p = 1/2; module
    docstring)."""
    # (z + z) sqrt(1/4 / n) is the two-sample difference at 2n draws per side, sqrt(1 / (2 * 2n))
    if n < 1:
        raise ValueError(f"need n >= 1, got n={n}")
    return detectable_difference(2 * n, alpha, k, power)


@dataclass
class ExactComparison(Comparison):
    """All inputs' one-sample tests, the verdict and the false-alarm rate they guarantee."""

    slack: float  # n * the largest total-variation slack of an input's law
    #: every release of at least this probability has a cell of its own (None: not stated)
    floor: float | None = None
    #: the largest probability of :data:`OTHER` over the inputs' laws
    other: float = 0.0

    @property
    def level(self) -> float:
        """The tests' level ``alpha - n w`` (module docstring)."""
        return self.alpha - self.slack

    def summary(self) -> str:
        worst = min(self.rows, key=lambda r: r.p_adjusted)
        verdict = "DIFFERENT" if self.rejected else "no difference found"
        tv = detectable_difference_one_sample(self.n_samples, self.level, len(self.rows))
        return (f"{verdict} from the reference's exact law: smallest Holm-adjusted p = {worst.p_adjusted:.3g} on "
                f"input {shown(worst.input)} ({worst.test}, statistic {worst.statistic:.4g}); n = "
                f"{self.n_samples:,} candidate draws per input (no reference draws), {len(self.rows)} inputs; "
                f"false-alarm rate at most alpha = {self.alpha:g} (tests at level {self.level:.4g}: the law's "
                f"interval widths take {self.slack:.1e}); a difference of {tv:.3f} in the probability of one event "
                f"is detected with power 0.9" + self.cells())

    def cells(self) -> str:
        """The floor of the law's cells, stated ("" when not given)."""
        if self.floor is None:
            return ""
        every = "every release the law enumerates" if self.floor == 0 else \
            f"every release of probability at least {self.floor:g} under the law"
        return (f"; cells: {every} is a cell of its own, the others pooled under {OTHER!r} (in a tree's or a "
                f"leaf's place where the law is a product; the pooled cells' probability at most {self.other:.3g} "
                f"on an input); cells expecting fewer than {MIN_EXPECTED:g} draws are grouped")


def compare_exact(candidate, inputs, laws, *, n_samples: int = 8_000, alpha: float = 0.01,
                  seed: int = 0, floor: float | None = None) -> ExactComparison:
    """Test ``candidate`` (a mechanism ``m(data, rng)``) against the exact ``laws`` (one :class:`CellLaw`
    per input) on ``inputs`` (a sequence of ``(name, data)``), Holm-corrected over the inputs; ``floor``: the
    laws' stated floor (every release of at least that probability has a cell of its own), for the summary."""
    inputs, laws = list(inputs), list(laws)
    if not inputs or len(inputs) != len(laws):
        raise ValueError(f"need one exact law per input, got {len(inputs)} inputs and {len(laws)} laws")
    slack = n_samples * max(law.total_variation_slack for law in laws)
    if slack > alpha / 2:
        raise ValueError(f"--samples {n_samples:,}: the exact law's interval widths would take {slack:.2g} of alpha "
                         f"{alpha:g} (more than half); use at most {int(alpha / 2 / (slack / n_samples)):,} draws")
    seeds = np.random.SeedSequence(seed).spawn(len(inputs))
    n_permutations = max(999, math.ceil(10 * len(inputs) / alpha))
    rows, start = [], time.perf_counter()
    for k, ((name, data), law) in enumerate(checkpoint.progress(list(zip(inputs, laws)), desc="compare --exact",
                                                                unit="input")):
        t = time.perf_counter()
        sample = collect(draw(candidate, data, n_samples, seeds[k]))
        if sample.kind != "discrete":
            raise ValueError(f"compare --exact needs discrete (hashable) releases; the candidate's are {sample.kind}")
        test, stat, p, diffs = one_sample_test(law, sample.counts(), n_permutations, seed=k)
        rows.append(InputComparison(name, "discrete", test, stat, p, differences=diffs))
        progress.step(f"input {k + 1}/{len(inputs)} {name!r}: {n_samples:,} candidate draws, {test}, p {p:.3g} "
                      f"({time.perf_counter() - t:.1f} s)", done=k + 1, total=len(inputs), since=start)
    holm_adjust(rows, alpha)
    other = max(math.fsum(v for c, v in law.midpoints().items() if pooled(c)) for law in laws)
    return ExactComparison(rows, alpha, n_samples, slack, floor, other)
