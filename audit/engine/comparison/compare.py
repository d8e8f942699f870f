"""The oracle: does a candidate implementation release the same distribution as the reference?

On each of a fixed set of public inputs, both are sampled ``n`` times from
independent seeds and their outputs are compared with a two-sample test:

* discrete outputs: a G test (likelihood-ratio chi-square) on the 2 x K
  table of outcome counts, outcomes expected fewer than 5 times pooled into
  one cell, its p-value computed exactly by sequential Monte Carlo under the
  null (the reference's row redrawn from the multivariate hypergeometric law
  given the outcome totals, at most :data:`N_PERMUTATIONS` times): the chi-square
  approximation is anti-conservative on the many sparse cells of released
  trees (measured on two samples of one law, 1,000 per side: 9% of p-values
  below 0.05, 0.25% below 0.001);
* scalar outputs: the two-sample Kolmogorov-Smirnov test;
* vector outputs: a KS test per coordinate, Bonferroni-combined within the input; the verdict names the most
  different coordinate by what it is when the caller says (``names``).

KS p-values are scipy's exact ones; where scipy's exact computation fails (a rounding just above 1 on close
samples), its asymptotic p-value, said in the test's name, and no RuntimeWarning on the console.

The family of per-input p-values is corrected for multiplicity (Holm, via
statsmodels). A candidate is rejected when any corrected p-value is below
``alpha``; a correct candidate is rejected with probability at most ``alpha``.
"""
from __future__ import annotations

import inspect
import math
import time
import warnings
from dataclasses import dataclass, field

import numpy as np
from scipy import stats
from statsmodels.stats.multitest import multipletests

from audit.engine.runs import checkpoint, progress
from audit.engine.estimation.sampling import MechanismOutputError, collect, draw
from reference.validation import shown

__all__ = ["InputComparison", "Comparison", "CandidateRaised", "compare_distributions", "two_sample_test", "map_parameters",
           "detectable_difference", "sequential_pvalue", "holm_adjust", "ks_test"]

MIN_EXPECTED = 5.0
#: Monte Carlo draws of the G test's null law: the smallest p-value is 1 / (N_PERMUTATIONS + 1)
N_PERMUTATIONS = 9_999
#: the sequential p-value stops at this many null statistics at least as large as the observed one
EXCEEDANCES = 20


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
    def level(self) -> float:
        """The level each Holm-adjusted p-value is held against (``alpha`` here)."""
        return self.alpha

    @property
    def rejected(self) -> bool:
        return any(r.p_adjusted < self.level for r in self.rows)

    def summary(self) -> str:
        worst = min(self.rows, key=lambda r: r.p_adjusted)
        verdict = "DIFFERENT" if self.rejected else "no difference found"
        tv = detectable_difference(self.n_samples, self.alpha, len(self.rows))
        return (f"{verdict}: smallest Holm-adjusted p = {worst.p_adjusted:.3g} on input {shown(worst.input)} "
                f"({worst.test}, statistic {worst.statistic:.4g}); alpha {self.alpha:g}, n = {self.n_samples:,} per side "
                f"and input, {len(self.rows)} inputs: a difference of {tv:.3f} in the probability of one event "
                f"(total variation >= {tv:.3f}) is detected with power 0.9")


def detectable_difference(n: int, alpha: float, k: int = 1, power: float = 0.9) -> float:
    """The smallest difference in the probability of one event between the two sides (a lower bound on
    their total-variation distance) that a test at level ``alpha / k`` detects with probability ``power``
    from ``n`` draws per side.

    Normal approximation for two proportions at the worst-case variance (p = 1/2):
    ``(z_{1 - alpha / (2k)} + z_power) * sqrt(1 / (2n))``; ``k`` inputs are corrected by Bonferroni,
    which Holm's procedure never rejects less often than. The multi-cell G and Kolmogorov-Smirnov
    tests the oracle runs see such an event too (it is one cell pooled, or one threshold).
    """
    if n < 1 or not 0 < alpha < 1 or k < 1 or not 0 < power < 1:
        raise ValueError(f"need n >= 1, 0 < alpha < 1, k >= 1 and 0 < power < 1; got n={n}, alpha={alpha}, "
                         f"k={k}, power={power}")
    return float((stats.norm.ppf(1 - alpha / (2 * k)) + stats.norm.ppf(power)) * np.sqrt(1.0 / (2 * n)))



