"""The pre-lattice Laplace mechanism, kept as a mutant: float noise added to a raw float.

``FloatLaplace`` is what :class:`reference.mechanisms.Laplace` was before issue 17:
``value + rng.laplace(0, sensitivity / epsilon)`` rounded to a double. Its real-number law is the
Laplace density and it passes every statistical audit, but the set of doubles it can output depends on
the input: for inputs 0 and 1 most outputs from one cannot occur from the other, so its privacy loss in
the arithmetic it actually does is infinite (Mironov 2012). :func:`float_sum_attainable` decides, for
one output, whether it can be written as ``fl(value + n)`` for any double ``n``.

References
----------
Mironov (2012), "On significance of the least significant bits for differential privacy", CCS.
"""
from __future__ import annotations

import math

import numpy as np

from reference.validation import check_generator, check_positive_finite

__all__ = ["FloatLaplace", "float_sum_attainable"]


class FloatLaplace:
    """MUTANT: ``value + Laplace(0, sensitivity / epsilon)`` in floating point (the pre-fix ``Laplace``).

    Parameters
    ----------
    epsilon : float
    sensitivity : float, default 1.0
    """

    kind = "continuous"

    def __init__(self, epsilon: float, sensitivity: float = 1.0):
        self.epsilon = check_positive_finite("epsilon", epsilon)
        self.sensitivity = check_positive_finite("sensitivity", sensitivity)
        self.scale = self.sensitivity / self.epsilon

    def __call__(self, data, rng):
        return self.sample(data, rng)

    def sample(self, data, rng):
        check_generator(rng)
        value = np.asarray(data, dtype=float)
        out = value + rng.laplace(0.0, self.scale, size=value.shape)
        return float(out) if out.ndim == 0 else out

    def batch(self, data, n, rng):
        check_generator(rng)
        value = np.asarray(data, dtype=float)
        return value + rng.laplace(0.0, self.scale, size=(int(n),) + value.shape)

    def logpdf(self, x, data) -> float:
        """The real-number density (which the float sampler does not have on doubles)."""
        x, value = np.asarray(x, dtype=float), np.asarray(data, dtype=float)
        return float(np.sum(-math.log(2.0 * self.scale) - np.abs(x - value) / self.scale))

    log_law = logpdf

    def __repr__(self):
        return f"FloatLaplace(epsilon={self.epsilon}, sensitivity={self.sensitivity})"


def float_sum_attainable(output: float, value: float) -> bool:
    """Whether some double ``n`` gives ``fl(value + n) == output``.

    ``n -> fl(value + n)`` is monotone, so the doubles mapped to ``output`` form an interval around
    ``output - value``; if it holds any double it holds the double nearest ``output - value`` (or, at a
    rounding tie, its neighbour). Checking that double and its two neighbours decides the question.
    """
    o, v = float(output), float(value)
    n0 = o - v
    for n in (np.nextafter(n0, -math.inf), n0, np.nextafter(n0, math.inf)):
        if v + float(n) == o:
            return True
    return False
