"""JointExp: differentially private quantiles of bounded data, sampled jointly.

Gillenwater, Joseph, Kulesza, "Differentially Private Quantiles", ICML 2021,
as defined in ``spec/privatree.md`` section 2.4 (PrivaTree, seed
Vos et al. 2023, section IV-B, uses it to place its bin edges).
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
outputs are sorted. Only the ``K <= min(n + 1, M + 1)`` gaps that hold grid
points are states.

Log space end to end (issue 26)
-------------------------------
On tied or low-cardinality data one step's factor ``phi_j(g)`` is below the
smallest double once ``rate |g - t_j| > 745`` (a 0/1 feature at 30,000
records), and weights that matter at the end are hundreds of orders of
magnitude apart at an intermediate level. Every weight of the forward pass,
the normaliser, ``logpmf`` and every backward draw is therefore held as a
split logarithm (integer part plus fraction, :mod:`reference.mechanisms.logspace`):
nothing underflows, and no branch falls back to a default output. The new-run
sums ``sum_{i' < i} T(i') phi_j(i - i')`` split at ``g = floor(t_j)``: the
falling part ``g > t_j`` is a decaying prefix and the rising part
``1 <= g <= t_j`` a window of growing weights, both computed by doubling scans
of depth ``O(log2 K)`` (Hillis and Steele 1986). Cost: ``O(m K log K)``.

Residual delta
--------------
Each split-log operation adds at most ``OP_ERROR = 16 * 2**-53`` to the
absolute error of the log it produces, whatever the size of the weight
(:mod:`reference.mechanisms.logspace`), and errors pass through ``logaddexp``
as convex combinations, so the error of a log is bounded by its depth. One
level of the forward pass has depth at most ``6 ceil(log2 (M + 2)) + m + 8``
(the two scans, the window query, the run positions' sum); the last weights
and the normaliser add 4. Hence every log weight the sampler uses is within
``eta = OP_ERROR (m (6 ceil(log2 (M + 2)) + m + 8) + 4)`` of the exact one
(:meth:`JointExp.log_error`), each of the at most ``2m`` conditional draws has
relative error at most ``e^{2 (eta + 2 OP_ERROR)} - 1``, and the law of the
whole draw differs from the exact law by at most
``rho = e^{4 m (eta + 2 OP_ERROR)} - 1`` in total variation. With the
inverse-CDF rounding of each draw (:func:`reference.mechanisms.grid.selection_delta`)::

    residual_delta = 2m * selection_delta(M + 1, epsilon, ln(M + 1)) + (1 + e^epsilon) * rho

a function of the public ``epsilon``, ``m`` and ``M`` only, valid for every data
size (no magnitude enters the bound). For ``m = 9``, ``M = 2**16`` and
``epsilon = 1``: about ``5.1e-8``, of which ``rho`` contributes ``2.6e-10``.
The targets ``t_j = (q_j - q_{j-1}) n`` are doubles; their rounding moves the
utility's add/remove sensitivity by at most ``2 (m + 1) (n + 1) 2**-53``, inside
the slack ``2 min_j (q_j - q_{j-1})`` of ``Delta = 2`` for every level spacing
above ``1e-8`` with fewer than ``10**6`` records, or above ``1e-6`` with fewer than ``10**8``.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from reference.mechanisms import logspace as ls
from reference.mechanisms.grid import (
    DEFAULT_GRID,
    check_grid,
    grid_index,
    grid_searchsorted,
    grid_value,
    selection_delta,
)
from reference.validation import check_generator, check_positive_finite, shown

__all__ = ["JointExp", "joint_exp_quantiles", "joint_exp_batch"]

def _draw(weights: np.ndarray, rng) -> int:
    """An index drawn with probability proportional to the non-negative ``weights`` (inverse CDF)."""
    c = np.cumsum(weights)
    k = int(np.searchsorted(c, rng.random() * c[-1], side="right"))
    return min(k, c.size - 1)


def _draw_split(log_weights: ls.Split, rng) -> int:
    """An index drawn with probability proportional to the weights held as split logs."""
    return _draw(np.exp(ls.exponents(log_weights)), rng)


def _check_levels(quantiles) -> np.ndarray:
    q = np.asarray(quantiles, dtype=float)
    if q.ndim != 1 or q.size == 0 or not np.all(np.isfinite(q)):
        raise ValueError(f"quantiles must be a non-empty 1-D sequence of finite levels, got {shown(quantiles)}")
    if np.any(q <= 0) or np.any(q >= 1) or np.any(np.diff(q) <= 0):
        raise ValueError(f"quantiles must be strictly increasing levels in (0, 1), got {shown(quantiles)}")
    return q


def _check_bounds(bounds) -> tuple[float, float]:
    try:
        lo, hi = (float(v) for v in bounds)
    except (TypeError, ValueError):
        raise ValueError(f"bounds must be a (low, high) pair, got {shown(bounds)}") from None
    if not (math.isfinite(lo) and math.isfinite(hi) and lo <= hi):
        raise ValueError(f"bounds must be finite with low <= high, got {shown(bounds)}")
    return lo, hi


class _Forward(NamedTuple):
    """The forward pass on the ``K`` gaps that hold grid points: their indices ``gaps`` (the
    states' positions ``i``), and per level ``j`` the split log weights ``A[j]`` (shape ``(K, m)``:
    run positions) and ``T[j]`` (their sum over run positions)."""

    gaps: np.ndarray
    A: list
    T: list


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
    PrivaTree (Vos et al. 2023), Algorithm 1 lines 3-5.
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
        """Floating-point residual delta of one call (module docstring, "Residual delta"): a function
        of the public ``epsilon``, ``m`` and ``M`` only, the same for every data size."""
        m, M = self.quantiles.size, self.grid
        per_draw = selection_delta(M + 1, self.epsilon, math.log(M + 1))
        rho = math.expm1(4 * m * (self.log_error() + 2 * ls.OP_ERROR))
        return min(2 * m * per_draw + (1.0 + math.exp(min(self.epsilon, 700.0))) * rho, 1.0 - 2.0 ** -53)

    def log_error(self) -> float:
        """Bound on the absolute error of every log weight of the forward pass (module docstring):
        ``OP_ERROR`` times the depth ``m (6 ceil(log2 (M + 2)) + m + 8) + 4``."""
        m = self.quantiles.size
        return ls.OP_ERROR * (m * (6 * ls.doubling_depth(self.grid + 2) + m + 8) + 4)

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
        """``t_j = (q_j - q_{j-1}) n`` for ``j = 0..m`` (doubles: the mechanism's definition)."""
        w = np.diff(np.concatenate(([0.0], self.quantiles, [1.0])))
        return w * n

    def _log_phi(self, j: int, g, n: int) -> ls.Split:
        """``log phi_j(g) = -rate |g - t_j|`` (``j`` counts gaps from 0) as split logs, exact but for
        one rounding of the fraction."""
        return ls.rate_abs_gap(self.rate, g, float(self._targets(n)[j]))

    def _new_runs(self, total: ls.Split, pos: np.ndarray, j: int, n: int) -> ls.Split:
        """``log sum_{k' < k} exp(total[k'] + log phi_j(pos[k] - pos[k']))`` for every ``k``: a new run
        starts in a later gap. The kernel ``-rate |g - t|`` rises up to ``g = floor(t)`` and falls
        after, so the sum splits into a window of growing weights (:func:`logspace.growth_window`)
        and a prefix of decaying ones (:func:`logspace.decay_prefix`), both in log space."""
        t = float(self._targets(n)[j])
        T0 = int(math.floor(t))
        K = pos.size
        # falling part: g = pos[k] - pos[k'] >= T0 + 1 (> t), weight exp(-rate (g - t))
        E = ls.decay_prefix(total, pos, self.rate)
        hi = np.searchsorted(pos, pos - T0 - 1, side="right") - 1
        ok = hi >= 0
        h = np.where(ok, hi, 0)
        fall = ls.add(E[h], self._log_phi(j, pos - pos[h], n))
        fall = ls.Split(np.where(ok, fall.i, -np.inf), np.where(ok, fall.f, 0.0))
        # rising part: 1 <= g <= T0, weight exp(-rate (t - g)) = exp(rate g) exp(-rate t)
        lo = np.searchsorted(pos, pos - T0, side="left")
        rise = ls.growth_window(total, pos, self.rate, np.arange(K) - lo)
        rise = ls.add(rise, ls.neg(ls.rate_times(self.rate, np.full(K, t))))
        return ls.lae(fall, rise)

    def _forward(self, count: np.ndarray, n: int) -> _Forward:
        """Forward pass in log space over the gaps with grid points (``count``: the gaps' grid-point
        counts). Recomputed on every call: nothing derived from the data is kept."""
        m = self.quantiles.size
        gaps = np.flatnonzero(count > 0)
        if gaps.size == 0:  # pragma: no cover - the grid's M + 1 points always lie in some gap
            raise RuntimeError(f"JointExp: no gap of the grid holds a grid point (n = {n} records)")
        pos = gaps.astype(float)
        log_len = ls.split(np.log(count[gaps]))
        # the r-th output (r = 2..m) of a run in a gap of c grid points: c / r
        run = ls.split(np.log(count[gaps])[:, None] - np.log(np.arange(2, m + 1))[None, :])
        K = gaps.size
        a0 = ls.add(self._log_phi(0, pos, n), log_len)  # i_0 = 0: the first gap count is i_1
        A = [ls.Split(np.column_stack([a0.i] + [np.full(K, -np.inf)] * (m - 1)),
                      np.column_stack([a0.f] + [np.zeros(K)] * (m - 1)))]
        T = [a0]
        for j in range(1, m):
            prev = A[-1]
            first = ls.add(self._new_runs(T[-1], pos, j, n), log_len)
            stay = ls.add(prev[:, :-1], ls.add(run, self._log_phi(j, np.zeros((1, 1)), n)))
            a = ls.Split(np.column_stack((first.i, stay.i)), np.column_stack((first.f, stay.f)))
            A.append(a)
            T.append(ls.lse_rows(a))
        return _Forward(gaps, A, T)

    def _last_weights(self, fw: _Forward, n: int) -> ls.Split:
        """Split log weight of each gap holding the last output: its forward total times
        ``phi_{m+1}(n - i)``."""
        return ls.add(fw.T[-1], self._log_phi(self.quantiles.size, n - fw.gaps, n))

    def log_normaliser(self, data) -> float:
        """``log W = log of the integral of exp(epsilon u(o) / (2 Delta))`` over the ordered region
        (on the grid: the sum of the law's unnormalised masses); finite on every input."""
        return float(self._log_normaliser_split(data).value()[0])

    def _log_normaliser_split(self, data) -> ls.Split:
        _, count, n = self._prepare(data)
        fw = self._forward(count, n)
        w = self._last_weights(fw, n)
        return ls.lse_all(w)

    def _gap_counts(self, output, x) -> np.ndarray:
        """Counts of the sorted data ``x`` in ``[o_{j-1}, o_j)`` (the last gap closed at ``b``)."""
        cuts = np.concatenate(([self.bounds[0]], np.asarray(output, dtype=float), [self.bounds[1]]))
        below = np.searchsorted(x, cuts, side="left")  # #{x < c}
        counts = np.diff(below)
        counts[-1] += np.sum(x == self.bounds[1])
        return counts

    def utility(self, output, data) -> float:
        """``u(o)`` of the definition (gap counts use half-open ``[o_{j-1}, o_j)``)."""
        x = self._sorted(data)
        return float(-np.sum(np.abs(self._gap_counts(output, x) - self._targets(x.size))))

    def logpmf(self, output, data) -> float:
        """Exact log-probability of a sorted vector of grid points (``-inf`` for anything else):
        ``rate u(o) - sum_v log(mult_o(v)!) - log W`` (module docstring, "Public grid"), formed in
        split logs so that it stays finite and accurate when ``rate u(o)`` and ``log W`` are both
        thousands of units below zero."""
        o = np.asarray(output, dtype=float)
        lo, hi = self.bounds
        if o.shape != self.quantiles.shape or np.any(np.diff(o) < 0) or o[0] < lo or o[-1] > hi:
            return -math.inf
        if lo < hi and any(grid_index(v, lo, hi, self.grid) < 0 for v in o):
            return -math.inf
        _, mult = np.unique(o, return_counts=True)
        x = self._sorted(data)
        counts = self._gap_counts(o, x)
        t = self._targets(x.size)
        total = ls.split(np.array([-sum(math.lgamma(k + 1) for k in mult)]))
        for j in range(counts.size):
            total = ls.add(total, ls.rate_abs_gap(self.rate, np.array([counts[j]]), float(t[j])))
        return float(ls.add(total, ls.neg(self._log_normaliser_split(data))).value()[0])

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
    def _new_run_weights(self, fw: _Forward, j: int, k: int, n: int) -> ls.Split:
        """Split log weight of each earlier gap ``k' < k`` holding output ``j - 1`` when output ``j``
        starts a run in gap ``k``: ``T[j-1][k'] + log phi_j(i_k - i_k')``."""
        return ls.add(fw.T[j - 1][:k], self._log_phi(j, fw.gaps[k] - fw.gaps[:k], n))

    def _sample_states(self, fw: _Forward, n: int, rng) -> np.ndarray:
        """Backward pass: the last (gap, run position), then each predecessor given its successor;
        every draw from split logs (:func:`_draw_split`). Returns the gaps' positions in ``fw``."""
        m = self.quantiles.size
        k = _draw_split(self._last_weights(fw, n), rng)
        r = _draw_split(fw.A[-1][k], rng)
        out = np.empty(m, dtype=np.int64)
        out[m - 1] = k
        for j in range(m - 1, 0, -1):
            if r > 0:  # continuing a run: the previous output is in the same gap
                r -= 1
            else:  # a new run: the previous output is in an earlier gap
                k = _draw_split(self._new_run_weights(fw, j, k, n), rng)
                r = _draw_split(fw.A[j - 1][k], rng)
            out[j - 1] = k
        return out

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
        out = np.empty((int(n_samples), self.quantiles.size))
        for s in range(out.shape[0]):
            gap = fw.gaps[self._sample_states(fw, n, rng)]
            out[s] = np.sort(self.points(start[gap] + rng.integers(0, count[gap].astype(np.int64))))
        return out


def joint_exp_quantiles(x, quantiles, bounds, epsilon, rng, sensitivity: float = 2.0,
                        grid: int = DEFAULT_GRID) -> np.ndarray:
    """Convenience: one draw of :class:`JointExp` (see there)."""
    return JointExp(epsilon, quantiles, bounds, sensitivity, grid).sample(x, rng)


# --------------------------------------------------------------------------- many draws at once (the batched paths)
def _draw_rows(log_weights: ls.Split, rng) -> np.ndarray:
    """One index per row with probability proportional to the row's weights (split logs), by
    inverting the cumulative sum as :func:`_draw` does (``searchsorted`` on the right)."""
    i, f = log_weights
    top = np.argmax(i + f, axis=1)  # zero weights are -inf: never the top of a row with a positive weight
    rows = np.arange(i.shape[0])
    with np.errstate(invalid="ignore"):
        e = (i - i[rows, top][:, None]) + (f - f[rows, top][:, None])
    c = np.cumsum(np.exp(e), axis=1)
    u = rng.random(c.shape[0]) * c[:, -1]
    k = np.count_nonzero(c <= u[:, None], axis=1)
    return np.minimum(k, c.shape[1] - 1)


#: the batched backward pass tabulates every pair of gaps' new-run weights when ``K * K`` is at most this
_TABLE_MAX = 1 << 16


def _new_run_table(mech: JointExp, fw: _Forward, j: int, N: int) -> ls.Split:
    """``(K, K)`` split logs: row ``k``, column ``k'`` is the weight of output ``j - 1`` in gap ``k'``
    when output ``j`` starts a run in gap ``k`` (zero unless ``k' < k``)."""
    K = fw.gaps.size
    w = ls.add(ls.Split(np.broadcast_to(fw.T[j - 1].i, (K, K)), np.broadcast_to(fw.T[j - 1].f, (K, K))),
               mech._log_phi(j, fw.gaps[:, None] - fw.gaps[None, :], N))
    earlier = np.tri(K, K, -1, dtype=bool)
    return ls.Split(np.where(earlier, w.i, -np.inf), np.where(earlier, w.f, 0.0))


def joint_exp_batch(mech: JointExp, data, n: int, rng) -> np.ndarray:
    """``n`` independent draws of ``mech.sample(data, rng)``, shape ``(n, m)``, each row sorted.

    The forward pass of :class:`JointExp` (split-log partial sums of the interval-sequence
    weights) is a function of the data alone, so it is computed once; the backward pass, which
    samples the last (gap, run position) and then each predecessor given its successor, runs for
    all ``n`` draws at once from the same split logs; each output is then a uniform grid point of
    its gap (exact integers) and the row is sorted (Gillenwater et al. 2021, section 3; the
    public grid of this module).
    """
    check_generator(rng)
    start, count, N = mech._prepare(data)
    m = mech.quantiles.size
    fw = mech._forward(count, N)
    K = fw.gaps.size
    last = mech._last_weights(fw, N)
    k = _draw_rows(ls.Split(np.broadcast_to(last.i, (n, K)), np.broadcast_to(last.f, (n, K))), rng)
    r = _draw_rows(fw.A[-1][k], rng)
    out = np.empty((n, m), dtype=np.int64)
    out[:, m - 1] = k
    cols = np.arange(K)
    tables: dict = {}  # per call only: dropped with the forward pass
    for j in range(m - 1, 0, -1):
        cont = r > 0  # continuing a run: the previous output is in the same gap
        r = np.where(cont, r - 1, r)
        new = np.flatnonzero(~cont)  # a new run: the previous output is in an earlier gap
        if new.size:
            kn = k[new]
            if K * K <= _TABLE_MAX:  # few gaps: every pair's new-run weight once, then rows by index
                table = tables.get(j)
                if table is None:
                    table = tables[j] = _new_run_table(mech, fw, j, N)
                w = table[kn]
            else:
                w = ls.add(ls.Split(np.broadcast_to(fw.T[j - 1].i, (new.size, K)),
                                    np.broadcast_to(fw.T[j - 1].f, (new.size, K))),
                           mech._log_phi(j, fw.gaps[kn][:, None] - fw.gaps[None, :], N))
                earlier = cols[None, :] < kn[:, None]
                w = ls.Split(np.where(earlier, w.i, -np.inf), np.where(earlier, w.f, 0.0))
            k_new = _draw_rows(w, rng)
            k[new] = k_new
            r[new] = _draw_rows(fw.A[j - 1][k_new], rng)
        out[:, j - 1] = k
    gap = fw.gaps[out]
    return np.sort(mech.points(start[gap] + rng.integers(0, count[gap].astype(np.int64))), axis=1)
