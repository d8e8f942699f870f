"""JointExp: differentially private quantiles of bounded data, sampled jointly.

Gillenwater, Joseph, Kulesza, "Differentially Private Quantiles", ICML 2021,
as defined in ``spec/privatree.md`` section 2.4 (PrivaTree, seed
``004_2521a6732a5af66c.txt``, section IV-B, uses it to place its bin edges).
Written from that definition; no code of ``dp_multiq`` is used.

Definition
----------
Sorted data ``x_(1) <= ... <= x_(n)`` in ``[a, b]``, ``x_(0) = a``,
``x_(n+1) = b``; interval ``I_i = [x_(i), x_(i+1)]`` of length ``l_i``
(``i = 0..n``). Levels ``0 < q_1 < ... < q_m < 1`` with ``q_0 = 0``,
``q_{m+1} = 1``. An output is ``a <= o_1 <= ... <= o_m <= b`` with
``o_0 = a``, ``o_{m+1} = b`` and utility::

    u(o) = - sum_{j=1}^{m+1} | #{x in [o_{j-1}, o_j)} - (q_j - q_{j-1}) n |

drawn with density ``f(o) ∝ exp(epsilon u(o) / (2 Delta))`` on the ordered
region (Lebesgue base measure). ``Delta = 2`` bounds the change of ``u`` when
one record is replaced, and also when one is added or removed
(``2 (1 - min_j (q_j - q_{j-1})) <= 2``), so the default is valid under both
relations.

Sampling
--------
If ``o_j`` lies in ``I_{i_j}``, the gap counts are ``i_j - i_{j-1}`` (with
``i_0 = 0`` and ``i_{m+1} = n``), so the mass of an interval sequence
``i_1 <= ... <= i_m`` is ``prod_j phi_j(i_j - i_{j-1}) * prod_runs l^k / k!``
with ``phi_j(g) = exp(-(epsilon / (2 Delta)) |g - (q_j - q_{j-1}) n|)``; a run
of ``k`` equal indices contributes the volume ``l^k / k!`` of an ordered
``k``-tuple in one interval. Writing ``l^k / k! = prod_{r=1..k} l / r``
makes the weight Markov in the state (interval, position in its run), so a
forward pass computes every partial sum exactly and a backward pass samples
the sequence; each ``o_j`` is then uniform in its interval and the outputs
are sorted. The forward pass convolves with ``phi_j``: directly for small
``n`` (exact up to floating point) and by FFT for large ``n`` (relative
error about 1e-13 of the largest term at each step).
"""
from __future__ import annotations

import math

import numpy as np
from scipy.signal import fftconvolve
from scipy.special import logsumexp

from ._validation import check_generator, check_positive_finite

__all__ = ["JointExp", "joint_exp_quantiles"]

#: above this many data points the convolutions use the FFT
_DIRECT_MAX = 2000
#: forward passes of data up to this size are memoised (read-only results)
_CACHE_MAX_N = 64
_FORWARD_CACHE: dict = {}


def _draw(weights: np.ndarray, rng) -> int:
    """An index drawn with probability proportional to the non-negative ``weights`` (inverse CDF)."""
    c = np.cumsum(weights)
    k = int(np.searchsorted(c, rng.random() * c[-1], side="right"))
    return min(k, c.size - 1)


def _check_levels(quantiles) -> np.ndarray:
    q = np.asarray(quantiles, dtype=float)
    if q.ndim != 1 or q.size == 0 or not np.all(np.isfinite(q)):
        raise ValueError(f"quantiles must be a non-empty 1-D sequence of finite levels, got {quantiles!r}")
    if np.any(q <= 0) or np.any(q >= 1) or np.any(np.diff(q) <= 0):
        raise ValueError(f"quantiles must be strictly increasing levels in (0, 1), got {quantiles!r}")
    return q


def _check_bounds(bounds) -> tuple[float, float]:
    try:
        lo, hi = (float(v) for v in bounds)
    except (TypeError, ValueError):
        raise ValueError(f"bounds must be a (low, high) pair, got {bounds!r}") from None
    if not (math.isfinite(lo) and math.isfinite(hi) and lo <= hi):
        raise ValueError(f"bounds must be finite with low <= high, got {bounds!r}")
    return lo, hi


