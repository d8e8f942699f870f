"""One command, one table: how fast the mechanisms sample and the learners fit.

    python benchmarks/run.py            # the sizes of benchmarks/RESULTS.md
    python benchmarks/run.py --small    # a quick pass (CI runs it; no timing is asserted)

Rows: samples per second of every mechanism's ``batch``; outputs per second of
the auditor's estimator; tiny fits per second (depth 2, 8 records, 2 features:
the audit's workload) of each learner's reference path, and of the batched path
where one exists; peak traced memory of each row. With ``--targets standard``
(or quick/full), the wall time and peak resident memory of ``audit run TARGET``
for every target. With ``--readme``, the README's own commands (``bench_readme.py``). Where diffprivlib is
installed, its mechanisms' sampling rates appear beside ours as ratios.
"""
from __future__ import annotations

import argparse
import importlib.util
import platform
import time
import tracemalloc
from pathlib import Path

import numpy as np

HERE = Path(__file__).parent


def _bench_module(name):
    spec = importlib.util.spec_from_file_location(name, HERE / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def measure(fn, units: int):
    """``(units per second, peak MiB)``: one timed call of ``fn``, then one traced call for memory
    (tracing slows Python down, so it never runs under the clock)."""
    start = time.perf_counter()
    fn()
    elapsed = time.perf_counter() - start
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return units / elapsed, peak


def mechanism_rows(n):
    from reference.mechanisms import (BitRandomizedResponse, ExponentialMechanism, IntervalExponential, Laplace,
                                      PermuteAndFlip, RandomizedResponse, TwoSidedGeometric)

    rng = np.random.default_rng(0)
    cases = [("Laplace", Laplace(1.0), 0.0), ("two-sided geometric", TwoSidedGeometric(1.0), 0),
             ("exponential (10 candidates)", ExponentialMechanism(1.0), np.arange(10.0)),
             ("permute-and-flip (10 candidates)", PermuteAndFlip(1.0), np.arange(10.0)),
             ("randomized response (k=4)", RandomizedResponse(1.0, 4), 1),
             ("bit randomized response (16 bits)", BitRandomizedResponse(1.0, 2), np.eye(16, dtype=int)[0]),
             ("interval median (8 values)", IntervalExponential(1.0), np.linspace(0.1, 0.9, 8))]
    rows = []
    for name, mech, data in cases:
        rate, peak = measure(lambda: mech.batch(data, n, rng), n)
        rows.append((f"sample: {name}", rate, "samples/s", peak))
    rows.append(exact_noise_row(n, rng))
    try:
        from audit.adapters import diffprivlib as dpl

        for name, ours, theirs, data in (("Laplace", Laplace(1.0), dpl.Laplace(1.0), 0.0),
                                         ("two-sided geometric", TwoSidedGeometric(1.0), dpl.Geometric(1.0), 0)):
            m = max(1000, n // 100)
            r_ours, _ = measure(lambda: ours.batch(data, m, rng), m)
            r_theirs, peak = measure(lambda: theirs.batch(data, m, rng), m)
            rows.append((f"sample: diffprivlib {name} (ours / theirs = {r_ours / r_theirs:.0f}x)", r_theirs,
                         "samples/s", peak))
    except ImportError:
        pass
    return rows


def exact_noise_row(n, rng):
    """Batched exact discrete Laplace (exact inversion of two geometrics, scale 1) against numpy's two-sided
    geometric (two ``rng.geometric`` draws, inverse-CDF floats with truncated tails) at the same scale (issue 17:
    within 3x)."""
    from reference.mechanisms.discrete_noise import DiscreteLaplaceLaw

    law, p = DiscreteLaplaceLaw(1.0), -np.expm1(-1.0)
    rate, peak = measure(lambda: law.sample(n, rng), n)
    numpy_rate, _ = measure(lambda: rng.geometric(p, n) - rng.geometric(p, n), n)
    return (f"sample: exact discrete Laplace, batched (numpy rng.geometric pair / exact = "
            f"{numpy_rate / rate:.1f}x)", rate, "samples/s", peak)


def estimator_rows(n):
    from audit import estimate_epsilon
    from reference.mechanisms import Laplace

    rate, peak = measure(lambda: estimate_epsilon(Laplace(1.0), 0.0, 1.0, n_samples=n, seed=0), 2 * n)
    return [(f"estimate_epsilon, Laplace, {n:,} per side", rate, "outputs/s", peak)]


def learner_rows(n_fits):
    rows = []
    pt = _bench_module("bench_privatree")
    for label, kw in (("private quantiles", {}), ("uniform bins", {"binning": "uniform"})):
        rate, peak = measure(lambda: pt.tiny(n_fits=n_fits, **kw), n_fits)
        rows.append((f"fit: PrivaTree ({label})", rate, "fits/s", peak))
        fast = pt.batched(n_fits=50 * n_fits, **kw)
        tracemalloc.start()
        pt.batched(n_fits=50 * n_fits, **kw)
        fast_peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
        rows.append((f"fit: PrivaTree ({label}), batched path ({fast / rate:.0f}x)", fast, "fits/s", fast_peak))
    dp = _bench_module("bench_diprime")
    for variant in ("base", "exp", "flip"):
        seconds = max(0.2, n_fits / 2000)
        rate = dp.tiny_fits_per_second("classification", variant, seconds=seconds)
        tracemalloc.start()
        dp.tiny_fits_per_second("classification", variant, seconds=0.1)
        peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
        rows.append((f"fit: DiPriMe classifier ({variant})", rate, "fits/s", peak))
        fast = dp.batched_fits_per_second("classification", variant, seconds=seconds)
        tracemalloc.start()
        dp.batched_fits_per_second("classification", variant, seconds=0.0)
        fast_peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
        rows.append((f"fit: DiPriMe classifier ({variant}), batched path ({fast / rate:.0f}x)", fast, "fits/s",
                     fast_peak))
    rt = _bench_module("bench_random_trees")
    rate, peak = measure(lambda: rt.tiny_fits(n=n_fits), n_fits)
    rows.append(("fit: random decision forest (3 trees, depth 1)", rate, "fits/s", peak))
    m = 20 * n_fits
    rate, peak = measure(lambda: rt.batched(n=m), m)
    rows.append(("fit: random decision forest, batched path", rate, "fits/s", peak))
    try:
        from sklearn.tree import DecisionTreeClassifier

        X = np.random.default_rng(0).random((8, 2))
        y = (X[:, 0] > 0.5).astype(int)
        rate, peak = measure(lambda: [DecisionTreeClassifier(max_depth=2, random_state=s).fit(X, y)
                                      for s in range(n_fits)], n_fits)
        rows.append(("fit: scikit-learn DecisionTreeClassifier (non-private, for scale)", rate, "fits/s", peak))
    except ImportError:  # pragma: no cover
        pass
    return rows


def target_rows(budget: str):
    """Wall time and peak resident memory of ``python -m audit run TARGET --budget BUDGET`` for every target,
    each in its own process (peak memory: the child's maximum resident set size)."""
    import os
    import resource
    import subprocess
    import sys
    import tempfile

    targets = [line.split()[0] for line in subprocess.run([sys.executable, "-m", "audit", "list"], capture_output=True,
                                                          text=True, check=True).stdout.splitlines() if line.strip()]
    rows = []
    for t in targets:
        with tempfile.TemporaryDirectory() as out:
            script = ("import resource, runpy, sys; sys.argv = ['audit', 'run', %r, '--budget', %r, '--quiet', "
                      "'--out', %r]\ntry:\n    runpy.run_module('audit', run_name='__main__')\nfinally:\n"
                      "    print('PEAK_KIB', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)"
                      % (t, budget, out))
            start = time.perf_counter()
            proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                                  env={**os.environ, "PYTHONUNBUFFERED": "1"})
            elapsed = time.perf_counter() - start
        peak = next((int(line.split()[1]) / 1024 for line in proc.stderr.splitlines() if line.startswith("PEAK_KIB")),
                    float("nan"))
        status = "" if proc.returncode == 0 else f" (exit {proc.returncode})"
        rows.append((f"audit run {t} --budget {budget}{status}", elapsed, "s wall", peak))
    return rows


def check_rows():
    """CPU seconds of a small ``audit check`` (``bench_check.py --small``: the lattice-noise classifier at 1,000
    outputs per input, ``--jobs 1``); ``bench_check.py`` alone gives the per-subject, per-stage table."""
    import contextlib
    import io

    import sys

    bench = sys.modules.setdefault("bench_check", _bench_module("bench_check"))  # its subjects resolve by name
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        row = bench.small_row()
    return [(f"audit check, lattice classifier, 1,000 per input ({row['verdict']}; bench_check.py --small)",
             row["cpu_s"], "CPU-s", float("nan"))]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--small", action="store_true", help="small sizes (seconds), for CI")
    p.add_argument("--targets", choices=("quick", "standard", "full"), default=None,
                   help="also time `audit run TARGET` at this budget for every target, with its peak memory")
    p.add_argument("--readme", action="store_true",
                   help="time the README's commands instead (bench_readme.py; writes readme_numbers.json, the source "
                        "of every time the README quotes)")
    args = p.parse_args(argv)
    if args.readme:
        return _bench_module("bench_readme").main([])
    n, n_fits = (20_000, 100) if args.small else (1_000_000, 1_000)
    rows = mechanism_rows(n) + estimator_rows(n) + learner_rows(n_fits) + check_rows()
    if args.targets:
        rows += target_rows(args.targets)
    print(f"machine: {platform.machine()}, {platform.processor() or 'cpu'}, Python {platform.python_version()}, "
          f"{'small' if args.small else 'full'} sizes")
    print(f"| {'measure':70s} | {'rate':>14s} | {'unit':10s} | {'peak MiB':>8s} |")
    print(f"|{'-' * 72}|{'-' * 16}|{'-' * 12}|{'-' * 10}|")
    for name, rate, unit, peak in rows:
        value = f"{rate:>14,.1f}" if unit in ("s wall", "CPU-s") else f"{rate:>14,.0f}"
        print(f"| {name:70s} | {value} | {unit:10s} | {peak:>8.1f} |")


if __name__ == "__main__":
    main()
