"""The median and leaf mechanisms specific to DiPriMe, including its flawed published ones.

Every class here has an exact law (``log_law`` + ``critical_outputs``), so
:func:`audit.exact.privacy_loss` computes its privacy loss on two inputs
without sampling.

* :class:`IndexMedianV000`: V000's private median, the exponential mechanism
  over the *index* ``j`` of the sorted values, ``Pr(j) ∝ exp(-(eps/2)|N - 2j|)``,
  then ``r`` uniform between the ``j``-th and ``(j+1)``-th values
  (Consul and Williamson 2020, Algorithm 3, lines 42-47). FLAWED: it is not
  differentially private, because adding a value inside a gap shrinks an
  interval without shrinking its mass (spec section 2.4 (iii)).
* :class:`AuthorsFlipMedian`: the authors' code for DiPriMeFlip's median,
  permute-and-flip over the ``N + 1`` gaps with score ``2 ln|I_i| - |2i - N|``
  and sensitivity 1 (spec section 5, A6). FLAWED: the score's sensitivity is
  unbounded (spec section 2.4 (iv)).
* :class:`CountScaledLeafMean`: the papers' regression leaf,
  ``clip(mean + Laplace(S / (N eps)))`` with ``S = B_U - B_L`` (V000 section 3)
  or ``S = 2B`` (Consul and Williamson 2021 section 3, "Estimating leaf node
  parameters"), and ``Uniform(B_L, B_U)`` for an empty leaf (authors' code).
  FLAWED: the noise scale depends on the private count ``N`` (spec 2.4 (ii)).

The correct median of V003 section 3.1 is
:class:`reference.mechanisms.IntervalExponential` (on a public grid); the
flawed ones reuse the float gap layout of :class:`FloatGapMedian`, the
published median with ``r`` uniform in a data-defined gap (not DP in
floating point).

References
----------
Consul and Williamson 2020 (V000) and
Consul and Williamson 2021 (V003); spec/diprime.md sections 2.4 and 5.
"""
from __future__ import annotations

import math

import numpy as np
from reference.validation import check_generator, check_positive_finite
from reference.validation import shown
from reference.mechanisms import Mechanism, PermuteAndFlip, BoundedMedian, draw_index, log_normalise

__all__ = ["FloatGapMedian", "IndexMedianV000", "AuthorsFlipMedian", "CountScaledLeafMean"]


class FloatGapMedian(BoundedMedian):
    """FLAWED in floating point: the V003 section 3.1 median as published, with ``r``
    drawn as the float ``left + U * width`` inside the chosen data-defined gap.

    With the node's values sorted, ``x_(1) <= ... <= x_(N)`` in public
    ``bounds = (low, high)``, the gaps are ``I_0 = [low, x_(1))``,
    ``I_i = [x_(i), x_(i+1))`` and ``I_N = [x_(N), high]``; gap ``I_i`` is
    chosen with probability ``∝ |I_i| exp(-epsilon |2i - N| / (2 sensitivity))``
    (Lebesgue base measure) and ``r`` is uniform inside it. In real arithmetic
    this is epsilon-DP; in doubles the attainable outputs ``left + U * width``
    form a lattice fixed by the data's gaps, so an output from one dataset is
    almost never attainable from a neighbour (Mironov 2012; issue 17 finding 2).
    Its ``logpdf`` is the real-arithmetic density. The released mechanism is
    :class:`reference.mechanisms.IntervalExponential` (grid); this class is
    the base of the papers' flawed medians below and of the auditor's mutant
    ``audit.mutants.FloatIntervalMedian``.
    """

    kind = "continuous"

    def gaps(self, data):
        """The gaps' edges ``(left, right)`` and their log-probabilities ``log|I_i| + rate*q_i`` (normalised)."""
        x = self._values(data)
        edges = np.concatenate(([self.bounds[0]], x, [self.bounds[1]]))
        left, right = edges[:-1], edges[1:]
        i = np.arange(x.size + 1)
        score = -np.abs(2 * i - x.size) * self.epsilon / (2.0 * self.sensitivity)
        with np.errstate(divide="ignore"):
            log_w = np.log(right - left) + score
        return left, right, log_normalise(log_w)

    def sample(self, data, rng):
        return float(self.batch(data, 1, rng)[0])

    def batch(self, data, n, rng):
        check_generator(rng)
        left, right, log_p = self.gaps(data)
        idx = draw_index(np.exp(log_p), int(n), rng)
        return rng.uniform(left[idx], right[idx])

    def logpdf(self, r, data) -> float:
        r = float(r)
        if not self.bounds[0] <= r <= self.bounds[1]:
            return -math.inf
        x = self._values(data)
        i = min(int(np.searchsorted(x, r, side="right")), x.size)  # number of values <= r: r in I_i
        left, right, log_p = self.gaps(x)
        width = right[i] - left[i]
        return float(log_p[i] - math.log(width)) if width > 0 else -math.inf

    log_law = logpdf

    def cdf(self, r, data) -> np.ndarray:
        """``P(output <= r)``: piecewise linear, exact (in real arithmetic)."""
        left, right, log_p = self.gaps(data)
        p = np.exp(log_p)
        r = np.asarray(r, dtype=float)[..., None]
        width = np.where(right > left, right - left, 1.0)
        frac = np.clip((r - left) / width, 0.0, 1.0)
        frac = np.where(right > left, frac, (r >= left).astype(float))
        return np.sum(p * frac, axis=-1)

    def critical_outputs(self, d0, d1):
        """Both densities are constant between consecutive points of the union of the two
        datasets and the bounds; the midpoints of those pieces carry every value of the
        (essential) log-ratio."""
        pts = np.unique(np.concatenate((self.bounds, self._values(d0), self._values(d1))))
        return list((pts[:-1] + pts[1:]) / 2.0)


