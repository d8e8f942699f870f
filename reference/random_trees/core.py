"""The random-decision-tree algorithm as array operations (Algorithms 1 and 2 of arXiv:1410.6973).

Structure, routing, counting, leaf values and voting, vectorised over any
number of independent trees and forests. :mod:`reference.random_trees` builds
its estimator on these; the auditor draws many forests at once through the
same functions. See :mod:`reference.random_trees` for the paper and the spec.
"""
from __future__ import annotations

import math
from numbers import Integral

import numpy as np

from reference.validation import check_positive_finite
from reference.validation import shown
from reference.mechanisms import TwoSidedGeometric
from reference.tree import route_heap as route

__all__ = ["Forests", "draw_structure", "route", "leaf_counts", "leaf_values", "aggregate", "noise_scale",
           "logarithmic_n_estimators", "theory_n_estimators", "VOTING_RULES", "INVALID_RULES", "ACCOUNTINGS"]

VOTING_RULES = ("majority", "threshold", "probabilistic")
INVALID_RULES = ("paper", "clamp")
ACCOUNTINGS = ("strict", "paper")


# --------------------------------------------------------------------------- the algorithm, vectorised
def draw_structure(rng: np.random.Generator, shape: tuple[int, ...], max_depth: int, bounds: np.ndarray):
    """Draw the inner nodes of ``prod(shape)`` complete trees of height ``max_depth``.

    Spec 2.1 ("Random forest construction", Algorithms 1 and 2): attribute
    uniform over all attributes at every node, independently and with
    replacement; threshold uniform over the attribute's public range.

    Parameters
    ----------
    rng : numpy.random.Generator
        The structure stream; it never sees the data.
    shape : tuple of int
        Leading shape, e.g. ``(n_forests, k)``.
    max_depth : int
        Height ``h``; each tree has ``2**h - 1`` inner nodes in heap order
        (node ``v`` has children ``2v + 1`` and ``2v + 2``).
    bounds : ndarray of shape (m, 2)

    Returns
    -------
    attributes : int ndarray of shape ``shape + (2**h - 1,)``
    thresholds : float ndarray of the same shape
    """
    n_inner = 2 ** max_depth - 1
    m = bounds.shape[0]
    attributes = rng.integers(0, m, size=tuple(shape) + (n_inner,))
    u = rng.random(size=tuple(shape) + (n_inner,))
    low, high = bounds[attributes, 0], bounds[attributes, 1]
    return attributes, low + u * (high - low)


def leaf_counts(leaves: np.ndarray, y_index: np.ndarray, n_leaves: int, n_classes: int) -> np.ndarray:
    """Records of each class in every leaf (Algorithms 1 and 2, "Training").

    Returns an int array of shape ``leaves.shape[:-1] + (n_leaves, n_classes)``.
    """
    lead = leaves.shape[:-1]
    flat = leaves.reshape(int(np.prod(lead, dtype=np.int64)), leaves.shape[-1])  # also with no records
    T = flat.shape[0]
    cell = (np.arange(T, dtype=np.int64)[:, None] * n_leaves + flat) * n_classes + y_index[None, :]
    counts = np.bincount(cell.ravel(), minlength=T * n_leaves * n_classes)
    return counts.reshape(lead + (n_leaves, n_classes))


def leaf_values(counts: np.ndarray, rng: np.random.Generator, *, invalid_rule: str = "paper",
                noisy: bool = True) -> np.ndarray:
    """Leaf values ``theta`` (class fractions) from (noisy) counts.

    Non-private (Algorithm 1, spec 2.2): ``theta = counts / total``; an empty
    leaf gets a uniform point of the simplex (``U[0, 1]`` for two classes),
    drawn once at fit time.

    Private (Algorithm 2, spec 2.4), ``invalid_rule="paper"``: a leaf whose
    noisy counts include a negative one or are all zero gets a uniform
    ``theta``; otherwise ``theta = noisy / sum(noisy)``. ``"clamp"`` (ours,
    spec A4): negative noisy counts are set to 0 first, and only a leaf left
    with all zeros gets a uniform ``theta``. Both are post-processing of the
    noisy counts.

    Parameters
    ----------
    counts : ndarray of shape (..., n_classes)
    rng : numpy.random.Generator
        Draws the uniform replacements.
    invalid_rule : {"paper", "clamp"}
    noisy : bool
        Whether ``counts`` carry noise (selects the rule above).
    """
    counts = np.asarray(counts, dtype=float)
    if noisy and invalid_rule == "clamp":
        counts = np.maximum(counts, 0.0)
    total = counts.sum(axis=-1, keepdims=True)
    if noisy and invalid_rule == "paper":
        invalid = np.any(counts < 0, axis=-1) | np.all(counts == 0, axis=-1)
    else:
        invalid = ~(total[..., 0] > 0)
    theta = np.divide(counts, total, out=np.zeros_like(counts), where=total > 0)
    uniform = rng.dirichlet(np.ones(counts.shape[-1]), size=counts.shape[:-1])
    return np.where(invalid[..., None], uniform, theta)


