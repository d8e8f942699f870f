"""Reseeding for one replay fit: generator constructors patched so that a candidate seed takes the place of the
one the fit makes (:mod:`audit.gate.state.replay`).

:func:`reseeded` patches ``numpy.random.default_rng``, ``numpy.random.RandomState``, ``random.Random`` and
``numpy.random.SeedSequence`` for the duration of the block, and the names other modules bound them to before
(``from numpy.random import default_rng``: :func:`audit.gate.state.bindings.rebound`): do not run it beside other
threads that seed generators.
"""
from __future__ import annotations

import random
from contextlib import contextmanager

import numpy as np

from audit.gate.state.bindings import rebound

__all__ = ["reseeded", "recorded"]

_SUBSTITUTE = {}  # seed -> seed, while a reseed replay runs
_ANY = {}  # "new" (and "keep"): while an any-seed replay runs, every integer seed but "keep" becomes "new"


def _words(value: int, n: int, order: str) -> np.ndarray:
    """``value`` as ``n`` 32-bit words (at least as many as it needs): the first word the most significant
    (``"be"``: words printed one after the other, ``"".join(f"{w:08x}" ...)``) or the least (``"le"``: words read
    as one little-endian number, the way ``SeedSequence`` reads an int)."""
    n = max(n, (int(value).bit_length() + 31) // 32, 1)
    words = [(int(value) >> (32 * i)) & 0xFFFFFFFF for i in range(n)]
    return np.array(words[::-1] if order == "be" else words, dtype=np.uint32)


def _swap(seed):
    try:
        if _ANY and isinstance(seed, (list, tuple, np.ndarray)) and len(seed) and \
                all(isinstance(w, (int, np.integer)) and not isinstance(w, bool) for w in np.asarray(seed).ravel()):
            return _words(_ANY["new"], len(seed), _ANY["order"])  # a seed of words: the candidate as words
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
def recorded():
    """Within the block, the integer seeds handed to ``numpy.random.default_rng`` (under any name bound before the
    block) and to ``random.Random`` (``Random(seed)``, ``.seed(seed)`` on an instance made before or in the block)
    are appended, unchanged, to the list it yields. Only a function and a method are wrapped: no class is replaced, so
    ``isinstance`` checks in the fit (scikit-learn's ``check_random_state``) see what they always see; the seeds
    of ``RandomState``, ``SeedSequence`` and bit generators built directly (C types), and of the ``random``
    module's own ``seed`` (bound at import), are not recorded."""
    seen = []
    original_rng, original_seed = np.random.default_rng, random.Random.seed

    def default_rng(seed=None):
        if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
            seen.append(int(seed))
        return original_rng(seed)

    def seed(self, a=None, version=2):
        if isinstance(a, int) and not isinstance(a, bool):
            seen.append(int(a))
        return original_seed(self, a, version)

    np.random.default_rng, random.Random.seed = default_rng, seed
    try:
        with rebound({original_rng: default_rng}):
            yield seen
    finally:
        np.random.default_rng, random.Random.seed = original_rng, original_seed


@contextmanager
def reseeded(old: int | None, new: int, keep: int | None = None, order: str = "be"):
    """Within the block, ``default_rng``, ``RandomState``, ``random.Random`` and ``SeedSequence`` seeded with ``old``
    are seeded with ``new`` (module attributes are patched and restored); ``old=None`` swaps every integer seed
    but ``keep``, every seed given as words (``default_rng(SeedSequence().generate_state(4))``: ``new`` as words in
    ``order``, :func:`_words`), and the entropy of ``SeedSequence()`` (a seed the fit makes from OS entropy, never
    the same twice, is replaced whatever it is)."""
    saved = np.random.default_rng, np.random.RandomState, random.Random, np.random.SeedSequence
    original_rng = saved[0]
    _SUBSTITUTE.clear()
    _ANY.clear()
    if old is None:
        _ANY.update(new=int(new), keep=None if keep is None else int(keep), order=order)
    else:
        _SUBSTITUTE[int(old)] = int(new)
    np.random.default_rng = lambda seed=None: original_rng(_swap(seed))
    np.random.RandomState, random.Random = _ReseededRandomState, _ReseededRandom
    np.random.SeedSequence = _ReseededSeedSequence
    try:
        with rebound({saved[0]: np.random.default_rng, saved[1]: _ReseededRandomState, saved[2]: _ReseededRandom,
                      saved[3]: _ReseededSeedSequence}):  # names bound before the block
            yield
    finally:
        np.random.default_rng, np.random.RandomState, random.Random, np.random.SeedSequence = saved
        _SUBSTITUTE.clear()
        _ANY.clear()