def _g_test(ref, cand, n_permutations: int | None = None):
    cr, cc = ref.counts(), cand.counts()
    outcomes = sorted(dict.fromkeys([*cr, *cc]), key=lambda o: -(cr[o] + cc[o]))
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
    table = np.array(table, dtype=np.int64)
    g, p = g_test_exact(table[:, 0], table[:, 1], n_permutations or N_PERMUTATIONS)
    return f"G test ({len(table)} cells, Monte Carlo p)", g, p, diffs


def _g_statistic(a, b):
    """The G statistic of 2 x K tables whose rows are ``a`` and ``b`` (last axis: the K cells)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    na, nb = a.sum(-1, keepdims=True), b.sum(-1, keepdims=True)
    col = a + b
    ea, eb = col * na / (na + nb), col * nb / (na + nb)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(a > 0, a * np.log(a / ea), 0.0) + np.where(b > 0, b * np.log(b / eb), 0.0)
    return 2.0 * terms.sum(-1)


def g_test_exact(a, b, n_permutations: int = N_PERMUTATIONS, seed: int = 0,
                 exceedances: int = EXCEEDANCES) -> tuple[float, float]:
    """``(G, p)`` for the 2 x K table with rows ``a`` and ``b``, the p-value from the exact conditional law.

    Under the null (one law for both rows), given the K outcome totals the first row is multivariate
    hypergeometric. Its draws ``G*`` are made in sequence and stop at the ``exceedances``-th ``G* >= G``
    (after ``L`` draws: ``p = exceedances / L``) or after ``n_permutations`` draws with ``k`` exceedances
    (``p = (k + 1) / (n_permutations + 1)``): the sequential Monte Carlo p-value of Besag and Clifford
    (1991, Biometrika 78, 301-304), valid at every sample size, unlike the chi-square approximation on sparse
    tables, and cheap when the tables agree (about ``exceedances / p`` draws). The draws use a generator
    seeded by ``seed``: the same table gives the same p-value.
    """
    a, b = np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64)
    g = float(_g_statistic(a, b))
    total, n_a = a + b, int(a.sum())

    def null_statistics(m, rng):
        null_a = rng.multivariate_hypergeometric(total, n_a, size=m, method="marginals")
        return _g_statistic(null_a, total - null_a)

    return g, sequential_pvalue(g, null_statistics, np.random.default_rng(seed), n_permutations, exceedances)


def sequential_pvalue(g: float, null_statistics, rng, n_permutations: int = N_PERMUTATIONS,
                      exceedances: int = EXCEEDANCES) -> float:
    """Besag and Clifford's (1991) sequential Monte Carlo p-value of the observed statistic ``g``:
    ``null_statistics(m, rng)`` draws ``m`` statistics under the null, in chunks, until the ``exceedances``-th
    one at least as large (after ``L`` draws: ``p = exceedances / L``) or ``n_permutations`` draws with ``k``
    exceedances (``p = (k + 1) / (n_permutations + 1)``)."""
    done, exceed, chunk = 0, 0, 64
    while done < n_permutations:
        m = min(chunk, n_permutations - done)
        cum = exceed + np.cumsum(null_statistics(m, rng) >= g * (1 - 1e-12))
        if cum[-1] >= exceedances:
            return exceedances / (done + int(np.argmax(cum >= exceedances)) + 1)
        exceed, done, chunk = int(cum[-1]), done + m, min(4 * chunk, 4096)
    return (exceed + 1) / (n_permutations + 1)


def ks_test(a, b) -> tuple[float, float, bool]:
    """``(statistic, p-value, asymptotic)``: scipy's two-sample Kolmogorov-Smirnov test, its exact p-value
    where scipy computes one; where scipy's exact computation fails (it rounds to a probability just above 1
    when the samples are close, e.g. 8,000 draws a side at a statistic of 21/8,000), the asymptotic p-value,
    without scipy's RuntimeWarning on the console, and ``asymptotic`` True."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", RuntimeWarning)
        res = stats.ks_2samp(a, b)
    fell_back = any(issubclass(w.category, RuntimeWarning) and "ks_2samp" in str(w.message) for w in caught)
    for w in caught:  # any other warning is shown as it would have been
        if not (issubclass(w.category, RuntimeWarning) and "ks_2samp" in str(w.message)):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return float(res.statistic), float(res.pvalue), fell_back