class JointExp:
    """JointExp private quantiles (Gillenwater et al. 2021) over the public interval ``bounds``.

    Parameters
    ----------
    epsilon : float
        Privacy budget of one call.
    quantiles : sequence of float
        Strictly increasing levels in (0, 1).
    bounds : (float, float)
        Public range ``[a, b]``; data are clipped into it.
    sensitivity : float, default 2
        ``Delta`` of the utility (2 is valid under add/remove and substitution).

    References
    ----------
    Gillenwater, Joseph, Kulesza (2021), Section 3 (JointExp);
    ``spec/privatree.md`` section 2.4; PrivaTree (004_2521a6732a5af66c.txt),
    Algorithm 1 lines 3-5.
    """

    def __init__(self, epsilon: float, quantiles, bounds, sensitivity: float = 2.0):
        self.epsilon = check_positive_finite("epsilon", epsilon)
        self.sensitivity = check_positive_finite("sensitivity", sensitivity)
        self.quantiles = _check_levels(quantiles)
        self.bounds = _check_bounds(bounds)
        self.rate = self.epsilon / (2.0 * self.sensitivity)

    def __repr__(self):
        return (f"JointExp(epsilon={self.epsilon:g}, quantiles={self.quantiles.tolist()}, bounds={self.bounds}, "
                f"sensitivity={self.sensitivity:g})")

    # ------------------------------------------------------------------ pieces of the law
    def _prepare(self, data) -> tuple[np.ndarray, np.ndarray, int]:
        x = np.asarray(data, dtype=float).ravel()
        if x.size and not np.all(np.isfinite(x)):
            raise ValueError("data must be finite")
        lo, hi = self.bounds
        x = np.sort(np.clip(x, lo, hi))
        edges = np.concatenate(([lo], x, [hi]))
        return edges, np.diff(edges), x.size

    def _targets(self, n: int) -> np.ndarray:
        w = np.diff(np.concatenate(([0.0], self.quantiles, [1.0])))
        return w * n

    def _log_phi(self, j: int, n: int) -> np.ndarray:
        """``log phi_j(g)`` for ``g = 0..n`` (``j`` counts gaps from 0)."""
        key = (n, self.rate)
        if getattr(self, "_phi_key", None) != key:  # one table per data size
            g = np.arange(n + 1, dtype=float)
            self._phi_table = -self.rate * np.abs(g[None, :] - self._targets(n)[:, None])
            self._phi_key = key
        return self._phi_table[j]

    def _forward(self, lengths: np.ndarray, n: int):
        """Scaled forward weights ``A[j]`` of shape (n+1, m) and their log scales.

        The pass is a deterministic function of the data, so for small data it
        is memoised (the auditor refits on the same tiny datasets many times).
        """
        if n > _CACHE_MAX_N:
            return self._forward_pass(lengths, n)
        key = (self.rate, self.quantiles.tobytes(), lengths.tobytes(), n)
        hit = _FORWARD_CACHE.get(key)
        if hit is None:
            hit = self._forward_pass(lengths, n)
            if len(_FORWARD_CACHE) >= 512:
                _FORWARD_CACHE.clear()
            _FORWARD_CACHE[key] = hit
        return hit

    def _forward_pass(self, lengths: np.ndarray, n: int):
        m = self.quantiles.size
        with np.errstate(divide="ignore"):
            log_len = np.log(lengths)
        if not np.any(np.isfinite(log_len)):
            return None
        A, scales = [], []
        a = np.full((n + 1, m), 0.0)
        first = self._log_phi(0, n) + log_len  # i_0 = 0: gap count is i_1
        s = np.max(first)
        a[:, 0] = np.exp(first - s)
        A.append(a)
        scales.append(s)
        for j in range(1, m):
            prev = A[-1]
            total = prev.sum(axis=1)  # over run positions
            phi = np.exp(self._log_phi(j, n))
            # new run: sum_{i' < i} total[i'] * phi(i - i')
            kernel = phi.copy()
            kernel[0] = 0.0
            conv = (np.convolve(total, kernel) if n + 1 <= _DIRECT_MAX else fftconvolve(total, kernel))[: n + 1]
            conv = np.maximum(conv, 0.0)
            a = np.zeros((n + 1, m))
            a[:, 0] = conv * lengths
            r = np.arange(2, m + 1)
            a[:, 1:] = prev[:, :-1] * (phi[0] * lengths[:, None] / r[None, :])
            s = a.max()
            if not s > 0:
                return None
            A.append(a / s)
            scales.append(scales[-1] + math.log(s))
        return A, scales

    def log_normaliser(self, data) -> float:
        """``log W = log of the integral of exp(epsilon u(o) / (2 Delta))`` over the ordered region."""
        _, lengths, n = self._prepare(data)
        fw = self._forward(lengths, n)
        if fw is None:
            return -math.inf
        A, scales = fw
        last = self._log_phi(self.quantiles.size, n)[::-1]  # phi_{m+1}(n - i)
        with np.errstate(divide="ignore"):
            return float(logsumexp(np.log(A[-1].sum(axis=1)) + last) + scales[-1])

    def utility(self, output, data) -> float:
        """``u(o)`` of the definition (gap counts use half-open ``[o_{j-1}, o_j)``)."""
        x, _, n = self._prepare(data)
        x = x[1:-1]
        o = np.asarray(output, dtype=float)
        cuts = np.concatenate(([self.bounds[0]], o, [self.bounds[1]]))
        below = np.searchsorted(x, cuts, side="left")  # #{x < c}
        counts = np.diff(below)
        counts[-1] += np.sum(x == self.bounds[1])  # the last gap is closed at b
        return float(-np.sum(np.abs(counts - self._targets(n))))

    def logpdf(self, output, data) -> float:
        """Exact log density of a sorted output vector (``-inf`` outside the ordered region)."""
        o = np.asarray(output, dtype=float)
        lo, hi = self.bounds
        if o.shape != self.quantiles.shape or np.any(np.diff(o) < 0) or o[0] < lo or o[-1] > hi:
            return -math.inf
        return self.rate * self.utility(o, data) - self.log_normaliser(data)

    log_law = logpdf

    def privacy_map(self, d_in: float) -> float:
        """Utility sensitivity ``Delta`` per neighbouring step gives loss ``epsilon * d_in``."""
        return float(d_in) * self.epsilon

    # ------------------------------------------------------------------ sampling
    def _sample_intervals(self, lengths, n, rng) -> np.ndarray:
        """Backward pass: the last (interval, run position), then each predecessor given its successor."""
        m = self.quantiles.size
        fw = self._forward(lengths, n)
        if fw is None:
            return None
        A, _ = fw
        last = np.exp(self._log_phi(m, n)[::-1])
        i = _draw(A[-1].sum(axis=1) * last, rng)
        r = _draw(A[-1][i], rng)
        idx = np.empty(m, dtype=np.int64)
        idx[m - 1] = i
        for j in range(m - 1, 0, -1):
            if r > 0:  # continuing a run: the previous output is in the same interval
                r -= 1
            else:  # a new run: the previous output is in an earlier interval i' < i
                phi = np.exp(self._log_phi(j, n)[i:0:-1])  # phi_j(i - i') for i' = 0..i-1
                prev = A[j - 1][:i]
                i = _draw(prev.sum(axis=1) * phi, rng)
                r = _draw(prev[i], rng)
            idx[j - 1] = i
        return idx

    def sample(self, data, rng) -> np.ndarray:
        """One sorted vector of ``m`` private quantiles."""
        check_generator(rng)
        edges, lengths, n = self._prepare(data)
        idx = self._sample_intervals(lengths, n, rng)
        if idx is None:  # lo == hi: the only possible output
            return np.full(self.quantiles.size, self.bounds[0])
        return np.sort(edges[idx] + rng.random(idx.size) * lengths[idx])

    __call__ = sample

    def batch(self, data, n_samples: int, rng) -> np.ndarray:
        check_generator(rng)
        return np.stack([self.sample(data, rng) for _ in range(int(n_samples))])


def joint_exp_quantiles(x, quantiles, bounds, epsilon, rng, sensitivity: float = 2.0) -> np.ndarray:
    """Convenience: one draw of :class:`JointExp` (see there)."""
    return JointExp(epsilon, quantiles, bounds, sensitivity).sample(x, rng)
