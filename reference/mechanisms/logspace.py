"""Sums of positive weights kept as split logarithms, with an error bound independent of their size.

JointExp's forward pass (:mod:`reference.mechanisms.jointexp`) convolves weights that span
thousands of orders of magnitude: ties and low-cardinality features put a whole dataset between
two grid points, and a factor ``exp(-rate |g - t|)`` is below the smallest double once
``rate |g - t| > 745``. Scaled ``exp`` values underflow to silent zeros there, and an FFT cannot
resolve them. Here a positive weight ``w`` is held as its logarithm split into an integer part and
a fraction, ``log w = I + F`` with ``I`` an integer (a double, exact below ``2**53``) and
``0 <= F < 1``; zero is ``I = -inf``.

Error model
-----------
With ``u = 2**-53``:

* ``I`` parts are added and subtracted exactly (integers below ``2**53``);
* a product ``rate * x`` with ``x`` an integer or a float is split exactly by Dekker's product
  (Veltkamp halves of both factors: four exact partial products, each split exactly into its
  integer part and fraction), so only the sum of the four fractions rounds;
* ``logaddexp`` of two split logs takes the larger ``I + F`` and adds
  ``log1p(exp(-|d|))`` (at most ``ln 2``) to its fraction, where ``d`` is formed from the exact
  difference of the ``I`` parts: its derivatives in the two inputs are weights summing to one, so
  an error already carried by an input passes through as a convex combination.

Every operation therefore adds at most :data:`OP_ERROR` ``= 16 u`` to the absolute error of the
log it produces, *whatever the size of the weight*, and the error of a log is at most
``OP_ERROR`` times its depth (the longest chain of operations leading to it). The scans below
have depth ``O(log2 K)`` for ``K`` entries (doubling, Hillis and Steele 1986), not the ``K`` of a
running sum.

References
----------
Dekker (1971), "A floating-point technique for extending the available precision" (the exact
product). Knuth, TAOCP vol. 2, 4.2.2 (TwoSum). Hillis and Steele (1986), "Data parallel
algorithms" (the doubling scan). Higham (2002), "Accuracy and Stability of Numerical Algorithms",
section 2.2 (the model of rounding).
"""
from __future__ import annotations

import numpy as np

__all__ = ["OP_ERROR", "Split", "split", "lae", "add", "neg", "lse_rows", "lse_all", "rate_times", "rate_abs_gap",
           "decay_prefix", "growth_window", "doubling_depth", "exponents"]

#: bound on the absolute error one operation adds to a split log (module docstring)
OP_ERROR = 16 * 2.0 ** -53

_SPLITTER = 2.0 ** 27 + 1.0


class Split:
    """Split logs ``log w = i + f`` of an array of weights: ``i`` integral (``-inf`` for ``w = 0``),
    ``0 <= f < 1``. Indexing selects entries (``s[k]``, ``s[:, 1:]``); ``i, f = s`` unpacks."""

    __slots__ = ("i", "f")

    def __init__(self, i, f):
        self.i = np.asarray(i, dtype=float)
        self.f = np.asarray(f, dtype=float)

    def __getitem__(self, key) -> "Split":
        return Split(self.i[key], self.f[key])

    def __iter__(self):
        return iter((self.i, self.f))

    @property
    def size(self) -> int:
        return self.i.size

    def value(self) -> np.ndarray:
        """The log as one double (rounded once)."""
        return self.i + self.f


def _norm(i, f) -> Split:
    k = np.floor(f)
    return Split(i + k, f - k)


def split(x) -> Split:
    """A log given as doubles, split exactly (``-inf`` stays zero weight)."""
    x = np.asarray(x, dtype=float)
    i = np.floor(x)
    with np.errstate(invalid="ignore"):
        f = np.where(np.isfinite(i), x - i, 0.0)
    return Split(i, f)


def add(a: Split, b: Split) -> Split:
    """Product of weights: ``log a + log b`` (zero weight stays zero)."""
    return _norm(a.i + b.i, a.f + b.f)


def neg(a: Split) -> Split:
    """``-log a`` for finite ``a`` (the reciprocal weight)."""
    return _norm(-a.i, -a.f)


def lae(a: Split, b: Split) -> Split:
    """Sum of weights: ``logaddexp`` of two split logs."""
    with np.errstate(invalid="ignore"):
        d = (a.i - b.i) + (a.f - b.f)
    d = np.where(np.isnan(d), np.inf, d)  # both zero: keep a (zero)
    first = d >= 0
    i = np.where(first, a.i, b.i)
    f = np.where(first, a.f, b.f) + np.log1p(np.exp(-np.abs(d)))
    return _norm(i, f)


def lse_rows(a: Split) -> Split:
    """Sum over the last axis (left to right: depth = the axis length minus one)."""
    out = a[..., 0]
    for r in range(1, a.i.shape[-1]):
        out = lae(out, a[..., r])
    return out


def lse_all(a: Split) -> Split:
    """Sum of a 1-D split vector by pairwise halving (depth ``ceil(log2 K)``), as a 1-element split."""
    while a.size > 1:
        if a.size % 2:
            a = Split(np.append(a.i, -np.inf), np.append(a.f, 0.0))
        a = lae(a[0::2], a[1::2])
    return a


