"""Kept randomness in any encoding: generator states in strings, and the raw words of a bit generator.

A fitted model can keep its noise generator's state in forms that are not a generator object or a state
dict: ``json.dumps(rng.bit_generator.state)``, ``repr(state)``, PCG64's ``[state, inc]`` as two ints, the
same as a ``uint64`` array of four words or as bytes, MT19937's 624-word key, Philox's counter and key,
SFC64's four words. Whoever holds such a model loads the words into the bit generator, steps it back to
the fit and redraws the noise.

* :func:`parse_text` reads a string (or UTF-8 bytes) that spells a state dict or a
  ``RandomState.get_state()`` tuple (JSON, or a Python literal such as ``repr``/``str`` of the dict, NumPy
  ``array(...)`` spellings included). Strings longer than :data:`MAX_TEXT` are not parsed. Such a string
  is random state for certain: the walk reports it as kind ``"state"``.
* :func:`views` lists the readings of a node as raw words (ints, lists and tuples of ints, integer arrays
  of any dtype, bytes as little- or big-endian words of 32, 64 or 128 bits). Words alone are ambiguous
  (two large ints may be a hash), so :func:`identify` calls them a state only when they *are* the state
  of a bit generator seeded with the fit's known seed ``t`` after the fit's draws: PCG64 and PCG64DXSM
  whose 128-bit increment equals the seeded one and whose state the seeded one reaches within
  :data:`MAX_STEPS` steps; MT19937 whose 624-word key is a block of ``RandomState(t)`` or ``MT19937(t)``;
  Philox whose two key words equal ``Philox(t)``'s; SFC64 whose four words ``SFC64(t)`` reaches; at least 624
  *outputs* of ``RandomState(t)``, ``MT19937(t)`` or ``random.Random(t)`` drawn within :data:`MAX_STEPS` draws
  (salts, a hashing trick's keys: :mod:`audit.gate.state.twister`, which clones the twister from them). A match
  by chance has probability at most about ``2**-64`` (two 64-bit key words), so it raises no false
  alarm; numbers that merely look large never match.
* :meth:`Match.start` turns another fit's words (same path, same reading) into a generator at that fit's
  start, to be passed as ``random_state`` to a replay: PCG64 stepped back by the measured consumption,
  MT19937 in its first block with the position lowered to the start, Philox with its counter at zero,
  SFC64 stepped back draw by draw (:func:`sfc64_back`: its step is a bijection), a twister's outputs untempered
  and stepped back to the fit's first draw (:func:`audit.gate.state.twister.start_state`). MT19937 beyond its first
  block is not stepped back here: such a match is a finding by the kept-generator argument (epsilon
  infinite) without a measured replay.
"""
from __future__ import annotations

import ast
import functools
import json
import random
import re
from dataclasses import dataclass

import numpy as np

from audit.gate.state import twister

__all__ = ["MAX_TEXT", "MAX_WORDS", "MAX_STEPS", "parse_text", "text_state", "View", "views", "may_hold_words",
           "Match", "identify", "philox_at", "philox_position", "sfc64_back", "sfc64_with",
           "consumption", "rewound", "pcg_pairs", "pcg_steps"]

#: the longest string (or bytes) parsed as a state (an MT19937 state as JSON is about 7,000 characters)
MAX_TEXT = 100_000
#: the most words a list, array or bytes may hold to be read as a bit generator's words
MAX_WORDS = 1_024
#: the most raw draws the fit may have taken from its generator for a match to be found
MAX_STEPS = 200_000

_U64, _U128 = 2 ** 64, 2 ** 128
#: PCG64's and PCG64DXSM's multipliers (the state steps as ``state * m + inc`` modulo ``2**128``)
_PCG_MULT = {"PCG64": 0x2360ED051FC65DA44385DF649FCCF645, "PCG64DXSM": 0xDA942042E4DD58B5}
_ARRAY = re.compile(r"array\(\s*(\[[^\]]*\])\s*(?:,\s*dtype=[\w.]+)?\s*\)")
_FAMILIES = ("PCG64", "PCG64DXSM", "MT19937", "Philox", "SFC64")


