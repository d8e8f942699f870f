"""The parts of an observable value: what the determinism probe judges beside the whole value.

A value that never repeats between fits can still carry a part that does. ``fitted on 7 records (4 positive)
in 0.41 ms`` differs on every fit because of its duration, but its ``4`` is the same on every fit of D and
different on D'; a JSON model card with a ``run_id`` never repeats, but its ``n_train`` does; a module registry
keyed by ``uuid4().hex`` gets a new path on every fit, but its newest entry is this fit's. The probe's principle
(:mod:`audit.gate.determinism`: the same on every fit of D, different on D') applies unchanged to these parts,
which :mod:`audit.gate.observe` records as extra paths below the value's own path (so a part comes from the
same source, :func:`audit.gate.observe.source_of`, as its value):

* ``PATH#num[CONTEXT]``: each number token of a string (:func:`number_parts`), named by its context: the text
  around it on its line with every number and identifier masked as ``_`` and the token itself as ``#``
  (``stdout#num['fitted on _ records (# positive) in _ ms']``), and `` @2``, ``@3``... when the same context
  comes again. Masking identifiers (``0x`` addresses, words that mix digits and letters such as a hex run id)
  keeps the context the same from fit to fit (a uuid is one identifier, even where a group of it is all
  digits), so a memory address in decimal or hex beside a count needs no rule
  of its own: the address token never repeats and the count token does.
* ``PATH#form[CONTEXT]``: the format of each number token, in letters (no digit, so no digit mask merges two
  formats): the integer part ``n``, each digit of the fraction ``d``, an exponent ``eN`` (``12.345`` and
  ``-3.250`` are both ``n.ddd``; every token has one, so which paths exist never depends on a value): a noisy
  value printed with a precision chosen by the record count repeats its format on every fit of D, though never
  its value.
* ``PATH#json``, ``#gzip``, ``#zlib``, ``#bz2``, ``#xz``, ``#base64``, ``#pickle``, ``#text``: the value a string
  or bytes decodes to (:func:`decoded`: every compression of Python's standard library), read as a small graph
  of its own; nested encodings are followed a few levels (:data:`MAX_DEPTH`).
* ``PATH#frac``, ``PATH#low8`` and ``PATH#low16``: the bits of a float that noise above them leaves as they were
  (:func:`float_parts`): its fractional part (a count added at ``2**-32`` to a noisy integer count) and the lowest
  bits of its significand (a count written over the end of a noisy float); of a float array, the same of every
  entry.
* ``PATH#base``: the whole array an array is a view of (its ``.base``, when that holds more): a model that keeps
  the noisy slice of a stack of exact and noisy tables keeps the stack alive.
* ``PATH#word[i]`` and ``PATH#byte[i]``: the words of a text (runs of letters and digits) that hold a digit, and
  the bytes of a
  bytes value by position from each end (``i`` from 0, and from -1 at the end; :func:`position_parts`): a
  file name ``model-1a2b3c4d-n4.joblib`` never repeats, but its word ``n4`` does, and a binary header packs a
  count at a fixed offset.
* ``PATH#index``, ``PATH#columns`` and ``PATH#item[LABEL]``: a pandas object's index in its order (a table sorted
  by its exact counts), a frame's columns and a series' items by label (:func:`pandas_parts`).
* ``PATH[#0]``, ``PATH[#-1]``: the first and last items of a dict, when its first or last keys look
  like identifiers that never repeat between fits (:func:`is_identifier`: a hex run with digits and letters, a
  long decimal run, an int of 2**32 or more, bytes), so the path of such an item never repeats either. Only
  those dicts: an ordinary dict's items already have stable paths, and reading every dict twice would double
  the walk.

Parts are bounded: at most :data:`MAX_TOKENS` number tokens per string (the first and the last halves), strings
scanned up to :data:`MAX_TEXT` characters, encodings decoded up to :data:`MAX_DECODED` bytes in and out, and
each decoded value or positioned item read with at most :data:`PART_NODES` nodes by the caller.
"""
from __future__ import annotations

