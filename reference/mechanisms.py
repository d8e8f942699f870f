"""Differential-privacy mechanisms with their exact output laws.

Each mechanism is a small object in the style of ``scipy.stats``: it samples
(``sample(data, rng)``, vectorised ``batch(data, n, rng)``) and it exposes the
law it samples from (``logpmf`` for discrete outputs, ``logpdf`` for continuous
ones), so the privacy loss on two inputs can be computed exactly
(:func:`audit.exact.privacy_loss`) instead of estimated.

Every mechanism also states its privacy as a map from input distance to output
loss (``privacy_map(d_in)``), the way OpenDP does: the claim sits beside the
sampler that has to keep it.

The mechanism contract of the auditor (``m(data, rng)`` returning one output,
optionally ``m.batch(data, n, rng)``) is met by every class here, so each can be
audited directly.

References
----------
Dwork, McSherry, Nissim, Smith (2006), the Laplace mechanism.
Ghosh, Roughgarden, Sundararajan (2009), the two-sided geometric mechanism.
McSherry, Talwar (2007), the exponential mechanism.
McKenna, Sheldon (2020), permute-and-flip; Ding et al. (2021) show it equals
report-noisy-max with exponential noise, which :meth:`PermuteAndFlip.batch` uses.
Warner (1965), randomized response.
Consul, Williamson, 003_9d9c0c8370f39611.txt section 3.1, the private median
over a bounded interval with a Lebesgue base measure (Theorem 3's form).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ._validation import (
    check_generator,
    check_nonempty,
    check_positive_finite,
)

__all__ = [
    "Mechanism",
    "Laplace",
    "TwoSidedGeometric",
    "ExponentialMechanism",
    "PermuteAndFlip",
    "RandomizedResponse",
    "BitRandomizedResponse",
    "IntervalExponential",
    "JointExp",
]


class Mechanism:
    """Base class: the auditor's mechanism contract plus an exact law.

    Subclasses define ``sample``, ``batch``, ``log_law`` (``logpmf`` or
    ``logpdf``), ``critical_outputs`` and ``privacy_map``.
    """

    #: ``"discrete"`` when ``log_law`` is a log-pmf, ``"continuous"`` for a log-density.
    kind = "discrete"
    epsilon: float

    def __call__(self, data, rng):
        return self.sample(data, rng)

    def sample(self, data, rng):  # pragma: no cover - abstract
        raise NotImplementedError

    def batch(self, data, n: int, rng):
        """``n`` independent outputs; the default loops over :meth:`sample`."""
        check_generator(rng)
        return [self.sample(data, rng) for _ in range(int(n))]

    def log_law(self, output, data) -> float:  # pragma: no cover - abstract
        raise NotImplementedError

    def critical_outputs(self, d0, d1) -> list:
        """Outputs at which ``|log_law(o, d0) - log_law(o, d1)|`` attains its supremum.

        Used by :func:`audit.exact.privacy_loss`. Each subclass proves, in its
        docstring, why its finite set suffices.
        """
        raise NotImplementedError  # pragma: no cover

    def privacy_map(self, d_in: float) -> float:  # pragma: no cover - abstract
        """The epsilon this mechanism guarantees for inputs at distance ``d_in``."""
        raise NotImplementedError

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in self._params().items())
        return f"{type(self).__name__}({params})"

    def _params(self) -> dict[str, Any]:
        return {"epsilon": self.epsilon}


def _log_normalise(log_w: np.ndarray) -> np.ndarray:
    """``log_w - logsumexp(log_w)`` by the max shift (scipy's logsumexp costs ~0.1 ms on tiny inputs)."""
    top = np.max(log_w)
    return log_w - (top + np.log(np.sum(np.exp(log_w - top))))


def _draw_index(p: np.ndarray, n: int, rng) -> np.ndarray:
    """``n`` indices drawn with probabilities ``p`` by inverting the CDF (the law of ``rng.choice(p=p)``)."""
    cdf = np.cumsum(p)
    idx = np.searchsorted(cdf, rng.random(n) * cdf[-1], side="right")
    return np.minimum(idx, p.size - 1)


def _check_n(n) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    return int(n)


# --------------------------------------------------------------------------- Laplace
class Laplace(Mechanism):
    """Laplace mechanism: ``value + Laplace(0, sensitivity / epsilon)`` per coordinate.

    Privacy map: inputs at L1 distance ``d_in`` give loss ``d_in * epsilon / sensitivity``.

    Parameters
    ----------
    epsilon : float
        Privacy parameter, positive and finite.
    sensitivity : float, default 1.0
        L1 sensitivity of the query the mechanism is applied to.
    """

    kind = "continuous"

    def __init__(self, epsilon: float, sensitivity: float = 1.0):
        self.epsilon = check_positive_finite("epsilon", epsilon)
        self.sensitivity = check_positive_finite("sensitivity", sensitivity)
        self.scale = self.sensitivity / self.epsilon

    def _params(self):
        return {"epsilon": self.epsilon, "sensitivity": self.sensitivity}

    def sample(self, data, rng):
        check_generator(rng)
        value = np.asarray(data, dtype=float)
        out = value + rng.laplace(0.0, self.scale, size=value.shape)
        return float(out) if out.ndim == 0 else out

    def batch(self, data, n, rng):
        check_generator(rng)
        n = _check_n(n)
        value = np.asarray(data, dtype=float)
        return value + rng.laplace(0.0, self.scale, size=(n,) + value.shape)

    def logpdf(self, x, data) -> float:
        x = np.asarray(x, dtype=float)
        value = np.asarray(data, dtype=float)
        return float(np.sum(-math.log(2.0 * self.scale) - np.abs(x - value) / self.scale))

    log_law = logpdf

    def critical_outputs(self, d0, d1):
        """The log-ratio is separable and, per coordinate, piecewise linear with
        kinks at the two centres and constant outside them: its extremes are at
        ``x = d0`` (maximum) and ``x = d1`` (minimum)."""
        return [np.asarray(d0, dtype=float), np.asarray(d1, dtype=float)]

    def privacy_map(self, d_in):
        return float(d_in) * self.epsilon / self.sensitivity


# --------------------------------------------------------------------------- geometric
class TwoSidedGeometric(Mechanism):
    """Two-sided geometric mechanism on integers: ``P(k) ∝ alpha^|k - value|``,
    ``alpha = exp(-epsilon / sensitivity)``.

    Sampling is exact in the integers: the noise is the difference of two
    independent geometric variables (never a rounded float).

    Privacy map: integer inputs at L1 distance ``d_in`` give loss ``d_in * epsilon / sensitivity``.
    """

    def __init__(self, epsilon: float, sensitivity: float = 1.0):
        self.epsilon = check_positive_finite("epsilon", epsilon)
        self.sensitivity = check_positive_finite("sensitivity", sensitivity)
        self.alpha = math.exp(-self.epsilon / self.sensitivity)

    def _params(self):
        return {"epsilon": self.epsilon, "sensitivity": self.sensitivity}

    def _noise(self, shape, rng):
        p = -math.expm1(-self.epsilon / self.sensitivity)  # 1 - alpha, accurate for small epsilon
        return rng.geometric(p, size=shape) - rng.geometric(p, size=shape)

    @staticmethod
    def _as_int(data) -> np.ndarray:
        value = np.asarray(data)
        if not np.issubdtype(value.dtype, np.integer):
            if not np.all(np.equal(np.mod(value, 1), 0)):
                raise ValueError(f"data must be integer-valued for the geometric mechanism, got {data!r}")
            value = value.astype(np.int64)
        return value

    def sample(self, data, rng):
        check_generator(rng)
        value = self._as_int(data)
        out = value + self._noise(value.shape, rng)
        return int(out) if out.ndim == 0 else out

    def batch(self, data, n, rng):
        check_generator(rng)
        n = _check_n(n)
        value = self._as_int(data)
        return value + self._noise((n,) + value.shape, rng)

    def logpmf(self, k, data) -> float:
        k = np.asarray(k)
        value = self._as_int(data)
        if not np.all(np.equal(np.mod(k, 1), 0)):
            return -math.inf
        log_norm = math.log1p(-self.alpha) - math.log1p(self.alpha)
        return float(np.sum(log_norm + np.abs(k - value) * math.log(self.alpha)))

    log_law = logpmf

    def critical_outputs(self, d0, d1):
        """As for Laplace: the log-ratio is extreme at ``k = d0`` and ``k = d1``."""
        return [self._as_int(d0), self._as_int(d1)]

    def privacy_map(self, d_in):
        return float(d_in) * self.epsilon / self.sensitivity


# --------------------------------------------------------------------------- selection
class _Selection(Mechanism):
    """Shared parts of the mechanisms that select an index from a utility vector."""

    def __init__(self, epsilon: float, sensitivity: float = 1.0, monotonic: bool = False):
        self.epsilon = check_positive_finite("epsilon", epsilon)
        self.sensitivity = check_positive_finite("sensitivity", sensitivity)
        if not isinstance(monotonic, (bool, np.bool_)):
            raise TypeError(f"monotonic must be a bool, got {monotonic!r}")
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


class ExponentialMechanism(_Selection):
    """Exponential mechanism over a finite candidate set.

    Index ``i`` is returned with probability proportional to
    ``exp(epsilon * u_i / (2 * sensitivity))``; with ``monotonic=True`` (for
    utilities that all move in the same direction between neighbours) the
    factor 1/2 is dropped (McSherry and Talwar 2007, Theorem 6).
    """

    def logpmf_all(self, data) -> np.ndarray:
        z = self.rate * self.utilities(data)
        return _log_normalise(z)

    def sample(self, data, rng):
        check_generator(rng)
        return int(_draw_index(self.pmf(data), 1, rng)[0])

    def batch(self, data, n, rng):
        check_generator(rng)
        n = _check_n(n)
        p = self.pmf(data)
        return _draw_index(p, n, rng)


class PermuteAndFlip(_Selection):
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
        """Report-noisy-max with exponential noise of scale ``1/rate``, which has
        the same law as permute-and-flip (Ding et al. 2021); tested against
        :meth:`pmf` and :meth:`sample`."""
        check_generator(rng)
        n = _check_n(n)
        u = self.utilities(data)
        noisy = self.rate * u + rng.exponential(1.0, size=(n, u.size))
        return np.argmax(noisy, axis=1)


# --------------------------------------------------------------------------- randomized response
class RandomizedResponse(Mechanism):
    """k-ary randomized response: keep the true value ``v`` in ``{0, ..., k-1}``
    with probability ``e^eps / (e^eps + k - 1)``, otherwise report one of the
    other ``k - 1`` values uniformly.

    Privacy map: ``d_in`` = 0 if the two inputs are equal, 1 otherwise; loss ``epsilon * d_in``.
    """

    def __init__(self, epsilon: float, k: int = 2):
        self.epsilon = check_positive_finite("epsilon", epsilon)
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 2:
            raise ValueError(f"k must be an integer >= 2, got {k!r}")
        self.k = int(k)
        self.p_keep = math.exp(self.epsilon) / (math.exp(self.epsilon) + self.k - 1)

    def _params(self):
        return {"epsilon": self.epsilon, "k": self.k}

    def _value(self, data) -> int:
        if isinstance(data, (bool, np.bool_)) or not isinstance(data, (int, np.integer)) or not 0 <= data < self.k:
            raise ValueError(f"data must be an integer in [0, {self.k - 1}], got {data!r}")
        return int(data)

    def sample(self, data, rng):
        return int(self.batch(data, 1, rng)[0])

    def batch(self, data, n, rng):
        check_generator(rng)
        n = _check_n(n)
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
    randomiser of LPDT, 002_5a21b2792a729c80.txt mechanism (4)).
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
            raise ValueError(f"data must be a non-empty 1-D vector of 0/1 values, got {data!r}")
        return bits.astype(np.int8)

    def sample(self, data, rng):
        return tuple(int(b) for b in self.batch(data, 1, rng)[0])

    def batch(self, data, n, rng):
        check_generator(rng)
        n = _check_n(n)
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