def _is_state(v) -> bool:
    if isinstance(v, dict):
        return "bit_generator" in v and "state" in v and str(v["bit_generator"]) in _FAMILIES
    return isinstance(v, (tuple, list)) and len(v) >= 3 and v[0] == "MT19937" and np.size(v[1]) == 624


def parse_text(text):
    """``(state, "JSON" | "repr")`` when ``text`` (a string or UTF-8 bytes, at most :data:`MAX_TEXT` long)
    spells a bit generator's state dict or a ``RandomState.get_state()`` tuple; else ``None``."""
    if isinstance(text, (bytes, bytearray)):
        if not 20 <= len(text) <= MAX_TEXT or text[:1] not in (b"{", b"(", b"["):
            return None
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError:
            return None
    if not isinstance(text, str) or not 20 <= len(text) <= MAX_TEXT:
        return None
    if "bit_generator" not in text and "MT19937" not in text:
        return None
    try:
        v = json.loads(text)
        if _is_state(v):
            return v, "JSON"
    except (ValueError, RecursionError):
        pass
    try:  # literal_eval builds only literals (no names, calls or attribute access): safe on a bounded string
        v = ast.literal_eval(_ARRAY.sub(r"\1", text))
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    return (v, "repr") if _is_state(v) else None


def text_state(node):
    """The state dict (or MT19937 tuple) a string or bytes node spells, else ``None``."""
    hit = parse_text(node)
    return None if hit is None else hit[0]


@dataclass(frozen=True)
class View:
    """One reading of a node as raw words: ``encoding`` says how (``"a list of 2 ints"``,
    ``"a uint64 array of 4 words"``, ``"bytes (little-endian 64-bit words)"``)."""

    encoding: str
    words: tuple


def _int_list(seq):
    out = []
    for v in seq:
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
            return None
        out.append(int(v))
    return out


def may_hold_words(node) -> bool:
    """Whether :func:`views` may read ``node`` as words (its type and size only: cheap)."""
    if isinstance(node, (list, tuple)):
        return 2 <= len(node) <= MAX_WORDS and isinstance(node[0], (int, np.integer))
    if isinstance(node, np.ndarray):
        return node.dtype.kind in "iu" and 2 <= node.size <= MAX_WORDS
    return isinstance(node, (bytes, bytearray)) and 8 <= len(node) <= 16 * MAX_WORDS and node[:1] != b"\x80"


def views(node) -> list:
    """The readings of ``node`` as raw words (see the module docstring); ``[]`` when it is none."""
    if isinstance(node, (list, tuple)) and 2 <= len(node) <= MAX_WORDS:
        words = _int_list(node)
        if words is None or any(w < 0 or w >= _U128 for w in words):
            return []
        return [View(f"a {type(node).__name__} of {len(words)} ints", tuple(words))]
    if isinstance(node, np.ndarray) and node.dtype.kind in "iu" and 2 <= node.size <= MAX_WORDS:
        bits = 8 * node.dtype.itemsize
        words = tuple(int(w) % (1 << bits) for w in node.ravel().tolist())
        return [View(f"a {node.dtype} array of {node.size} words", words)]
    if isinstance(node, (bytes, bytearray)) and 8 <= len(node) <= 16 * MAX_WORDS and node[:1] != b"\x80":
        raw, out = bytes(node), []
        for width in (8, 16, 4):
            if len(raw) % width:
                continue
            for order in ("little", "big"):
                words = tuple(int.from_bytes(raw[i:i + width], order) for i in range(0, len(raw), width))
                out.append(View(f"bytes ({order}-endian {8 * width}-bit words)", words))
        return out
    return []


_INV9 = pow(9, -1, _U64)


