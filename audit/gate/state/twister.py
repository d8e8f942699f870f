"""A Mersenne twister's outputs are the generator: 624 of them kept anywhere clone it, forwards and backwards.

The Mersenne twister (``random.Random``, NumPy's ``RandomState`` and ``MT19937``) is linear: each 32-bit output is
a state word put through an invertible *tempering*, and each new state word is a fixed function of three earlier
ones (Matsumoto and Nishimura 1998, eq. (2.1) and section 2.2). So 624 consecutive outputs, untempered, are a
whole state, and the recurrence can be solved for the words before them too. A model that keeps outputs drawn
after its noise (hash salts, a random feature map, sample ids, "random" names) lets whoever holds it rebuild the
generator at the start of the fit and redraw the noise: the exact statistics come back.

* :func:`readings` reads raw words (:func:`audit.gate.state.codec.views`) as a sequence of 32-bit outputs: the
  words themselves when every one has 32 bits, or each 64-bit word as two outputs, high or low word first (NumPy
  draws a 64-bit integer from two outputs), when at least 624 outputs result;
* :func:`locate` finds such a sequence in the stream of a generator whose state is known (the one a fit seeded
  with a known seed, or one the fit built without a seed, recorded): how many outputs the fit drew before it.
  624 outputs agree with another stream by chance with probability ``2**-19968``, so a match is certain;
* :func:`start_state` untempers the first 624 outputs and steps the state back word by word (:func:`_back`) to
  the state from which the generator would draw the fit's first output: the state an adversary rebuilds.

Outputs read back from floats (``random.random()`` keeps 53 of its two outputs' 64 bits) are not read here:
cloning from them means solving the state's bits over GF(2).
"""
from __future__ import annotations

import random

import numpy as np

__all__ = ["N", "untemper", "readings", "locate", "find", "start_state", "state_of", "generator_at", "MAX_OUTPUTS"]

#: words in the twister's state; outputs needed to clone it
N = 624
_M, _A, _UPPER, _LOWER = 397, 0x9908B0DF, 0x80000000, 0x7FFFFFFF
#: outputs of a kept sequence compared with a stream (all of them when fewer)
MAX_OUTPUTS = 4 * N


def untemper(y: int) -> int:
    """The state word whose tempered output is ``y`` (tempering is invertible)."""
    y ^= y >> 18
    y ^= (y << 15) & 0xEFC60000
    r = y
    for _ in range(5):
        r = y ^ ((r << 7) & 0x9D2C5680)
    y = r & 0xFFFFFFFF
    r = y
    for _ in range(3):
        r = y ^ (r >> 11)
    return r & 0xFFFFFFFF


def readings(words) -> list:
    """``[(order, outputs)]``: ``words`` read as consecutive 32-bit outputs, at least :data:`N` of them (``order``:
    ``"32-bit"``, or ``"64-bit, high word first"`` / ``"64-bit, low word first"``); ``[]`` when they cannot be."""
    words = tuple(int(w) for w in words)
    if not words or min(words) < 0:
        return []
    if max(words) < 2 ** 32:
        return [("32-bit", words)] if len(words) >= N else []
    if max(words) >= 2 ** 64 or 2 * len(words) < N:
        return []
    hi_lo = tuple(x for w in words for x in (w >> 32, w & 0xFFFFFFFF))
    lo_hi = tuple(x for w in words for x in (w & 0xFFFFFFFF, w >> 32))
    return [("64-bit, high word first", hi_lo), ("64-bit, low word first", lo_hi)]


def locate(outputs, key, pos: int, max_steps: int):
    """How many outputs the generator in state ``(key, pos)`` draws before ``outputs`` (its next ones from there
    on), searched within ``max_steps`` draws; ``None`` when they are not its outputs."""
    kept = np.asarray(outputs[:MAX_OUTPUTS], dtype=np.uint64)
    stream = generator_at("MT19937", key, pos).random_raw(max_steps + kept.size)
    for j in np.flatnonzero(stream[:max_steps + 1] == kept[0]).tolist():
        if np.array_equal(stream[j:j + kept.size], kept):
            return j
    return None


def find(words, starts, max_steps: int):
    """``(order, i, drawn)``: the first reading of ``words`` (:func:`readings`) that is the outputs of the ``i``-th
    of ``starts`` (twister states ``(key, pos)``; ``None`` entries are skipped) after ``drawn`` others; ``None``
    when there is none."""
    for order, outputs in readings(words) if 2 * len(words) >= N else ():
        for i, start in enumerate(starts):
            if start is not None and (drawn := locate(outputs, *start, max_steps)) is not None:
                return order, i, drawn
    return None


def _back(window: list, steps: int) -> list:
    """The 624 consecutive state words ``steps`` words before ``window`` (624 words of the stream)."""
    w = list(window)
    for _ in range(steps):
        # w = s[q .. q+623]; s[q-1]'s top bit from s[q+623] = f(s[q-1], s[q], s[q+396]), its low 31 bits from
        # s[q+622] = f(s[q-2], s[q-1], s[q+395]): each new word is x ^ (y >> 1) ^ (A if y odd), y the top bit of
        # its first operand joined to the low bits of its second
        t = w[N - 1] ^ w[_M - 1]
        top = ((t ^ _A) << 1 | 1) if t & _UPPER else t << 1
        t = w[N - 2] ^ w[_M - 2]
        low = ((t ^ _A) << 1 | 1) if t & _UPPER else t << 1
        w.insert(0, (top & _UPPER) | (low & _LOWER))
        w.pop()
    return w


def start_state(outputs, drawn: int) -> tuple:
    """``(key, pos)``: the state from which the generator draws ``drawn`` outputs and then ``outputs``."""
    window = [untemper(y) for y in outputs[:N]]
    return _back(window, drawn), 0


def state_of(generator) -> tuple:
    """``(key, pos)`` of a ``random.Random``, ``RandomState`` or ``MT19937`` (``None`` for another generator)."""
    if isinstance(generator, random.Random):
        internal = generator.getstate()[1]
        return list(internal[:N]), int(internal[N])
    if isinstance(generator, np.random.RandomState):
        st = generator.get_state(legacy=False)
        if st.get("bit_generator") == "MT19937":
            return st["state"]["key"].tolist(), int(st["state"]["pos"])
        return None
    if isinstance(generator, np.random.MT19937):
        st = generator.state["state"]
        return st["key"].tolist(), int(st["pos"])
    return None


def generator_at(kind: str, key, pos: int):
    """A fresh generator of ``kind`` (``"Random"``, ``"RandomState"`` or ``"MT19937"``) in state ``(key, pos)``."""
    if kind == "Random":
        r = random.Random()
        r.setstate((3, tuple(int(k) for k in key) + (int(pos),), None))
        return r
    bg = np.random.MT19937()
    bg.state = {"bit_generator": "MT19937", "state": {"key": np.asarray(key, dtype=np.uint32), "pos": int(pos)}}
    return bg if kind == "MT19937" else np.random.RandomState(bg)
