"""The smallest loss each lower bound on epsilon catches with probability 0.9, at the gate's operating points:
the reference (Clopper-Pearson on each count at alpha / 2, :func:`audit.engine.estimation.bounds.epsilon_lower_bound`)
against one exact test of both counts (coupled thinning and Fisher's test at alpha,
:func:`audit.engine.estimation.joint.epsilon_lower_joint`).

Run: ``PYTHONPATH=. python benchmarks/bench_bounds.py``. The joint test's power is exact
(:func:`audit.engine.estimation.joint.joint_power`); the reference's is simulated over 2,000 seeded count pairs
(:func:`audit.engine.estimation.power.detection_probability`). The levels are one direction's share of alpha at
the quick budget's second look (alpha 0.000321 over two directions) and at its last (0.0075 over two pairs and
two directions), for a claim of epsilon 1. A loss is "caught" when the bound exceeds the claim; the table gives
the smallest loss (grid 0.01) caught with probability 0.9, for the event's frequency ``p1`` on the other input and
``n`` counted outputs per input. Nothing is timed or asserted.
"""
from __future__ import annotations

import math

from audit.engine.estimation.bounds import epsilon_lower_bound
from audit.engine.estimation.joint import joint_power
from audit.engine.estimation.power import detection_probability

CLAIM = 1.0
LEVELS = {"second look": 0.000321 / 2, "last look": 0.0075 / 4}
FREQUENCIES = (0.002, 0.01, 0.05, 0.15, 0.26, 0.33)
SIZES = (2_000, 16_000)


def _smallest(power_at, top: float) -> float:
    lo, hi = CLAIM, top
    if power_at(hi) < 0.9:
        return math.inf
    while hi - lo > 0.01:
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if power_at(mid) >= 0.9 else (mid, hi)
    return math.ceil(hi * 100) / 100


def rows():
    out = []
    for name, alpha in LEVELS.items():
        for n in SIZES:
            for p1 in FREQUENCIES:
                top = min(20.0, math.log(1.0 / p1))
                cp = _smallest(lambda loss: detection_probability(loss, p1, n, claim=CLAIM, alpha=alpha), top)
                joint = _smallest(lambda loss: joint_power(min(1.0, math.exp(loss) * p1), p1, n, n, claim=CLAIM,
                                                           alpha=alpha), top)
                out.append((name, alpha, n, p1, cp, joint))
    return out


def main() -> None:
    assert epsilon_lower_bound(10, 10, 0, 10) >= 0.0  # the reference is importable and sane
    print("| level | alpha (one direction) | n per input | p1 | loss caught, Clopper-Pearson | loss caught, joint |")
    print("|---|---|---|---|---|---|")
    for name, alpha, n, p1, cp, joint in rows():
        print(f"| {name} | {alpha:.3g} | {n:,} | {p1:g} | {cp:.2f} | {joint:.2f} |")


if __name__ == "__main__":
    main()