import base64
import binascii
import bz2
import json
import lzma
import pickle
import re
import zlib

import numpy as np

__all__ = ["number_parts", "decoded", "float_parts", "position_parts", "pandas_parts", "positions", "is_identifier", "whole_of", "ancestors",
           "MAX_TOKENS", "MAX_TEXT", "MAX_DECODED", "MAX_DEPTH", "PART_NODES", "MARKERS", "COMPRESSED"]

#: number tokens kept per string (the first half and the last half of them), each with its value and its format
MAX_TOKENS = 32
#: characters of a string scanned for number tokens
MAX_TEXT = 100_000
#: bytes of an encoded value decoded, and of what it decodes to
MAX_DECODED = 1 << 20
#: levels of parts below a value (a number inside JSON inside base64 inside gzip is three)
MAX_DEPTH = 3
#: nodes of a decoded value or a positioned dict item read
PART_NODES = 1_000
#: characters of masked context kept on each side of a number token
CONTEXT = 32
#: how a part's path continues its value's path
MARKERS = ("#num[", "#form[", "#entry[", "#json", "#gzip", "#zlib", "#bz2", "#xz", "#base64", "#pickle", "#text", "#frac", "#low", "[#", "#word[",
           "#byte[", "#index", "#columns", "#item[", "#base")
#: words of a text, and bytes of a bytes value, read by position from each end
MAX_POSITIONS = 16
#: items of a pandas Series read by label, at most
MAX_ITEMS = 64
#: float entries of an array whose low bits are read (a larger array is read whole only)
MAX_FLOATS = 4_096
#: the windows of a significand's lowest bits read, by the float's size in bytes: a count written over the last 8
#: or more bits changes the lowest 8 between neighbours, and a window of 8 repeats by chance one time in 256
LOW_BITS = {8: (8, 16), 4: (8,)}

_SLOT = re.compile(
    r"(?P<uuid>[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})"
    r"|(?P<hex>0x[0-9a-fA-F]+)"
    r"|(?P<num>(?<![A-Za-z0-9.])-?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?)(?![A-Za-z0-9]|\.[0-9])"
    r"|(?P<word>[A-Za-z0-9]*[0-9][A-Za-z0-9]*)")
_IDENTIFIER = re.compile(r"(?<![A-Za-z0-9])(?=[0-9a-fA-F]*[0-9])(?=[0-9a-fA-F]*[a-fA-F])[0-9a-fA-F]{8,}"
                         r"(?![A-Za-z0-9])|[0-9]{9,}")
_DIGIT = re.compile(r"[0-9]")
_JSON_START = re.compile(r"\s*[\[{]")
_BASE64 = re.compile(r"[A-Za-z0-9+/_-]{16,}={0,2}")
_MARKER = re.compile("|".join(re.escape(m) for m in MARKERS))


def _number(token: str):
    """The int or float a number token spells."""
    try:
        return int(token)
    except ValueError:
        return float(token)


def _masked(text: str, matches: list):
    """``text`` with every slot (number or identifier) replaced by ``_``, and where each slot's ``_`` is."""
    pieces, where, pos, length = [], [], 0, 0
    for m in matches:
        gap = text[pos:m.start()]
        pieces += [gap, "_"]
        length += len(gap)
        where.append(length)
        length += 1
        pos = m.end()
    pieces.append(text[pos:])
    return "".join(pieces), where


def _context(masked: str, at: int) -> str:
    """The masked text around the slot at ``at`` on its line, the slot itself ``#``, at most :data:`CONTEXT`
    characters each side, whitespace collapsed."""
    before = masked[max(0, at - CONTEXT):at].rsplit("\n", 1)[-1]
    after = masked[at + 1:at + 1 + CONTEXT].split("\n", 1)[0]
    return " ".join((before + "#" + after).split())


