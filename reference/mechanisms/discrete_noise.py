"""Exact samplers of the discrete Laplace (two-sided geometric) law.

The law ``DLap(b)`` on the integers has ``P(k) = (1 - a) / (1 + a) * a^|k|`` with
``a = exp(-1 / b)``. It is sampled here exactly, with no tail truncation: the
output's law is the stated one, not an approximation at 2**-53.

Two exact samplers:

* :func:`discrete_laplace` (used by the mechanisms): the difference of two
  geometric draws, each by inverting the exact CDF, ``Y = floor(-ln(U) b)``,
  with ``U`` an infinite string of random bits read lazily (:func:`geometric`).
  Double precision decides the floor whenever the interval of ``U`` given its
  first 64 bits, widened by a proven error margin, holds one integer part; the
  rare other draws are decided exactly with more bits and bracketed ``exp``
  values. One vectorised pass: within a small factor of numpy's own geometric.
* :func:`discrete_laplace_cks`: Canonne, Kamath and Steinke (2020),
  Algorithms 1 and 2, where every random decision compares an exact uniform
  integer (:func:`uniform_below`) with an integer threshold; rounds of
  rejection, several times slower. Kept as an independent implementation of
  the same law, against which the first is tested.

The scale must be rational, ``b = t / s``: :func:`rational_scale` rounds a real
scale *up* to such a rational with a power-of-two denominator, so the
privacy that the sampled law actually gives is never less than the one claimed
(a larger scale is more noise). Both samplers are deterministic functions of
the generator's state.

References
----------
Canonne, Kamath, Steinke (2020), "The Discrete Gaussian for Differential
Privacy", NeurIPS; Algorithm 1 (Bernoulli(exp(-gamma)) for rational gamma) and
Algorithm 2 (discrete Laplace with scale t/s).
Inusah and Kozubowski (2006), "A discrete analogue of the Laplace
distribution": the difference of two i.i.d. geometric variables.
"""
from __future__ import annotations

import decimal
import math
from fractions import Fraction

import numpy as np

from reference.validation import shown

__all__ = ["rational_scale", "uniform_below", "bernoulli_exp", "geometric", "discrete_laplace", "discrete_laplace_cks",
           "DiscreteLaplaceLaw", "SCALE_BITS", "MARGIN_BITS"]

#: the rounded-up scale ``t / s`` is within a relative ``2**-SCALE_BITS`` of the requested one
SCALE_BITS = 30


def rational_scale(scale) -> tuple[int, int]:
    """``(t, s)`` with ``t / s >= scale``, ``s`` a power of two and ``t / s - scale <= scale * 2**-SCALE_BITS``.

    Parameters
    ----------
    scale : float, int or Fraction
        A positive finite scale; converted to a fraction exactly (a float is a dyadic rational).

    Returns
    -------
    (t, s) : tuple of int
        Numerator and power-of-two denominator, ``t >= 2**SCALE_BITS``.
    """
    exact = Fraction(scale)
    if not exact > 0 or (isinstance(scale, float) and not math.isfinite(scale)):
        raise ValueError(f"scale must be positive and finite, got {shown(scale)}")
    # s = 2^k with scale * s >= 2^SCALE_BITS, so rounding t up moves the scale by <= 2^-SCALE_BITS relative
    k = max(0, SCALE_BITS - math.floor(math.log2(exact.numerator) - math.log2(exact.denominator)) + 1)
    s = 1 << k
    t = math.ceil(exact * s)
    return int(t), int(s)


_TWO64 = 1 << 64


def uniform_below(high: int, size: int, rng) -> np.ndarray:
    """``size`` exact uniform integers on ``{0, ..., high - 1}`` from the generator's raw 64-bit words.

    The same law as ``rng.integers(0, high, size)`` (with a few microseconds less overhead per call, which
    the many small rounds of the samplers below pay): a word ``x`` is kept when ``x < 2**64 - (2**64 mod
    high)``, a multiple of ``high``, and mapped to ``x mod high``; rejected words (probability below
    ``high / 2**64``) are redrawn. A power-of-two ``high`` takes the low bits. Deterministic in the
    generator's state.
    """
    high = int(high)
    if not 1 <= high < _TWO64:
        raise ValueError(f"high must be in [1, 2**64), got {shown(high)}")
    x = rng.bit_generator.random_raw(size)
    if high & (high - 1) == 0:
        return (x & np.uint64(high - 1)).astype(np.int64)
    limit = np.uint64(_TWO64 - (_TWO64 % high) - 1)  # largest kept word
    bad = x > limit
    while bad.any():
        x[bad] = rng.bit_generator.random_raw(int(np.count_nonzero(bad)))
        bad = x > limit
    return (x % np.uint64(high)).astype(np.int64)