def aggregate(theta_at_x: np.ndarray, voting: str, rng: np.random.Generator | None = None) -> np.ndarray:
    """Class index predicted from the leaf values each tree gives a point.

    Algorithms 1 and 2, "Testing" (spec 2.3): with ``theta_at_x`` of shape
    ``(..., k, n, C)``,

    * ``"majority"``: each tree votes for ``argmax theta`` (ties to the first
      class, i.e. ``+`` iff ``theta > 1/2``), the forest for the class with
      most votes (ties to the first: ``+`` iff ``k_x > k / 2``);
    * ``"threshold"``: ``p_x = mean theta``, the class ``argmax p_x``
      (``+`` iff ``p_x > 1/2``);
    * ``"probabilistic"``: the class drawn with probabilities ``p_x``, with
      fresh coins from ``rng``.

    Returns an int array of shape ``(..., n)``.
    """
    C = theta_at_x.shape[-1]
    if voting == "majority":
        votes = np.argmax(theta_at_x, axis=-1)  # (..., k, n)
        tally = np.stack([(votes == c).sum(axis=-2) for c in range(C)], axis=-1)
        return np.argmax(tally, axis=-1)
    p = theta_at_x.mean(axis=-3)
    if voting == "threshold":
        return np.argmax(p, axis=-1)
    if voting == "probabilistic":
        if rng is None:
            raise ValueError("probabilistic averaging needs a random generator for its coins")
        u = rng.random(size=p.shape[:-1] + (1,))
        cdf = np.cumsum(p, axis=-1)
        return np.minimum((u >= cdf).sum(axis=-1), C - 1)
    raise ValueError(f"voting must be one of {VOTING_RULES}, got {shown(voting)}")


def noise_scale(epsilon: float, n_estimators: int, neighbouring: str, accounting: str) -> float:
    """Noise scale (two-sided geometric, the discrete Laplace) per leaf count.

    Paper, Section 5.2: ``k / epsilon`` ("a Lap(k/epsilon) to every count in
    the leaf"; counts of sensitivity 1, Theorems 3.1 and 3.2). That is exact
    under add/remove. Under substitution one tree's count vector has L1
    sensitivity 2, so ``accounting="strict"`` uses ``2k / epsilon`` (spec E1).
    """
    factor = 2.0 if (neighbouring == "substitute" and accounting == "strict") else 1.0
    return factor * n_estimators / epsilon


def logarithmic_n_estimators(n_records: int) -> int:
    """The paper's "logarithmic number of trees" as a usable rule: the smallest
    odd integer ``>= ln(n_records)`` (at least 1).

    The paper gives only the order, ``k = O(log n)`` (commentary after
    Theorems 5.6 and 5.7); the constant is ours. ``n_records`` must be public.
    """
    if isinstance(n_records, bool) or not isinstance(n_records, Integral) or n_records < 1:
        raise ValueError(f"n_records must be a positive integer, got {shown(n_records)}")
    k = max(1, math.ceil(math.log(n_records)))
    return k if k % 2 else k + 1


def theory_n_estimators(n_records: int, delta: float, C: float = 1.0) -> int:
    """``ceil(2 (1 + C) ln n / delta**2)``: the number of trees of Theorem 5.3 as
    reconstructed in spec 3.4 [RECON-H] (one-sided Azuma, natural log)."""
    if isinstance(n_records, bool) or not isinstance(n_records, Integral) or n_records < 1:
        raise ValueError(f"n_records must be a positive integer, got {shown(n_records)}")
    if not 0.0 < delta < 0.5:
        raise ValueError(f"delta must be in (0, 1/2), got {shown(delta)}")
    check_positive_finite("C", C)
    return max(1, math.ceil(2.0 * (1.0 + C) * math.log(n_records) / delta ** 2))


class Forests:
    """``n_forests`` independent fitted forests of ``k`` trees, as arrays.

    This is the whole algorithm (structure, counts, noise, leaf values);
    :class:`RandomDecisionForestClassifier` is one of these, and the auditor
    draws many at once from it.

    Parameters
    ----------
    X : ndarray (n, m), already validated and clipped to ``bounds``
    y_index : int ndarray (n,), class indices
    n_forests, n_estimators, max_depth, n_classes : int
    bounds : ndarray (m, 2)
    scale : float or None
        Noise scale per count (two-sided geometric); ``None`` for the non-private Algorithm 1.
    invalid_rule : {"paper", "clamp"}
    structure_rng, noise_rng : numpy.random.Generator
    """

    def __init__(self, X, y_index, *, n_forests, n_estimators, max_depth, n_classes, bounds, scale,
                 invalid_rule, structure_rng, noise_rng):
        self.max_depth = max_depth
        shape = (n_forests, n_estimators)
        self.attributes, self.thresholds = draw_structure(structure_rng, shape, max_depth, bounds)
        leaves = route(X, self.attributes, self.thresholds, max_depth)
        self.counts = leaf_counts(leaves, y_index, 2 ** max_depth, n_classes)
        if scale is None:
            self.noisy_counts = None
            self.theta = leaf_values(self.counts, noise_rng, noisy=False)
        else:
            # counts are integers: the two-sided geometric (discrete Laplace) of the same scale, sampled exactly
            # in integers, keeps every released count on the lattice Z (Mironov 2012; issue 17)
            self.noisy_counts = TwoSidedGeometric(1.0 / scale, 1.0).sample(self.counts, noise_rng).astype(float)
            self.theta = leaf_values(self.noisy_counts, noise_rng, invalid_rule=invalid_rule)

    def theta_at(self, X) -> np.ndarray:
        """Leaf values at each point: shape ``(n_forests, k, n, C)``."""
        leaves = route(X, self.attributes, self.thresholds, self.max_depth)
        F, k = leaves.shape[:2]
        f_idx = np.arange(F)[:, None, None]
        t_idx = np.arange(k)[None, :, None]
        return self.theta[f_idx, t_idx, leaves]

    def predict_index(self, X, voting, rng=None) -> np.ndarray:
        """Class indices, shape ``(n_forests, n)``."""
        return aggregate(self.theta_at(X), voting, rng)