class IndexMedianV000(FloatGapMedian):
    """FLAWED (not DP): V000's index median (Algorithm 3, lines 42-47).

    With the node's values sorted, ``x_(1) <= ... <= x_(N)`` in public
    ``bounds = (low, high)``, gap ``I_j`` (``j = 0..N``; ``I_0 = [low, x_(1))``,
    ``I_N = [x_(N), high]``, as in spec A1) is chosen with probability
    ``∝ exp(-(epsilon/2) |N - 2j|)``: no weighting by the gap's length. Gaps of
    zero length (ties) get no mass (spec A1). ``r`` is uniform in the chosen
    gap.

    The density at ``r`` in gap ``j`` is ``P(j) / |I_j|``: one added value
    inside a gap makes ``|I_j|`` arbitrarily small at nearly the same ``P(j)``,
    so the privacy loss is unbounded (spec section 2.4 (iii)).
    ``privacy_map`` returns what the paper claims, ``epsilon * d_in``.

    Parameters
    ----------
    epsilon : float
        V000's ``epsilon_1`` (Algorithm 1, line 12).
    bounds : (float, float)
        Public range ``R_a`` of the attribute.
    """

    def gaps(self, data):
        x = self._values(data)
        edges = np.concatenate(([self.bounds[0]], x, [self.bounds[1]]))
        left, right = edges[:-1], edges[1:]
        j = np.arange(x.size + 1)
        log_w = np.where(right > left, -np.abs(x.size - 2 * j) * self.epsilon / (2.0 * self.sensitivity), -np.inf)
        return left, right, log_normalise(log_w)


class AuthorsFlipMedian(FloatGapMedian):
    """FLAWED (not DP): the authors' code for DiPriMeFlip's median (spec A6).

    Permute-and-flip over the gaps of positive length, with utility
    ``u_i = 2 ln|I_i| - |2i - N|`` and sensitivity 1, then ``r`` uniform in
    the chosen gap. Its flip probabilities are ``∝ |I_i|^epsilon
    exp(-epsilon |2i - N| / 2)``: not the exponential mechanism's length
    weighting, and the ``ln|I_i|`` term has unbounded sensitivity (spec 2.4 (iv)).

    Sampling uses :meth:`reference.mechanisms.PermuteAndFlip.batch` (linear
    time); the law (:meth:`gaps`) uses its exact ``logpmf_all`` (quadratic in
    the number of gaps, for audits on small inputs).
    """

    def _utilities(self, data):
        x = self._values(data)
        edges = np.concatenate(([self.bounds[0]], x, [self.bounds[1]]))
        left, right = edges[:-1], edges[1:]
        ok = right > left
        i = np.arange(x.size + 1)
        u = 2.0 * np.log(right[ok] - left[ok]) - np.abs(2 * i[ok] - x.size)
        return left, right, ok, u

    def gaps(self, data):
        left, right, ok, u = self._utilities(data)
        log_p = np.full(left.size, -np.inf)
        log_p[ok] = PermuteAndFlip(self.epsilon, self.sensitivity).logpmf_all(u)
        return left, right, log_p

    def batch(self, data, n, rng):
        check_generator(rng)
        left, right, ok, u = self._utilities(data)
        idx = np.flatnonzero(ok)[PermuteAndFlip(self.epsilon, self.sensitivity).batch(u, int(n), rng)]
        return rng.uniform(left[idx], right[idx])


