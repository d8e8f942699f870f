"""The exact loss of DiPriMe's regression leaves (issue 29): the strict noisy-sum-over-noisy-count leaf and the
papers' count-scaled leaf.

**Strict leaf** (:meth:`reference.diprime.grower.TreeGrower.leaf`, spec A7; V003 section 3 with the strict
accounting): each record is put in whole units of the lattice Laplace's public grid ``g`` (clamped to
``U = ceil(half / g)``), the units are summed (``c``) and released as ``S = c + DLap`` (scale ``U / (eps_l / 2)``
in units, :class:`reference.mechanisms.Laplace`), the count as ``N = n + geometric`` (``eps_l / 2``,
:class:`reference.mechanisms.TwoSidedGeometric`); the leaf releases ``clip(centre + S g / max(N, 1), lo, hi)``
rounded to 6 decimals. The value is post-processing of ``(S, N)``, so its loss is at most the analytic
``rate_S |c - c'| + rate_N |n - n'|`` (upper end). The lower end is the largest ``ln P0(r) / P1(r)`` over a few
released values ``r`` (the clip ends and the values of the two datasets' own atoms), each probability bounded
by the event ``{S g / max(N, 1) in W}`` with the rounding window ``W`` of ``r`` shrunk (lower) or widened
(upper) by ``ETA`` against float rounding; the noisy counts are summed up to a cut-off whose tail mass is added
to the upper probability. The interval is honest but not tight: the worst value of ``(S, N)`` need not be one
released value.

**Count-scaled leaf** (:class:`reference.diprime.mechanisms.CountScaledLeafMean`, the papers' accounting, V003
section 3 and V000 section 3, not DP: spec section 2.4 (ii) and A7): ``clip(mean + Laplace(S / (N eps_l)), lo, hi)``, ``Uniform(lo, hi)`` for an empty leaf, rounded to 6
decimals. A released value's probability is that of its rounding window under the (real-valued) mixed law,
closed form from the Laplace CDF. Upper end: a window inside ``(lo, hi)`` has probability ratio at most the
density ratio's supremum there (its logarithm is piecewise linear: the supremum is at ``lo``, ``hi`` or a
mean); the two end windows (an atom plus a sliver of density) are computed. Lower end: the end windows and
the window around the density ratio's argmax. The float sampler (``rng.laplace``) is taken as the real law.
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

__all__ = ["strict_leaf_terms", "strict_window_prob", "count_scaled_leaf_terms", "count_scaled_window_prob",
           "ETA", "TAIL"]

#: slack on a rounding window's ends for the float evaluation of the leaf value (far above its error)
ETA = 1e-9
#: mass of the noisy count left out of the sums (added to the upper probabilities)
TAIL = 1e-15
_HALF = 5e-7  # half a unit of the 6th decimal


def _dlap_interval(a: float, b: float, rate: float) -> float:
    """``P(Z in [a, b])`` for integers ``a <= b`` (``+-inf`` allowed), ``Z`` discrete Laplace with rate ``rate``."""
    if b < a:
        return 0.0
    q = math.exp(-rate)

    def upper_tail(k):  # P(Z >= k), k > 0
        return math.exp(-rate * k) / (1.0 + q)

    if a > 0:
        return upper_tail(a) - (upper_tail(b + 1) if math.isfinite(b) else 0.0)
    if b < 0:
        return upper_tail(-b) - (upper_tail(-a + 1) if math.isfinite(a) else 0.0)
    lo = upper_tail(-a + 1) if math.isfinite(a) else 0.0
    hi = upper_tail(b + 1) if math.isfinite(b) else 0.0
    return 1.0 - lo - hi


@lru_cache(maxsize=1 << 16)
def strict_window_prob(c: int, n: int, wlo: float, whi: float, rate_s: float, rate_n: float, g: float) -> tuple:
    """``(p, tail)``: ``P(S g / max(N, 1) in [wlo, whi])`` summed over ``N <= n + cut`` (``p``), and a bound on the
    mass of ``N`` above the cut (``tail``), for ``S = c + DLap(rate_s)`` and ``N = n + DLap(rate_n)``."""
    cut = max(1, math.ceil(-math.log(TAIL) / rate_n))
    p = []

    def s_range(m):
        a = math.ceil(wlo * m / g) if math.isfinite(wlo) else -math.inf
        b = math.floor(whi * m / g) if math.isfinite(whi) else math.inf
        return _dlap_interval(a - c, b - c, rate_s)

    p.append(_dlap_interval(-math.inf, 1 - n, rate_n) * s_range(1))  # N <= 1: divided by 1
    log_norm = math.log(-math.expm1(-rate_n)) - math.log1p(math.exp(-rate_n))
    for m in range(2, n + cut + 1):
        p.append(math.exp(log_norm - rate_n * abs(m - n)) * s_range(m))
    return math.fsum(p), _dlap_interval(cut + 1, math.inf, rate_n)


def _windows(r: float, centre: float, lo: float, hi: float) -> tuple:
    """``(inner, outer)`` windows of the offset ``S g / max(N, 1)`` whose value rounds to ``r``."""
    a, b = r - _HALF - centre, r + _HALF - centre
    inner = (-math.inf if r <= lo else a + ETA, math.inf if r >= hi else b - ETA)
    outer = (-math.inf if r <= lo else a - ETA, math.inf if r >= hi else b + ETA)
    return inner, outer


@lru_cache(maxsize=1 << 16)
def strict_leaf_terms(a0: tuple, a1: tuple, rate_s: float, rate_n: float, g: float, centre: float, lo: float,
                      hi: float) -> tuple:
    """``(up, up_lower, down, down_lower)`` of one strict regression leaf whose (units, count) are ``a0`` under D
    and ``a1`` under D' (module docstring)."""
    (c0, n0), (c1, n1) = a0, a1
    bound = rate_s * abs(c0 - c1) + rate_n * abs(n0 - n1)
    if bound == 0:
        return 0.0, 0.0, 0.0, 0.0
    rs = {round(lo, 6), round(hi, 6)}
    for c in (c0, c1):
        for n in (n0, n1):
            v = centre + c * g / max(n, 1)
            for k in (-1, 0, 1):
                rs.add(round(min(max(v + k * 1e-6, lo), hi), 6))
    lows = [0.0, 0.0]
    for r in sorted(rs):
        inner, outer = _windows(r, centre, lo, hi)
        p0 = strict_window_prob(c0, n0, *inner, rate_s, rate_n, g)[0]
        p1 = strict_window_prob(c1, n1, *inner, rate_s, rate_n, g)[0]
        q0 = sum(strict_window_prob(c0, n0, *outer, rate_s, rate_n, g))
        q1 = sum(strict_window_prob(c1, n1, *outer, rate_s, rate_n, g))
        if p0 > 0 and q1 > 0:
            lows[0] = max(lows[0], math.log(p0 / q1))
        if p1 > 0 and q0 > 0:
            lows[1] = max(lows[1], math.log(p1 / q0))
    return bound, min(lows[0], bound), bound, min(lows[1], bound)