def _unxorshift11(a: int) -> int:
    b = a
    for _ in range(6):  # b ^ (b >> 11) inverted: each round fixes 11 more high bits
        b = a ^ (b >> 11)
    return b


def sfc64_back(words, k: int) -> tuple:
    """SFC64's four state words stepped back ``k`` draws (its step is a bijection: the counter, a multiplication
    by 9, an xorshift and an addition are each undone)."""
    a, b, c, d = (int(w) for w in words)
    for _ in range(k):
        d = (d - 1) % _U64
        c_old = (b * _INV9) % _U64
        b_old = _unxorshift11(a)
        tmp = (c - (((c_old << 24) | (c_old >> 40)) % _U64)) % _U64
        a, b, c = (tmp - b_old - d) % _U64, b_old, c_old
    return a, b, c, d


def sfc64_with(words) -> np.random.SFC64:
    """A fresh SFC64 holding the four state words."""
    bg = np.random.SFC64()
    bg.state = {"bit_generator": "SFC64", "state": {"state": np.asarray(words, dtype=np.uint64)}, "has_uint32": 0,
                "uinteger": 0}
    return bg


def philox_position(counter, pos: int) -> int:
    """Raw 64-bit draws since counter zero: ``4 * counter + buffer_pos`` (``Philox(seed)`` starts at 4)."""
    c = sum(int(w) << (64 * i) for i, w in enumerate(np.asarray(counter, dtype=np.uint64).tolist()))
    return 4 * c + int(pos)


def philox_at(key, position: int) -> np.random.Philox:
    """A Philox with ``key`` whose :func:`philox_position` is ``position`` (at least 4)."""
    if position < 4:
        raise ValueError(f"a Philox position below 4 does not occur (got {position})")
    c = (position - 1) // 4
    pos = position - 4 * c
    if c == 0:
        return np.random.Philox(key=np.asarray(key, dtype=np.uint64))
    bg = np.random.Philox(key=np.asarray(key, dtype=np.uint64), counter=c - 1)
    bg.random_raw(pos)
    return bg


@dataclass(frozen=True)
class Match:
    """Words identified as the state of ``family`` seeded with the fit's seed after ``k`` raw draws.

    ``layout`` says where the words sit (family-specific); ``rewind`` is empty when :meth:`start` can
    rebuild the fit's starting generator from another fit's words, else it says why not.
    """

    family: str
    encoding: str
    layout: tuple
    k: int
    rewind: str = ""

    @property
    def name(self) -> str:
        if self.layout[:1] == ("outputs",):
            return f"{self.family} outputs ({self.layout[1]}) as {self.encoding}"
        what = {"PCG64": "state", "PCG64DXSM": "state", "MT19937": "key", "Philox": "key",
                "SFC64": "state"}[self.family]
        return f"{self.family} {what} as {self.encoding}"

    def start(self, words):
        """The generator at the start of the fit whose kept words (same reading) are ``words``."""
        if self.rewind:
            raise ValueError(self.rewind)
        words = tuple(words)
        if self.layout[:1] == ("outputs",):  # outputs drawn after k others: the generator stepped back to the start
            _, order, kind = self.layout
            outputs = dict(twister.readings(words)).get(order)
            if outputs is None:
                raise ValueError(f"the words do not read as {order} outputs")
            return twister.generator_at(kind, *twister.start_state(outputs, self.k))
        if self.family in _PCG_MULT:
            state, inc = _pcg_pair(words, self.layout)
            bg = getattr(np.random, self.family)()
            bg.state = {"bit_generator": self.family, "state": {"state": state, "inc": inc}, "has_uint32": 0,
                        "uinteger": 0}
            bg.advance(-self.k)
            return np.random.Generator(bg)
        if self.family == "MT19937":
            off, pos = self.layout
            rs = np.random.RandomState(0)
            rs.set_state(("MT19937", np.asarray(words[off:off + 624], dtype=np.uint32), pos, 0, 0.0))
            return rs
        if self.family == "Philox":
            return np.random.Generator(np.random.Philox(key=np.asarray(words[self.layout[0]:self.layout[0] + 2],
                                                                         dtype=np.uint64)))
        off = self.layout[0]
        return np.random.Generator(sfc64_with(sfc64_back(words[off:off + 4], self.k)))


