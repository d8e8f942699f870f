"""The law of one leaf released from noisy class counts, and the gaps of a public grid (shared law pieces).

The random decision forest (:mod:`audit.random_trees.exact_law`, Bojarski et al., Algorithm 2) and
DiPriMe's classifier leaves (:mod:`audit.diprime.exact_law`) release a leaf's ``theta = n / sum(n)`` from
two-sided geometric noisy counts ``n``; both compose this law (module docstring of
:mod:`audit.random_trees.exact_law`, "Leaves" and "Exactness", states it and why its intervals hold).
:func:`grid_gaps` enumerates the classes of a threshold drawn uniformly in a public range: two thresholds in
the same gap between consecutive grid values route every dataset on the grid alike.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

__all__ = ["LeafLaw", "leaf_law", "grid_gaps", "TAIL", "UNIFORM_ON_ONE_VALUE"]

#: target probability of one noisy count above the enumeration's cut-off
TAIL = 1e-13
#: bound on the mass the rounded uniform (two classes) puts on one 6-decimal value, per unit of invalid mass
UNIFORM_ON_ONE_VALUE = (0.99e-6, 1.01e-6)


def _key(a: int, b: int) -> tuple:
    """The released leaf value of noisy counts ``(a, b)``, exactly as ``release()`` rounds it."""
    t = a + b
    return (round(float(a / t), 6), round(float(b / t), 6))


@dataclass(frozen=True)
class LeafLaw:
    """The law of one leaf's released ``theta`` (two classes).

    ``atoms[v]``: enumerated probability of the atoms that round to the release value ``v``;
    ``invalid``: probability of the uniform draw (closed form); ``tail``: valid mass not enumerated.
    """

    atoms: dict
    invalid: float
    tail: float
    rays: dict  # the same atoms by exact ray (reduced counts): the unrounded release


    def upper(self, v) -> float:
        return self.atoms.get(v, 0.0) + self.tail + UNIFORM_ON_ONE_VALUE[1] * self.invalid


def leaf_cutoff(counts, rate: float) -> int:
    """Cut-off with ``P(n_i > Hmax) <= TAIL`` for every count."""
    a = math.exp(-rate)
    return int(max(counts)) + max(1, math.ceil(math.log(TAIL * (1 + a)) / math.log(a)))


@lru_cache(maxsize=4096)
def leaf_law(counts: tuple, rate: float, rule: str, hmax: int | None = None) -> LeafLaw:
    """:class:`LeafLaw` of a leaf with exact class counts ``counts`` (module docstring, "Leaves"),
    noisy counts enumerated up to ``hmax`` (default: :func:`leaf_cutoff`)."""
    if len(counts) != 2:
        raise ValueError(f"the random forest's exact law covers two classes, got counts {counts!r}")
    if rule not in ("paper", "clamp"):
        raise ValueError(f"invalid_rule must be 'paper' or 'clamp', got {rule!r}")
    a = math.exp(-rate)
    c = np.asarray(counts, dtype=np.int64)
    hmax = leaf_cutoff(counts, rate) if hmax is None else max(int(hmax), leaf_cutoff(counts, rate))
    h = np.arange(hmax + 1)
    log_norm = math.log(-math.expm1(-rate)) - math.log1p(a)
    logp = [log_norm - rate * np.abs(h - ci) for ci in c]  # P(n_i = h), h = 0..hmax
    p = [np.exp(lp) for lp in logp]
    p_le0 = [a ** int(ci) / (1 + a) for ci in c]  # P(n_i <= 0)
    if rule == "clamp":  # n+ = max(n, 0): P(n+_i = 0) = P(n_i <= 0)
        for i in range(2):
            p[i] = p[i].copy()
            p[i][0] = p_le0[i]
        invalid = p_le0[0] * p_le0[1]
        valid = 1.0 - invalid
    else:
        p_ge0 = [1.0 - a ** int(ci + 1) / (1 + a) for ci in c]
        p_zero = p[0][0] * p[1][0]
        valid = p_ge0[0] * p_ge0[1] - p_zero
        invalid = 1.0 - valid
    joint = np.outer(p[0], p[1])
    joint[0, 0] = 0.0  # all zero: invalid under both rules
    atoms: dict = {}
    rays: dict = {}
    ii, jj = np.nonzero(joint > 0)
    g = np.gcd(ii, jj)
    for i, j, gi, q in zip(ii.tolist(), jj.tolist(), g.tolist(), joint[ii, jj].tolist()):
        k = _key(i, j)
        atoms[k] = atoms.get(k, 0.0) + q
        ray = (i // gi, j // gi)
        rays[ray] = rays.get(ray, 0.0) + q
    tail = max(0.0, valid - float(joint.sum())) + 4 * (hmax + 1) * 1e-16  # float slack of the sum
    return LeafLaw(atoms, invalid, tail, rays)


def grid_gaps(low: float, high: float, values) -> list[tuple[float, float]]:
    """``(representative threshold, probability)`` of each gap of ``[low, high]`` between the grid values."""
    if high <= low:
        return [(low, 1.0)]
    cuts = sorted({float(v) for v in values if low < v < high})
    edges = [low] + cuts + [high]
    return [((lo + hi) / 2, (hi - lo) / (high - low)) for lo, hi in zip(edges[:-1], edges[1:]) if hi > lo]