def two_sample_test(ref, cand, n_permutations: int | None = None, names: list | None = None):
    """``(test name, statistic, p-value, most different outcomes)`` for two samples of one kind
    (``n_permutations``: the G test's largest number of Monte Carlo draws, default :data:`N_PERMUTATIONS`;
    ``names``: what each coordinate of vector outputs is, which the most different one is called by; else
    ``coordinate j``)."""
    if ref.kind != cand.kind or ref.shape != cand.shape:
        raise MechanismOutputError(f"the candidate's outputs are {cand.kind}{cand.shape} but the reference's are "
                                   f"{ref.kind}{ref.shape}")
    if ref.kind == "discrete":
        return _g_test(ref, cand, n_permutations)
    if ref.kind == "scalar":
        stat, p, asymptotic = ks_test(ref.values, cand.values)
        return "Kolmogorov-Smirnov" + (" (asymptotic p)" if asymptotic else ""), stat, p, []
    d = ref.values.shape[1]
    per = [ks_test(ref.values[:, j], cand.values[:, j]) for j in range(d)]
    j = int(np.argmin([r[1] for r in per]))
    fell_back = sum(r[2] for r in per)
    name = names[j] if names is not None and len(names) == d else f"coordinate {j}"
    return (f"Kolmogorov-Smirnov per coordinate (Bonferroni over {d}"
            + (f"; asymptotic p on {fell_back}, where scipy's exact one failed" if fell_back else "") + ")",
            per[j][0], float(min(1.0, per[j][1] * d)), [name])


def compare_distributions(candidate, reference, inputs, *, n_samples: int = 20_000, alpha: float = 0.01,
                          seed: int = 0, names=None) -> Comparison:
    """Compare ``candidate`` with ``reference`` (both mechanisms ``m(data, rng)``) on ``inputs``.

    ``inputs`` is a sequence of ``(name, data)``; ``names(data)``, when given, says what each coordinate of
    vector outputs on ``data`` is (a list, or None), for the verdict to name the most different one.
    """
    inputs = list(inputs)
    if not inputs:
        raise ValueError("inputs must contain at least one (name, data) pair")
    seeds = np.random.SeedSequence(seed).spawn(2 * len(inputs))
    # enough Monte Carlo draws that the smallest p-value, Holm-adjusted over the inputs, is alpha / 10
    n_permutations = max(999, math.ceil(10 * len(inputs) / alpha))
    rows = []
    start = time.perf_counter()
    for k, (name, data) in enumerate(checkpoint.progress(inputs, desc="compare: inputs", unit="input")):
        t = time.perf_counter()
        ref = _side("reference", reference, name, data, n_samples, seeds[2 * k])
        cand = _side("candidate", candidate, name, data, n_samples, seeds[2 * k + 1])
        labels = names(data) if names is not None and ref.kind == "vector" else None
        test, stat, p, diffs = two_sample_test(ref, cand, n_permutations, labels)
        rows.append(InputComparison(name, ref.kind, test, stat, p, differences=diffs))
        progress.step(f"input {k + 1}/{len(inputs)} {name!r}: {n_samples:,} draws per side, {test}, p {p:.3g} "
                      f"({time.perf_counter() - t:.1f} s)", done=k + 1, total=len(inputs), since=start)
    holm_adjust(rows, alpha)
    return Comparison(rows, alpha, n_samples)


class CandidateRaised(MechanismOutputError):
    """The candidate raised (or gave an unusable output) on an input where the reference did not: a difference."""


def _side(side: str, mechanism, name: str, data, n: int, seed):
    """``n`` collected draws of one side; an error of its mechanism names the side and the input (the
    candidate's as :class:`CandidateRaised`)."""
    try:
        return collect(draw(mechanism, data, n, seed))
    except MechanismOutputError as exc:
        kind = CandidateRaised if side == "candidate" else MechanismOutputError
        raise kind(f"{side} raised on input {name!r}: {exc}") from exc


def holm_adjust(rows: list, alpha: float) -> None:
    """Set each row's ``p_adjusted``: its ``p_value`` Holm-corrected over ``rows`` (statsmodels)."""
    adjusted = multipletests([r.p_value for r in rows], alpha=alpha, method="holm")[1]
    for r, p in zip(rows, adjusted):
        r.p_adjusted = float(p)


def map_parameters(candidate_cls, params: dict, hint: str = " of the reference") -> dict:
    """The reference's parameters as the candidate takes them; an error lists any it cannot take (``hint``
    follows the list in the message)."""
    try:
        sig = inspect.signature(candidate_cls)
    except (TypeError, ValueError):
        return params
    if any(p.kind == p.VAR_KEYWORD for p in sig.parameters.values()):
        return params
    unmapped = sorted(k for k in params if k not in sig.parameters)
    if unmapped:
        raise ValueError(f"the candidate {getattr(candidate_cls, '__name__', candidate_cls)!r} takes no parameter(s) "
                         f"{unmapped}{hint}; it accepts {sorted(sig.parameters)}")
    return params
