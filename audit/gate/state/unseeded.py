"""Raw words of a generator the fit built without a seed: a ``PCG64`` state kept from ``default_rng()``.

A fit that builds its noise generator with ``np.random.default_rng()`` (seeded from OS entropy) and keeps the
generator's state as plain numbers (``dict(rng.bit_generator.state["state"])``: PCG64's 128-bit state and
increment, a checkpoint "to resume with the same noise") publishes its noise: whoever holds the model loads the
numbers into a fresh ``PCG64``, steps it back by the draws the fit made, and replays the fit. No seed of a known
fit names these words (:mod:`audit.gate.state.codec` identifies words against the generator seeded with the
probe's seed), so they are found here by the generators the fit *built*:

* :func:`recording` records every ``PCG64`` that ``default_rng()``, ``Generator(PCG64())`` or ``PCG64()`` built
  without a seed in the block, and every twister, with its starting state;
* :func:`identify` reads a fitted model's raw words (:func:`audit.gate.state.codec.views`, and two large ints side
  by side) as PCG64's state and increment, and names the built generator they are the state of, ``k`` draws of
  the state after its start (:data:`MAX_STEPS` at most); a state and increment of 128 bits each match by chance
  with probability ``2**-255``;
* :func:`loaded`: the ``i``-th generator the block builds without a seed is a given one, so a replay (mode
  ``load``, :mod:`audit.gate.state.replay`) hands the fit the generator an adversary rebuilds from the words.

The same holds for a Mersenne twister built without a seed (``RandomState()``, ``MT19937()``, ``random.Random()``):
624 of its outputs kept anywhere in the model (hash salts drawn after the noise) are its state
(:mod:`audit.gate.state.twister`), stepped back to the fit's first draw for the replay.

The replay measures the finding: a kept state of a generator the release does not depend on (one kept for
``predict``'s tie-breaking, salts from a generator of their own) reproduces nothing and is not one.
"""
from __future__ import annotations

import random
from contextlib import contextmanager

import numpy as np

from audit.gate.state import codec, twister
from audit.gate.state.bindings import rebound
from audit.gate.state.entropy import stand_in

__all__ = ["recording", "loaded", "identify", "MAX_STEPS"]

#: LCG steps searched between a built generator's start and the kept state
MAX_STEPS = 100_000
_MULT = 0x2360ED051FC65DA44385DF649FCCF645


#: the real classes, taken at import (within :func:`_unseeded` the module attributes are the stand-ins)
_REAL = {"PCG64": np.random.PCG64, "RandomState": np.random.RandomState, "MT19937": np.random.MT19937,
         "Random": random.Random}


@contextmanager
def _unseeded(build):
    """Within the block, ``default_rng()``, ``PCG64()``, ``RandomState()``, ``MT19937()`` and ``random.Random()``
    without a seed give ``build(i, kind)`` (``i``: how many were built before; ``kind``: a key of :data:`_REAL`; a
    bit generator for ``PCG64`` and ``MT19937``, the object itself for the others), also where another module bound
    them by name."""
    original_rng = np.random.default_rng
    originals = dict(_REAL)
    count = [0]

    def make(kind):
        count[0] += 1
        return build(count[0] - 1, kind)

    stands = {kind: stand_in(real, lambda kind=kind: make(kind)) for kind, real in originals.items()}

    def default_rng(seed=None):
        return np.random.Generator(make("PCG64")) if seed is None else original_rng(seed)

    def install(rng, classes):
        np.random.default_rng = rng
        for kind, cls in classes.items():
            setattr(random if kind == "Random" else np.random, "Random" if kind == "Random" else kind, cls)

    install(default_rng, stands)
    try:
        with rebound({original_rng: default_rng, **{originals[k]: stands[k] for k in _REAL}}):
            yield
    finally:
        install(original_rng, originals)


def _fresh(kind: str):
    """A generator of ``kind`` seeded from the OS, as the fit would have built it."""
    return _REAL[kind]()


@contextmanager
def recording():
    """Yields the list ``[(kind, generator, start)]`` of the generators the block builds without a seed: ``start``
    is PCG64's ``(state, inc)`` or a twister's ``(key, pos)`` (:func:`audit.gate.state.twister.state_of`) when it
    was built."""
    built: list = []

    def build(i, kind):
        g = _fresh(kind)
        if kind == "PCG64":
            start = (g.state["state"]["state"], g.state["state"]["inc"])
        else:
            start = twister.state_of(g)
        built.append((kind, g, start))
        return g

    with _unseeded(build):
        yield built


@contextmanager
def loaded(index: int, generator):
    """Within the block, the ``index``-th generator built without a seed is ``generator`` (a ``Generator`` stands
    for its bit generator)."""
    given = generator.bit_generator if isinstance(generator, np.random.Generator) else generator
    with _unseeded(lambda i, kind: given if i == index else _fresh(kind)):
        yield


def identify(views, built) -> list:
    """``[(view, codec.Match, index)]``: the readings of ``views`` (:class:`audit.gate.state.codec.View`) that are
    the state and increment of the ``index``-th generator of ``built`` (:func:`recording`) after ``k`` steps, or
    at least 624 of a twister's outputs drawn after ``k`` others (:mod:`audit.gate.state.twister`)."""
    out = []
    for view in views:
        for layout, state, inc in codec.pcg_pairs(view.words):
            for index, (kind, _, start) in enumerate(built):
                if kind != "PCG64" or inc != start[1]:
                    continue
                k = codec.pcg_steps(start[0], state, inc, _MULT, MAX_STEPS)
                if k is not None:
                    out.append((view, codec.Match("PCG64", view.encoding, layout, k), index))
                    break
        hit = twister.find(view.words, [None if kind == "PCG64" else start for kind, _, start in built], MAX_STEPS)
        if hit is not None:
            order, index, k = hit
            out.append((view, codec.Match("MT19937", view.encoding, ("outputs", order, built[index][0]), k), index))
    return out