class CountScaledLeafMean(Mechanism):
    """FLAWED (not DP): the papers' regression leaf value.

    ``data`` holds the leaf's targets (already clipped to the public
    ``target_bounds = (B_L, B_U)``). With ``N = len(data) >= 1`` the output is
    ``clip(mean + Laplace(0, S / (N epsilon)), B_L, B_U)`` (V000 section 3:
    ``S = B_U - B_L``; V003 section 3: ``S = 2 max(|B_L|, |B_U|)``); an empty
    leaf gives ``Uniform(B_L, B_U)`` (authors' code, spec A7).

    The law is mixed: atoms at ``B_L`` and ``B_U`` (``log_law`` there is the
    log of the atom's mass) and a density inside. The scale uses the private
    count ``N``, so the loss between ``N`` and ``N + 1`` records exceeds
    ``epsilon`` (e.g. ``ln 2`` more), and an empty leaf (no atoms) against
    one record (atoms) gives an infinite loss (spec section 2.4 (ii)).

    Parameters
    ----------
    epsilon : float
        The leaf budget ``epsilon_l = (1 - rho) epsilon``.
    target_bounds : (float, float)
    numerator : float
        ``S`` above.
    """

    kind = "continuous"

    def __init__(self, epsilon: float, target_bounds=(0.0, 1.0), numerator: float = 1.0):
        self.epsilon = check_positive_finite("epsilon", epsilon)
        self.numerator = check_positive_finite("numerator", numerator)
        low, high = (float(b) for b in target_bounds)
        if not (math.isfinite(low) and math.isfinite(high) and low < high):
            raise ValueError(f"target_bounds must be finite with low < high, got {shown(target_bounds)}")
        self.target_bounds = (low, high)

    def _params(self):
        return {"epsilon": self.epsilon, "target_bounds": self.target_bounds, "numerator": self.numerator}

    def _y(self, data) -> np.ndarray:
        y = np.asarray(data, dtype=float).ravel()
        lo, hi = self.target_bounds
        if y.size and (y.min() < lo or y.max() > hi):
            raise ValueError(f"data must lie within target_bounds {self.target_bounds}")
        return y

    def sample(self, data, rng):
        check_generator(rng)
        y = self._y(data)
        lo, hi = self.target_bounds
        if y.size == 0:
            return float(rng.uniform(lo, hi))
        # float noise on a raw float, as the papers do: this flawed mechanism keeps the law stated below
        noisy = float(y.mean()) + rng.laplace(0.0, self.numerator / (y.size * self.epsilon))
        return float(min(max(noisy, lo), hi))

    def log_law(self, v, data) -> float:
        v = float(v)
        lo, hi = self.target_bounds
        if not lo <= v <= hi:
            return -math.inf
        y = self._y(data)
        if y.size == 0:
            return -math.inf if v in (lo, hi) else -math.log(hi - lo)
        m, b = float(y.mean()), self.numerator / (y.size * self.epsilon)
        if v == lo:
            return math.log(0.5) - (m - lo) / b
        if v == hi:
            return math.log(0.5) - (hi - m) / b
        return -math.log(2.0 * b) - abs(v - m) / b

    logpdf = log_law

    def critical_outputs(self, d0, d1):
        """The two atoms, the interior limits next to them, and the two means:
        inside, each log-density is piecewise linear in ``v`` with its kink at
        its mean, so the log-ratio is extreme at a kink or at an end."""
        lo, hi = self.target_bounds
        out = [lo, hi, float(np.nextafter(lo, hi)), float(np.nextafter(hi, lo))]
        for d in (d0, d1):
            y = self._y(d)
            if y.size and lo < y.mean() < hi:
                out.append(float(y.mean()))
        return out

    def privacy_map(self, d_in):
        """What the papers claim: ``epsilon * d_in`` (not what the law gives)."""
        return float(d_in) * self.epsilon