def number_parts(text: str) -> list:
    """``(suffix, number)`` for the number tokens of ``text`` (module docstring), at most :data:`MAX_TOKENS`.

    Parameters
    ----------
    text : str
        Any string; only its first :data:`MAX_TEXT` characters are read.

    Returns
    -------
    list of (str, int or float or str)
        ``("#num[CONTEXT]", value)`` and ``("#form[CONTEXT]", format)`` pairs, in the order of the text.
    """
    if _DIGIT.search(text) is None:  # most strings (names, keys, messages without numbers): nothing to mask
        return []
    text = text[:MAX_TEXT]
    matches = list(_SLOT.finditer(text))
    numbers = [i for i, m in enumerate(matches) if m.lastgroup == "num"]
    if not numbers:
        return []
    half = MAX_TOKENS // 2
    keep = set(numbers if len(numbers) <= MAX_TOKENS else numbers[:half] + numbers[-half:])
    masked, where = _masked(text, matches)
    seen, out = {}, []
    for i in numbers:
        context = _context(masked, where[i])
        seen[context] = seen.get(context, 0) + 1
        if i in keep:
            suffix = context if seen[context] == 1 else f"{context} @{seen[context]}"
            token = matches[i].group()
            out += [(f"#num[{suffix!r}]", _number(token)), (f"#form[{suffix!r}]", _form(token))]
    return out


def _form(token: str) -> str:
    """A number token's format in letters: the sign dropped, the integer part ``n``, each fraction digit ``d``, an
    exponent ``eN`` (``-12.50e+03`` is ``n.ddeN``)."""
    mantissa, _, exponent = token.lstrip("-").replace("E", "e").partition("e")
    _, point, fraction = mantissa.partition(".")
    return "n" + point + "d" * len(fraction) + ("eN" if exponent else "")


