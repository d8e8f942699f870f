"""Selections among candidates by score: the exponential mechanism and permute-and-flip."""
from __future__ import annotations

import math

import numpy as np

from reference.mechanisms.base import Mechanism, check_n, draw_index, log_normalise
from reference.mechanisms.grid import selection_delta
from reference.validation import check_generator, check_nonempty, check_positive_finite
from reference.validation import shown

__all__ = ['ExponentialMechanism', 'PermuteAndFlip']


class Selection(Mechanism):
    """Shared parts of the mechanisms that select an index from a utility vector."""

    def __init__(self, epsilon: float, sensitivity: float = 1.0, monotonic: bool = False):
        self.epsilon = check_positive_finite("epsilon", epsilon)
        self.sensitivity = check_positive_finite("sensitivity", sensitivity)
        if not isinstance(monotonic, (bool, np.bool_)):
            raise TypeError(f"monotonic must be a bool, got {shown(monotonic)}")
        self.monotonic = bool(monotonic)

    def _params(self):
        return {"epsilon": self.epsilon, "sensitivity": self.sensitivity, "monotonic": self.monotonic}

    @property
    def rate(self) -> float:
        """Coefficient of the utility in the exponent: epsilon/(2 Delta), or epsilon/Delta when monotonic."""
        return self.epsilon / (self.sensitivity * (1.0 if self.monotonic else 2.0))

    @staticmethod
    def utilities(data) -> np.ndarray:
        return check_nonempty("utilities", data)

    def pmf(self, data) -> np.ndarray:
        """Probability of each index."""
        return np.exp(self.logpmf_all(data))

    def logpmf(self, k, data) -> float:
        u = self.utilities(data)
        if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)) or not 0 <= k < u.size:
            return -math.inf
        key = u.tobytes()
        cached = getattr(self, "_law_cache", None)
        if cached is None or cached[0] != key:  # exact audits ask for every index of one input in turn
            cached = self._law_cache = (key, self.logpmf_all(u))
        return float(cached[1][int(k)])

    log_law = logpmf

    def critical_outputs(self, d0, d1):
        """Finite support: every index."""
        return list(range(self.utilities(d0).size))

    def privacy_map(self, d_in):
        """Utility vectors at L-infinity distance ``d_in`` give loss ``epsilon * d_in / sensitivity``
        (for the monotonic option, when all utilities move in the same direction)."""
        return float(d_in) * self.epsilon / self.sensitivity


class ExponentialMechanism(Selection):
    """Exponential mechanism over a finite candidate set.

    Index ``i`` is returned with probability proportional to
    ``exp(epsilon * u_i / (2 * sensitivity))``; with ``monotonic=True`` (for
    utilities that all move in the same direction between neighbours) the
    factor 1/2 is dropped (McSherry and Talwar 2007, Theorem 6).
    """

    def logpmf_all(self, data) -> np.ndarray:
        u = self.utilities(data)
        return log_normalise(self.rate * (u - u.max()))  # differences first (reference.mechanisms.grid, residual delta)

    def residual_delta(self, m: int) -> float:
        """Residual delta of one draw over ``m`` candidates (:func:`reference.mechanisms.grid.selection_delta`):
        the probabilities are floating point and drawn by inverting their CDF (:func:`draw_index`)."""
        return selection_delta(m, self.epsilon)

    def sample(self, data, rng):
        check_generator(rng)
        return int(draw_index(self.pmf(data), 1, rng)[0])

    def batch(self, data, n, rng):
        check_generator(rng)
        n = check_n(n)
        p = self.pmf(data)
        return draw_index(p, n, rng)


class PermuteAndFlip(Selection):
    """Permute-and-flip (McKenna and Sheldon 2020, Algorithm 1).

    Candidates are visited in a uniformly random order; candidate ``r`` is
    returned with probability ``exp(rate * (u_r - max(u)))``, so the first
    maximiser always stops the loop. ``rate`` is ``epsilon/(2 Delta)``, or
    ``epsilon/Delta`` with ``monotonic=True``.

    Its law (``pmf``) is exact: with ``p_i`` the flip probabilities,
    ``P(r) = p_r * sum_k k!(m-1-k)!/m! * e_k({1 - p_i, i != r})``, where ``e_k``
    is the k-th elementary symmetric polynomial (the candidates before ``r`` in
    the permutation form a uniformly random subset of each size).
    """

    def _flip_probabilities(self, u):
        return np.exp(self.rate * (u - u.max()))

    def logpmf_all(self, data) -> np.ndarray:
        u = self.utilities(data)
        m = u.size
        p = self._flip_probabilities(u)
        # weight of a set of k candidates placed before r in a random permutation
        k = np.arange(m)
        log_w = np.array([math.lgamma(i + 1) + math.lgamma(m - i) - math.lgamma(m + 1) for i in k])
        # row r holds e_0..e_{m-1} of {1 - p_i : i != r}, by the usual recurrence
        e = np.zeros((m, m))
        e[:, 0] = 1.0
        for i, q in enumerate(1.0 - p):
            update = q * e[:, :-1]
            update[i] = 0.0  # candidate i is not among the others of row i
            e[:, 1:] += update
        with np.errstate(divide="ignore"):
            return np.log(p) + np.log(e @ np.exp(log_w))

    def sample(self, data, rng):
        """The published algorithm, step by step: the reference definition."""
        check_generator(rng)
        u = self.utilities(data)
        p = self._flip_probabilities(u)
        for r in rng.permutation(u.size):
            if rng.random() < p[r]:
                return int(r)
        raise AssertionError("unreachable: the maximiser has flip probability 1")  # pragma: no cover

    def batch(self, data, n, rng):
        """``n`` independent draws of :meth:`sample`, vectorised: per draw a uniform permutation
        (``rng.permuted``) and one 53-bit uniform per candidate; the first candidate in the permutation
        whose uniform falls below its flip probability is returned (the maximiser's probability is 1, so
        every row stops). The same algorithm as :meth:`sample`, so the same law and the same residual
        delta (:meth:`residual_delta`); tested against :meth:`pmf` and :meth:`sample`. It replaces the
        report-noisy-max form with numpy's floating-point exponential noise, whose residual delta was not
        bounded."""
        check_generator(rng)
        n = check_n(n)
        u = self.utilities(data)
        p = self._flip_probabilities(u)
        m = u.size
        order = rng.permuted(np.broadcast_to(np.arange(m), (n, m)), axis=1)
        accept = rng.random((n, m)) < p[order]
        return order[np.arange(n), np.argmax(accept, axis=1)]

    def residual_delta(self, m: int) -> float:
        """Residual delta of one draw over ``m`` candidates.

        Each flip compares a 53-bit uniform with ``p~ = exp(fl(rate * (u_r - max u)))``: the exponent
        ``a`` carries a relative error of at most ``u = 2**-53`` and ``exp`` one more ulp, so
        ``|p~ - p| <= p (|a| + 1) u <= (1/e + 1) u``, and the uniform's granularity adds ``u``: each flip's
        Bernoulli law is within ``(1/e + 2) u`` of the exact one in total variation, and a draw makes at
        most ``m`` flips. Hence ``TV <= m (1/e + 2) u``, below the ``t`` of
        :func:`reference.mechanisms.grid.selection_delta` with ``L = 0``, which is what is charged:
        ``(1 + e^epsilon) t`` (McKenna and Sheldon 2020, Algorithm 1, with the rounding of this module)."""
        return selection_delta(m, self.epsilon)