# ------------------------------------------------------------------ the papers' count-scaled leaf
def _lap_cdf(x: float, mu: float, b: float) -> float:
    if x == math.inf:
        return 1.0
    if x == -math.inf:
        return 0.0
    z = (x - mu) / b
    return 0.5 * math.exp(z) if z < 0 else 1.0 - 0.5 * math.exp(-z)


def count_scaled_window_prob(stats: tuple, wlo: float, whi: float, numerator: float, eps: float, lo: float,
                             hi: float) -> float:
    """``P(leaf value in [wlo, whi])`` of the count-scaled leaf with ``stats = (N, mean)`` (module docstring)."""
    n, mean = stats
    if n == 0:
        return max(0.0, min(whi, hi) - max(wlo, lo)) / (hi - lo)
    b = numerator / (n * eps)
    a = -math.inf if wlo <= lo else wlo
    c = math.inf if whi >= hi else whi
    if a > c:
        return 0.0
    if a > mean:  # the upper tail: differences of small numbers
        return 0.5 * (math.exp(-(a - mean) / b) - (math.exp(-(c - mean) / b) if math.isfinite(c) else 0.0))
    if c < mean:
        return 0.5 * (math.exp((c - mean) / b) - (math.exp((a - mean) / b) if math.isfinite(a) else 0.0))
    return _lap_cdf(c, mean, b) - _lap_cdf(a, mean, b)


def _log_density(x: float, stats: tuple, numerator: float, eps: float, lo: float, hi: float) -> float:
    n, mean = stats
    if n == 0:
        return -math.log(hi - lo)
    b = numerator / (n * eps)
    return -math.log(2 * b) - abs(x - mean) / b


@lru_cache(maxsize=1 << 14)
def count_scaled_leaf_terms(s0: tuple, s1: tuple, numerator: float, eps: float, lo: float, hi: float) -> tuple:
    """``(up, up_lower, down, down_lower)`` of one count-scaled leaf with ``(N, mean)`` ``s0`` under D and ``s1``
    under D' (module docstring)."""
    if s0 == s1:
        return 0.0, 0.0, 0.0, 0.0
    kinks = [lo, hi] + [m for n, m in (s0, s1) if n > 0 and lo < m < hi]
    out = []
    for a, b in ((s0, s1), (s1, s0)):
        ratio = {x: _log_density(x, a, numerator, eps, lo, hi) - _log_density(x, b, numerator, eps, lo, hi)
                 for x in kinks}
        up = max(ratio.values())  # every window inside (lo, hi)
        x_star = max(ratio, key=ratio.get)
        low = -math.inf
        for r in {round(lo, 6), round(hi, 6), round(min(max(x_star, lo + 1e-6), hi - 1e-6), 6)}:
            inner, outer = _windows(r, 0.0, lo, hi)
            pa_in = count_scaled_window_prob(a, *inner, numerator, eps, lo, hi)
            pb_out = count_scaled_window_prob(b, *outer, numerator, eps, lo, hi)
            if r in (round(lo, 6), round(hi, 6)):  # an end window: computed, with its slack
                pa_out = count_scaled_window_prob(a, *outer, numerator, eps, lo, hi)
                pb_in = count_scaled_window_prob(b, *inner, numerator, eps, lo, hi)
                up = max(up, math.log(pa_out / pb_in) if pb_in > 0 else math.inf)
            if pa_in > 0:
                low = max(low, math.log(pa_in / pb_out) if pb_out > 0 else math.inf)
        out += [up, min(max(low, 0.0), up)]
    return tuple(out)
