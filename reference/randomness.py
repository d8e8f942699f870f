"""Randomness that does not outlive a fit (issue 26 findings 2 and 3).

A fitted model, or its pickle, must not let its holder replay the fit's noise: a kept
``Generator`` can be copied and, for PCG64, rewound (``bit_generator.advance`` with a negative
step) to its state before the fit; a kept ``SeedSequence`` (or a sibling of the noise's) spawns
the same streams again; a published integer seed re-runs every draw. Whoever replays the noise
subtracts it and recovers exact counts: an unbounded privacy loss.

The rules every DP learner of :mod:`reference` follows:

* the fit draws from :func:`fit_rng`, a fresh generator held only by ``fit`` and discarded with it,
  never the user's object itself: ``None`` gives OS entropy; an integer ``s`` gives
  ``SeedSequence(s)`` (reproducible); a ``Generator`` gives a child spawned from it
  (``Generator.spawn``), so the fit does not advance the user's generator's stream; the spawn counter of its
  seed sequence does advance, and the generator (the constructor parameter, kept untouched) with that counter
  spawns the fit's child again: like an integer seed, it is the user's secret;
* draws at predict time (probabilistic voting) come from :func:`predict_rng`, a stream independent
  of the fit's (a different entropy pool), made at each call and not kept;
* ``random_state`` itself is a constructor parameter, kept untouched as scikit-learn requires; it
  is the user's secret key. :class:`PublishSafeMixin` drops it from the pickle of a *fitted* model
  (it unpickles as ``random_state=None``), so a published pickle carries no generator state and no
  seed. An unfitted estimator pickles with its ``random_state`` (nothing has been drawn yet; joblib
  and ``GridSearchCV(n_jobs=...)`` rely on it for reproducible fits).
"""
from __future__ import annotations

from numbers import Integral

import numpy as np

from reference.validation import shown

__all__ = ["fit_rng", "predict_rng", "check_random_state", "PublishSafeMixin"]

#: entropy tag of the predict-time streams (never used by a fit)
_PREDICT_TAG = 0x9ED1C7


def check_random_state(random_state, name: str = "random_state"):
    """``random_state`` if it is ``None``, a non-negative integer or a numpy ``Generator``; else a
    ``ValueError`` naming the parameter and the value."""
    if random_state is None or isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, (Integral, np.integer)) and not isinstance(random_state, bool) and random_state >= 0:
        return int(random_state)
    raise ValueError(f"{name} must be None, a non-negative integer or a numpy Generator, got {shown(random_state)}")


def fit_rng(random_state) -> np.random.Generator:
    """A fresh generator for one fit's noise (module docstring): never the user's object."""
    rs = check_random_state(random_state)
    if isinstance(rs, np.random.Generator):
        return rs.spawn(1)[0]
    return np.random.default_rng(rs)


def predict_rng(random_state) -> np.random.Generator:
    """The coins of one predict-time draw, made at the call and not kept: OS entropy for
    ``random_state=None`` (new coins on every call); for an integer seed the stream
    ``SeedSequence([seed, tag])`` (the same coins on every call, so ``predict`` is a function of its
    input, and independent of the fit's ``SeedSequence(seed)`` and its children); for a ``Generator``
    a child spawned from it."""
    rs = check_random_state(random_state)
    if rs is None:
        return np.random.default_rng()
    if isinstance(rs, np.random.Generator):
        return rs.spawn(1)[0]
    return np.random.default_rng(np.random.SeedSequence([rs, _PREDICT_TAG]))


def _is_fitted(est) -> bool:
    return any(k.endswith("_") and not k.startswith("__") for k in vars(est))


class PublishSafeMixin:
    """Pickles of a fitted model carry no ``random_state`` (module docstring); put it first in the bases."""

    def __getstate__(self):
        state = super().__getstate__() if hasattr(super(), "__getstate__") else dict(vars(self))
        state = dict(state)
        if _is_fitted(self) and "random_state" in state:
            state["random_state"] = None
        return state
