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
``random_state``) replays nothing. A fit that ignores an integer seed or a ``Generator`` says so once per
class and process (:class:`SeedIgnoredWarning`). Reproducible fits, which the auditor needs (the same seed
gives the same report) and which reproductions of the papers' tables use, are turned on explicitly, and stay
where they were asked for:

* inside ``with seeded_fits():``. The mode is a :class:`contextvars.ContextVar`: it holds in this thread (or
  asyncio task) until the block exits, never in another thread, and is restored on exit even when blocks
  in several threads overlap. ``python -m audit`` (``audit.__main__.main``) runs each command inside such a
  block and leaves the mode as it found it; the auditor's sampling enters one around every block of draws.
* in a whole process started with ``DPTREE_SEEDED_FITS=1`` in its environment (:data:`SEEDED_FITS_ENV`):
  read once, when this module is first imported, as the default of every thread; setting the variable
  later changes nothing in this process (processes started afterwards read their own environment).

A worker process does not inherit a block's mode: a forked child starts in the process default, whatever
block the forking thread was in, and a spawned one reads its environment. Work handed to other processes
carries the mode explicitly (:func:`in_current_mode`). In seeded mode ``random_state`` is a secret key:
whoever holds it replays the fit.

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

import contextvars
import os
import secrets
import warnings
from contextlib import contextmanager
from dataclasses import dataclass
from numbers import Integral
from typing import Any, Callable

import numpy as np

from reference.validation import shown

__all__ = ["fit_rng", "fit_seed_sequence", "predict_rng", "check_random_state", "seeded_fits",
           "seeded_fits_enabled", "in_current_mode", "SeedIgnoredWarning", "SEEDED_FITS_ENV", "PublishSafeMixin"]

#: the environment variable that, set to ``"1"`` when a process starts, makes seeded fits its default in every
#: thread (read once, at the first import of this module; module docstring)
SEEDED_FITS_ENV = "DPTREE_SEEDED_FITS"

#: the process default: ``DPTREE_SEEDED_FITS=1`` in the environment this module was first imported with
_PROCESS_DEFAULT = os.environ.get(SEEDED_FITS_ENV) == "1"

#: the mode of this thread or task; ``None``: the process default
_SEEDED: contextvars.ContextVar[bool | None] = contextvars.ContextVar("dptree_seeded_fits", default=None)


def _fork_child() -> None:
    """A forked child starts in the process default, whatever block the forking thread was in."""
    _SEEDED.set(None)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_fork_child)


class SeedIgnoredWarning(UserWarning):
    """A fit ignored its ``random_state`` (an integer seed or a ``Generator``) because seeded fits are off:
    it drew fresh OS entropy (module docstring). Raised once per class and process."""


#: (process id, class) pairs already warned
_WARNED: set = set()

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
    """Whether fits in this thread or task honour ``random_state`` (seeded mode, module docstring): inside
    :func:`seeded_fits`, else the process default (``DPTREE_SEEDED_FITS=1`` when the process started)."""
    mode = _SEEDED.get()
    return _PROCESS_DEFAULT if mode is None else mode


@contextmanager
def seeded_fits(enabled: bool = True):
    """Fits inside the block honour ``random_state`` (reproducible; the seed is then a secret key).

    Parameters
    ----------
    enabled : bool, default True
        The mode inside the block: ``False`` makes a block of default-mode fits (fresh OS entropy) even in
        a seeded process or inside an outer block.

    The mode is a context variable: it holds in this thread or asyncio task only, and the previous mode comes
    back when the block exits (each block restores its own token, so blocks that overlap in threads cannot
    leave it on). Threads and processes started inside the block do not inherit it; hand them work through
    :func:`in_current_mode`.

    Examples
    --------
    >>> from reference.randomness import seeded_fits, seeded_fits_enabled
    >>> with seeded_fits():
    ...     seeded_fits_enabled()  # PrivaTreeClassifier(..., random_state=0).fit(X, y): the same tree every time
    True
    """
    if not isinstance(enabled, bool):
        raise ValueError(f"enabled must be True or False, got {shown(enabled)}")
    token = _SEEDED.set(enabled)
    try:
        yield
    finally:
        _SEEDED.reset(token)


@dataclass(frozen=True)
class _InMode:
    """``fn`` run inside ``seeded_fits(seeded)``: picklable when ``fn`` is (spawned or forked workers)."""

    fn: Callable[..., Any]
    seeded: bool

    def __call__(self, *args, **kwargs):
        with seeded_fits(self.seeded):
            return self.fn(*args, **kwargs)


def in_current_mode(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn``, carrying the seeded mode in force here to the worker process or thread that calls it.

    Worker processes and threads do not inherit a :func:`seeded_fits` block; a pool's task wrapped with this
    runs in the caller's mode (picklable when ``fn`` is).

    Examples
    --------
    >>> from reference.randomness import in_current_mode, seeded_fits, seeded_fits_enabled
    >>> with seeded_fits():
    ...     task = in_current_mode(seeded_fits_enabled)
    >>> task()
    True
    """
    return _InMode(fn, seeded_fits_enabled())


def _warn_ignored(random_state, owner) -> None:
    """:class:`SeedIgnoredWarning`, once per class and process, for a seed or ``Generator`` a fit ignores."""
    cls = owner if isinstance(owner, type) else type(owner) if owner is not None else None
    name = "a fit" if cls is None else f"{cls.__module__}.{cls.__qualname__}"
    key = (os.getpid(), name)
    if key in _WARNED:
        return
    _WARNED.add(key)
    what = "a Generator" if isinstance(random_state, np.random.Generator) else f"the integer {random_state}"
    warnings.warn(f"{name}: random_state ({what}) was ignored, and the fit drew fresh OS entropy, because "
                  "seeded fits are off (privacy first). For reproducible fits, fit inside "
                  "`with reference.randomness.seeded_fits():` (the seed is then a secret key).",
                  SeedIgnoredWarning, stacklevel=4)


def fit_seed_sequence(random_state, owner=None) -> np.random.SeedSequence:
    """The ``SeedSequence`` of one fit's randomness (module docstring): fresh OS entropy by default; in
    seeded mode ``SeedSequence(seed)``, or a child of a ``Generator``'s own seed sequence. ``random_state``
    is validated in both modes. ``owner`` (the estimator, or its class) names the class in the
    :class:`SeedIgnoredWarning` a default-mode fit gives for a seed it ignores."""
    rs = check_random_state(random_state)
    if rs is None:
        return np.random.SeedSequence(_os_entropy())
    if not seeded_fits_enabled():
        _warn_ignored(rs, owner)
        return np.random.SeedSequence(_os_entropy())
    if isinstance(rs, np.random.Generator):
        return rs.bit_generator.seed_seq.spawn(1)[0]
    return np.random.SeedSequence(rs)


def fit_rng(random_state, owner=None) -> np.random.Generator:
    """A fresh generator for one fit's noise (module docstring): never the user's object; OS entropy
    unless seeded fits are on. ``owner``: as in :func:`fit_seed_sequence`."""
    rs = check_random_state(random_state)
    # a Generator's child keeps its bit generator's type, as Generator.spawn does (the same stream in seeded mode)
    bit_generator = type(rs.bit_generator) if isinstance(rs, np.random.Generator) else np.random.PCG64
    return np.random.Generator(bit_generator(fit_seed_sequence(rs, owner)))


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
