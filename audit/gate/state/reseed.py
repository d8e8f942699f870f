"""Reseeding for one replay fit: generator constructors patched so that a candidate seed takes the place of the
one the fit makes (:mod:`audit.gate.state.replay`).

:func:`reseeded` patches ``numpy.random.default_rng``, ``numpy.random.RandomState``, ``random.Random`` and
``numpy.random.SeedSequence`` for the duration of the block: do not run it beside other threads that seed
generators. Code that imported a constructor by name before the block (``from numpy.random import
default_rng``) keeps the original and is not replayed this way.
"""
from __future__ import annotations

import random
from contextlib import contextmanager

import numpy as np

__all__ = ["reseeded"]

_SUBSTITUTE = {}  # seed -> seed, while a reseed replay runs
_ANY = {}  # "new" (and "keep"): while an any-seed replay runs, every integer seed but "keep" becomes "new"


def _swap(seed):
    try:
        if not isinstance(seed, (int, np.integer)):
            return seed
        if _ANY and int(seed) != _ANY.get("keep"):
            return _ANY["new"]
        return _SUBSTITUTE.get(int(seed), seed)
    except TypeError:
        return seed


class _ReseededRandomState(np.random.RandomState):
    def __init__(self, seed=None):
        super().__init__(_swap(seed))


class _ReseededRandom(random.Random):
    def seed(self, a=None, version=2):
        super().seed(_swap(a), version)


class _ReseededSeedSequence(np.random.SeedSequence):
    """A ``SeedSequence`` whose entropy is swapped as :func:`_swap` swaps a seed; under an any-seed replay, OS
    entropy (``SeedSequence()``) becomes the candidate too (its entropy printed or kept is the seed)."""

    def __init__(self, entropy=None, *, spawn_key=(), pool_size=4, n_children_spawned=0):
        entropy = _ANY["new"] if entropy is None and _ANY else _swap(entropy)
        super().__init__(entropy, spawn_key=spawn_key, pool_size=pool_size, n_children_spawned=n_children_spawned)


@contextmanager
def reseeded(old: int | None, new: int, keep: int | None = None):
    """Within the block, ``default_rng``, ``RandomState``, ``random.Random`` and ``SeedSequence`` seeded with ``old``
    are seeded with ``new`` (module attributes are patched and restored); ``old=None`` swaps every integer seed
    but ``keep``, and the entropy of ``SeedSequence()`` (a seed the fit makes from OS entropy, never the same
    twice, is replaced whatever it is)."""
    saved = np.random.default_rng, np.random.RandomState, random.Random, np.random.SeedSequence
    original_rng = saved[0]
    _SUBSTITUTE.clear()
    _ANY.clear()
    if old is None:
        _ANY.update(new=int(new), keep=None if keep is None else int(keep))
    else:
        _SUBSTITUTE[int(old)] = int(new)
    np.random.default_rng = lambda seed=None: original_rng(_swap(seed))
    np.random.RandomState, random.Random = _ReseededRandomState, _ReseededRandom
    np.random.SeedSequence = _ReseededSeedSequence
    try:
        yield
    finally:
        np.random.default_rng, np.random.RandomState, random.Random, np.random.SeedSequence = saved
        _SUBSTITUTE.clear()
        _ANY.clear()