def _halves(x):
    t = _SPLITTER * x
    hi = t - (t - x)
    return hi, x - hi


def _int_frac_sum(parts) -> Split:
    """Exact integer parts summed exactly, fractions summed (each split ``p - floor(p)`` is exact)."""
    i = np.floor(parts[0])
    f = parts[0] - i
    for p in parts[1:]:
        ip = np.floor(p)
        i += ip
        f += p - ip
    return _norm(i, f)


def rate_times(rate: float, x) -> Split:
    """``rate * x`` (``x`` a float array, ``|rate x| < 2**52``) as a split log, by Dekker's exact product.

    ``rate``'s Veltkamp halves have at most 26 significant bits each, so when every ``x`` is an
    integer below ``2**27`` the two products ``rh x`` and ``rl x`` are already exact."""
    x = np.asarray(x, dtype=float)
    rh, rl = _halves(float(rate))
    if x.size and np.all(np.abs(x) < 2.0 ** 27) and np.all(x == np.floor(x)):
        return _int_frac_sum([rh * x, rl * x])
    xh, xl = _halves(x)
    return _int_frac_sum([rh * xh, rh * xl, rl * xh, rl * xl])


def rate_abs_gap(rate: float, g, t: float) -> Split:
    """``-rate |g - t|`` as a split log (``g`` integers, ``t`` a float): ``g - t`` exactly as a
    TwoSum pair ``s + e``, then each term by :func:`rate_times`."""
    g = np.asarray(g, dtype=float)
    s = g - t
    bb = s - g
    e = (g - (s - bb)) + (-t - bb)
    sign = np.where(s < 0, -1.0, 1.0)
    return neg(add(rate_times(rate, sign * s), rate_times(rate, sign * e)))


def exponents(a: Split) -> np.ndarray:
    """``log w - max log w`` as doubles (``-inf`` for zero weight): the shifted exponents of a draw."""
    finite = np.isfinite(a.i)
    if not np.any(finite):
        raise RuntimeError("every candidate has weight zero")
    k = np.argmax(np.where(finite, a.value(), -np.inf))
    with np.errstate(invalid="ignore"):
        out = (a.i - a.i[k]) + (a.f - a.f[k])
    return np.where(finite, out, -np.inf)


def doubling_depth(k: int) -> int:
    """``ceil(log2 k)``: doubling passes over ``k`` entries (0 for ``k <= 1``)."""
    return max(int(k) - 1, 0).bit_length()


def _shift_pass(a: Split, s: int, step: Split) -> Split:
    """One doubling pass: entry ``k >= s`` becomes ``a[k] (+) (a[k - s] * step[k - s])``."""
    new = lae(a[s:], add(a[:-s], step))
    return Split(np.concatenate((a.i[:s], new.i)), np.concatenate((a.f[:s], new.f)))


def decay_prefix(x: Split, pos: np.ndarray, rate: float) -> Split:
    """``E[k] = log sum_{k' <= k} exp(x[k'] - rate (pos[k] - pos[k']))`` for every ``k``.

    ``pos`` is a non-decreasing integer array (positions on the data's index line). Doubling scan:
    after the pass with shift ``s`` entry ``k`` holds the terms ``k' in (k - 2s, k]``; depth
    ``2 ceil(log2 K)``.
    """
    e = x
    pos = np.asarray(pos, dtype=float)
    s = 1
    n = e.size
    while s < n:
        e = _shift_pass(e, s, neg(rate_times(rate, pos[s:] - pos[:-s])))
        s *= 2
    return e


def growth_window(x: Split, pos: np.ndarray, rate: float, length: np.ndarray) -> Split:
    """``R[k] = log sum_{k - length[k] <= k' < k} exp(x[k'] + rate (pos[k] - pos[k']))``.

    The window ends just before ``k`` and holds ``length[k] >= 0`` entries (zero weight when
    empty), with ``k - length[k] >= 0``. A sparse table ``S_b[p]`` (the ``2**b`` entries ending at
    ``p``, weighted relative to ``pos[p]``) is built by doubling, and each window is the union of
    the pieces of the binary expansion of its length, taken from its end backwards: depth at most
    ``4 ceil(log2 (max length + 1))``.
    """
    pos = np.asarray(pos, dtype=float)
    length = np.asarray(length, dtype=np.int64)
    n = x.size
    out = Split(np.full(n, -np.inf), np.zeros(n))
    top = int(length.max()) if n else 0
    if top == 0:
        return out
    levels = [x]
    s = 1
    while 2 * s <= top:
        levels.append(_shift_pass(levels[-1], s, rate_times(rate, pos[s:] - pos[:-s])))
        s *= 2
    k = np.arange(n)
    end = k - 1  # the window's last entry still to take
    oi, of = out
    for b in range(len(levels) - 1, -1, -1):
        take = np.flatnonzero((length >> b) & 1)
        if take.size == 0:
            continue
        p = end[take]
        piece = add(levels[b][p], rate_times(rate, pos[take] - pos[p]))
        new = lae(Split(oi[take], of[take]), piece)
        oi[take], of[take] = new.i, new.f
        end[take] -= 1 << b
    return Split(oi, of)
