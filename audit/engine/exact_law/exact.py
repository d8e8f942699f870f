"""Exact privacy loss of mechanisms whose output law has a closed form.

``privacy_loss(m, d0, d1) = max_o |ln P(o | d0) - ln P(o | d1)|``, the
supremum over outputs of the absolute log-likelihood ratio (for densities, the
essential supremum). It is computed from the mechanism's own law
(``m.log_law``), at the outputs where the mechanism proves the supremum is
attained (``m.critical_outputs``): no sampling, no error bar.

This is the checkable map from inputs to privacy loss that sits beside each
mechanism: for neighbouring inputs, ``privacy_loss`` must not exceed the
mechanism's ``privacy_map`` of their distance.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

__all__ = ["ExactLoss", "privacy_loss", "exact_loss"]


@dataclass(frozen=True)
class ExactLoss:
    """The exact loss and the output that attains it."""

    epsilon: float
    output: Any
    log_p0: float
    log_p1: float


def exact_loss(mechanism, d0, d1) -> ExactLoss:
    """The exact privacy loss of ``mechanism`` on inputs ``d0`` and ``d1``, with its witness.

    Parameters
    ----------
    mechanism : object with ``log_law(output, data)`` and ``critical_outputs(d0, d1)``
        Every mechanism in :mod:`reference.mechanisms` qualifies.
    d0, d1 : inputs of the mechanism

    Returns
    -------
    ExactLoss
        ``epsilon`` is ``inf`` when some output is possible under one input
        and impossible under the other.
    """
    for attr in ("log_law", "critical_outputs"):
        if not callable(getattr(mechanism, attr, None)):
            raise TypeError(f"mechanism {mechanism!r} has no closed-form law: it lacks {attr}()")
    best = ExactLoss(0.0, None, math.nan, math.nan)
    for o in mechanism.critical_outputs(d0, d1):
        l0 = mechanism.log_law(o, d0)
        l1 = mechanism.log_law(o, d1)
        if l0 == -math.inf and l1 == -math.inf:
            continue
        loss = abs(l0 - l1)
        if loss > best.epsilon or best.output is None:
            best = ExactLoss(float(loss), o, float(l0), float(l1))
    return best


def privacy_loss(mechanism, d0, d1) -> float:
    """``max_o |ln P(o | d0) / P(o | d1)|``: see :func:`exact_loss`."""
    return exact_loss(mechanism, d0, d1).epsilon
