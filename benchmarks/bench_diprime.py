"""Benchmark of the DiPriMe forests (issue 5).

* Fits per second of a depth-2 tree on 8 records (the audit's workload), per
  variant and task; aim: at least 1,000 per second on one core.
* Fit time of a 10-tree depth-6 forest on 100,000 x 10 generated records
  (partitioned, K = 5); aim: under 5 s on one core.

Times are CPU time of this process (``time.process_time``), i.e. one core,
so that other jobs on a shared machine inflate them less than wall time.

Run: ``python benchmarks/bench_diprime.py``
"""
from __future__ import annotations

import time

import numpy as np

from reference.diprime import DiPriMeForestClassifier, DiPriMeForestRegressor


def tiny_fits_per_second(task: str, variant: str, seconds: float = 2.0) -> float:
    rng = np.random.default_rng(0)
    X = rng.random((8, 2))
    y = rng.random(8) if task == "regression" else rng.integers(0, 2, 8)
    common = dict(epsilon=1.0, n_estimators=1, max_depth=2, max_features=2, variant=variant,
                  bounds=[(0.0, 1.0)] * 2)
    m = (DiPriMeForestRegressor(target_bounds=(0.0, 1.0), **common) if task == "regression"
         else DiPriMeForestClassifier(classes=[0, 1], **common))
    n, start = 0, time.process_time()
    while time.process_time() - start < seconds:
        m.random_state = n
        m.fit(X, y).release(bins=4)
        n += 1
    return n / (time.process_time() - start)


def big_forest_seconds(variant: str) -> float:
    rng = np.random.default_rng(1)
    X = rng.random((100_000, 10))
    y = np.clip(X[:, 0] + 0.5 * X[:, 1] ** 2 + 0.1 * rng.normal(size=X.shape[0]), 0.0, 2.0)
    m = DiPriMeForestRegressor(epsilon=1.0, n_estimators=10, max_depth=6, max_features=5, variant=variant,
                               bounds=[(0.0, 1.0)] * 10, target_bounds=(0.0, 2.0), random_state=0)
    start = time.process_time()
    m.fit(X, y)
    return time.process_time() - start


def main():
    print("tiny fits per second (depth 2, 8 records, 2 features, K = 2; aim >= 1,000):")
    for task in ("regression", "classification"):
        for variant in ("base", "exp", "flip"):
            print(f"  {task:>14} {variant:>4}: {tiny_fits_per_second(task, variant):7.0f} /s")
    print("10-tree depth-6 forest on 100,000 x 10 records (aim < 5 s):")
    for variant in ("base", "exp", "flip"):
        print(f"  {variant:>4}: {big_forest_seconds(variant):.2f} s")


if __name__ == "__main__":
    main()
