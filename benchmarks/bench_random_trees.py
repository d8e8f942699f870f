"""Benchmark of the random decision trees (issue 6): fit time and fits per second.

Targets (one core): a 100-tree height-10 forest on 100,000 x 20 generated
records fits in under 5 s; tiny fits (the auditor's) at least 2,000 per
second, one ``fit`` call each; the batched path the audit target uses
(``ForestRelease.batch``: many forests drawn in one call of the code ``fit``
uses) is reported beside it.

Run: ``python benchmarks/bench_random_trees.py``
(set OMP_NUM_THREADS=1 / OPENBLAS_NUM_THREADS=1 for a strict one-core figure; the fit is plain NumPy).
"""
from __future__ import annotations

import time

import numpy as np

from audit.random_trees.claims import ForestRelease, PROBE, _factory, base_data
from reference.random_trees import RandomDecisionForestClassifier


def big_fit(repeats: int = 3):
    rng = np.random.default_rng(0)
    X = rng.uniform(0.0, 1.0, size=(100_000, 20))
    y = (X[:, 0] + X[:, 1] > 1.0).astype(int)
    times = []
    for r in range(repeats):
        est = RandomDecisionForestClassifier(n_estimators=100, max_depth=10, epsilon=1.0, bounds=[(0.0, 1.0)] * 20,
                                             classes=[0, 1], random_state=r)
        start = time.perf_counter()
        est.fit(X, y)
        times.append(time.perf_counter() - start)
    start = time.perf_counter()
    total = est.privacy_ledger_.total_epsilon()
    ledger_s = time.perf_counter() - start
    return min(times), times, ledger_s, total, len(est.privacy_ledger_)


def tiny_fits(n: int = 5_000):
    X, y = base_data()
    start = time.perf_counter()
    for i in range(n):
        RandomDecisionForestClassifier(n_estimators=3, max_depth=1, bounds=[(0.0, 1.0)] * 2, classes=[0, 1],
                                       epsilon=1.0, random_state=i).fit(X, y)
    return n / (time.perf_counter() - start)


def batched(n: int = 100_000):
    mech = ForestRelease(_factory(voting="majority", epsilon=1.0, n_estimators=3, max_depth=1), "probe", PROBE)
    rng = np.random.default_rng(0)
    start = time.perf_counter()
    mech.batch(base_data(), n, rng)
    return n / (time.perf_counter() - start)


def main():
    best, times, ledger_s, total, charges = big_fit()
    print(f"100 trees x height 10 on 100,000 x 20: best fit {best:.2f} s "
          f"(runs {', '.join(f'{t:.2f}' for t in times)}; target < 5 s)")
    print(f"  its ledger ({charges:,} charges, built on first access): {ledger_s:.2f} s, total epsilon {total:.6g}")
    print(f"tiny fits (6 records, k=3, h=1): {tiny_fits():,.0f} fits/s (target >= 2,000)")
    print(f"batched forests for the auditor (same code path, 5 probe labels): {batched():,.0f} forests/s")


if __name__ == "__main__":
    main()
