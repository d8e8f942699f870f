"""Benchmark of the DiPriMe forests (issue 5).

* Fits per second of a depth-2 tree on 8 records (the audit's workload), per
  variant and task; aim: at least 1,000 per second on one core.
* Fits per second of the batched path (:class:`reference.diprime.batch.DiPriMeBatch`)
  on the same workload, releases included, next to the reference's; aim: at
  least 50 times the reference.
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
from reference.diprime.batch import DiPriMeBatch

#: the audit's workload: one depth-2 tree, K = 2, epsilon 1
TINY = dict(epsilon=1.0, n_estimators=1, max_depth=2, max_features=2, bounds=[(0.0, 1.0)] * 2)


def _tiny_data(task: str):
    rng = np.random.default_rng(0)
    X = rng.random((8, 2))
    y = rng.random(8) if task == "regression" else rng.integers(0, 2, 8)
    return X, y


def _facts(task: str) -> dict:
    return {"target_bounds": (0.0, 1.0)} if task == "regression" else {"classes": [0, 1]}


def tiny_fits_per_second(task: str, variant: str, seconds: float = 2.0, bins: int = 4) -> float:
    """Reference fits (and ``release(bins)``) per second on the tiny workload."""
    X, y = _tiny_data(task)
    cls = DiPriMeForestRegressor if task == "regression" else DiPriMeForestClassifier
    m = cls(variant=variant, **TINY, **_facts(task))
    n, start = 0, time.process_time()
    while time.process_time() - start < seconds:
        m.random_state = n
        m.fit(X, y).release(bins=bins)
        n += 1
    return n / (time.process_time() - start)


def batched_fits_per_second(task: str, variant: str, seconds: float = 2.0, bins: int = 4,
                            block: int = 4096) -> float:
    """Batched-path fits per second on the same workload, ``block`` releases per ``batch`` call
    (the auditor's block size), the same ``release(bins)`` included."""
    data = _tiny_data(task)
    m = DiPriMeBatch(task, bins=bins, variant=variant, **TINY, **_facts(task))
    rng = np.random.default_rng(0)
    n, start = 0, time.process_time()
    while n == 0 or time.process_time() - start < seconds:
        m.batch(data, block, rng)
        n += block
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
    print("tiny fits per second (depth 2, 8 records, 2 features, K = 2; aim >= 1,000; batched aim >= 50x):")
    for task in ("regression", "classification"):
        for variant in ("base", "exp", "flip"):
            ref = tiny_fits_per_second(task, variant)
            fast = batched_fits_per_second(task, variant)
            print(f"  {task:>14} {variant:>4}: reference {ref:7.0f} /s, batched {fast:9.0f} /s ({fast / ref:5.0f}x)")
    print("10-tree depth-6 forest on 100,000 x 10 records (aim < 5 s):")
    for variant in ("base", "exp", "flip"):
        print(f"  {variant:>4}: {big_forest_seconds(variant):.2f} s")


if __name__ == "__main__":
    main()
