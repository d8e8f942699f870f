"""The all-sizes certificates (``python -m audit certify``'s "every dataset of any size" section): boxes and time.

    PYTHONPATH=. python benchmarks/bench_allsizes.py [--target privatree|diprime|random-trees|all]

For every all-sizes domain of the targets: the branch and bound over boxes of count vectors
(:func:`audit.engine.exact_law.allsizes.certify_all_sizes`) to its tolerance, then the loss by size (one capped search per
N = 1..40); the bound U, the best pair's loss L, U - L, the number of boxes, the time per box and the wall times.
The issue's target: each learner's all-sizes certificate within 10 minutes on 2 cores (this runs on one).
"""
from __future__ import annotations

import argparse
import importlib
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from audit.engine.exact_law.allsizes import certify_all_sizes  # noqa: E402

TARGETS = ("privatree", "diprime", "random-trees")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--target", default="all", choices=TARGETS + ("all",))
    args = ap.parse_args(argv)
    targets = TARGETS if args.target == "all" else (args.target,)
    print("| target | domain | relation | U | L | U - L | records of the pair | boxes | ms per box | search s | "
          "loss-by-size s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    worst = 0.0
    for t in targets:
        module = importlib.import_module(f"audit.{t.replace('-', '_')}.certificate")
        for d in module.all_sizes():
            start = time.perf_counter()
            res = certify_all_sizes(d.law(d.params), relation=d.relation, tol=d.tol, max_seconds=d.max_seconds)
            search = time.perf_counter() - start
            start = time.perf_counter()
            _, curve = d.run()
            by_size = time.perf_counter() - start - search if curve else 0.0
            worst = max(worst, search + max(by_size, 0.0))
            print(f"| {t} | {d.name} | {d.relation} | {res.upper:.12g} | {res.lower:.12g} | {res.gap:.1e} | "
                  f"{res.worst['records']} | {res.boxes} | {1e3 * res.seconds_per_box:.2f} | {search:.2f} | "
                  f"{max(by_size, 0.0):.1f} |", flush=True)
    print(f"\nslowest domain: {worst:.1f} s (target: 600 s)")
    return 0 if worst <= 600 else 1


if __name__ == "__main__":
    raise SystemExit(main())