def _text(data: bytes):
    """``data`` as text when it is printable UTF-8, else None."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return text if text and (text.isprintable() or all(c.isprintable() or c.isspace() for c in text)) else None


def _unpickled(data: bytes):
    try:
        return pickle.loads(data)  # the subject's own bytes: its code already runs in this process
    except Exception:  # noqa: BLE001 - not a pickle after all
        return None


def _decompressed(decompressor, data: bytes):
    """``data`` through a ``decompressor`` (zlib's, bz2's or lzma's), at most :data:`MAX_DECODED` bytes; None
    when it is not a whole stream of that format."""
    try:
        out = decompressor.decompress(data, MAX_DECODED)
    except (zlib.error, OSError, EOFError, ValueError, lzma.LZMAError):
        return None
    return out if decompressor.eof else None


def _zlib_header(data: bytes) -> bool:
    return len(data) >= 2 and data[0] == 0x78 and (data[0] * 256 + data[1]) % 31 == 0


#: the compressions of the standard library: ``(suffix, whether data starts like one, a fresh decompressor)``
_COMPRESSIONS = (("#bz2", lambda d: d[:3] == b"BZh", bz2.BZ2Decompressor),
                 ("#xz", lambda d: d[:6] == b"\xfd7zXZ\x00", lzma.LZMADecompressor),
                 ("#gzip", lambda d: d[:2] == b"\x1f\x8b", lambda: zlib.decompressobj(31)),
                 ("#zlib", _zlib_header, lambda: zlib.decompressobj(15)))
#: the suffixes of what compressed bytes decompress to
COMPRESSED = tuple(suffix for suffix, _, _ in _COMPRESSIONS)


def _bytes_decoded(data: bytes) -> list:
    for suffix, starts, decompressor in _COMPRESSIONS:
        if starts(data):
            inner = _decompressed(decompressor(), data)
            return [(suffix, _text(inner) or inner)] if inner is not None else []
    if len(data) > 2 and data[0] == 0x80 and 2 <= data[1] <= 5:  # a pickle of protocol 2 to 5
        value = _unpickled(data)
        return [("#pickle", value)] if value is not None else []
    text = _text(data)
    return [("#text", text)] if text is not None else []


def _base64(text: str) -> list:
    """What base64 text decodes to, when that is an encoding or text (other strings of base64 letters, such as
    hex digests, decode to noise and give nothing)."""
    s = text.strip()
    if not _BASE64.fullmatch(s) or len(s) % 4:
        return []
    try:
        data = base64.b64decode(s, altchars=b"-_" if ("-" in s or "_" in s) else None, validate=True)
    except (binascii.Error, ValueError):
        return []
    inner = _bytes_decoded(data)
    return [("#base64", inner[0][1] if inner[0][0] == "#text" else data)] if inner else []


def decoded(value) -> list:
    """``(suffix, value)`` for what a string or bytes value decodes to (module docstring), or ``[]``.

    Parameters
    ----------
    value : object
        A leaf of an observation; only ``str``, ``bytes`` and ``bytearray`` of at most :data:`MAX_DECODED`
        characters or bytes are decoded.

    Returns
    -------
    list of (str, object)
        At most one pair: ``("#json", dict or list)``, ``("#base64", bytes or str)``, ``("#gzip", ...)``,
        ``("#zlib", ...)``, ``("#bz2", ...)``, ``("#xz", ...)``, ``("#pickle", object)`` or ``("#text", str)``.
    """
    if isinstance(value, (bytes, bytearray)) and 0 < len(value) <= MAX_DECODED:
        return _bytes_decoded(bytes(value))
    if not isinstance(value, str) or len(value) > MAX_DECODED:
        return []
    if _JSON_START.match(value):
        try:
            parsed = json.loads(value)
        except (ValueError, RecursionError):
            return []
        return [("#json", parsed)] if isinstance(parsed, (dict, list)) else []
    return _base64(value) if len(value) >= 16 else []


def is_identifier(key) -> bool:
    """Whether a dict key looks like an identifier that never repeats between fits: an int of 2**32 or more
    (``id()``, ``time_ns()``, a random 64-bit word), a float of 10**9 or more (a timestamp), bytes of 8 or more,
    a string with a hex run of 8 or more holding digits and letters (``uuid4().hex``, a uuid, a digest) or a
    decimal run of 9 or more digits, or a tuple holding one of these."""
    if isinstance(key, bool):
        return False
    if isinstance(key, int):
        return abs(key) >= 2**32
    if isinstance(key, float):
        return abs(key) >= 1e9
    if isinstance(key, (bytes, bytearray)):
        return len(key) >= 8
    if isinstance(key, str):
        return _IDENTIFIER.search(key) is not None
    if isinstance(key, tuple):
        return any(is_identifier(k) for k in key[:8])
    return False


def positions(d: dict) -> list:
    """``(suffix, item)`` of ``d``'s first and last items by position, ``[#0]`` and ``[#-1]``, when one of its
    first or last three keys :func:`is_identifier`; else ``[]``. Cheap for a large dict (six keys looked at).

    The last item is the newest of a registry every fit appends to (this fit's); the first is the only one of a
    dict a fit builds afresh. Both are given for a dict of one item too (the process's first fit). The items between belong to earlier fits, whose values the probe's lockstep fits
    of D and D' interleave: they would only add candidates that break."""
    if not d:
        return []
    try:
        first, last = _first(d, 3), _first(reversed(d), 3)
    except (TypeError, RuntimeError):  # a mapping without order, or changed while read
        return []
    if not any(is_identifier(k) for k in first + last):
        return []
    return [("[#0]", d[first[0]]), ("[#-1]", d[last[0]])]  # both, one item or many: the paths never depend on
    # how many fits the process made before


def _first(keys, n: int) -> list:
    """The first ``n`` of ``keys`` (an iterator over a dict, forwards or reversed)."""
    out = []
    for k in keys:
        if len(out) == n:
            break
        out.append(k)
    return out


def whole_of(path: str) -> str:
    """The path of the whole value a part belongs to (``path`` itself when it is no part)."""
    m = _MARKER.search(path)
    return path if m is None else path[:m.start()]


def ancestors(path: str) -> list:
    """The paths a part derives from, outermost first: ``a#json['b']#num['#']`` has ``a`` and ``a#json['b']``."""
    return [path[:m.start()] for m in _MARKER.finditer(path) if m.start() > 0]


def float_parts(value) -> list:
    """``(marker, key, shown)`` of the parts of a float, or of a float array, that its noise may leave exact.

    A value whose noise lives in its high bits carries its low bits unchanged: a noisy integer count plus the
    exact count times ``2**-32`` differs on every fit, yet its fractional part is the same on every fit of D and
    another on D' (``#frac``, for entries below ``2**52`` in magnitude, where it is exact); a noisy float whose
    last significand bits were overwritten with a count shows it in ``#low8`` or ``#low16`` (:data:`LOW_BITS`).
    Noise that covers these bits (a Laplace draw, a share of noisy counts) makes them change from fit to fit like
    the value.
    Empty for a value that is no float, for a half-precision float and for an array of more than
    :data:`MAX_FLOATS` entries."""
    if isinstance(value, float):
        a = np.array([value])
    elif isinstance(value, (np.floating, np.ndarray)) and value.dtype.kind == "f" and \
            value.dtype.itemsize in LOW_BITS:
        a = np.asarray(value).ravel()
        if a.size == 0 or a.size > MAX_FLOATS:
            return []
    else:
        return []
    whole = np.asarray(a, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        inside = np.isfinite(whole) & (np.abs(whole) < 2.0 ** 52)
        frac = np.where(inside, whole - np.floor(np.where(inside, whole, 0.0)), 0.0)
    parts = [("#frac", ("fractional part", frac.tobytes()),
              "fractional part " + ", ".join(map(repr, frac[:4].tolist())))]  # every digit: 0.99999982, not 1
    bits = a.view(f"<u{a.dtype.itemsize}")
    for k in LOW_BITS[a.dtype.itemsize]:
        low = bits & ((1 << k) - 1)
        parts.append((f"#low{k}", ("low bits", k, low.tobytes()),
                      f"lowest {k} significand bits " + ", ".join(map(str, low[:4].tolist()))))
    return parts


_WORD = re.compile(r"[A-Za-z0-9]+")


def position_parts(value) -> list:
    """``(suffix, part)`` of a text's words (runs of letters and digits) that hold a digit and of a bytes value's
    bytes (or a flat numeric array's entries, ``#entry[i]``), by position from each end, at most
    :data:`MAX_POSITIONS` from each (module docstring): a word without a
    digit is read with its text, and reading it apart would multiply the paths of every message. Empty for a text
    of fewer than two words and for anything else."""
    if isinstance(value, str):
        items, marker = _WORD.findall(value[:MAX_TEXT]), "#word"
        if len(items) < 2:
            return []
    elif isinstance(value, (bytes, bytearray)) and len(value) > 1:
        items, marker = bytes(value), "#byte"
    elif isinstance(value, np.ndarray) and value.ndim == 1 and value.size > 1 and value.dtype.kind in "biufc":
        items, marker = value.tolist(), "#entry"  # the flat entries of a view's base (observe)
    else:
        return []
    k = min(len(items), MAX_POSITIONS)
    out = [(f"{marker}[{i}]", items[i]) for i in range(k)] + [(f"{marker}[{-i}]", items[-i]) for i in range(1, k + 1)]
    return out if marker != "#word" else [(suffix, word) for suffix, word in out if _DIGIT.search(word)]


def pandas_parts(value) -> list:
    """``(suffix, part)`` of a pandas ``Series``, ``DataFrame`` or ``Index``: its index labels in order
    (``#index``), a frame's columns (``#columns``) and a series' items by label (``#item[LABEL]``, at most
    :data:`MAX_ITEMS`). Empty for anything else."""
    module = type(value).__module__
    if not module.startswith("pandas"):
        return []
    import pandas as pd

    if isinstance(value, pd.Index):
        return [("#index", tuple(map(repr, value[:MAX_ITEMS * 64].tolist())))] if len(value) > 1 else []
    if not isinstance(value, (pd.Series, pd.DataFrame)):
        return []
    out = [("#index", tuple(map(repr, value.index[:MAX_ITEMS * 64].tolist())))]
    if isinstance(value, pd.DataFrame):
        out.append(("#columns", tuple(map(repr, value.columns.tolist()))))
    elif len(value) <= MAX_ITEMS:
        out += [(f"#item[{label!r}]", item) for label, item in value.items()]
    return out