def bernoulli_exp(num: np.ndarray, den: int, rng, *, first_round: int = 1) -> np.ndarray:
    """Independent ``Bernoulli(exp(-num / den))`` for integers ``0 <= num <= den`` (CKS 2020, Algorithm 1).

    Lane by lane: ``K = 1``; while ``Bernoulli(num / (den K))`` succeeds, ``K += 1``; return ``K`` odd.
    ``P(K odd) = sum_k (-gamma)^k / k! = exp(-gamma)``. All pending lanes share ``K``, so each round is
    one ``rng.integers(0, den * K)`` call compared with ``num``.

    Parameters
    ----------
    num : ndarray of int64, values in ``[0, den]``
    den : int, positive
    rng : numpy.random.Generator
    first_round : int, default 1
        ``2`` skips the round ``K = 1`` when every ``num == den`` (it always succeeds then).

    Returns
    -------
    ndarray of bool, the shape of ``num``
    """
    num = np.asarray(num, dtype=np.int64)
    out = np.zeros(num.shape, dtype=bool)
    flat_out = out.reshape(-1)
    idx = np.arange(num.size)
    pending = num.reshape(-1)
    k = first_round
    while idx.size:
        success = uniform_below(den * k, idx.size, rng) < pending
        stop = ~success
        flat_out[idx[stop]] = (k % 2) == 1
        idx, pending = idx[success], pending[success]
        k += 1
    return out


def _geometric_e(n: int, rng) -> np.ndarray:
    """``n`` draws of the number of successes before the first failure of ``Bernoulli(exp(-1))``.

    A pool of independent ``Bernoulli(exp(-1))`` trials is cut into runs, each ending at a failure: the run
    lengths minus one are i.i.d. with the wanted law. The pool grows until it holds ``n`` failures. (For
    ``gamma = 1`` Algorithm 1's first round, ``Bernoulli(1/1)``, always succeeds and is skipped.)
    """
    trials = np.zeros(0, dtype=bool)
    need = n
    while need > 0:
        more = bernoulli_exp(np.ones(int(need * 1.7) + 16, dtype=np.int64), 1, rng, first_round=2)
        trials = np.concatenate((trials, more))
        need = n - int(np.count_nonzero(~trials))
    fails = np.flatnonzero(~trials)[:n]
    return np.diff(np.r_[-1, fails]) - 1


#: the fast path's error margin is ``2**-MARGIN_BITS`` relative (the float error is below ``2**-50``)
MARGIN_BITS = 40
_TWO_M64 = 2.0 ** -64
_LN2 = math.log(2.0)


def _arguments(t, s, size) -> tuple[int, int, tuple, int]:
    """The samplers' common arguments checked: ``(t, s, shape, number of draws)``."""
    t, s = int(t), int(s)
    if t < 1 or s < 1:
        raise ValueError(f"t and s must be positive integers, got t={shown(t)}, s={shown(s)}")
    shape = (size,) if np.ndim(size) == 0 else tuple(size)
    return t, s, shape, int(np.prod(shape, dtype=np.int64))


def _read_on(u: list, rng) -> None:
    """Append the next 64 random bits to ``U = [u[0], (u[0] + 1)) / 2**u[1]``."""
    u[0] = (u[0] << 64) | int(rng.bit_generator.random_raw())
    u[1] += 64


