"""Target ``oracle``: the oracle (``audit compare``) validated on known candidates.

Correct second implementations must be accepted; subtly wrong ones must be
rejected, and the report states the smallest sample size (of a doubling
sweep) at which each is caught.
"""
from __future__ import annotations

import time

from audit.engine.runs import checkpoint
from audit.engine.comparison.compare import compare_distributions
from audit.oracle.cases import REFERENCES, OracleCase, oracle_cases
from audit.oracle.learner_cases import learner_cases, learner_references
from audit.results.report import Report

DESCRIPTION = "the oracle: second implementations accepted, subtly wrong candidates rejected"
N_SAMPLES = {"quick": 20_000, "standard": 50_000, "full": 200_000}
#: per side for the learner-level cases (reference fits: about 800 tiny trees per second)
N_LEARNER = {"quick": 8_000, "standard": 20_000, "full": 50_000}
#: DiPriMe's cases draw more (its leaf noise x1.1 needs about 20,000 per side at the run's shared alpha)
N_DIPRIME = {"quick": 20_000, "standard": 20_000, "full": 50_000}
SWEEP = (1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 100_000, 200_000)
#: the run's false-alarm rate, shared by Bonferroni over its correct candidates (the cases expected "same"): the run
#: calls any correct candidate different with probability at most ALPHA (0.01 per case let about one run in 15
#: call one of its seven correct candidates different)
ALPHA = 0.01


def _all_cases(budget: str):
    """``(case, (factory, params, inputs), n per side)``: the mechanism-level cases, then the learner-level ones
    (whole PrivaTree and DiPriMe releases; the reference learner is fitted per draw, so they use fewer samples)."""
    out = [(case, REFERENCES[case.reference], N_SAMPLES[budget]) for case in oracle_cases()]
    refs = learner_references()
    for cid, ref, description, make, expected in learner_cases():
        n = (N_DIPRIME if ref == "diprime" else N_LEARNER)[budget]
        out.append((OracleCase(cid, ref, description, make, expected), refs[ref], n))
    return out


def run(budget: str, seed: int) -> Report:
    start = time.perf_counter()
    report = Report("oracle", budget, seed,
                    title="`audit compare` against candidates whose relation to the reference is known.")
    cases = _all_cases(budget)
    n_same = sum(case.expected == "same" for case, _, _ in cases)
    alpha = ALPHA / max(n_same, 1)
    for k, (case, (factory, params, inputs), n) in enumerate(cases):
        try:
            case.make()
        except ImportError as exc:  # an outside candidate whose package is not installed
            from audit.results.extras import hint

            report.notes.append(f"`{case.id}` ({case.description}) not run: {exc}{hint(exc)}")
            continue
        with checkpoint.scope(case.id):
            res = compare_distributions(case.make(), factory(**params), inputs, n_samples=n, alpha=alpha,
                                        seed=seed * 100 + k)
        detail = res.summary()
        if case.expected == "different":
            sweep = tuple(m for m in SWEEP if m < n) + (n,)
            caught = next((m for m in sweep if compare_distributions(
                case.make(), factory(**params), inputs, n_samples=m, alpha=alpha, seed=seed * 100 + k).rejected), None)
            detail += f"; caught from n = {caught:,} per side in the sweep {sweep}" if caught else \
                "; not caught at any n of the sweep"
        report.comparisons.append({
            "id": case.id, "candidate": case.description, "reference": case.reference, "expected": case.expected,
            "verdict": "different" if res.rejected else "same", "p_min": min(r.p_adjusted for r in res.rows),
            "n_samples": n, "alpha": alpha, "detail": detail})
    report.notes.append(f"Two-sample tests (G test on discrete outcomes with rare outcomes pooled, Kolmogorov-Smirnov "
                        f"on continuous ones) per public input, Holm-corrected over the inputs at alpha = {ALPHA} / "
                        f"{n_same} correct candidates = {alpha:.2g} (Bonferroni): the run calls any correct "
                        f"candidate different with probability at most {ALPHA}.")
    report.elapsed_s = time.perf_counter() - start
    return report
