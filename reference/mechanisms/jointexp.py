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

Public grid
-----------
The outputs are points of the public grid ``t_k = a + (b - a) k / M``,
``k = 0..M`` (:mod:`reference.mechanisms.grid`; ``M = grid``, default ``2**16``), never
a float drawn inside a data-defined interval (whose lattice would move with
the data: Mironov 2012, issue 17 finding 2). The gap of a grid point is its
rank ``#{x < t_k}`` (the count the utility uses), so ``I_i`` holds the
``c_i`` grid points with ``x_(i) < t_k <= x_(i+1)``. The law on sorted
grid vectors is::

    P(o) ∝ exp(epsilon u(o) / (2 Delta)) / prod_v mult_o(v)!

where ``mult_o(v)`` is how often the grid point ``v`` occurs in ``o``: a
data-independent base measure (the multiset weight of ``k`` sorted iid
uniform grid points), so the ratio between neighbours is that of the
utilities and the normalisers, exactly as for the Lebesgue law.

Sampling
--------
If ``o_j`` lies in ``I_{i_j}``, the gap counts are ``i_j - i_{j-1}`` (with
``i_0 = 0`` and ``i_{m+1} = n``), so the mass of an interval sequence
``i_1 <= ... <= i_m`` is ``prod_j phi_j(i_j - i_{j-1}) * prod_runs c^k / k!``
with ``phi_j(g) = exp(-(epsilon / (2 Delta)) |g - (q_j - q_{j-1}) n|)``; a run
of ``k`` equal indices in a gap of ``c`` grid points contributes
``c^k / k!``: sorting ``k`` iid uniform grid points of the gap gives a sorted
tuple with probability ``k! / (prod mult! c^k)``, and the product is the law
above. Writing ``c^k / k! = prod_{r=1..k} c / r`` makes the weight Markov in
the state (interval, position in its run), so a forward pass computes every
partial sum and a backward pass samples the sequence; each ``o_j`` is then a
uniform grid point of its interval (exact integers, ``rng.integers``) and the
outputs are sorted. The forward pass convolves with ``phi_j``: directly for
small ``n`` and by FFT for large ``n`` (relative error about 1e-13 of the
largest term at each step). Nothing derived from the data is kept between
calls (issue 17 finding 7: the former module-level cache of forward passes
was keyed by the data's gaps).

Residual delta
--------------
The backward pass makes at most ``2m`` inverse-CDF draws from floating-point
weights, each over at most ``M + 1`` positive-weight gaps (or ``m`` run
positions), and the forward pass's sums of at most ``M + 1`` positive terms
per step give each weight a relative error of at most ``m (M + 8) 2**-53``.
:attr:`JointExp.residual_delta` charges
``2m * [selection_delta(M + 1, epsilon, ln(M + 1)) + (1 + e^epsilon) 2 m (M + 8) 2**-53]``
(:func:`reference.mechanisms.grid.selection_delta`); it covers the direct forward pass
(``n <= 2000``), not the FFT one, whose values below ``1e-11`` of each step's largest are set to zero
(under the FFT's resolution; without it, rounding noise gave weight to states no predecessor reaches).
"""
from __future__ import annotations

import math

import numpy as np
from scipy.signal import fftconvolve
from scipy.special import logsumexp

from reference.mechanisms.grid import (
    DEFAULT_GRID,
    check_grid,
    grid_index,
    grid_searchsorted,
    grid_value,
    selection_delta,
)
from reference.validation import check_generator, check_positive_finite

__all__ = ["JointExp", "joint_exp_quantiles", "joint_exp_batch"]

#: above this many data points the convolutions use the FFT
_DIRECT_MAX = 2000
#: FFT convolution values below this fraction of the step's largest one are rounding noise, set to 0
_FFT_FLOOR = 1e-11


def _draw(weights: np.ndarray, rng) -> int:
    """An index drawn with probability proportional to the non-negative ``weights`` (inverse CDF)."""
    c = np.cumsum(weights)
    k = int(np.searchsorted(c, rng.random() * c[-1], side="right"))
    return min(k, c.size - 1)


def _log(x: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return np.log(x)


def _last_gap_log_weights(A, log_phi_last) -> np.ndarray:
    """Unnormalised log weight of each gap ``i`` holding the last output: its forward weight times
    ``phi_{m+1}(n - i)`` (``log_phi_last``: that row of the log-phi table)."""
    return _log(A[-1].sum(axis=1)) + log_phi_last[::-1]


def _draw_log(log_weights: np.ndarray, rng) -> int:
    """An index drawn with probability proportional to ``exp(log_weights)`` (shifted by their largest)."""
    top = np.max(log_weights)
    if not np.isfinite(top):
        raise RuntimeError("JointExp: every candidate has weight zero (a state no predecessor reaches)")
    return _draw(np.exp(log_weights - top), rng)


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
    grid : int, default 2**16
        Number of steps ``M`` of the public output grid on ``bounds`` (``M + 1`` points).

    References
    ----------
    Gillenwater, Joseph, Kulesza (2021), Section 3 (JointExp);
    ``spec/privatree.md`` section 2.4; PrivaTree (004_2521a6732a5af66c.txt),
    Algorithm 1 lines 3-5.
    """

    kind = "discrete"

    def __init__(self, epsilon: float, quantiles, bounds, sensitivity: float = 2.0, grid: int = DEFAULT_GRID):
        self.epsilon = check_positive_finite("epsilon", epsilon)
        self.sensitivity = check_positive_finite("sensitivity", sensitivity)
        self.quantiles = _check_levels(quantiles)
        self.bounds = _check_bounds(bounds)
        self.grid = check_grid(grid, self.bounds)
        self.rate = self.epsilon / (2.0 * self.sensitivity)

    def __repr__(self):
        return (f"JointExp(epsilon={self.epsilon:g}, quantiles={self.quantiles.tolist()}, bounds={self.bounds}, "
                f"sensitivity={self.sensitivity:g}, grid={self.grid})")

    @property
    def residual_delta(self) -> float:
        """Floating-point residual delta of one call (module docstring, "Residual delta")."""
        m, M = self.quantiles.size, self.grid
        per_draw = selection_delta(M + 1, self.epsilon, math.log(M + 1))
        weights = (1.0 + math.exp(min(self.epsilon, 700.0))) * 2.0 * m * (M + 8) * 2.0 ** -53
        return min(2 * m * (per_draw + weights), 1.0 - 2.0 ** -53)  # vacuous (near 1) for epsilon above ~20

    # ------------------------------------------------------------------ pieces of the law
    def _sorted(self, data) -> np.ndarray:
        x = np.asarray(data, dtype=float).ravel()
        if x.size and not np.all(np.isfinite(x)):
            raise ValueError("data must be finite")
        lo, hi = self.bounds
        return np.sort(np.clip(x, lo, hi))

    def _prepare(self, data) -> tuple[np.ndarray, np.ndarray, int]:
        """``(start, count, n)``: gap ``I_i`` holds the grid points ``start_i <= k < start_i + count_i``
        (those with rank ``#{x < t_k} = i``); ``count`` as floats, the forward pass's "lengths"."""
        x = self._sorted(data)
        lo, hi = self.bounds
        cuts = np.concatenate(([0], grid_searchsorted(x, lo, hi, self.grid, "right"), [self.grid + 1]))
        return cuts[:-1], np.diff(cuts).astype(float), x.size

    def points(self, k):
        """The grid point(s) ``t_k``."""
        return grid_value(k, self.bounds[0], self.bounds[1], self.grid)

    def _targets(self, n: int) -> np.ndarray:
        w = np.diff(np.concatenate(([0.0], self.quantiles, [1.0])))
        return w * n

    def _log_phi_table(self, n: int) -> np.ndarray:
        """``log phi_j(g)`` for ``j = 0..m`` (rows) and ``g = 0..n``; computed per call, never kept."""
        g = np.arange(n + 1, dtype=float)
        return -self.rate * np.abs(g[None, :] - self._targets(n)[:, None])

    def _log_phi(self, j: int, n: int) -> np.ndarray:
        """``log phi_j(g)`` for ``g = 0..n`` (``j`` counts gaps from 0)."""
        return self._log_phi_table(n)[j]

    def _forward(self, lengths: np.ndarray, n: int):
        """Scaled forward weights ``A[j]`` of shape (n+1, m) and their log scales (``lengths``: the
        gaps' grid-point counts). Recomputed on every call: nothing derived from the data is kept."""
        m = self.quantiles.size
        log_len = _log(lengths)
        if not np.any(np.isfinite(log_len)):
            return None
        log_phi = self._log_phi_table(n)
        phi = np.exp(log_phi)
        kernel = phi.copy()
        kernel[:, 0] = 0.0  # a new run starts in a later gap: g >= 1
        run = lengths[:, None] / np.arange(2, m + 1)[None, :]  # c / r: the r-th output of a run in a gap
        A, scales = [], []
        a = np.zeros((n + 1, m))
        first = log_phi[0] + log_len  # i_0 = 0: gap count is i_1
        nz = np.flatnonzero(lengths > 0)  # only these gaps can hold an output
        # the new-run sums: directly on small data; over the gaps with grid points when they are few (ties,
        # integer features: the FFT cannot resolve weights hundreds of orders apart); else by FFT
        sparse = n + 1 > _DIRECT_MAX and nz.size <= _DIRECT_MAX
        gap_steps = np.maximum(nz[:, None] - nz[None, :], 0) if sparse else None  # i - i' (0: weight 0)
        s = np.max(first)
        a[:, 0] = np.exp(first - s)
        A.append(a)
        scales.append(s)
        for j in range(1, m):
            prev = A[-1]
            total = prev.sum(axis=1)  # over run positions
            # new run: sum_{i' < i} total[i'] * phi(i - i')
            if n + 1 <= _DIRECT_MAX:
                conv = np.convolve(total, kernel[j])[: n + 1]  # sums of non-negative terms
            elif sparse:  # the same sums, over the gaps that hold grid points only
                conv = np.zeros(n + 1)
                conv[nz] = kernel[j][gap_steps] @ total[nz]
            else:
                conv = fftconvolve(total, kernel[j])[: n + 1]
                # FFT rounding (about 1e-13 of the largest term) leaves noise where the sum is exactly 0, e.g.
                # behind gaps with no grid point; the backward pass would then draw a state no predecessor can
                # reach. Values under the FFT's resolution are set to 0 (negatives included), and a new run
                # never starts in the first gap.
                conv[conv < _FFT_FLOOR * conv.max()] = 0.0
                conv[0] = 0.0
            a = np.empty((n + 1, m))
            np.multiply(conv, lengths, out=a[:, 0])
            np.multiply(prev[:, :-1], phi[j, 0] * run, out=a[:, 1:])
            s = a.max()
            if not s > 0:
                return None
            a /= s
            A.append(a)
            scales.append(scales[-1] + math.log(s))
        return A, scales

    def log_normaliser(self, data) -> float:
        """``log W = log of the integral of exp(epsilon u(o) / (2 Delta))`` over the ordered region."""
        _, lengths, n = self._prepare(data)
        fw = self._forward(lengths, n)
        if fw is None:
            return -math.inf
        A, scales = fw
        return float(logsumexp(_last_gap_log_weights(A, self._log_phi(self.quantiles.size, n))) + scales[-1])

    def utility(self, output, data) -> float:
        """``u(o)`` of the definition (gap counts use half-open ``[o_{j-1}, o_j)``)."""
        x = self._sorted(data)
        n = x.size
        o = np.asarray(output, dtype=float)
        cuts = np.concatenate(([self.bounds[0]], o, [self.bounds[1]]))
        below = np.searchsorted(x, cuts, side="left")  # #{x < c}
        counts = np.diff(below)
        counts[-1] += np.sum(x == self.bounds[1])  # the last gap is closed at b
        return float(-np.sum(np.abs(counts - self._targets(n))))

    def logpmf(self, output, data) -> float:
        """Exact log-probability of a sorted vector of grid points (``-inf`` for anything else):
        ``rate u(o) - sum_v log(mult_o(v)!) - log W`` (module docstring, "Public grid")."""
        o = np.asarray(output, dtype=float)
        lo, hi = self.bounds
        if o.shape != self.quantiles.shape or np.any(np.diff(o) < 0) or o[0] < lo or o[-1] > hi:
            return -math.inf
        if lo < hi and any(grid_index(v, lo, hi, self.grid) < 0 for v in o):
            return -math.inf
        _, mult = np.unique(o, return_counts=True)
        base = -sum(math.lgamma(k + 1) for k in mult)
        return self.rate * self.utility(o, data) + base - self.log_normaliser(data)

    log_law = logpmf
    logpdf = logpmf  # the former name (a density before the grid), kept for callers

    def critical_outputs(self, d0, d1) -> list:
        """The log-ratio ``rate (u0(o) - u1(o)) - log W0 + log W1`` depends on each ``o_j`` only
        through its ranks under ``d0`` and ``d1`` (the multiset factor cancels), which are constant
        between consecutive grid cuts of the two datasets: every sorted ``m``-tuple of one grid
        point per piece carries every value of the log-ratio (for tiny inputs: the count is
        ``C(pieces + m - 1, m)``)."""
        import itertools

        lo, hi = self.bounds
        cuts = [grid_searchsorted(self._sorted(d), lo, hi, self.grid, "right") for d in (d0, d1)]
        starts = np.unique(np.concatenate(([0], cuts[0], cuts[1])))
        reps = self.points(starts[starts <= self.grid])
        return [np.array(t) for t in itertools.combinations_with_replacement(reps.tolist(), self.quantiles.size)]

    def privacy_map(self, d_in: float) -> float:
        """Utility sensitivity ``Delta`` per neighbouring step gives loss ``epsilon * d_in``."""
        return float(d_in) * self.epsilon

    # ------------------------------------------------------------------ sampling
    def _sample_intervals(self, fw, n, rng, log_phi=None) -> np.ndarray:
        """Backward pass over the forward pass ``fw``: the last (interval, run position), then each
        predecessor given its successor (``log_phi``: :meth:`_log_phi_table`). The interval draws combine
        the forward weights with ``phi`` in log space: ``phi`` underflows for large gaps on large data."""
        m = self.quantiles.size
        if fw is None:
            return None
        A, _ = fw
        log_phi = self._log_phi_table(n) if log_phi is None else log_phi
        i = _draw_log(_last_gap_log_weights(A, log_phi[m]), rng)
        r = _draw(A[-1][i], rng)
        idx = np.empty(m, dtype=np.int64)
        idx[m - 1] = i
        for j in range(m - 1, 0, -1):
            if r > 0:  # continuing a run: the previous output is in the same interval
                r -= 1
            else:  # a new run: the previous output is in an earlier interval i' < i
                prev = A[j - 1][:i]
                i = _draw_log(_log(prev.sum(axis=1)) + log_phi[j, i:0:-1], rng)  # phi_j(i - i'), i' = 0..i-1
                r = _draw(prev[i], rng)
            idx[j - 1] = i
        return idx

    def sample(self, data, rng) -> np.ndarray:
        """One sorted vector of ``m`` private quantiles, grid points (module docstring)."""
        return self.batch(data, 1, rng)[0]

    __call__ = sample

    def batch(self, data, n_samples: int, rng) -> np.ndarray:
        """``n_samples`` independent draws on one dataset, shape ``(n_samples, m)``: the forward
        pass is computed once per call (and dropped after it), the backward pass per draw."""
        check_generator(rng)
        start, count, n = self._prepare(data)
        fw = self._forward(count, n)
        log_phi = self._log_phi_table(n)
        out = np.empty((int(n_samples), self.quantiles.size))
        for s in range(out.shape[0]):
            idx = self._sample_intervals(fw, n, rng, log_phi)
            if idx is None:  # pragma: no cover - every grid has a gap with grid points
                out[s] = self.bounds[0]
                continue
            out[s] = np.sort(self.points(start[idx] + rng.integers(0, count[idx].astype(np.int64))))
        return out


def joint_exp_quantiles(x, quantiles, bounds, epsilon, rng, sensitivity: float = 2.0,
                        grid: int = DEFAULT_GRID) -> np.ndarray:
    """Convenience: one draw of :class:`JointExp` (see there)."""
    return JointExp(epsilon, quantiles, bounds, sensitivity, grid).sample(x, rng)


# --------------------------------------------------------------------------- many draws at once (the batched paths)
def _draw_rows(weights: np.ndarray, rng) -> np.ndarray:
    """One index per row with probability proportional to the row's non-negative weights, by
    inverting the cumulative sum as :func:`_draw` does (``searchsorted`` on the right)."""
    c = np.cumsum(weights, axis=1)
    u = rng.random(c.shape[0]) * c[:, -1]
    k = np.count_nonzero(c <= u[:, None], axis=1)
    return np.minimum(k, c.shape[1] - 1)


def joint_exp_batch(mech: JointExp, data, n: int, rng) -> np.ndarray:
    """``n`` independent draws of ``mech.sample(data, rng)``, shape ``(n, m)``, each row sorted.

    The forward pass of :class:`JointExp` (exact partial sums of the
    interval-sequence weights) is a function of the data alone, so it is computed once; the
    backward pass, which samples the last (interval, run position) and then each predecessor
    given its successor, runs for all ``n`` draws at once; each output is then a uniform grid
    point of its interval (exact integers) and the row is sorted (Gillenwater et al. 2021,
    section 3; spec 2.4; the public grid of this module).
    """
    check_generator(rng)
    start, lengths, N = mech._prepare(data)
    m = mech.quantiles.size
    fw = mech._forward(lengths, N)
    if fw is None:  # pragma: no cover - every grid has a gap with grid points
        return np.full((n, m), mech.bounds[0])
    A, _ = fw
    last = np.exp(mech._log_phi(m, N)[::-1])  # phi_{m+1}(N - i)
    i = _draw_rows((A[-1].sum(axis=1) * last)[None, :].repeat(n, axis=0), rng)
    r = _draw_rows(A[-1][i], rng)
    idx = np.empty((n, m), dtype=np.int64)
    idx[:, m - 1] = i
    ip = np.arange(N + 1)
    for j in range(m - 1, 0, -1):
        cont = r > 0  # continuing a run: the previous output is in the same interval
        r = np.where(cont, r - 1, r)
        new = np.flatnonzero(~cont)  # a new run: the previous output is in an earlier interval i' < i
        if new.size:
            prev = A[j - 1]
            phi = np.exp(mech._log_phi(j, N))  # phi_j(g), g = 0..N
            g = i[new][:, None] - ip[None, :]
            w = np.where(g > 0, prev.sum(axis=1)[None, :] * phi[np.clip(g, 0, N)], 0.0)
            i_new = _draw_rows(w, rng)
            i[new] = i_new
            r[new] = _draw_rows(prev[i_new], rng)
        idx[:, j - 1] = i
    return np.sort(mech.points(start[idx] + rng.integers(0, lengths[idx].astype(np.int64))), axis=1)