def _pcg_pairs(words):
    """``(layout, state, inc)`` readings of words as PCG64's two 128-bit numbers."""
    out = []
    if len(words) == 2:
        out += [(("2", 0), words[0], words[1]), (("2", 1), words[1], words[0])]
    elif len(words) == 4 and all(w < _U64 for w in words):
        for hi_first in (True, False):
            a = (words[0] << 64 | words[1]) if hi_first else (words[1] << 64 | words[0])
            b = (words[2] << 64 | words[3]) if hi_first else (words[3] << 64 | words[2])
            out += [(("4", hi_first, 0), a, b), (("4", hi_first, 1), b, a)]
    return [o for o in out if o[2] % 2 == 1 and o[1] < _U128 and o[2] < _U128]


def _pcg_pair(words, layout):
    for lay, state, inc in _pcg_pairs(words):
        if lay == layout:
            return state, inc
    raise ValueError("the words do not read as PCG64's state and increment in this layout")


def _pcg_steps(start: int, target: int, inc: int, mult: int, max_steps: int):
    s = start
    for k in range(max_steps + 1):
        if s == target:
            return k
        s = (s * mult + inc) % _U128
    return None


@functools.lru_cache(maxsize=16)
def _seeded(family: str, t: int):
    """``family(t)``'s state (cached: every node that may hold words is compared with it)."""
    return getattr(np.random, family)(t).state


def _match_pcg(view, t, max_steps):
    out = []
    pairs = _pcg_pairs(view.words)
    for family, mult in _PCG_MULT.items() if pairs else ():
        seeded = _seeded(family, t)["state"]
        for layout, state, inc in pairs:
            if inc != seeded["inc"]:
                continue
            k = _pcg_steps(seeded["state"], state, inc, mult, max_steps)
            if k is not None:
                return [Match(family, view.encoding, layout, k)]
    return out