def _u_at_most_exp(j: int, t: int, s: int, u: list, rng) -> bool:
    """Exactly whether ``U <= exp(-j s / t)``, where ``U`` is known as the dyadic interval
    ``[u[0] / 2**u[1], (u[0] + 1) / 2**u[1])`` and its further bits are drawn lazily (appended to ``u``).

    Double precision decides first when ``ln U`` (bracketed from ``U``'s interval) and ``-j s / t`` are
    further apart than a generous bound on their rounding errors; otherwise ``exp(-j s / t)`` (then close
    to ``U``, so of a manageable size) is bracketed with Python's :mod:`decimal`: the quotient and ``exp`` are each correctly
    rounded at precision ``p``, so the computed value is within a relative ``(|arg| + 1) 10**(3 - p)`` of the
    true one (a generous bound; the worst case is about ``(|arg| + 1) 10**(1 - p)``). While the bracket and
    ``U``'s interval overlap, 64 more bits of ``U`` are drawn and ``p`` grows by 20 digits; ``U`` is
    continuous, so this ends with probability one (almost always at once).
    """
    if j <= 0:
        return True
    prec = 40
    arg_f = j * s / t
    while True:  # double precision decides unless ln U and -arg are within a generous error margin
        ln_lo = math.log(u[0]) - u[1] * _LN2 if u[0] else -math.inf
        ln_hi = math.log(u[0] + 1) - u[1] * _LN2
        err = 1e-9 * (abs(ln_hi) + u[1] + arg_f + 1.0)
        if ln_lo + arg_f > err:
            return False  # U >= U_lo > exp(-arg)
        if ln_hi + arg_f < -err:
            return True  # U < U_hi < exp(-arg)
        if u[0]:
            break
        _read_on(u, rng)  # U_lo = 0: read on
    while True:
        with decimal.localcontext() as ctx:
            ctx.prec, ctx.Emin, ctx.Emax = prec, decimal.MIN_EMIN, decimal.MAX_EMAX
            arg = decimal.Decimal(j * s) / decimal.Decimal(t)
            e = Fraction((-arg).exp())
            rel = (Fraction(arg) + 1) * Fraction(1, 10 ** (prec - 3))
        lo_u, hi_u = Fraction(u[0], 1 << u[1]), Fraction(u[0] + 1, 1 << u[1])
        if hi_u <= e * (1 - rel):
            return True
        if lo_u >= e * (1 + rel):
            return False
        _read_on(u, rng)
        prec += 20


def _geometric_slow(word: int, t: int, s: int, rng) -> int:
    """``Y = max{j >= 0 : U <= exp(-j s / t)}`` exactly for a ``U`` whose first 64 bits are ``word``."""
    u = [int(word), 64]
    while u[0] == 0:  # U < 2**-n: draw bits until the leading one, for a usable first estimate
        _read_on(u, rng)
    est = -(math.log(u[0]) - u[1] * _LN2) * t / s
    j = max(0, math.floor(est))
    if _u_at_most_exp(j, t, s, u, rng):
        while _u_at_most_exp(j + 1, t, s, u, rng):
            j += 1
    else:
        j -= 1
        while not _u_at_most_exp(j, t, s, u, rng):
            j -= 1
    return j


def geometric(t: int, s: int, size, rng) -> np.ndarray:
    """Exact draws of the geometric law ``P(Y >= k) = exp(-k s / t)``, ``k = 0, 1, ...``, with no truncation.

    ``Y = floor(-ln(U) t / s)`` for ``U`` uniform on ``(0, 1)``: inversion of the exact CDF. ``U`` is an
    infinite sequence of random bits of which the first 64 are one raw word ``x`` of the generator, so
    ``U`` lies in ``[x, x + 1) 2**-64``. The fast path evaluates ``-ln(U) t / s`` at both ends in double
    precision, widens the interval by a margin ``2**-MARGIN_BITS (|f| + t / s + 1)`` (the floating-point error
    is below ``2**-50 |f| + 2**-52 t / s``: one rounding of ``x``, one of the sum, ``log`` within an ulp, two
    more roundings for the rate and the quotient), and keeps ``Y`` when the widened interval holds one
    integer part: then every ``U`` of the cell gives that ``Y``. The other lanes (for ``t / s`` of a thousand,
    about one in a million; ``x = 0`` always) are decided exactly with more bits of ``U`` and bracketed values
    of ``exp`` (:func:`_u_at_most_exp`). The output is a deterministic function of the generator's state.

    Parameters
    ----------
    t, s : int
        Positive integers; the ratio of the law is ``exp(-s / t)`` (mean about ``t / s``).
    size : int or tuple of int
    rng : numpy.random.Generator

    Returns
    -------
    ndarray of int64 with shape ``size``
    """
    t, s, shape, n = _arguments(t, s, size)
    x = rng.bit_generator.random_raw(n)
    rate = s / t
    lo = x.astype(np.float64) * _TWO_M64
    with np.errstate(divide="ignore"):
        f_lo = -np.log(lo) / rate  # the upper end of -ln(U) / rate (inf for x = 0)
    f_hi = -np.log(lo + _TWO_M64) / rate  # the lower end
    margin = (f_lo + (1.0 / rate + 1.0)) * math.ldexp(1.0, -MARGIN_BITS)
    a = np.maximum(np.floor(f_hi - margin), 0.0)  # Y >= 0 always (U <= 1)
    with np.errstate(invalid="ignore"):
        ok = a == np.floor(f_lo + margin)
    out = np.where(ok, a, 0.0).astype(np.int64)
    for i in np.flatnonzero(~ok):
        out[i] = _geometric_slow(int(x[i]), t, s, rng)
    return out.reshape(shape)


