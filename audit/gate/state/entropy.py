"""Kept entropy: the OS randomness a fit drew, found again in the model it published, bit by bit.

A fit that seeds its noise from the OS (``secrets.randbits``, ``uuid4()``, ``os.urandom``, ``SeedSequence()``)
and keeps that seed in any reversible spelling (two 32-bit halves, the raw bytes, a list of words, hexadecimal
inside a text) publishes its own noise. The spellings are many; the principle is one: whoever holds the model
reads the entropy back and replays the fit. This module finds the spelling by experiment instead of by form.

* :func:`fed` feeds a fit a chosen byte stream as its OS entropy (``os.urandom`` and the ``random`` module's
  ``_urandom``, which ``secrets``, ``uuid4`` and NumPy's ``SeedSequence()`` all read) and as the output of every
  generator that seeds itself (the ``random`` module's, ``random.Random()``, ``default_rng()``, NumPy's legacy
  global generator: a seed drawn from one is the stream's bits, not a hash of them), and counts what it drew.
* :func:`taint` fits on a base stream, then on :data:`MASKS` streams that each flip a random half of the bits the
  fit drew. A model's integer (its ints, int array entries, bytes, the integers its texts spell) whose bit ``k``
  flips in exactly the fits that flip entropy bit ``j`` *carries* bit ``j``: the two 32-mask patterns agree by
  chance with probability ``2**-32`` per pair. Every copy, split, byte order or bit permutation of the entropy is
  found this way. When fewer than 32 entropy bits are carried so (no seed is), a model bit that is an exclusive
  or of entropy bits (a seed xor a constant
  kept beside, its Gray code, a shift-and-xor scramble) is read by solving the bits' patterns over ``GF(2)``
  (:func:`_linear`); an arithmetic transform with carries (``seed + 1``) or a hash is not.
* :class:`KeptEntropy` reads a published model's carried bits back into a stream (bits not carried stay the
  base stream's): the replay feeds that stream to a fresh fit on D (:mod:`audit.gate.state.replay`, mode
  ``entropy``), and :func:`audit.gate.state.replay.measure` turns reproductions into an epsilon lower bound.

Do not run :func:`fed` beside other threads that draw OS entropy: the patch is process-wide for its block.
"""
from __future__ import annotations

import datetime
import os
import random
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np

from audit.gate.state.bindings import rebound
from audit.gate.state.fingerprint import Leaves, differing, excluded, left_out
from audit.gate.state.twister import untemper

__all__ = ["fed", "stand_in", "bits_of", "taint", "KeptEntropy", "Taint", "MASKS", "MAX_BYTES", "GENERATOR_WORDS"]

#: masked fits per taint map: a model bit and an entropy bit agree on every mask by chance with probability 2**-32
MASKS = 32
#: entropy bytes mapped at most (a fit that draws more keeps the rest as the base stream's, and the report says so)
MAX_BYTES = 512
#: 32-bit outputs of a generator seeded from the OS that are mapped (a seed it draws; its later outputs are filler)
GENERATOR_WORDS = 16
#: array entries read per model at most, for the map
MAX_ENTRIES = 4096
#: pairs of masks testing each model bit for linearity (:func:`_linear`)
LINEAR_TESTS = 8
#: masks beyond the linear patterns' rank: an entropy bit is spelled by chance with probability 2**-LINEAR_MARGIN
LINEAR_MARGIN = 32
#: masked fits at most for the linear reading, and linear model bits at most
LINEAR_MAX_MASKS = 320
LINEAR_MAX_BITS = 8192
#: linear model bits beyond the exact carriers needed to read an encoding (a seed of fewer bits is no seed)
LINEAR_MIN_BITS = 16