# --------------------------------------------------------------------------- private median
class IntervalExponential(Mechanism):
    """Private median on a bounded interval: the exponential mechanism with a
    Lebesgue base measure (003_9d9c0c8370f39611.txt, section 3.1, and the
    proof of its Theorem 3).

    With the node's values sorted, ``x_(1) <= ... <= x_(N)`` inside public
    ``bounds = (low, high)``, the gaps are ``I_0 = [low, x_(1))``,
    ``I_i = [x_(i), x_(i+1))`` and ``I_N = [x_(N), high]``. On ``I_i`` exactly
    ``i`` values lie below ``r``, so the utility is ``q_i = -|2i - N|``
    (sensitivity 1 under adding or removing a value). A gap is chosen with
    probability ``∝ |I_i| exp(epsilon q_i / (2 sensitivity))`` and ``r`` is
    drawn uniformly inside it: the median of the gaps, weighted by their length.

    Privacy map: datasets differing in ``d_in`` added or removed values give
    loss ``epsilon * d_in / sensitivity``.

    Parameters
    ----------
    epsilon : float
    bounds : (float, float)
        Public range of the attribute; values outside it are an error.
    sensitivity : float, default 1.0
    """

    kind = "continuous"

    def __init__(self, epsilon: float, bounds=(0.0, 1.0), sensitivity: float = 1.0):
        self.epsilon = check_positive_finite("epsilon", epsilon)
        self.sensitivity = check_positive_finite("sensitivity", sensitivity)
        try:
            low, high = (float(b) for b in bounds)
        except (TypeError, ValueError):
            raise ValueError(f"bounds must be a pair (low, high), got {bounds!r}") from None
        if not (math.isfinite(low) and math.isfinite(high) and low < high):
            raise ValueError(f"bounds must be finite with low < high, got {bounds!r}")
        self.bounds = (low, high)

    def _params(self):
        return {"epsilon": self.epsilon, "bounds": self.bounds, "sensitivity": self.sensitivity}

    def _values(self, data) -> np.ndarray:
        x = np.sort(np.asarray(data, dtype=float).ravel())
        if x.size and (x[0] < self.bounds[0] or x[-1] > self.bounds[1] or not np.all(np.isfinite(x))):
            raise ValueError(f"data must lie within bounds {self.bounds}, got values in [{x[0]}, {x[-1]}]")
        return x

    def gaps(self, data):
        """The gaps' edges ``(left, right)`` and their log-weights ``log|I_i| + rate*q_i``."""
        x = self._values(data)
        edges = np.concatenate(([self.bounds[0]], x, [self.bounds[1]]))
        left, right = edges[:-1], edges[1:]
        i = np.arange(x.size + 1)
        score = -np.abs(2 * i - x.size) * self.epsilon / (2.0 * self.sensitivity)
        with np.errstate(divide="ignore"):
            log_w = np.log(right - left) + score
        return left, right, _log_normalise(log_w)

    def sample(self, data, rng):
        return float(self.batch(data, 1, rng)[0])

    def batch(self, data, n, rng):
        check_generator(rng)
        n = _check_n(n)
        left, right, log_p = self.gaps(data)
        idx = _draw_index(np.exp(log_p), n, rng)
        return rng.uniform(left[idx], right[idx])

    def logpdf(self, r, data) -> float:
        r = float(r)
        if not self.bounds[0] <= r <= self.bounds[1]:
            return -math.inf
        x = self._values(data)
        i = int(np.searchsorted(x, r, side="right"))  # number of values <= r, i.e. r in I_i
        i = min(i, x.size)
        left, right, log_p = self.gaps(x)
        width = right[i] - left[i]
        return float(log_p[i] - math.log(width)) if width > 0 else -math.inf

    log_law = logpdf

    def cdf(self, r, data) -> np.ndarray:
        """``P(output <= r)``: piecewise linear, exact."""
        left, right, log_p = self.gaps(data)
        p = np.exp(log_p)
        r = np.asarray(r, dtype=float)[..., None]
        width = np.where(right > left, right - left, 1.0)
        frac = np.clip((r - left) / width, 0.0, 1.0)
        frac = np.where(right > left, frac, (r >= left).astype(float))
        return np.sum(p * frac, axis=-1)

    def critical_outputs(self, d0, d1):
        """Both densities are constant between consecutive points of the union
        of the two datasets and the bounds; the midpoints of those pieces carry
        every value of the (essential) log-ratio."""
        pts = np.unique(np.concatenate((self.bounds, self._values(d0), self._values(d1))))
        return list((pts[:-1] + pts[1:]) / 2.0)

    def privacy_map(self, d_in):
        return float(d_in) * self.epsilon / self.sensitivity


# JointExp (Gillenwater et al. 2021), the private quantiles of PrivaTree, lives in its own module for its size.
from .jointexp import JointExp  # noqa: E402
