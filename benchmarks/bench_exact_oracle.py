"""Candidate draws the one-sample oracle (``compare --exact``) needs, against the two-sample compare.

    PYTHONPATH=. python benchmarks/bench_exact_oracle.py [--seeds 20] [--alpha 0.01]

For each of the oracle's wrong candidates within an exact law's reach (PrivaTree's budget off by one
level and ties to the last feature, the random forest with one tree's noise scale), and for each test,
the smallest number of candidate draws per input, on a ladder from 5 in steps of about sqrt(2), at which the test rejects
in at least 90% of ``--seeds`` seeds (power 0.9 at level alpha). The two-sample compare draws as many
reference releases again (the reference's batched path: the same law, faster); the one-sample test draws
none. The issue's target: the one-sample test needs at most half the candidate draws.
"""
from __future__ import annotations

import argparse
import sys
import time
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from audit.engine.comparison.compare import compare_distributions  # noqa: E402
from audit.engine.comparison.exact_oracle import compare_exact  # noqa: E402
from audit.results.learner_references import LEARNERS, fitted_mechanism  # noqa: E402
from audit.oracle.exact_laws import EXACT_REFERENCES  # noqa: E402
from audit.oracle.learner_cases import BudgetOffByOneLevel, TiesToLastFeature, _Release  # noqa: E402
from audit.random_trees.claims import OneTreeScaleForest  # noqa: E402
from reference.privatree.batch import PrivaTreeBatch  # noqa: E402

#: candidate draws per input tried, in steps of about sqrt(2)
LADDER = [5, 7, 10, 14, 20, 28, 40, 56, 80, 112, 160, 224, 320, 448, 640, 900, 1280, 1800, 2560, 3600]


def cases():
    P, R = EXACT_REFERENCES["privatree"], EXACT_REFERENCES["random-trees"]
    forest = LEARNERS["random-trees"]

    def learner(cls):
        return fitted_mechanism(cls, R.params, forest, True, output="discrete")

    return [("privatree: budget off by one level", P, _Release(partial(BudgetOffByOneLevel, **P.params)),
             PrivaTreeBatch(edges=None, **P.params)),
            ("privatree: ties to the last feature", P, TiesToLastFeature(**P.params),
             PrivaTreeBatch(edges=None, **P.params)),
            ("random-trees: one tree's noise scale", R, learner(OneTreeScaleForest), learner(forest.load()))]


def smallest_n(test, seeds: int) -> tuple[int | None, float]:
    """The first ladder size whose rejection rate over ``seeds`` seeds is at least 0.9, and that rate."""
    for n in LADDER:
        rate = sum(test(n, s) for s in range(seeds)) / seeds
        if rate >= 0.9:
            return n, rate
    return None, rate


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--alpha", type=float, default=0.01)
    ap.add_argument("--case", default="", help="only the cases whose name contains this text")
    args = ap.parse_args(argv)
    print(f"{args.seeds} seeds per size, alpha {args.alpha:g}")
    print("| candidate | two-sample: candidate draws per input (power) | one-sample exact (power) | ratio | time |")
    print("|---|---|---|---|---|")
    for name, ref, cand, reference in cases():
        if args.case not in name:
            continue
        laws = [ref.law(ref.params, *d) for _, d in ref.inputs]
        start = time.perf_counter()
        two = smallest_n(lambda n, s: compare_distributions(cand, reference, ref.inputs, n_samples=n, alpha=args.alpha,
                                                            seed=s).rejected, args.seeds)
        one = smallest_n(lambda n, s: compare_exact(cand, ref.inputs, laws, n_samples=n, alpha=args.alpha,
                                                    seed=s).rejected, args.seeds)
        ratio = f"{one[0] / two[0]:.2f}" if one[0] and two[0] else "n/a"
        print(f"| {name} | {two[0]} ({two[1]:.2f}) | {one[0]} ({one[1]:.2f}) | {ratio} | "
              f"{time.perf_counter() - start:.0f} s |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
