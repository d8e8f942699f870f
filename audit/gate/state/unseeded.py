"""Raw words of a generator the fit built without a seed: a ``PCG64`` state kept from ``default_rng()``.

A fit that builds its noise generator with ``np.random.default_rng()`` (seeded from OS entropy) and keeps the
generator's state as plain numbers (``dict(rng.bit_generator.state["state"])``: PCG64's 128-bit state and
increment, a checkpoint "to resume with the same noise") publishes its noise: whoever holds the model loads the
numbers into a fresh ``PCG64``, steps it back by the draws the fit made, and replays the fit. No seed of a known
fit names these words (:mod:`audit.gate.state.codec` identifies words against the generator seeded with the
probe's seed), so they are found here by the generators the fit *built*:

* :func:`recording` records every ``PCG64`` that ``default_rng()``, ``Generator(PCG64())`` or ``PCG64()`` built
  without a seed in the block, with its starting state;
* :func:`identify` reads a fitted model's raw words (:func:`audit.gate.state.codec.views`, and two large ints side
  by side) as PCG64's state and increment, and names the built generator they are the state of, ``k`` draws of
  the state after its start (:data:`MAX_STEPS` at most); a state and increment of 128 bits each match by chance
  with probability ``2**-255``;
* :func:`loaded`: the ``i``-th generator the block builds without a seed is a given one, so a replay (mode
  ``load``, :mod:`audit.gate.state.replay`) hands the fit the generator an adversary rebuilds from the words.

The replay measures the finding: a kept state of a generator the release does not depend on (one kept for
``predict``'s tie-breaking) reproduces nothing and is not one. Other families built without a seed (``MT19937()``,
``RandomState()``) are not read this way.
"""
from __future__ import annotations

from contextlib import contextmanager

import numpy as np

from audit.gate.state import codec
from audit.gate.state.bindings import rebound
from audit.gate.state.entropy import stand_in

__all__ = ["recording", "loaded", "identify", "MAX_STEPS"]

#: LCG steps searched between a built generator's start and the kept state
MAX_STEPS = 100_000
_MULT = 0x2360ED051FC65DA44385DF649FCCF645


@contextmanager
def _unseeded(build):
    """Within the block, ``default_rng()`` and ``PCG64()`` without a seed give ``build(i, PCG64)`` (``i``: how many
    were built before; ``PCG64``: the real class; a bit generator), also where another module bound them by
    name."""
    original_rng, original_pcg = np.random.default_rng, np.random.PCG64
    count = [0]

    def make():
        count[0] += 1
        return build(count[0] - 1, original_pcg)

    PCG64 = stand_in(original_pcg, make)

    def default_rng(seed=None):
        return np.random.Generator(make()) if seed is None else original_rng(seed)

    np.random.default_rng, np.random.PCG64 = default_rng, PCG64
    try:
        with rebound({original_rng: default_rng, original_pcg: PCG64}):
            yield
    finally:
        np.random.default_rng, np.random.PCG64 = original_rng, original_pcg


@contextmanager
def recording():
    """Yields the list ``[(bit generator, (state, inc) at its start)]`` of the PCG64s the block builds unseeded."""
    built: list = []

    def build(i, pcg):
        bg = pcg()
        built.append((bg, (bg.state["state"]["state"], bg.state["state"]["inc"])))
        return bg

    with _unseeded(build):
        yield built


@contextmanager
def loaded(index: int, generator):
    """Within the block, the ``index``-th generator built without a seed is ``generator``'s bit generator."""
    bg = getattr(generator, "bit_generator", generator)
    with _unseeded(lambda i, pcg: bg if i == index else pcg()):
        yield


def identify(views, built) -> list:
    """``[(view, codec.Match, index)]``: the readings of ``views`` (:class:`audit.gate.state.codec.View`) that are
    the state and increment of the ``index``-th generator of ``built`` (:func:`recording`) after ``k`` steps."""
    out = []
    for view in views:
        for layout, state, inc in codec.pcg_pairs(view.words):
            for index, (_, (start, inc0)) in enumerate(built):
                if inc != inc0:
                    continue
                k = codec.pcg_steps(start, state, inc, _MULT, MAX_STEPS)
                if k is not None:
                    out.append((view, codec.Match("PCG64", view.encoding, layout, k), index))
                    break
    return out
