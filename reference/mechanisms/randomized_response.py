"""Randomized response on a category set and on the bits of a public lattice value."""
from __future__ import annotations

import math

import numpy as np

from reference.mechanisms.base import Mechanism, check_n
from reference.validation import check_generator, check_positive_finite
from reference.validation import shown

__all__ = ['RandomizedResponse', 'BitRandomizedResponse']


class RandomizedResponse(Mechanism):
    """k-ary randomized response: keep the true value ``v`` in ``{0, ..., k-1}``
    with probability ``e^eps / (e^eps + k - 1)``, otherwise report one of the
    other ``k - 1`` values uniformly.

    Privacy map: ``d_in`` = 0 if the two inputs are equal, 1 otherwise; loss ``epsilon * d_in``.
    """

    def __init__(self, epsilon: float, k: int = 2):
        self.epsilon = check_positive_finite("epsilon", epsilon)
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 2:
            raise ValueError(f"k must be an integer >= 2, got {shown(k)}")
        self.k = int(k)
        self.p_keep = math.exp(self.epsilon) / (math.exp(self.epsilon) + self.k - 1)

    def _params(self):
        return {"epsilon": self.epsilon, "k": self.k}

    def _value(self, data) -> int:
        if isinstance(data, (bool, np.bool_)) or not isinstance(data, (int, np.integer)) or not 0 <= data < self.k:
            raise ValueError(f"data must be an integer in [0, {self.k - 1}], got {shown(data)}")
        return int(data)

    def sample(self, data, rng):
        return int(self.batch(data, 1, rng)[0])

    def batch(self, data, n, rng):
        check_generator(rng)
        n = check_n(n)
        v = self._value(data)
        keep = rng.random(n) < self.p_keep
        other = rng.integers(0, self.k - 1, size=n)
        other = other + (other >= v)  # uniform over the k - 1 values other than v
        return np.where(keep, v, other)

    def pmf(self, data) -> np.ndarray:
        v = self._value(data)
        p = np.full(self.k, (1.0 - self.p_keep) / (self.k - 1))
        p[v] = self.p_keep
        return p

    def logpmf(self, k, data) -> float:
        if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)) or not 0 <= k < self.k:
            return -math.inf
        return float(math.log(self.pmf(data)[int(k)]))

    log_law = logpmf

    def critical_outputs(self, d0, d1):
        return list(range(self.k))

    def privacy_map(self, d_in):
        return self.epsilon * min(float(d_in), 1.0)


class BitRandomizedResponse(Mechanism):
    """Randomized response applied to each bit of a 0/1 vector independently.

    Each bit is kept with probability ``e^(eps/s) / (1 + e^(eps/s))`` where
    ``s = sensitivity`` is the largest number of bits in which two neighbouring
    inputs differ (``s = 2`` for one-hot vectors, as in the leaf-indicator
    randomiser of LPDT, Ma et al. 2023, mechanism (4)).
    Outputs are tuples of 0/1 ints (discrete).

    Privacy map: inputs at Hamming distance ``d_in`` give loss ``d_in * epsilon / sensitivity``.
    """

    def __init__(self, epsilon: float, sensitivity: int = 1):
        self.epsilon = check_positive_finite("epsilon", epsilon)
        self.sensitivity = check_positive_finite("sensitivity", sensitivity)
        self.eps_bit = self.epsilon / self.sensitivity
        self.p_flip = 1.0 / (1.0 + math.exp(self.eps_bit))

    def _params(self):
        return {"epsilon": self.epsilon, "sensitivity": self.sensitivity}

    @staticmethod
    def _bits(data) -> np.ndarray:
        bits = np.asarray(data)
        if bits.ndim != 1 or bits.size == 0 or not np.all((bits == 0) | (bits == 1)):
            raise ValueError(f"data must be a non-empty 1-D vector of 0/1 values, got {shown(data)}")
        return bits.astype(np.int8)

    def sample(self, data, rng):
        return tuple(int(b) for b in self.batch(data, 1, rng)[0])

    def batch(self, data, n, rng):
        check_generator(rng)
        n = check_n(n)
        bits = self._bits(data)
        flips = rng.random((n, bits.size)) < self.p_flip
        return np.bitwise_xor(bits[None, :], flips.astype(np.int8))

    def logpmf(self, output, data) -> float:
        bits = self._bits(data)
        out = np.asarray(output)
        if out.shape != bits.shape or not np.all((out == 0) | (out == 1)):
            return -math.inf
        n_flip = int(np.sum(out != bits))
        return n_flip * math.log(self.p_flip) + (bits.size - n_flip) * math.log1p(-self.p_flip)

    log_law = logpmf

    def critical_outputs(self, d0, d1):
        """The log-ratio is a sum over the differing bits only; it is largest at
        the output ``d0`` and smallest at ``d1``."""
        return [tuple(int(b) for b in self._bits(d0)), tuple(int(b) for b in self._bits(d1))]

    def privacy_map(self, d_in):
        return float(d_in) * self.eps_bit