@functools.lru_cache(maxsize=4)
def _mt_blocks(t, max_steps):
    """``{key bytes: (start name, block)}``: the keys ``RandomState(t)`` and ``MT19937(t)`` hold in their first
    blocks (block 0: before the first draw)."""
    legacy = np.random.RandomState(t).get_state()[1]
    table = {legacy.tobytes(): ("RandomState", 0)}
    for name in ("RandomState", "MT19937"):
        bg = np.random.MT19937(t) if name == "MT19937" else np.random.MT19937()
        if name == "RandomState":
            bg.state = {"bit_generator": "MT19937", "state": {"key": legacy, "pos": 624}}
        else:
            table.setdefault(bg.state["state"]["key"].tobytes(), (name, 0))
        for block in range(1, max_steps // 624 + 2):
            pos = bg.state["state"]["pos"]
            bg.random_raw(624 - pos if pos < 624 else 624)
            table.setdefault(bg.state["state"]["key"].tobytes(), (name, block))
    return table


def _match_mt(view, t, max_steps):
    w = view.words
    if len(w) < 624 or any(x >= 2 ** 32 for x in w):
        return []
    table = _mt_blocks(t, max_steps)
    for off in range(0, len(w) - 623):
        hit = table.get(np.asarray(w[off:off + 624], dtype=np.uint32).tobytes())
        if hit is None:
            continue
        name, block = hit
        if name == "RandomState" and block <= 1:  # the start: before the first draw, or the first block at 0
            return [Match("MT19937", view.encoding, (off, 624 if block == 0 else 0), 0)]
        return [Match("MT19937", view.encoding, (off, None), 0,
                      rewind=f"the key is block {block} of {name}(seed): MT19937 is not stepped back past the "
                             "start of a block here")]
    return []


@functools.lru_cache(maxsize=4)
def _mt_seeded(t):
    """``[(kind, key, pos)]``: the twisters a fit seeded with ``t`` may build (``RandomState(t)``, ``MT19937(t)``,
    ``random.Random(t)``), in their state before the first draw."""
    made = [("RandomState", np.random.RandomState(t)), ("MT19937", np.random.MT19937(t)), ("Random", random.Random(t))]
    return [(kind, *twister.state_of(g)) for kind, g in made]


def _match_mt_outputs(view, t, max_steps):
    """The view read as a twister's outputs (:mod:`audit.gate.state.twister`) drawn by one seeded with ``t``."""
    seeded = _mt_seeded(t)
    hit = twister.find(view.words, [(key, pos) for _, key, pos in seeded], max_steps)
    if hit is None:
        return []
    order, i, k = hit
    return [Match("MT19937", view.encoding, ("outputs", order, seeded[i][0]), k)]


def _match_philox(view, t):
    key = [int(x) for x in _seeded("Philox", t)["state"]["key"]]
    w = view.words
    for off in range(len(w) - 1):
        if [w[off], w[off + 1]] == key:
            return [Match("Philox", view.encoding, (off,), 0)]
    return []


def _match_sfc(view, t, max_steps):
    w = view.words
    if len(w) < 4 or any(x >= _U64 for x in w[:4]):
        return []
    k = w[3] - int(_seeded("SFC64", t)["state"]["state"][3])
    if not 0 <= k <= max_steps:
        return []
    bg = np.random.SFC64(t)
    if k:
        bg.random_raw(k)
    if [int(x) for x in bg.state["state"]["state"]] != list(w[:4]):
        return []
    return [Match("SFC64", view.encoding, (0,), k)]


def identify(view: View, t: int, max_steps: int = MAX_STEPS) -> list:
    """The :class:`Match` es of ``view`` against bit generators seeded with ``t`` (see the module docstring)."""
    if t is None:
        return []
    found = _match_pcg(view, t, max_steps) + _match_philox(view, t)
    if not found:
        found = _match_sfc(view, t, max_steps)
    if not found and len(view.words) >= 624:
        found = _match_mt(view, t, max_steps)
    if not found:
        found = _match_mt_outputs(view, t, max_steps)
    return found


# --- kept generators and states: the draws a fit consumed, and the generator stepped back by them ---------------

def _bit_generator(state):
    """A fresh bit generator (or ``RandomState``) holding a copy of a kept generator or generator state (a state
    spelt as a JSON or ``repr`` string included)."""
    if isinstance(state, (str, bytes, bytearray)):
        state = text_state(state)
    if isinstance(state, np.random.Generator):
        state = state.bit_generator
    if isinstance(state, np.random.BitGenerator):
        state = state.state
    if isinstance(state, np.random.RandomState):
        state = state.get_state(legacy=False)
    if isinstance(state, (tuple, list)) and state and state[0] == "MT19937":
        state = {"bit_generator": "MT19937", "state": {"key": np.asarray(state[1]), "pos": int(state[2])}}
    if isinstance(state, dict) and "bit_generator" in state:
        name = str(state["bit_generator"])
        bg = getattr(np.random, name)()
        if name == "MT19937":
            inner = state["state"]
            state = {**state, "state": {"key": np.asarray(inner["key"], dtype=np.uint32), "pos": int(inner["pos"])}}
        elif name == "Philox":
            inner = state["state"]
            state = {**state, "state": {"counter": np.asarray(inner["counter"], dtype=np.uint64),
                                        "key": np.asarray(inner["key"], dtype=np.uint64)},
                     "buffer": np.asarray(state.get("buffer", [0] * 4), dtype=np.uint64)}
        elif name == "SFC64":
            state = {**state, "state": {"state": np.asarray(state["state"]["state"], dtype=np.uint64)}}
        bg.state = state
        return bg
    raise ValueError(f"a {type(state).__name__} state cannot be passed as random_state")


def _mt_pos(bg):
    return int(bg.state["state"]["pos"])


def _philox_position(bg) -> int:
    st = bg.state
    return philox_position(st["state"]["counter"], st["buffer_pos"])


def consumption(state, t: int, max_steps: int = MAX_STEPS) -> int:
    """How many raw draws a fit seeded with ``t`` took from its generator: ``default_rng(t)`` or another
    PCG64-family generator seeded with ``t`` (step a copy with ``advance(1)``), ``Philox(t)`` (its counter and
    buffer position), ``SFC64(t)`` (its draw counter) or ``RandomState(t)`` (MT19937: the position in its first
    block)."""
    bg = _bit_generator(state)
    if isinstance(bg, np.random.MT19937):
        ref = np.random.RandomState(t)
        ref.random_sample()
        if not np.array_equal(ref.get_state()[1], bg.state["state"]["key"]):
            raise ValueError("the kept RandomState left the first block of RandomState(seed)")
        return _mt_pos(bg)
    if isinstance(bg, np.random.Philox):
        start = np.random.Philox(t)
        if not np.array_equal(start.state["state"]["key"], bg.state["state"]["key"]):
            raise ValueError("the kept Philox is not Philox(seed)")
        k = _philox_position(bg) - _philox_position(start)
        if not 0 <= k <= max_steps:
            raise ValueError(f"not reached from Philox(seed) within {max_steps:,} draws")
        return k
    if isinstance(bg, np.random.SFC64):
        start = np.random.SFC64(t)
        k = int(bg.state["state"]["state"][3]) - int(start.state["state"]["state"][3])  # its fourth word counts draws
        if not 0 <= k <= max_steps:
            raise ValueError(f"not reached from SFC64(seed) within {max_steps:,} draws")
        if k:
            start.random_raw(k)
        if not np.array_equal(start.state["state"]["state"], bg.state["state"]["state"]):
            raise ValueError("the kept SFC64 is not SFC64(seed)")
        return k
    if not hasattr(bg, "advance"):
        raise ValueError(f"{type(bg).__name__} cannot be rewound")
    start = type(bg)(t)
    target = bg.state["state"]
    for k in range(max_steps + 1):
        if start.state["state"] == target:
            return k
        start.advance(1)
    raise ValueError(f"not reached from {type(bg).__name__}(seed) within {max_steps:,} draws")


def rewound(state, k: int):
    """A generator holding a copy of ``state`` stepped back ``k`` draws: a ``Generator`` (PCG64 family, Philox
    through its counter, SFC64 draw by draw) or a ``RandomState`` whose block position is lowered by ``k`` (MT19937)."""
    bg = _bit_generator(state)
    if isinstance(bg, np.random.MT19937):
        st = bg.state
        if _mt_pos(bg) < k:
            raise ValueError("cannot rewind past the start of the block")
        st["state"]["pos"] = _mt_pos(bg) - k
        rs = np.random.RandomState(0)
        rs.set_state(("MT19937", st["state"]["key"], st["state"]["pos"], 0, 0.0))
        return rs
    if isinstance(bg, np.random.Philox):
        return np.random.Generator(philox_at(bg.state["state"]["key"], _philox_position(bg) - k))
    if isinstance(bg, np.random.SFC64):
        return np.random.Generator(sfc64_with(sfc64_back(bg.state["state"]["state"], k)))
    if not hasattr(bg, "advance"):
        raise ValueError(f"{type(bg).__name__} cannot be rewound")
    bg.advance(-k)
    return np.random.Generator(bg)


#: public names of the PCG64 readings (:mod:`audit.gate.state.unseeded`)
pcg_pairs, pcg_steps = _pcg_pairs, _pcg_steps
