"""Mechanisms the auditor is validated on: correct ones it must pass, and
known-flawed variants ("mutants") it must catch, each with where its flaw comes from.

Query mechanisms take a vector of query answers of per-coordinate sensitivity
1 (see :func:`audit.engine.estimation.neighbours.query_pairs`). All are vectorised (``batch``) so
the self-validation runs at realistic sample sizes.

References
----------
Lyu, Su, Li (2017), "Understanding the Sparse Vector Technique for
Differential Privacy", PVLDB 10(6): Algorithms 1 and 3-6 below.
Ding, Wang, Wang, Zhang, Kifer (2018), "Detecting Violations of Differential
Privacy" (StatDP): the noisy-max-with-value and histogram mutants.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from reference.validation import check_generator, check_positive_finite
from reference.mechanisms import ExponentialMechanism, Laplace

__all__ = ["ReportNoisyMax", "NoisyMaxWithValue", "NoisyHistogram", "SparseVector", "Case", "correct_cases",
           "mutant_cases"]


class _QueryMechanism:
    """Base: ``m(queries, rng)`` returns one output; ``batch`` returns ``n``."""

    def __init__(self, epsilon: float):
        self.epsilon = check_positive_finite("epsilon", epsilon)

    def __call__(self, data, rng):
        return self.batch(data, 1, rng)[0]

    def __repr__(self):
        return f"{type(self).__name__}(epsilon={self.epsilon})"


class ReportNoisyMax(_QueryMechanism):
    """Report-noisy-max: ``argmax_i q_i + Lap(2/epsilon)``; epsilon-DP for
    sensitivity-1 queries that may move in different directions."""

    def batch(self, data, n, rng):
        check_generator(rng)
        q = np.asarray(data, dtype=float)
        return np.argmax(q + rng.laplace(0.0, 2.0 / self.epsilon, size=(n, q.size)), axis=1)


class NoisyMaxWithValue(_QueryMechanism):
    """MUTANT: report-noisy-max that also releases the noisy maximum (StatDP's
    ``noisy_max_v1b``): the value leaks the gap, so epsilon-DP fails."""

    def batch(self, data, n, rng):
        check_generator(rng)
        q = np.asarray(data, dtype=float)
        noisy = q + rng.laplace(0.0, 2.0 / self.epsilon, size=(n, q.size))
        i = np.argmax(noisy, axis=1)
        return np.column_stack((i.astype(float), noisy[np.arange(n), i]))


class NoisyHistogram(_QueryMechanism):
    """Laplace noise on every query answer; ``scale_is_epsilon=True`` is the
    MUTANT that uses scale ``epsilon`` instead of ``1/epsilon`` (StatDP's ``histogram_eps``)."""

    def __init__(self, epsilon: float, scale_is_epsilon: bool = False):
        super().__init__(epsilon)
        self.scale = self.epsilon if scale_is_epsilon else 1.0 / self.epsilon

    def batch(self, data, n, rng):
        check_generator(rng)
        q = np.asarray(data, dtype=float)
        return q + rng.laplace(0.0, self.scale, size=(n, q.size))


class SparseVector(_QueryMechanism):
    """The sparse vector technique with threshold ``T`` and cutoff ``c`` and its
    published variants (Lyu, Su and Li 2017):

    ============  ======  =================  =======================  ====================  ============
    variant       eps_1   threshold noise    query noise              output on a positive  privacy
    ============  ======  =================  =======================  ====================  ============
    ``alg1``      ε/2     Lap(1/ε1)          Lap(2c/ε2)               ⊤, stop after c       ε (correct)
    ``alg3``      ε/2     Lap(1/ε1)          Lap(c/ε2)                the noisy answer      ∞
    ``alg4``      ε/4     Lap(1/ε1)          Lap(1/ε2)                ⊤, stop after c       (1+6c)/4 ε
    ``alg5``      ε/2     Lap(1/ε1)          none                     ⊤, no cutoff          ∞
    ``alg6``      ε/2     Lap(1/ε1)          Lap(1/ε2)                ⊤, no cutoff          ∞
    ============  ======  =================  =======================  ====================  ============

    (``ε2 = ε - ε1``.) Outputs: an int code of the answer vector (1 for ⊤, 0
    for ⊥, 2 once stopped, read in base 3), or for ``alg3`` a float vector
    holding the released noisy answers and ``-1000`` for ⊥ or stopped.
    """

    _VARIANTS = ("alg1", "alg3", "alg4", "alg5", "alg6")

    def __init__(self, epsilon: float, threshold: float = 0.0, cutoff: int = 1, variant: str = "alg1"):
        super().__init__(epsilon)
        if variant not in self._VARIANTS:
            raise ValueError(f"variant must be one of {self._VARIANTS}, got {variant!r}")
        if not isinstance(cutoff, int) or cutoff < 1:
            raise ValueError(f"cutoff must be a positive integer, got {cutoff!r}")
        self.threshold, self.cutoff, self.variant = float(threshold), cutoff, variant

    def __repr__(self):
        return f"SparseVector(epsilon={self.epsilon}, c={self.cutoff}, variant={self.variant!r})"

    def batch(self, data, n, rng):
        check_generator(rng)
        q = np.asarray(data, dtype=float)
        eps1 = self.epsilon / (4 if self.variant == "alg4" else 2)
        eps2 = self.epsilon - eps1
        c = self.cutoff
        rho = rng.laplace(0.0, 1.0 / eps1, size=(n, 1))
        q_scale = {"alg1": 2 * c / eps2, "alg3": c / eps2, "alg4": 1 / eps2, "alg5": 0.0, "alg6": 1 / eps2}[self.variant]
        noisy = q + (rng.laplace(0.0, q_scale, size=(n, q.size)) if q_scale else 0.0)
        top = noisy >= self.threshold + rho
        if self.variant in ("alg5", "alg6"):
            answered = np.ones_like(top)
        else:  # answered until (and including) the c-th positive
            before = np.cumsum(top, axis=1) - top
            answered = before < c
        if self.variant == "alg3":
            return np.where(top & answered, noisy, -1000.0)
        code = np.where(answered, top.astype(np.int64), 2)
        return code @ (3 ** np.arange(q.size, dtype=np.int64))


class _ScaledLaplace(Laplace):
    """MUTANT: Laplace whose noise scale is multiplied by ``factor`` while the claim keeps ``epsilon``."""

    def __init__(self, epsilon, factor):
        super().__init__(epsilon)
        self.scale *= factor
        self.factor = factor

    def __repr__(self):
        return f"Laplace(epsilon={self.epsilon}) with {self.factor:g} x its noise scale"


@dataclass
class Case:
    """One mechanism to audit, its pairs of inputs, and what it claims."""

    id: str
    description: str
    source: str
    epsilon: float
    make: Callable[[], object]
    pairs: Callable[[], list]


def _scalar_pairs():
    from audit.engine.estimation.neighbours import NeighbourPair

    return [NeighbourPair(0.0, 1.0, "query answers 0 and 1")]


def _query_pairs(n=5):
    from audit.engine.estimation.neighbours import query_pairs

    return query_pairs(n)


def _utility_pairs():
    from audit.engine.estimation.neighbours import NeighbourPair

    return [NeighbourPair(np.zeros(2), np.array([1.0, -1.0]), "utilities (0,0) vs (1,-1)"),
            NeighbourPair(np.zeros(6), np.r_[1.0, -np.ones(5)], "utilities 0 vs (1,-1,...,-1)")]


def correct_cases(epsilon: float = 1.0) -> list[Case]:
    """Correct mechanisms at their claimed epsilon: the auditor must not flag them."""
    from audit.engine.estimation.neighbours import NeighbourPair
    from reference.mechanisms import PermuteAndFlip, RandomizedResponse, TwoSidedGeometric

    return [
        Case("laplace", "Laplace mechanism", "Dwork et al. 2006", epsilon, lambda: Laplace(epsilon), _scalar_pairs),
        Case("geometric", "two-sided geometric", "Ghosh et al. 2009", epsilon, lambda: TwoSidedGeometric(epsilon),
             lambda: [NeighbourPair(0, 1, "counts 0 and 1")]),
        Case("randomized-response", "3-ary randomized response", "Warner 1965", epsilon,
             lambda: RandomizedResponse(epsilon, 3), lambda: [NeighbourPair(0, 1, "values 0 and 1")]),
        Case("permute-and-flip", "permute-and-flip", "McKenna and Sheldon 2020", epsilon,
             lambda: PermuteAndFlip(epsilon), _utility_pairs),
        Case("exponential", "exponential mechanism", "McSherry and Talwar 2007", epsilon,
             lambda: ExponentialMechanism(epsilon), _utility_pairs),
        Case("report-noisy-max", "report-noisy-max, Lap(2/eps)", "Dwork and Roth 2014, section 3.3", epsilon,
             lambda: ReportNoisyMax(epsilon), _query_pairs),
        Case("sparse-vector", "sparse vector, Lyu et al. Algorithm 1, c = 1", "Lyu, Su, Li 2017", epsilon,
             lambda: SparseVector(epsilon), _query_pairs),
    ]


def mutant_cases(epsilon: float = 1.0) -> list[Case]:
    """Known-incorrect mechanisms claiming epsilon: the auditor must flag each."""
    return [
        Case("laplace-half-noise", "Laplace with half its noise scale", "a scale bug", epsilon,
             lambda: _ScaledLaplace(epsilon, 0.5), _scalar_pairs),
        Case("histogram-scale-eps", "histogram with Laplace scale epsilon instead of 1/epsilon",
             "StatDP (Ding et al. 2018), histogram_eps", epsilon, lambda: NoisyHistogram(0.5 * epsilon, True),
             _query_pairs),
        Case("noisy-max-with-value", "report-noisy-max that also returns the noisy maximum",
             "StatDP (Ding et al. 2018), noisy_max_v1b", epsilon, lambda: NoisyMaxWithValue(epsilon), _query_pairs),
        Case("exponential-without-half", "exponential mechanism without its factor 1/2 on non-monotone utilities",
             "McSherry and Talwar 2007 (the factor 2 of Theorem 6)", epsilon,
             lambda: ExponentialMechanism(epsilon, monotonic=True), _utility_pairs),
        Case("svt-alg3", "sparse vector releasing the noisy answer", "Lyu, Su, Li 2017, Algorithm 3 (Roth 2011)",
             epsilon, lambda: SparseVector(epsilon, variant="alg3"), _query_pairs),
        Case("svt-alg4", "sparse vector with query noise not scaled by c (c = 2)",
             "Lyu, Su, Li 2017, Algorithm 4 (Lee and Clifton 2014)", epsilon,
             lambda: SparseVector(epsilon, cutoff=2, variant="alg4"), _query_pairs),
        Case("svt-alg5", "sparse vector without query noise", "Lyu, Su, Li 2017, Algorithm 5 (Stoddard et al. 2014)",
             epsilon, lambda: SparseVector(epsilon, variant="alg5"), _query_pairs),
        Case("svt-alg6", "sparse vector without a cutoff", "Lyu, Su, Li 2017, Algorithm 6 (Chen et al. 2015)",
             epsilon, lambda: SparseVector(epsilon, variant="alg6"), _query_pairs),
    ]
