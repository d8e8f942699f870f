"""Candidates the oracle (:mod:`audit.engine.comparison.compare`) is validated on, and the references it knows by name.

Correct candidates are independent second implementations of a reference
(the step-by-step samplers against the vectorised ones); subtly wrong ones
change one detail (a noise scale off by 10%, a rank off by one).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from reference.mechanisms import ExponentialMechanism, IntervalExponential, Laplace, PermuteAndFlip

__all__ = ["REFERENCES", "OracleCase", "oracle_cases", "Looped"]


class Looped:
    """The same mechanism sampled one output at a time through its step-by-step ``sample``
    (an independent path for permute-and-flip, whose ``batch`` is report-noisy-max with exponential noise)."""

    def __init__(self, mechanism):
        self.mechanism = mechanism

    def __call__(self, data, rng):
        return self.mechanism.sample(data, rng)

    def __repr__(self):
        return f"Looped({self.mechanism!r})"


class _OffByOneRank(IntervalExponential):
    """Wrong on purpose: the gap utility counts one value too many (|2(i+1) - N|)."""

    def _scores(self, i, n):
        return np.abs(2 * (i + 1) - n)


def _laplace_scaled(epsilon, factor):
    m = Laplace(epsilon)
    m.scale *= factor
    return m


def _forest_counts(**params):
    """Reference: a random decision forest's noisy leaf counts (vector), batched through the learner's own code."""
    from audit.random_trees.claims import ForestRelease
    from reference.random_trees import RandomDecisionForestClassifier

    return ForestRelease(lambda: RandomDecisionForestClassifier(**params), output="counts")


def _forest_counts_scale(factor):
    """A candidate forest whose leaf noise scale is ``factor`` times the reference's."""
    from audit.random_trees.claims import ForestRelease
    from reference.random_trees import RandomDecisionForestClassifier

    class Scaled(RandomDecisionForestClassifier):
        def _noise_scale(self, k):
            scale = super()._noise_scale(k)
            return None if scale is None else scale * factor

    def make(**params):
        return ForestRelease(lambda: Scaled(**params), output="counts")

    return make


FOREST_PARAMS = {"n_estimators": 2, "max_depth": 1, "epsilon": 1.0, "bounds": [(0.0, 1.0), (0.0, 1.0)],
                 "classes": [0, 1], "random_state": None}
FOREST_INPUTS = [("4 records", (np.array([[0.1, 0.2], [0.3, 0.8], [0.6, 0.4], [0.9, 0.9]]), np.array([0, 0, 1, 1]))),
                 ("1 record", (np.array([[0.5, 0.5]]), np.array([1])))]

UTILITY_INPUTS = [("utilities (0, 0, 1)", np.array([0.0, 0.0, 1.0])), ("utilities (2, 1, 1, 0)", np.array([2.0, 1, 1, 0]))]
MEDIAN_INPUTS = [("values {0.1, 0.2, 0.7}", [0.1, 0.2, 0.7]), ("values {0.5} x 4", [0.5] * 4)]

#: name -> (factory(**params) -> reference mechanism, default params, public inputs)
REFERENCES: dict[str, tuple[Callable, dict, list]] = {
    "laplace": (Laplace, {"epsilon": 1.0}, [("answer 0", 0.0), ("answer 3.5", 3.5)]),
    "permute-and-flip": (PermuteAndFlip, {"epsilon": 1.0}, UTILITY_INPUTS),
    "exponential": (ExponentialMechanism, {"epsilon": 1.0}, UTILITY_INPUTS),
    "interval-median": (IntervalExponential, {"epsilon": 1.0, "bounds": (0.0, 1.0)}, MEDIAN_INPUTS),
    "random-trees": (_forest_counts, FOREST_PARAMS, FOREST_INPUTS),
}


@dataclass
class OracleCase:
    id: str
    reference: str
    description: str
    make: Callable[[], object]
    expected: str  # "same" or "different"


def oracle_cases(epsilon: float = 1.0) -> list[OracleCase]:
    return [
        OracleCase("pf-step-by-step", "permute-and-flip", "permute-and-flip, the published loop",
                   lambda: Looped(PermuteAndFlip(epsilon)), "same"),
        OracleCase("em-one-at-a-time", "exponential", "exponential mechanism, one draw at a time",
                   lambda: Looped(ExponentialMechanism(epsilon)), "same"),
        OracleCase("median-one-at-a-time", "interval-median", "private median, one draw at a time",
                   lambda: Looped(IntervalExponential(epsilon, (0.0, 1.0))), "same"),
        OracleCase("laplace-scale-1.1", "laplace", "Laplace with its noise scale 10% too large",
                   lambda: _laplace_scaled(epsilon, 1.1), "different"),
        OracleCase("pf-without-half", "permute-and-flip", "permute-and-flip with the monotone rate (factor 2)",
                   lambda: PermuteAndFlip(epsilon, monotonic=True), "different"),
        OracleCase("median-rank-off-by-one", "interval-median", "private median with the gap rank off by one",
                   lambda: _OffByOneRank(epsilon, (0.0, 1.0)), "different"),
        OracleCase("forest-same-code", "random-trees", "random decision forest, an independent draw of the same code",
                   lambda: _forest_counts(**FOREST_PARAMS), "same"),
        OracleCase("forest-leaf-noise-1.1", "random-trees", "random decision forest with leaf noise scale 10% too large",
                   lambda: _forest_counts_scale(1.1)(**FOREST_PARAMS), "different"),
    ]
