"""Benchmark of PrivaTree (issue 4): tiny fits per second and one large fit.

Targets: at least 1,000 fits per second of a depth-2 tree on 8 records with 2
features (the audit's workload), and under 5 s for a depth-4 tree on
100,000 x 20 generated records on one core, with peak memory a small multiple
of the data (16 MB of float64). The batched path
(:class:`reference.privatree.batch.PrivaTreeBatch`, issue 10) on the same
workload: at least 50 times the reference's fits per second (each batched
"fit" includes building its release, the tree over bin ids).

Run: ``python benchmarks/bench_privatree.py``
"""
from __future__ import annotations

import time
import tracemalloc

import numpy as np

from reference.privatree import PrivaTreeClassifier
from reference.privatree.batch import PrivaTreeBatch


def timed(fn):
    tracemalloc.start()
    start = time.perf_counter()
    out = fn()
    elapsed = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return out, elapsed, peak


def _tiny_data():
    rng = np.random.default_rng(0)
    X = rng.random((8, 2))
    return X, (X[:, 0] > 0.5).astype(int)


TINY = dict(epsilon=1.0, max_depth=2, bounds=[(0, 1)] * 2, classes=[0, 1], n_public=8)


def tiny(n_fits=1000, **kw):
    X, y = _tiny_data()
    clf = PrivaTreeClassifier(**TINY, **kw)
    start = time.perf_counter()
    for s in range(n_fits):
        clf.set_params(random_state=s).fit(X, y)
    return n_fits / (time.perf_counter() - start)


def batched(n_fits=100_000, edges=None, **kw):
    """Fits per second of the batched path on the workload of :func:`tiny`: ``n_fits`` releases
    (``release(edges)``) from one ``batch`` call, after a small warm-up call."""
    data = _tiny_data()
    mech = PrivaTreeBatch(edges=edges, **TINY, **kw)
    rng = np.random.default_rng(0)
    mech.batch(data, 100, rng)
    start = time.perf_counter()
    mech.batch(data, n_fits, rng)
    return n_fits / (time.perf_counter() - start)


def large(**kw):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(100_000, 20))
    y = (X[:, :3].sum(axis=1) + rng.normal(size=X.shape[0]) > 0).astype(int)
    clf = PrivaTreeClassifier(epsilon=1.0, max_depth=4, bounds=[(-6, 6)] * 20, classes=[0, 1], n_public=100_000,
                              random_state=0, **kw)
    _, elapsed, peak = timed(lambda: clf.fit(X, y))
    return elapsed, peak, X.nbytes, float(np.mean(clf.predict(X) == y))


def main():
    for name, kw in (("PrivaTree", {}), ("PrivaTree (uniform bins)", {"binning": "uniform"})):
        ref = tiny(**kw)
        print(f"{name}: {ref:,.0f} tiny fits/s (depth 2, 8 x 2)")
        fast = batched(**kw)
        print(f"{name}, batched path: {fast:,.0f} tiny fits/s ({fast / ref:.0f}x the reference)")
        t, peak, nbytes, acc = large(**kw)
        print(f"{name}: depth-4 fit on 100,000 x 20 in {t:.2f} s, peak traced memory {peak / 2**20:.1f} MB "
              f"({peak / nbytes:.1f} x the data), training accuracy {acc:.3f}")


if __name__ == "__main__":
    main()