class _Stream:
    """The bytes a fit is fed: ``data`` first, then a fixed filler; ``drawn`` counts what it took.

    Every draw comes from a *source*: one call of ``os.urandom`` (or ``getrandom``, ``random._urandom``), one
    generator built without a seed, one ``random.Random()`` made without a seed, or the ``random`` module's own
    generator. ``sources`` lists them in the order they first drew. ``replace=(j, seed)`` gives the ``j``-th source
    bytes (a generator: a whole state) of its own from ``seed``; it still takes its share of ``data``, so every
    other source reads what it read before (:mod:`audit.gate.state.idle`)."""

    def __init__(self, data: bytes, replace=None):
        self.data, self.drawn = bytes(data), 0
        self.filler = np.random.Generator(np.random.PCG64(20261206))
        #: every bit generator built under :func:`fed`, in order
        self.built: list = []
        #: the sources of entropy, in the order they first drew (their keys)
        self.sources: list = []
        self._index: dict = {}
        self.replace = replace
        self._own = None

    def __call__(self, n: int) -> bytes:  # os.urandom: every call is a source of its own
        return self.draw(n, ("os", len(self.sources)))

    def draw(self, n: int, key) -> bytes:
        """``n`` bytes for the source ``key`` (its own when it is the one replaced)."""
        n = int(n)
        lo, hi = self.drawn, self.drawn + n
        self.drawn = hi
        out = self.data[lo:hi]
        if len(out) < n:
            out += self.filler.bytes(n - len(out))
        if self.replaced(key):
            if self._own is None:
                self._own = np.random.Generator(_PCG64(self.replace[1]))
            out = self._own.bytes(n)
        return out

    def replaced(self, key) -> bool:
        """Whether the source ``key`` is the one given bytes of its own (registering it on its first draw)."""
        if key not in self._index:
            self._index[key] = len(self.sources)
            self.sources.append(key)
        return self.replace is not None and self._index[key] == self.replace[0]


def _fed_mt19937(stream: "_Stream") -> np.random.MT19937:
    """A Mersenne twister whose first :data:`GENERATOR_WORDS` 32-bit outputs are the next words of ``stream``
    (its state set to their untempered values), the rest a fixed filler's: the generator an unseeded
    constructor builds under :func:`fed`, so that a seed it draws is the stream's bits, not a hash of them."""
    key = ("generator", len(stream.built))
    raw = stream.draw(4 * GENERATOR_WORDS, key)
    words = np.frombuffer(raw, dtype="<u4").tolist()
    filler = stream.filler.integers(0, 2 ** 32, 624 - GENERATOR_WORDS, dtype=np.uint32).tolist()
    if stream.replaced(key):
        bg = _MT19937(stream.replace[1])  # a whole state, and seed sequence, of its own
    else:  # its seed sequence holds the stream's words too: a child it spawns is the stream's
        bg = _MT19937(int.from_bytes(raw, "little"))
        bg.state = {"bit_generator": "MT19937",
                    "state": {"key": np.array([untemper(w) for w in words + filler], dtype=np.uint32), "pos": 0}}
    stream.built.append(bg)
    return bg


_MT19937, _PCG64 = np.random.MT19937, np.random.PCG64


class _Lazy:
    """Stands for NumPy's legacy global generator, built at its first use (so a fit that never uses it draws
    nothing); ``isinstance(proxy, numpy.random.RandomState)`` holds, as it does for the generator it stands for."""

    __class__ = property(lambda self: np.random.RandomState)

    def __init__(self, build):
        self._build, self._made = build, None

    def __getattr__(self, name):
        if self._made is None:
            self._made = self._build()
        return getattr(self._made, name)


