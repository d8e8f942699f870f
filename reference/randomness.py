"""Randomness that does not outlive a fit, and privacy-first seeding.

A fitted model, or its pickle, must not let its holder replay the fit's noise: a kept
``Generator`` can be copied and, for PCG64, rewound (``bit_generator.advance`` with a negative
step) to its state before the fit; a kept ``SeedSequence`` (or a sibling of the noise's) spawns
the same streams again; a published integer seed re-runs every draw. Whoever replays the noise
subtracts it and recovers exact counts: an unbounded privacy loss.

**Privacy first, seeded fits on request.** By default every fit draws its noise from fresh OS
entropy, whatever ``random_state`` holds: an integer seed or a ``Generator`` kept by the live model,
by ``clone(model).get_params()``, or by a pickled scikit-learn meta-estimator (``GridSearchCV``
keeps its unfitted base estimator, ``VotingClassifier`` its unfitted members, each with its
``random_state``) replays nothing. Reproducible fits, which the auditor needs (the same seed gives
the same report) and which reproductions of the papers' tables use, are turned on explicitly:
inside :func:`seeded_fits`, or in a process whose environment has ``DPTREE_SEEDED_FITS=1``
(``python -m audit`` sets it for itself and its workers; the auditor's sampling turns it on around
every draw). In seeded mode ``random_state`` is a secret key: whoever holds it replays the fit.

The rules every DP learner of :mod:`reference` follows:

* the fit draws from :func:`fit_rng` (or :func:`fit_seed_sequence`), a fresh generator held only by
  ``fit`` and discarded with it, never the user's object itself. Default mode: OS entropy. Seeded mode:
  ``None`` gives OS entropy; an integer ``s`` gives ``SeedSequence(s)``; a ``Generator`` gives a child
  spawned from it (``Generator.spawn``), so the fit does not advance the user's generator's stream
  (its seed sequence's spawn counter does advance, and that generator spawns the fit's child again);
* draws at predict time (probabilistic voting) come from :func:`predict_rng`, a stream independent
  of the fit's (a different entropy pool), made at each call and not kept;
* ``random_state`` itself is a constructor parameter, kept untouched as scikit-learn requires.
  :class:`PublishSafeMixin` drops it from the pickle of a *fitted* model (it unpickles as
  ``random_state=None``), so a published pickle carries no generator state and no seed. An unfitted
  estimator pickles with its ``random_state`` (nothing has been drawn yet; joblib and
  ``GridSearchCV(n_jobs=...)`` pickle unfitted clones).
"""
from __future__ import annotations

import os
import secrets
from contextlib import contextmanager
from numbers import Integral

import numpy as np

from reference.validation import shown

__all__ = ["fit_rng", "fit_seed_sequence", "predict_rng", "check_random_state", "seeded_fits",
           "seeded_fits_enabled", "SEEDED_FITS_ENV", "PublishSafeMixin"]

#: the environment variable that turns seeded fits on (value ``"1"``) in a process and the processes it starts
SEEDED_FITS_ENV = "DPTREE_SEEDED_FITS"

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


def _os_entropy() -> int:
    """128 fresh bits from the operating system (``secrets``), the entropy of a default-mode fit."""
    return secrets.randbits(128)


def seeded_fits_enabled() -> bool:
    """Whether fits honour ``random_state`` (seeded mode, module docstring): ``DPTREE_SEEDED_FITS=1``."""
    return os.environ.get(SEEDED_FITS_ENV) == "1"


@contextmanager
def seeded_fits():
    """Fits inside the block honour ``random_state`` (reproducible; the seed is then a secret key).

    The mode is the environment variable :data:`SEEDED_FITS_ENV`, so worker processes started inside
    the block inherit it; its previous value is restored on exit. Not thread-safe: it is a
    process-wide switch, meant for audits, tests and reproductions, never for fits that are published.

    Examples
    --------
    >>> from reference.randomness import seeded_fits
    >>> with seeded_fits():
    ...     pass  # PrivaTreeClassifier(..., random_state=0).fit(X, y) gives the same tree every time
    """
    before = os.environ.get(SEEDED_FITS_ENV)
    os.environ[SEEDED_FITS_ENV] = "1"
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(SEEDED_FITS_ENV, None)
        else:
            os.environ[SEEDED_FITS_ENV] = before


def fit_seed_sequence(random_state) -> np.random.SeedSequence:
    """The ``SeedSequence`` of one fit's randomness (module docstring): fresh OS entropy by default; in
    seeded mode ``SeedSequence(seed)``, or a child of a ``Generator``'s own seed sequence. ``random_state``
    is validated in both modes."""
    rs = check_random_state(random_state)
    if rs is None or not seeded_fits_enabled():
        return np.random.SeedSequence(_os_entropy())
    if isinstance(rs, np.random.Generator):
        return rs.bit_generator.seed_seq.spawn(1)[0]
    return np.random.SeedSequence(rs)


def fit_rng(random_state) -> np.random.Generator:
    """A fresh generator for one fit's noise (module docstring): never the user's object; OS entropy
    unless seeded fits are on."""
    rs = check_random_state(random_state)
    # a Generator's child keeps its bit generator's type, as Generator.spawn does (the same stream in seeded mode)
    bit_generator = type(rs.bit_generator) if isinstance(rs, np.random.Generator) else np.random.PCG64
    return np.random.Generator(bit_generator(fit_seed_sequence(rs)))


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
