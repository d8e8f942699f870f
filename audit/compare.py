"""The oracle: does a candidate implementation release the same distribution as the reference?

On each of a fixed set of public inputs, both are sampled ``n`` times from
independent seeds and their outputs are compared with a two-sample test:

* discrete outputs: a G test (likelihood-ratio chi-square) on the 2 x K
  table of outcome counts, outcomes expected fewer than 5 times pooled into
  one cell so the test is valid;
* scalar outputs: the two-sample Kolmogorov-Smirnov test;
* vector outputs: a KS test per coordinate, Bonferroni-combined within the input.

The family of per-input p-values is corrected for multiplicity (Holm, via
statsmodels). A candidate is rejected when any corrected p-value is below
``alpha``; a correct candidate is rejected with probability at most ``alpha``.
"""
from __future__ import annotations

import inspect
from collections import Counter
from dataclasses import dataclass, field

import numpy as np
from scipy import stats
from statsmodels.stats.multitest import multipletests

from .sampling import MechanismOutputError, collect, draw

__all__ = ["InputComparison", "Comparison", "compare_distributions", "two_sample_test", "map_parameters"]

MIN_EXPECTED = 5.0


@dataclass
class InputComparison:
    """One input's test."""

    input: str
    kind: str
    test: str
    statistic: float
    p_value: float
    p_adjusted: float = float("nan")
    differences: list = field(default_factory=list)


@dataclass
class Comparison:
    """All inputs' tests and the verdict."""

    rows: list
    alpha: float
    n_samples: int

    @property
    def rejected(self) -> bool:
        return any(r.p_adjusted < self.alpha for r in self.rows)

    def summary(self) -> str:
        worst = min(self.rows, key=lambda r: r.p_adjusted)
        verdict = "DIFFERENT" if self.rejected else "no difference found"
        return (f"{verdict}: smallest Holm-adjusted p = {worst.p_adjusted:.3g} on input {worst.input!r} "
                f"({worst.test}, statistic {worst.statistic:.4g}); alpha {self.alpha:g}, n = {self.n_samples:,} per side")


def _counts(s) -> Counter:
    if isinstance(s.values, Counter):
        return s.values
    return Counter(s.values.tolist() if isinstance(s.values, np.ndarray) else s.values)


def _g_test(ref, cand):
    cr, cc = _counts(ref), _counts(cand)
    outcomes = sorted(cr.keys() | cc.keys(), key=lambda o: -(cr[o] + cc[o]))
    n_r, n_c = len(ref), len(cand)
    table, pooled = [], [0, 0]
    for o in outcomes:
        total = cr[o] + cc[o]
        if min(total * n_r, total * n_c) / (n_r + n_c) >= MIN_EXPECTED:
            table.append([cr[o], cc[o]])
        else:
            pooled[0] += cr[o]
            pooled[1] += cc[o]
    if sum(pooled):
        table.append(pooled)
    diffs = sorted(((o, cr[o], cc[o]) for o in outcomes),
                   key=lambda t: -abs(t[1] / n_r - t[2] / n_c))[:5]
    if len(table) < 2:
        return "G test", 0.0, 1.0, diffs
    g, p, _, _ = stats.chi2_contingency(np.array(table).T, lambda_="log-likelihood", correction=False)
    return f"G test ({len(table)} cells)", float(g), float(p), diffs


def two_sample_test(ref, cand):
    """``(test name, statistic, p-value, most different outcomes)`` for two samples of one kind."""
    if ref.kind != cand.kind or ref.shape != cand.shape:
        raise MechanismOutputError(f"the candidate's outputs are {cand.kind}{cand.shape} but the reference's are "
                                   f"{ref.kind}{ref.shape}")
    if ref.kind == "discrete":
        return _g_test(ref, cand)
    if ref.kind == "scalar":
        res = stats.ks_2samp(ref.values, cand.values)
        return "Kolmogorov-Smirnov", float(res.statistic), float(res.pvalue), []
    d = ref.values.shape[1]
    per = [stats.ks_2samp(ref.values[:, j], cand.values[:, j]) for j in range(d)]
    j = int(np.argmin([r.pvalue for r in per]))
    return (f"Kolmogorov-Smirnov per coordinate (Bonferroni over {d})", float(per[j].statistic),
            float(min(1.0, per[j].pvalue * d)), [f"coordinate {j}"])


def compare_distributions(candidate, reference, inputs, *, n_samples: int = 20_000, alpha: float = 0.01,
                          seed: int = 0) -> Comparison:
    """Compare ``candidate`` with ``reference`` (both mechanisms ``m(data, rng)``) on ``inputs``.

    ``inputs`` is a sequence of ``(name, data)``.
    """
    inputs = list(inputs)
    if not inputs:
        raise ValueError("inputs must contain at least one (name, data) pair")
    seeds = np.random.SeedSequence(seed).spawn(2 * len(inputs))
    rows = []
    for k, (name, data) in enumerate(inputs):
        ref = collect(draw(reference, data, n_samples, seeds[2 * k]))
        cand = collect(draw(candidate, data, n_samples, seeds[2 * k + 1]))
        test, stat, p, diffs = two_sample_test(ref, cand)
        rows.append(InputComparison(name, ref.kind, test, stat, p, differences=diffs))
    adjusted = multipletests([r.p_value for r in rows], alpha=alpha, method="holm")[1]
    for r, p in zip(rows, adjusted):
        r.p_adjusted = float(p)
    return Comparison(rows, alpha, n_samples)


def map_parameters(candidate_cls, params: dict) -> dict:
    """The reference's parameters as the candidate takes them; an error lists any it cannot take."""
    try:
        sig = inspect.signature(candidate_cls)
    except (TypeError, ValueError):
        return params
    if any(p.kind == p.VAR_KEYWORD for p in sig.parameters.values()):
        return params
    unmapped = sorted(k for k in params if k not in sig.parameters)
    if unmapped:
        raise ValueError(f"the candidate {getattr(candidate_cls, '__name__', candidate_cls)!r} takes no parameter(s) "
                         f"{unmapped} of the reference; it accepts {sorted(sig.parameters)}")
    return params