class _StandsFor(type):
    """The metaclass of a stand-in class: ``isinstance(x, Stand)`` holds for every instance of the class it
    stands for (its first base), so code that checks a generator's type is not turned away under :func:`fed`."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, cls.__mro__[1])

    def __subclasscheck__(cls, sub):
        return issubclass(sub, cls.__mro__[1])


def stand_in(real, build):
    """A stand-in for the generator class ``real``: built without a seed (or any other argument) it is
    ``build()``; with one, it is ``real`` itself."""
    class Stand(real, metaclass=_StandsFor):
        def __new__(cls, seed=None, *args, **kwargs):
            return build() if seed is None and not args and not kwargs else real(seed, *args, **kwargs)

    Stand.__name__ = Stand.__qualname__ = real.__name__
    return Stand


#: the bit generators NumPy seeds from the OS when given no seed (each stands in for itself under :func:`fed`)
_BIT_GENERATORS = ("PCG64", "PCG64DXSM", "MT19937", "Philox", "SFC64")
#: the legacy ``numpy.random`` functions that draw from its global ``RandomState``
_LEGACY = tuple(name for name in dir(np.random) if not name.startswith("_")
                and getattr(getattr(np.random, name), "__self__", None) is np.random.mtrand._rand)


@contextmanager
def fed(data: bytes, replace=None):
    """Within the block, every source of randomness that seeds itself from the OS draws from ``data``, then a
    fixed filler; yields the stream, whose ``drawn`` is the number of bytes the block drew, whose ``built``
    lists the bit generators built without a seed, in order, and whose ``sources`` lists the sources that drew
    (``replace=(j, seed)``: the ``j``-th source is given bytes, or a whole state, of its own,
    :mod:`audit.gate.state.idle`).

    * ``os.urandom`` and ``random._urandom`` return the stream's bytes (``secrets``, ``uuid4()``,
      ``SeedSequence()`` and so ``default_rng()``'s hashed seed read them);
    * the ``random`` module's own generator and every ``random.Random()`` made without a seed draw their bits
      from the stream (``getrandbits``, ``random``, and through them ``randint``, ``choice``, ``shuffle``);
    * ``os.getrandom`` returns the stream's bytes too;
    * ``numpy.random.default_rng()``, ``RandomState()`` and the bit generators (``PCG64()``, ``MT19937()``,
      ``Philox()``, ``SFC64()``, ``PCG64DXSM()``) made without a seed, and NumPy's legacy global generator
      (``np.random.randint`` and the other module functions, ``np.random.mtrand._rand`` as scikit-learn's
      ``check_random_state(None)`` returns it) are Mersenne twisters whose first :data:`GENERATOR_WORDS` outputs
      are the stream's next words, built at first use (``isinstance`` checks against the classes still hold).

    A constructor or function bound by name before the block (``from numpy.random import default_rng``, ``from os
    import urandom``) is patched where it is bound too (:func:`audit.gate.state.bindings.rebound`)."""
    stream = _Stream(data, replace)

    def getrandbits(k, key="random"):
        return int.from_bytes(stream.draw((k + 7) // 8, key), "little") & ((1 << k) - 1) if k else 0

    original_rng, original_random = np.random.default_rng, random.Random

    class FedRandom(original_random):
        def seed(self, a=None, version=2):
            self._fed = a is None
            if self._fed:  # a source of its own; its state (getstate, never drawn from) one the stream decides
                self._key = ("Random", len(stream.sources))
                a = stream.replace[1] if stream.replaced(self._key) else len(stream.sources)
            super().seed(a, version)

        def getrandbits(self, k):
            return getrandbits(k, self._key) if getattr(self, "_fed", False) else super().getrandbits(k)

        def random(self):
            return getrandbits(53, self._key) * 2.0 ** -53 if getattr(self, "_fed", False) else super().random()

    real_state = np.random.RandomState
    legacy = _Lazy(lambda: real_state(_fed_mt19937(stream)))
    classes = {name: getattr(np.random, name) for name in ("RandomState", *_BIT_GENERATORS)}
    saved = (os.urandom, getattr(os, "getrandom", None), random._urandom, random.getrandbits, random.random,
             np.random.mtrand._rand, {name: getattr(np.random, name) for name in _LEGACY})
    had = "getrandbits" in vars(random._inst)
    os.urandom = random._urandom = stream
    if saved[1] is not None:
        os.getrandom = lambda size, flags=0: stream(size)
    np.random.RandomState = stand_in(real_state, lambda: real_state(_fed_mt19937(stream)))
    for name in _BIT_GENERATORS:
        setattr(np.random, name, stand_in(classes[name], lambda: _fed_mt19937(stream)))
    random.getrandbits = random._inst.getrandbits = getrandbits
    random.random = lambda: getrandbits(53) * 2.0 ** -53
    random.Random = FedRandom
    np.random.default_rng = lambda seed=None: np.random.Generator(_fed_mt19937(stream)) if seed is None \
        else original_rng(seed)
    np.random.mtrand._rand = legacy
    for name in _LEGACY:
        setattr(np.random, name, lambda *a, _name=name, **k: getattr(legacy, _name)(*a, **k))
    originals = {original_rng: np.random.default_rng, real_state: np.random.RandomState,
                 original_random: random.Random, saved[0]: stream, saved[3]: random.getrandbits,
                 saved[4]: random.random, **{classes[n]: getattr(np.random, n) for n in _BIT_GENERATORS},
                 **{fn: getattr(np.random, n) for n, fn in saved[6].items()}}
    try:
        with rebound(originals):  # names bound before the block (from numpy.random import default_rng)
            yield stream
    finally:
        os.urandom, getrandom, random._urandom, random.getrandbits, random.random, np.random.mtrand._rand, \
            functions = saved
        if getrandom is not None:
            os.getrandom = getrandom
        random.Random, np.random.default_rng = original_random, original_rng
        for name, cls in classes.items():
            setattr(np.random, name, cls)
        for name, fn in functions.items():
            setattr(np.random, name, fn)
        if not had:
            del random._inst.getrandbits


def _integral(x) -> int | None:
    """``x`` as an int when it is a finite float of integer value below 2**63 in magnitude, else None."""
    return int(x) if np.isfinite(x) and float(x).is_integer() and abs(x) < 2.0 ** 63 else None


def _array_ints(path: str, v: np.ndarray, room: int) -> dict:
    """The integers an array's first ``room`` entries hold: int entries, float entries of integer value, the real
    and imaginary parts of complex ones (``.real``, ``.imag``), dates and durations as their int64 ticks."""
    if v.dtype.kind in "Mm":
        v = v.view("i8")
    flat = v.ravel()[:room]
    if v.dtype.kind in "iu":
        return {f"{path}[{i}]": int(x) for i, x in enumerate(flat.tolist())}
    if v.dtype.kind == "c":
        return {**_array_ints(path + ".real", flat.real, room), **_array_ints(path + ".imag", flat.imag, room)}
    if v.dtype.kind == "f":
        return {f"{path}[{i}]": int(x) for i, x in enumerate(flat.tolist()) if _integral(x) is not None}
    return {}


def _when(v) -> int | None:
    """A date, time or duration as an int: microseconds (a ``datetime`` from the Unix epoch, a ``time`` from
    midnight, a ``timedelta``) or days (a ``date``'s ordinal); None for anything else."""
    micro = datetime.timedelta(microseconds=1)
    if isinstance(v, datetime.datetime):
        return (v.replace(tzinfo=None) - datetime.datetime(1970, 1, 1)) // micro
    if isinstance(v, datetime.date):
        return v.toordinal()
    if isinstance(v, datetime.timedelta):
        return v // micro
    if isinstance(v, datetime.time):
        return ((v.hour * 60 + v.minute) * 60 + v.second) * 10 ** 6 + v.microsecond
    return None


def bits_of(lv: Leaves) -> dict:
    """The model's integers by path, for the map: int scalars, floats of integer value (a seed kept as a float),
    the parts of complex numbers, array entries of those kinds (the first :data:`MAX_ENTRIES` in all), dates and
    durations as their ticks, the integers its texts spell, bytes (read little-endian), and the same of what the
    fit left beside the model or the model serves (``lv.around``)."""
    out, entries = {}, 0
    for path, v in [*lv.numeric.items(), *lv.around.items()]:
        if isinstance(v, (bytes, bytearray)):
            out[path] = int.from_bytes(bytes(v), "little")
            continue
        if path.endswith(("#len", "#content")) or isinstance(v, (bool, np.bool_)):
            continue
        if isinstance(v, (np.datetime64, np.timedelta64)):  # before the integers: a timedelta64 is one
            out[path] = int(np.asarray(v).view("i8"))
        elif isinstance(v, (int, np.integer)):
            out[path] = int(v)
        elif isinstance(v, (float, np.floating)) and _integral(v) is not None:
            out[path] = _integral(v)
        elif isinstance(v, (complex, np.complexfloating)):
            out.update((f"{path}.{part}", _integral(x)) for part, x in (("real", v.real), ("imag", v.imag))
                       if _integral(x) is not None)
        elif isinstance(v, np.ndarray) and entries < MAX_ENTRIES:
            found = _array_ints(path, v, MAX_ENTRIES - entries)
            entries += min(v.size, MAX_ENTRIES - entries)
            out.update(found)
        elif (when := _when(v)) is not None:
            out[path] = when
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
    #: entropy bit ``j`` -> the model bits ``((path, k), ...)`` whose exclusive or is it (:func:`_linear`)
    combos: dict = field(default_factory=dict)
    unstable: set = field(default_factory=set)
    noisy: bool = False
    capped: bool = False
    reference: dict = field(default_factory=dict)

    @property
    def bits(self) -> int:
        """Entropy bits carried (at least once)."""
        return len(set(self.carrier.values()) | set(self.combos))


def _flips(x: int) -> list:
    return [k for k in range(x.bit_length()) if x >> k & 1] if x >= 0 else []


def _stream(base: bytes, base_int: int, mask: int, nbits: int) -> bytes:
    return (base_int ^ mask).to_bytes(nbits // 8, "little") + base[nbits // 8:]


def _delta(f0: dict, fr: dict, unstable) -> dict:
    """The bits of each non-negative integer that differ between two fits' maps (``{path: xor}``)."""
    return {p: v ^ fr[p] for p, v in f0.items()
            if p in fr and v >= 0 and fr[p] >= 0 and not excluded(p, unstable)}


def _linear(fit, base, base_int, masks, f0, deltas, nbits, unstable, rng, skip=frozenset()) -> dict:
    """Entropy bits that an exclusive or of model bits spells: any encoding linear over bits (a seed xor a
    constant, its Gray code ``s ^ (s >> 1)``, ``s ^ (s << 13)``, bits shuffled and mixed) is undone.

    A model bit is *linear* when flipping the entropy by ``m ^ m'`` flips it exactly when ``m`` and ``m'`` do
    an odd number of times, for :data:`LINEAR_TESTS` pairs of masks (a bit of the noise, which depends on the
    entropy through a hash, passes each test with probability 1/2). Over ``M`` masks, each linear bit has a
    pattern in ``GF(2)^M``; entropy bit ``j`` is the exclusive or of the linear bits whose patterns add up to
    its own (Gaussian elimination). Masks are added until ``M`` exceeds the patterns' rank by
    :data:`LINEAR_MARGIN`, so a pattern falls in their span by chance with probability at most
    ``2**-LINEAR_MARGIN``; the replay then checks each reading on fresh fits. The exact carriers (``skip``) are
    part of the span (a Gray code's top bit is one), but fewer than :data:`LINEAR_MIN_BITS` linear bits beyond
    them is no encoding, and the masks are not grown. Returns ``{j: ((path, k), ...)}`` (the caller keeps the
    bits no exact carrier holds).
    """
    tests = []
    for t in range(LINEAR_TESTS):
        a, b = 2 * t, 2 * t + 1
        fr = bits_of(fit(_stream(base, base_int, masks[a] ^ masks[b], nbits))[0])
        tests.append((a, b, _delta(f0, fr, unstable)))
    linear = []
    for p in f0:
        if not all(p in d for d in deltas) or not all(p in d for _, _, d in tests):
            continue
        moved = 0
        for d in deltas:
            moved |= d[p]
        ok = moved
        for a, b, d in tests:
            ok &= ~(d[p] ^ deltas[a][p] ^ deltas[b][p])
        linear.extend((p, k) for k in _flips(ok))
    if len(set(linear) - set(skip)) < LINEAR_MIN_BITS or len(linear) > LINEAR_MAX_BITS:
        return {}  # no encoding beyond the exact carriers (a bit of the noise passes every test once in 256)
    masks, deltas = list(masks), list(deltas)
    while True:
        basis = _basis([sum(((d[p] >> k) & 1) << r for r, d in enumerate(deltas)) for p, k in linear])
        if len(basis) + LINEAR_MARGIN <= len(masks) or len(masks) >= LINEAR_MAX_MASKS:
            break
        for _ in range(min(len(basis) + LINEAR_MARGIN - len(masks), LINEAR_MAX_MASKS - len(masks))):
            masks.append(int.from_bytes(rng.bytes(nbits // 8), "little"))
            deltas.append(_delta(f0, bits_of(fit(_stream(base, base_int, masks[-1], nbits))[0]), unstable))
        linear = [(p, k) for p, k in linear if all(p in d for d in deltas)]
    if len(basis) + LINEAR_MARGIN > len(masks):
        return {}
    combos = {}
    for j in range(nbits):
        composed = _reduce(basis, sum(((m >> j) & 1) << r for r, m in enumerate(masks)))
        if composed is not None:
            combos[j] = tuple(linear[i] for i in _flips(composed))
    return combos


def _basis(vectors: list) -> dict:
    """A reduced basis of ``vectors`` over ``GF(2)``: pivot bit -> ``(vector, which inputs xor to it)``."""
    basis: dict = {}
    for i, v in enumerate(vectors):
        composed = 1 << i
        for pivot in sorted(basis, reverse=True):
            if v >> pivot & 1:
                v ^= basis[pivot][0]
                composed ^= basis[pivot][1]
        if v:
            basis[v.bit_length() - 1] = (v, composed)
    return basis


def _reduce(basis: dict, v: int):
    """Which inputs of the basis xor to ``v`` (a bit set), or None when ``v`` is not in their span."""
    composed = 0
    for pivot in sorted(basis, reverse=True):
        if v >> pivot & 1:
            v ^= basis[pivot][0]
            composed ^= basis[pivot][1]
    return composed if v == 0 else None


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
    deltas = []  # per mask: path -> the bits that flipped (paths of non-negative integers only)
    for r, mask in enumerate(masks):
        lv = fit(_stream(base, base_int, mask, nbits))[0]
        changed |= differing(with_base.numeric, lv.numeric) | differing(with_base.digits, lv.digits)
        fr = bits_of(lv)
        deltas.append(_delta(f0, fr, out.unstable))
        for p, d in deltas[-1].items():
            for k in _flips(d):
                patterns[(p, k)] = patterns.get((p, k), 0) | 1 << r
    by_pattern = {}
    for j in range(nbits):
        key = sum((m >> j & 1) << r for r, m in enumerate(masks))
        by_pattern[key] = None if key in by_pattern else j  # two entropy bits alike: neither is read back
    out.carrier = {pk: by_pattern[v] for pk, v in patterns.items() if by_pattern.get(v) is not None}
    known = set(out.carrier.values())
    if len(known) < LINEAR_MIN_BITS * 2:  # no seed carried bit for bit yet: read encodings linear over bits
        out.combos = {j: bits for j, bits in _linear(fit, base, base_int, masks, f0, deltas, nbits, out.unstable, rng,
                                                     skip=set(out.carrier)).items() if j not in known}
    carried = {p for p, _ in out.carrier} | {p for bits in out.combos.values() for p, _ in bits}
    out.noisy = any(not excluded(p, out.unstable | carried) for p in left_out(changed))
    return out


@dataclass(frozen=True)
class KeptEntropy:
    """A replay candidate: the entropy bits the model carries (:func:`taint`), read back into a stream."""

    carrier: tuple  # ((path, k, j), ...)
    base: bytes
    reference: tuple  # ((path, value), ...): the integers of the base stream's fit
    nbits: int

    #: entropy bits spelled by an exclusive or of their carriers (every carrier of such a bit is read)
    combined: frozenset = frozenset()

    @classmethod
    def of(cls, t: Taint, base: bytes) -> "KeptEntropy":
        carrier = tuple(sorted({(p, k, j) for (p, k), j in t.carrier.items()}
                               | {(p, k, j) for j, bits in t.combos.items() for p, k in bits}))
        paths = {p for p, _, _ in carrier}
        return cls(carrier, bytes(base), tuple((p, t.reference[p]) for p in sorted(paths)),
                   min(t.drawn, MAX_BYTES) * 8, frozenset(t.combos))

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
            if j in self.combined:  # an exclusive or of model bits
                stream ^= (((now[p] ^ ref[p]) >> k) & 1) << j
            elif j not in done:  # a bit kept twice (a text read as decimal and as hex) is read once
                done.add(j)
                stream ^= (((now[p] ^ ref[p]) >> k) & 1) << j
        return stream.to_bytes(nbytes, "little") + self.base[nbytes:]