def discrete_laplace(t: int, s: int, size, rng) -> np.ndarray:
    """Exact draws of ``DLap(t / s)``: ``P(k) ∝ exp(-|k| s / t)`` on the integers.

    The difference of two independent exact geometric draws with ratio ``a = exp(-s / t)``
    (:func:`geometric`) has exactly this law: ``P(G1 - G2 = k) = (1 - a)^2 sum_j a^(2j + |k|)
    = (1 - a) / (1 + a) a^|k|`` (Inusah and Kozubowski 2006). Same law as :func:`discrete_laplace_cks`,
    several times faster on large batches (one vectorised pass instead of rounds of rejection).
    ``t``, ``s``: positive integers, the scale ``t / s`` (:func:`rational_scale`); returns int64 draws of shape
    ``size``, as :func:`geometric`.
    """
    t, s, shape, n = _arguments(t, s, size)
    g = geometric(t, s, 2 * n, rng)
    return (g[:n] - g[n:]).reshape(shape)


def discrete_laplace_cks(t: int, s: int, size, rng) -> np.ndarray:
    """Exact draws of ``DLap(t / s)``: ``P(k) ∝ exp(-|k| s / t)`` on the integers (CKS 2020, Algorithm 2).

    One attempt: ``U`` uniform on ``{0..t-1}`` kept with probability ``exp(-U/t)``, ``V`` the number of
    ``Bernoulli(exp(-1))`` successes, ``X = U + t V`` (geometric with ratio ``exp(-1/t)``), ``Y = X // s``
    (geometric with ratio ``exp(-s/t)``), a fair sign ``B``; ``(B, Y) = (1, 0)`` is rejected so zero is not
    counted twice; an accepted attempt gives ``(1 - 2B) Y``. Attempts are i.i.d.: they are made in batches
    (about twice as many as outputs still missing) and the accepted ones fill the outputs in order, which
    gives i.i.d. outputs of the attempt's law conditioned on acceptance.

    Parameters
    ----------
    t, s : int
        Positive integers; the scale is ``t / s`` (see :func:`rational_scale`).
    size : int or tuple of int
    rng : numpy.random.Generator

    Returns
    -------
    ndarray of int64 with shape ``size``
    """
    t, s, shape, n = _arguments(t, s, size)
    out = np.empty(n, dtype=np.int64)
    filled = 0
    while filled < n:
        m = 2 * (n - filled) + 8  # acceptance is at least 1 - e^-1 times 1/2
        u = uniform_below(t, m, rng)
        u = u[bernoulli_exp(u, t, rng)]
        y = (u + t * _geometric_e(u.size, rng)) // s
        negative = uniform_below(2, u.size, rng) == 1
        ok = ~(negative & (y == 0))
        got = np.where(negative, -y, y)[ok][: n - filled]
        out[filled:filled + got.size] = got
        filled += got.size
    return out.reshape(shape)


class DiscreteLaplaceLaw:
    """``DLap(t / s)`` on the integers, for a scale rounded up by :func:`rational_scale`: sampler and exact law.

    Parameters
    ----------
    scale : float, int or Fraction
        The requested scale (in integer units); the law uses ``t / s >= scale``.

    Attributes
    ----------
    t, s : int
        The rational scale ``t / s`` actually sampled.
    rate : float
        ``s / t``: the log-ratio of neighbouring integers, ``ln P(k) - ln P(k + 1)`` for ``k >= 0``.
    """

    def __init__(self, scale):
        self.t, self.s = rational_scale(scale)
        if self.t >= 1 << 56:
            raise ValueError(f"scale must be below 2**{56 - SCALE_BITS} integer units, got {shown(scale)}")
        self.rate_exact = Fraction(self.s, self.t)
        self.rate = float(self.rate_exact)
        # ln((1 - a) / (1 + a)) with a = exp(-rate), accurate for small and large rates
        self.log_norm = math.log(-math.expm1(-self.rate)) - math.log1p(math.exp(-self.rate))

    def sample(self, size, rng) -> np.ndarray:
        """Exact integer noise of the given shape (:func:`discrete_laplace`)."""
        return discrete_laplace(self.t, self.s, size, rng)

    def logpmf(self, offset) -> np.ndarray:
        """``ln P(k)`` for integer offsets ``k`` from the centre (elementwise)."""
        return self.log_norm - np.abs(np.asarray(offset, dtype=float)) * self.rate

    def loss(self, distance) -> float:
        """The privacy loss between centres ``distance`` integers apart: ``distance * s / t``."""
        return float(Fraction(distance) * self.rate_exact)
