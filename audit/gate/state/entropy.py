"""Kept entropy: the OS randomness a fit drew, found again in the model it published, bit by bit.

A fit that seeds its noise from the OS (``secrets.randbits``, ``uuid4()``, ``os.urandom``, ``SeedSequence()``)
and keeps that seed in any reversible spelling (two 32-bit halves, the raw bytes, a list of words, hexadecimal
inside a text) publishes its own noise. The spellings are many; the principle is one: whoever holds the model
reads the entropy back and replays the fit. This module finds the spelling by experiment instead of by form.

* :func:`fed` feeds a fit a chosen byte stream as its OS entropy (``os.urandom`` and the ``random`` module's
  ``_urandom``, which ``secrets``, ``uuid4`` and NumPy's ``SeedSequence()`` all read) and as the ``random``
  module's own generator (a seed drawn with ``random.getrandbits``), and counts what it drew.
* :func:`taint` fits on a base stream, then on :data:`MASKS` streams that each flip a random half of the bits the
  fit drew. A model's integer (its ints, int array entries, bytes, the integers its texts spell) whose bit ``k``
  flips in exactly the fits that flip entropy bit ``j`` *carries* bit ``j``: the two 32-mask patterns agree by
  chance with probability ``2**-32`` per pair. Every copy, split, byte order or bit permutation of the entropy is
  found this way; an arithmetic transform with carries (``seed + 1``) or a hash is not.
* :class:`KeptEntropy` reads a published model's carried bits back into a stream (bits not carried stay the
  base stream's): the replay feeds that stream to a fresh fit on D (:mod:`audit.gate.state.replay`, mode
  ``entropy``), and :func:`audit.gate.state.replay.measure` turns reproductions into an epsilon lower bound.

Do not run :func:`fed` beside other threads that draw OS entropy: the patch is process-wide for its block.
"""
from __future__ import annotations

import os
import random
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np

from audit.gate.state.fingerprint import Leaves, differing, excluded, left_out

__all__ = ["fed", "bits_of", "taint", "KeptEntropy", "Taint", "MASKS", "MAX_BYTES"]

#: masked fits per taint map: a model bit and an entropy bit agree on every mask by chance with probability 2**-32
MASKS = 32
#: entropy bytes mapped at most (a fit that draws more keeps the rest as the base stream's, and the report says so)
MAX_BYTES = 512
#: array entries read per model at most, for the map
MAX_ENTRIES = 4096


class _Stream:
    """The bytes a fit is fed: ``data`` first, then a fixed filler; ``drawn`` counts what it took."""

    def __init__(self, data: bytes):
        self.data, self.drawn = bytes(data), 0
        self._filler = np.random.Generator(np.random.PCG64(20261206))

    def __call__(self, n: int) -> bytes:
        n = int(n)
        lo, hi = self.drawn, self.drawn + n
        self.drawn = hi
        out = self.data[lo:hi]
        if len(out) < n:
            out += self._filler.bytes(n - len(out))
        return out


@contextmanager
def fed(data: bytes):
    """Within the block, ``os.urandom`` (and ``random._urandom``) return ``data``, then a fixed filler, and the
    ``random`` module's own generator draws from the same stream (``random.getrandbits``, ``random.random``, and
    ``randint``, ``randrange``, ``choice``, ``shuffle``, ``sample`` through its ``getrandbits``); yields the
    stream, whose ``drawn`` is the number of bytes the block drew."""
    stream = _Stream(data)

    def getrandbits(k):
        return int.from_bytes(stream((k + 7) // 8), "little") & ((1 << k) - 1) if k else 0

    saved = os.urandom, random._urandom, random.getrandbits, random.random
    had = "getrandbits" in vars(random._inst)
    os.urandom = random._urandom = stream
    random.getrandbits = random._inst.getrandbits = getrandbits
    random.random = lambda: getrandbits(53) * 2.0 ** -53
    try:
        yield stream
    finally:
        os.urandom, random._urandom, random.getrandbits, random.random = saved
        if not had:
            del random._inst.getrandbits


def bits_of(lv: Leaves) -> dict:
    """The model's integers by path, for the map: int scalars and floats of integer value (a seed kept as a
    float), int array entries (the first :data:`MAX_ENTRIES` in all), the integers its texts spell, bytes (read
    little-endian), and the same of what the fit left beside the model (``lv.around``)."""
    out, entries = {}, 0
    for path, v in [*lv.numeric.items(), *lv.around.items()]:
        if isinstance(v, (bytes, bytearray)):
            out[path] = int.from_bytes(bytes(v), "little")
            continue
        if path.endswith(("#len", "#content")):
            continue
        if isinstance(v, (float, np.floating)) and np.isfinite(v) and float(v).is_integer() and abs(v) < 2.0 ** 63:
            out[path] = int(v)
        elif isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)):
            out[path] = int(v)
        elif isinstance(v, np.ndarray) and v.dtype.kind in "iu" and entries < MAX_ENTRIES:
            flat = v.ravel()[:MAX_ENTRIES - entries]
            entries += flat.size
            out.update((f"{path}[{i}]", int(x)) for i, x in enumerate(flat.tolist()))
    out.update(lv.digits)
    out.update((p, int.from_bytes(bytes(b), "little")) for p, b in lv.words.items() if isinstance(b, (bytes, bytearray)))
    return out


