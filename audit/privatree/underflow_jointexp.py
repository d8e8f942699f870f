"""MUTANT: JointExp as it was before issue 26, whose forward pass multiplies plain ``exp`` values.

The pre-fix forward pass scaled each level's weights by their largest and convolved them
directly, over the gaps that hold grid points, or by FFT. On tied or low-cardinality data a
factor ``exp(-rate |g - t|)`` underflows once ``rate |g - t| > 745``:

* partial underflow: states that carry half the final mass are rounded to zero at an
  intermediate level, and the draws become deterministic (5,000 values at 0.5, 9 levels,
  epsilon 1: every edge above 0.5 in 300 of 300 draws, where the law is Binomial(9, 1/2));
* full underflow: past ``n = 29,806`` records at epsilon 1 (7,452 at epsilon 4) the pass returns
  nothing and every quantile is the lower bound, with probability 1; one record fewer, that
  output is essentially impossible. The loss between such neighbours is unbounded.

Kept so that the auditor is validated on a leak that only appears at ordinary data sizes
(:class:`UnderflowPrivaTree`: PrivaTree with this quantile mechanism). The fixed mechanism is
:class:`reference.mechanisms.JointExp` (split logs, :mod:`reference.mechanisms.logspace`).
"""
from __future__ import annotations

import numpy as np
from scipy.signal import fftconvolve

from reference.mechanisms.jointexp import JointExp
from reference.privatree import PrivaTreeClassifier
from reference.validation import check_generator

__all__ = ["UnderflowJointExp", "UnderflowPrivaTree"]

_DIRECT_MAX = 2000
_FFT_FLOOR = 1e-11


def _draw(weights, rng) -> int:
    c = np.cumsum(weights)
    return min(int(np.searchsorted(c, rng.random() * c[-1], side="right")), c.size - 1)


class UnderflowJointExp(JointExp):
    """MUTANT: :class:`JointExp` with the pre-issue-26 forward pass in scaled linear arithmetic
    (module docstring). Same parameters; ``batch`` falls back to the lower bound when the forward
    pass underflows entirely, as the old code did."""

    def _old_forward(self, lengths, n):
        m = self.quantiles.size
        g = np.arange(n + 1, dtype=float)
        log_phi = -self.rate * np.abs(g[None, :] - self._targets(n)[:, None])
        with np.errstate(divide="ignore"):
            log_len = np.log(lengths)
        phi = np.exp(log_phi)
        kernel = phi.copy()
        kernel[:, 0] = 0.0
        run = lengths[:, None] / np.arange(2, m + 1)[None, :]
        first = log_phi[0] + log_len
        nz = np.flatnonzero(lengths > 0)
        sparse = n + 1 > _DIRECT_MAX and nz.size <= _DIRECT_MAX
        steps = np.maximum(nz[:, None] - nz[None, :], 0) if sparse else None
        a = np.zeros((n + 1, m))
        a[:, 0] = np.exp(first - np.max(first))
        A = [a]
        for j in range(1, m):
            prev = A[-1]
            total = prev.sum(axis=1)
            if n + 1 <= _DIRECT_MAX:
                conv = np.convolve(total, kernel[j])[: n + 1]
            elif sparse:
                conv = np.zeros(n + 1)
                conv[nz] = kernel[j][steps] @ total[nz]
            else:
                conv = fftconvolve(total, kernel[j])[: n + 1]
                conv[conv < _FFT_FLOOR * conv.max()] = 0.0
                conv[0] = 0.0
            a = np.empty((n + 1, m))
            np.multiply(conv, lengths, out=a[:, 0])
            np.multiply(prev[:, :-1], phi[j, 0] * run, out=a[:, 1:])
            s = a.max()
            if not s > 0:
                return None, log_phi
            A.append(a / s)
        return A, log_phi

    def batch(self, data, n_samples, rng):
        check_generator(rng)
        start, count, n = self._prepare(data)
        m = self.quantiles.size
        A, log_phi = self._old_forward(count, n)
        out = np.empty((int(n_samples), m))
        for s in range(out.shape[0]):
            if A is None:  # the old fallback: every quantile at the lower bound
                out[s] = self.bounds[0]
                continue
            with np.errstate(divide="ignore"):
                lw = np.log(A[-1].sum(axis=1)) + log_phi[m][::-1]
            i = _draw(np.exp(lw - np.max(lw)), rng)
            r = _draw(A[-1][i], rng)
            idx = np.empty(m, dtype=np.int64)
            idx[m - 1] = i
            for j in range(m - 1, 0, -1):
                if r > 0:
                    r -= 1
                else:
                    prev = A[j - 1][:i]
                    with np.errstate(divide="ignore"):
                        lw = np.log(prev.sum(axis=1)) + log_phi[j, i:0:-1]
                    i = _draw(np.exp(lw - np.max(lw)), rng)
                    r = _draw(prev[i], rng)
                idx[j - 1] = i
            out[s] = np.sort(self.points(start[idx] + rng.integers(0, count[idx].astype(np.int64))))
        return out

    def sample(self, data, rng):
        return self.batch(data, 1, rng)[0]

    __call__ = sample


class UnderflowPrivaTree(PrivaTreeClassifier):
    """MUTANT: strict PrivaTree whose bin edges come from :class:`UnderflowJointExp` (issue 26
    finding 1: loss about 80 or more on 104,843 tied records against the same plus one)."""

    _quantile_mechanism = UnderflowJointExp
