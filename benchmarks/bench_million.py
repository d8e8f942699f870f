"""Benchmark of PrivaTree on a million records (issue 45 item 5), against the authors' code.

Workload: 1,000,000 generated records of 10 features in [0, 1] (label: ``x0 + x1 > 1``), depth 4,
epsilon 1, 10 bins per feature. Rows: the reference PrivaTree (``reference.privatree``) with public
uniform bins and with private quantiles (JointExp), and, when their code is importable, the authors'
PrivaTree (Vos et al. 2023; the repository tudelft-cda-lab/PrivaTree) with the same two binnings
(``use_uniform_bins=True`` / ``False``). Each row gives the CPU seconds of one fit (``time.process_time``,
after a small warm-up fit) and the peak memory the fit allocates beyond its input, traced by
``tracemalloc`` in a second fit (tracing slows Python down, so it never runs under the clock), also as a
multiple of the input array's bytes.

A last line times the batched path (``PrivaTreeBatch``) on 100,000 x 20 records, which it now visits in row
chunks, per run beside one reference fit.

Targets (reference, uniform bins, 1,000,000 x 10): at most 1.0 CPU second, peak new memory at most 3 times
the input.

The authors' code is never part of this project: give the folder that holds their ``privatree`` package
(a checkout of their repository; it needs diffprivlib) with ``--authors PATH`` or the environment variable
``PRIVATREE_AUTHORS``. Without it their rows are skipped with a printed line.

Run: ``python benchmarks/bench_million.py`` (about a minute for our rows; the authors' private quantiles
take minutes), ``--small`` for CI (20,000 records, 2,000 for private quantiles; seconds), ``--quantile-rows N`` to size the private
quantile rows apart (their cost grows fastest).
"""
from __future__ import annotations

import argparse
import importlib
import os
import platform
import sys
import time
import tracemalloc
import warnings

import numpy as np

M, DEPTH, EPSILON = 10, 4, 1.0


def data(n: int, m: int = M, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.random((n, m))
    return X, (X[:, 0] + X[:, 1] > 1).astype(int)


def measure(fit, X, y):
    """``(CPU seconds of one fit, peak bytes a second fit allocates)`` after a warm-up fit on 100 rows."""
    fit(X[:100], y[:100])
    start = time.process_time()
    fit(X, y)
    cpu = time.process_time() - start
    tracemalloc.start()
    fit(X, y)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return cpu, peak


def ours(binning: str):
    from reference.privatree import PrivaTreeClassifier

    def fit(X, y):
        PrivaTreeClassifier(epsilon=EPSILON, max_depth=DEPTH, bounds=[(0.0, 1.0)] * X.shape[1], classes=[0, 1],
                            n_public=X.shape[0], binning=binning).fit(X, y)
    return fit


def authors_class(path):
    """The authors' ``PrivaTreeClassifier`` imported from ``path``, or ``(None, why not)``."""
    if not path:
        return None, "no --authors PATH or PRIVATREE_AUTHORS given"
    if not os.path.isdir(os.path.join(path, "privatree")):
        return None, f"{path} holds no privatree/ folder"
    sys.path.insert(0, os.path.abspath(path))
    try:
        return importlib.import_module("privatree.privatree").PrivaTreeClassifier, ""
    except ImportError as e:  # their code needs diffprivlib
        return None, f"their code does not import here ({e})"
    finally:
        sys.path.pop(0)


def authors(cls, uniform: bool):
    def fit(X, y):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cls(max_depth=DEPTH, epsilon=EPSILON, max_bins=10, feature_range=[(0.0, 1.0)] * X.shape[1],
                use_uniform_bins=uniform).fit(X, y)
    return fit


def batched(n: int, m: int = 20, runs: int = 4):
    """CPU seconds per run of the batched path (``PrivaTreeBatch``, uniform bins) on ``n x m`` records, beside
    one reference fit: at 100,000 x 20 a run's records exceed the path's element limit and are visited in row
    chunks (the path used to fall back to one reference fit per run)."""
    from reference.privatree import PrivaTreeClassifier
    from reference.privatree.batch import PrivaTreeBatch

    X, y = data(n, m)
    params = dict(epsilon=EPSILON, max_depth=DEPTH, bounds=[(0.0, 1.0)] * m, classes=[0, 1], n_public=n,
                  binning="uniform")
    mech = PrivaTreeBatch(**params)
    mech.batch((X[:100], y[:100]), 1, np.random.default_rng(0))
    start = time.process_time()
    mech.batch((X, y), runs, np.random.default_rng(0))
    per_run = (time.process_time() - start) / runs
    start = time.process_time()
    PrivaTreeClassifier(**params).fit(X, y)
    reference = time.process_time() - start
    print(f"batched path, uniform bins, {n:,} x {m}: {per_run:.2f} CPU s per run ({runs} runs); "
          f"one reference fit {reference:.2f} CPU s")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--small", action="store_true", help="20,000 records (2,000 for private quantiles): seconds, for CI")
    p.add_argument("--rows", type=int, default=None, help="records of the uniform-bin rows (default 1,000,000)")
    p.add_argument("--quantile-rows", type=int, default=None, help="records of the private-quantile rows "
                   "(default: as --rows)")
    p.add_argument("--authors", default=os.environ.get("PRIVATREE_AUTHORS"),
                   help="folder holding the authors' privatree package (default: $PRIVATREE_AUTHORS)")
    args = p.parse_args(argv)
    n = args.rows or (20_000 if args.small else 1_000_000)
    nq = args.quantile_rows or (2_000 if args.small else n)
    cls, why = authors_class(args.authors)
    rows = [("reference PrivaTree, uniform bins", n, ours("uniform")),
            ("reference PrivaTree, private quantiles (JointExp)", nq, ours("quantile"))]
    if cls is not None:
        rows += [("authors' PrivaTree, uniform bins", n, authors(cls, True)),
                 ("authors' PrivaTree, private quantiles", nq, authors(cls, False))]
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"numpy {np.__version__}; depth {DEPTH}, epsilon {EPSILON}, {M} features")
    if cls is None:
        print(f"authors' code: skipped ({why})")
    print(f"| {'fit':50s} | {'records':>9s} | {'CPU s':>7s} | {'peak new MiB':>12s} | {'peak / input':>12s} |")
    print(f"|{'-' * 52}|{'-' * 11}|{'-' * 9}|{'-' * 14}|{'-' * 14}|")
    cpu = {}
    for name, size, fit in rows:
        X, y = data(size)
        seconds, peak = measure(fit, X, y)
        cpu[name] = seconds
        print(f"| {name:50s} | {size:>9,d} | {seconds:>7.2f} | {peak / 2**20:>12.1f} | {peak / X.nbytes:>12.2f} |",
              flush=True)
    batched(10_000 if args.small else 100_000)
    if cls is not None:
        for kind in ("uniform bins", "private quantiles"):
            theirs = next(v for k, v in cpu.items() if k.startswith("authors'") and kind in k)
            mine = next(v for k, v in cpu.items() if k.startswith("reference") and kind in k)
            print(f"{kind}: the authors' fit takes {theirs / mine:.1f} x the reference's CPU time")


if __name__ == "__main__":
    main()