@dataclass
class Taint:
    """What :func:`taint` measured: ``drawn`` bytes, the carrier ``{(path, k): j}`` (model bit ``k`` of the
    integer at ``path`` holds entropy bit ``j``), paths that changed between two fits fed the same stream
    (``unstable``: another source of randomness), and whether anything besides the carrier changes with the
    entropy (``noisy``)."""

    drawn: int = 0
    carrier: dict = field(default_factory=dict)
    unstable: set = field(default_factory=set)
    noisy: bool = False
    capped: bool = False
    reference: dict = field(default_factory=dict)

    @property
    def bits(self) -> int:
        """Entropy bits carried (at least once)."""
        return len(set(self.carrier.values()))


def _flips(x: int) -> list:
    return [k for k in range(x.bit_length()) if x >> k & 1] if x >= 0 else []


def taint(fit, base: bytes, rng: np.random.Generator) -> Taint:
    """The taint map of ``fit`` (``fit(stream_bytes) -> Leaves``, fitting under :func:`fed`; it may raise).

    ``base`` is the stream of the first fit (at least :data:`MAX_BYTES` long); ``rng`` draws the masks.
    """
    out = Taint()
    with_base, drawn = fit(base)
    out.drawn = drawn
    if drawn == 0:
        return out
    again, _ = fit(base)
    f0, f0b = bits_of(with_base), bits_of(again)
    out.reference = f0
    out.unstable = left_out(differing(with_base.numeric, again.numeric) | differing(with_base.digits, again.digits)
                            | {p for p in set(f0) | set(f0b) if f0.get(p) != f0b.get(p)})
    nbits = min(drawn, MAX_BYTES) * 8
    out.capped = drawn > MAX_BYTES
    masks = [int.from_bytes(rng.bytes(nbits // 8), "little") for _ in range(MASKS)]
    base_int = int.from_bytes(base[:nbits // 8], "little")
    patterns = {}  # (path, k) -> which masks flipped it
    changed = set()
    for r, mask in enumerate(masks):
        stream = (base_int ^ mask).to_bytes(nbits // 8, "little") + base[nbits // 8:]
        lv, _ = fit(stream)
        changed |= differing(with_base.numeric, lv.numeric) | differing(with_base.digits, lv.digits)
        fr = bits_of(lv)
        for p, v in f0.items():
            if excluded(p, out.unstable) or p not in fr:
                continue
            for k in _flips(v ^ fr[p]):
                patterns[(p, k)] = patterns.get((p, k), 0) | 1 << r
    by_pattern = {}
    for j in range(nbits):
        key = sum((m >> j & 1) << r for r, m in enumerate(masks))
        by_pattern[key] = None if key in by_pattern else j  # two entropy bits alike: neither is read back
    out.carrier = {pk: by_pattern[v] for pk, v in patterns.items() if by_pattern.get(v) is not None}
    carried = {p for p, _ in out.carrier}
    out.noisy = any(not excluded(p, out.unstable | carried) for p in left_out(changed))
    return out


@dataclass(frozen=True)
class KeptEntropy:
    """A replay candidate: the entropy bits the model carries (:func:`taint`), read back into a stream."""

    carrier: tuple  # ((path, k, j), ...)
    base: bytes
    reference: tuple  # ((path, value), ...): the integers of the base stream's fit
    nbits: int

    @classmethod
    def of(cls, t: Taint, base: bytes) -> "KeptEntropy":
        carrier = tuple(sorted((p, k, j) for (p, k), j in t.carrier.items()))
        paths = {p for p, _, _ in carrier}
        return cls(carrier, bytes(base), tuple((p, t.reference[p]) for p in sorted(paths)),
                   min(t.drawn, MAX_BYTES) * 8)

    @property
    def path(self) -> str:
        """The paths that carry the entropy, joined by `` + `` (the first eight)."""
        return " + ".join(list(dict.fromkeys(p for p, _, _ in self.carrier))[:8])

    @property
    def bits(self) -> int:
        return len({j for _, _, j in self.carrier})

    def value(self, lv: Leaves):
        """The stream a published model's carried bits spell (``None`` when a carrier path is missing)."""
        now, ref = bits_of(lv), dict(self.reference)
        nbytes = self.nbits // 8
        stream, done = int.from_bytes(self.base[:nbytes], "little"), set()
        for p, k, j in self.carrier:
            if p not in now:
                return None
            if j not in done:  # a bit kept twice (a text read as decimal and as hex) is read once
                done.add(j)
                stream ^= (((now[p] ^ ref[p]) >> k) & 1) << j
        return stream.to_bytes(nbytes, "little") + self.base[nbytes:]
