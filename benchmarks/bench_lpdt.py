"""Benchmark of the LPDT local randomiser (issue 7): 10^6 users, a 256-leaf partition, one core.

Target: every user randomised once (Laplace label, randomized response on all
256 indicator bits) and summarised per leaf in under 5 s, never holding a
dense users x leaves matrix: users are processed in chunks of
``reference.lpdt.randomizer.CHUNK`` and only the chunk's block exists at a time.
Peak memory is measured with tracemalloc and compared with the 2 GB a dense
float64 matrix would take.

Run: ``python benchmarks/bench_lpdt.py`` (pin to one core with ``taskset -c 0`` if available).
"""
from __future__ import annotations

import time
import tracemalloc

import numpy as np

from reference.lpdt.partition import regular_partition
from reference.lpdt.randomizer import CHUNK, LPDTRandomizer

N_USERS = 1_000_000
DEPTH = 8  # 2**8 = 256 leaves
TARGET_S = 5.0


def main():
    rng = np.random.default_rng(0)
    bounds = np.array([[0.0, 1.0], [0.0, 1.0]])
    part = regular_partition(bounds, DEPTH)
    X = rng.random((N_USERS, 2))
    y = np.clip(np.sin(4 * X[:, 0]) + 0.1 * rng.normal(size=N_USERS), -1, 1)
    rows = []
    for eps in (1.0, 4.0):
        r = LPDTRandomizer(eps, part, (-1.0, 1.0))
        leaves = part.apply(X)
        tracemalloc.start()
        start = time.perf_counter()
        ones, weighted, total = r.summarise(leaves, y, np.random.default_rng(1))
        elapsed = time.perf_counter() - start
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        D = ones - N_USERS * r.q
        n_j = np.bincount(leaves, minlength=part.n_leaves)
        z = (D - r.c * n_j) / np.sqrt(N_USERS * r.q * (1 - r.q))
        rows.append((eps, elapsed, peak / 2**20, float(np.abs(z).max())))
    dense_mib = N_USERS * part.n_leaves * 8 / 2**20
    print(f"{N_USERS:,} users x {part.n_leaves} leaves, chunks of {CHUNK} users "
          f"(a dense float64 users x leaves matrix would take {dense_mib:,.0f} MiB)")
    print(f"{'epsilon':>8s} {'seconds':>8s} {'peak MiB':>9s} {'max |z| of D_j':>15s}  verdict")
    for eps, t, mib, z in rows:
        print(f"{eps:>8g} {t:>8.2f} {mib:>9.1f} {z:>15.2f}  {'ok' if t < TARGET_S else 'SLOW'} (target < {TARGET_S:g} s)")


if __name__ == "__main__":
    main()
