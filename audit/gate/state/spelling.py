"""The integers a text spells, in every standard spelling, and a kept time's counts of each unit (:func:`ticks`):
for the replay's candidate seeds and the entropy map.

A seed, a run id or raw entropy reaches a text in one of the spellings Python writes for numbers and bytes:
decimal, hexadecimal (``%x``, ``uuid4().hex``, a uuid), any other radix up to 36 (``int(text, 36)`` reads it
back; a short id a dashboard shows), base 32 and base 64 (``base64``, ``secrets.token_urlsafe``). Whoever holds
the text decodes it; so does :func:`text_integers`, every way that applies, each under its own path suffix:

=========  ==========================================================================================
suffix     spelling
=========  ==========================================================================================
(none)     a whole text that is a decimal integer
``#hex``   hexadecimal: ``0x``-prefixed, a run of 8 or more hex digits, a uuid (a decimal run of 8 or more
           digits is read this way too: a ``%x`` of a seed has no letter in about 1 of 40,000 cases)
``#bin``   binary: a run of 16 or more ``0`` and ``1``, or Python's ``0b``/``0o`` literals (``bin()``, ``oct()``)
``#b36``   a single-case run of 6 or more letters and digits that is not hexadecimal, read in radix 36
           (``int(text, 36)``: a base-36 short id)
``#b32``   base 32 (RFC 4648 alphabet, either case, padding optional), read as little-endian bytes
``#b64``   base 64, standard or URL-safe, padding optional, when the text has a letter and mixes cases or holds
           ``+/-_``
``#b85``   base 85 (``base64.b85encode``), 10 characters or more, read as little-endian bytes; ``#a85``:
           Ascii85 (``a85encode``), the same
``#ip``    an IPv6 address (``str(ipaddress.IPv6Address(seed))``, groups compressed) or an IPv4 one
``#seq``   a list of integers (``"-12,34,7"``, ``"12 34 7"``): each at the narrowest width of 8, 16, 32 or 64
           bits that holds them all, negatives as two's complement, joined little-endian (a seed's bytes printed
           as ``int8`` or words)
``#grp``   three or more hexadecimal groups joined by ``-`` or ``:`` (a uuid inside a text, a MAC address),
           joined into one integer
``#uuid``  the fields of a uuid (whole or inside a text, ``[i]`` for the ``i``-th): ``.time`` (a ``uuid1``'s
           60-bit count of 100 ns since 1582, whose fields the text spells out of order), ``.clock_seq`` and
           ``.node``; a seed taken from a field is a part of the value, not the value
=========  ==========================================================================================

Inside a longer text (a log line, a model card in JSON) the same is read of each token:

* decimal runs of 5 or more digits (``#int[i]``; of 16 or more ``0`` and ``1``, ``#bin[i]`` too);
* ``0x``, ``0b`` and ``0o`` literals (``#hex[i]``, ``#bin[i]``), and hexadecimal runs of 8 or more digits with a
  letter (``#hex[i]``);
* the digits of a decimal fraction or of a number in exponent notation, with 10 or more significant digits (a
  clock's seconds and microseconds have fewer), as one integer (``#coef[i]``: ``Decimal(seed) / 1000`` spells
  ``seed`` unless the seed ends in a zero, which the division drops);
* other runs of 8 or more token characters (41 bits or more in radix 36, 48 in base 64: ``#b36[i]``,
  ``#b32[i]``, ``#b64[i]``) and of 10 or more base-85 characters (``#b85[i]``), and words between spaces of 10
  or more Ascii85 characters (``#a85[wi]``);
* lists of integers, IPv6 and IPv4 addresses and joined hexadecimal groups (``#seq[i]``, ``#ip[i]``,
  ``#grp[i]``, as above);

the first :data:`MAX_TOKENS` tokens of each kind. An ordinary word read as an integer costs nothing: it is the
same in every fit, and only integers that change with the fit's entropy become candidates.
"""
from __future__ import annotations

import base64
import binascii
import datetime
import ipaddress
import re
import uuid

import numpy as np

__all__ = ["text_integers", "MAX_TOKENS", "MAX_CODEC_CHARS", "ticks", "UNITS"]

#: integers read from one text at most, per kind of token (a long text's first ones)
MAX_TOKENS = 16
#: the longest token decoded as radix 36, base 32 or base 64 (a blob beyond this is not a seed)
MAX_CODEC_CHARS = 512

_DIGITS = re.compile(r"-?\d{5,}")
#: a whole string that spells one integer in hexadecimal: ``0x``-prefixed, a run of 8 or more hex digits, a uuid
_HEX = re.compile(r"(?:0x)?[0-9a-fA-F]{8,}|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
#: integers inside a longer text: a run of 5 or more decimal digits, a ``0x``, ``0b`` or ``0o`` literal, or a run of
#: 8 or more hex digits holding a letter
_TOKEN = re.compile(r"(?<![0-9A-Za-z.])(?:(-?\d{5,})|(0[xX][0-9a-fA-F]+|0[bB][01]+|0[oO][0-7]+)"
                    r"|((?=[0-9a-fA-F]*[a-fA-F])[0-9a-fA-F]{8,}))(?![0-9A-Za-z])")
#: a decimal fraction or a number in exponent notation (a ``Decimal``'s text, a float printed in full)
_FRACTION = re.compile(r"(?<![0-9A-Za-z.])-?\d+\.\d+(?:[eE][+-]?\d+)?(?![0-9A-Za-z.])|"
                       r"(?<![0-9A-Za-z.])-?\d+[eE][+-]?\d+(?![0-9A-Za-z.])")
_LITERAL = re.compile(r"-?0[bB][01]+|-?0[oO][0-7]+")
_BITS = re.compile(r"[01]{16,}")
_RADIX36 = re.compile(r"[0-9a-z]{6,}|[0-9A-Z]{6,}")
_B32 = re.compile(r"(?:[A-Z2-7]{8,}|[a-z2-7]{8,})=*")
_B64 = re.compile(r"[0-9A-Za-z+/_-]{6,}={0,2}")
_HEXCHARS = re.compile(r"(?:0x)?[0-9a-fA-F]+")
#: a token of a longer text that may spell an integer in radix 36, base 32 or base 64
_WORD = re.compile(r"(?<![0-9A-Za-z+/_-])[0-9A-Za-z+/_-]{8,}={0,2}(?![0-9A-Za-z+/_=-])")
#: base 85's alphabet (``b85encode``), and a run of it inside a text (quotes, spaces, commas, dots and colons end it)
_B85 = re.compile(r"[0-9A-Za-z!#$%&()*+\-;<=>?@^_`{|}~]{10,}")
#: Ascii85's alphabet (``a85encode``: ``!`` to ``u``, ``z`` for four zero bytes)
_A85 = re.compile(r"[!-uz]{10,}")
#: a list of two or more integers separated by commas, semicolons or spaces
_SEQ = re.compile(r"(?<![0-9A-Za-z.])-?\d{1,20}(?:(?:\s*[,;]\s*|\s+)-?\d{1,20}){1,}(?![0-9A-Za-z.])")
#: an IPv6 address (groups of up to 4 hex digits, ``::`` compressing zeros) or an IPv4 one
_IP = re.compile(r"(?<![0-9A-Za-z:.])(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{0,4}(?![0-9A-Za-z:])|"
                 r"(?<![0-9A-Za-z.])\d{1,3}(?:\.\d{1,3}){3}(?![0-9A-Za-z.])")
#: three or more groups of hexadecimal digits joined by ``-`` or ``:`` (a uuid, a MAC address)
_GROUPS = re.compile(r"(?<![0-9A-Za-z])[0-9A-Fa-f]{2,12}(?:([-:])[0-9A-Fa-f]{2,12})(?:\1[0-9A-Fa-f]{2,12})+"
                     r"(?![0-9A-Za-z])")


def _decoded(text: str, decode) -> int | None:
    try:
        return int.from_bytes(decode(text), "little")
    except (binascii.Error, ValueError):
        return None


def _b32(text: str) -> bytes:
    body = text.rstrip("=").upper()
    return base64.b32decode(body + "=" * (-len(body) % 8))


def _b64(text: str) -> bytes:
    body = text.rstrip("=").replace("-", "+").replace("_", "/")
    if len(body) % 4 == 1:
        raise ValueError("not base 64")
    return base64.b64decode(body + "=" * (-len(body) % 4), validate=True)


def _base85(path: str, text: str, suffix: str = "") -> dict:
    """``#b85`` and ``#a85`` readings of one token: base 85 and Ascii85, where each decodes."""
    out = {}
    if len(text) > MAX_CODEC_CHARS:
        return out
    if _B85.fullmatch(text) and (value := _decoded(text, base64.b85decode)) is not None:
        out[f"{path}#b85{suffix}"] = value
    if _A85.fullmatch(text) and (value := _decoded(text, base64.a85decode)) is not None:
        out[f"{path}#a85{suffix}"] = value
    return out


def _sequence(text: str) -> int | None:
    """A list of integers joined little-endian at the narrowest width that holds them all (``#seq``)."""
    values = [int(v) for v in re.findall(r"-?\d+", text)]
    for width in (8, 16, 32, 64):
        if all(-(1 << (width - 1)) <= v < 1 << width for v in values):
            return sum((v % (1 << width)) << (width * i) for i, v in enumerate(values))
    return None


def _address(text: str) -> int | None:
    try:
        return int(ipaddress.ip_address(text))
    except ValueError:
        return None


def _joined(path: str, text: str) -> dict:
    """The lists, addresses and joined groups inside ``text`` (``#seq[i]``, ``#ip[i]``, ``#grp[i]``)."""
    out = {}
    for kind, pattern, read in (("seq", _SEQ, _sequence), ("ip", _IP, _address),
                                ("grp", _GROUPS, lambda t: int(re.sub("[-:]", "", t), 16))):
        for i, m in enumerate(pattern.finditer(text)):
            if i >= MAX_TOKENS:
                break
            if (value := read(m.group(0))) is not None:
                out[f"{path}#{kind}[{i}]"] = value
    return out


def _codecs(path: str, text: str, suffix: str = "") -> dict:
    """``#b36``, ``#b32``, ``#b64`` and ``#b85`` readings of one token that is not decimal or hexadecimal."""
    if len(text) > MAX_CODEC_CHARS or _HEXCHARS.fullmatch(text):
        return {}
    out = _base85(path, text, suffix)
    if _RADIX36.fullmatch(text):
        out[f"{path}#b36{suffix}"] = int(text, 36)
    if _B32.fullmatch(text) and (value := _decoded(text, _b32)) is not None:
        out[f"{path}#b32{suffix}"] = value
    mixed = text != text.lower() and text != text.upper()
    if _B64.fullmatch(text) and (mixed or re.search(r"[+/_=-]", text)) and re.search(r"[A-Za-z]", text) \
            and (value := _decoded(text, _b64)) is not None:  # a date (2026-12-06) is not base 64
        out[f"{path}#b64{suffix}"] = value
    return out


def text_integers(path: str, text: str) -> dict:
    """The integers ``text`` spells, by path (the module docstring lists the spellings and their suffixes).

    Parameters
    ----------
    path : str
        Where the text is (``model.card_``).
    text : str
        The text.

    Returns
    -------
    dict
        ``{path + suffix: int}``, empty when the text spells none.
    """
    if _LITERAL.fullmatch(text):
        return {path + "#bin": int(text, 0)}
    if _DIGITS.fullmatch(text):  # a run of 8 or more digits may be hexadecimal too ("%x" of a seed, no letter)
        return {path: int(text)} | ({path + "#hex": int(text.lstrip("-"), 16)} if len(text) >= 8 else {}) | \
            ({path + "#bin": int(text, 2)} if _BITS.fullmatch(text) else {})
    if len(text) <= 40 and _HEX.fullmatch(text):
        return {path + "#hex": int(text.replace("-", "").removeprefix("0x"), 16)} | _uuid_fields(path, text)
    whole = _codecs(path, text)
    if whole and any(not k.endswith(("#b85", "#a85")) for k in whole):
        return whole
    out = whole | _joined(path, text)
    for i, m in enumerate(_UUID.finditer(text)):
        if i >= MAX_TOKENS:
            break
        out.update(_uuid_fields(path, m.group(0), f"[{i}]"))
    for i, m in enumerate(_TOKEN.finditer(text)):
        if i >= MAX_TOKENS:
            break
        if m.group(1):
            out[f"{path}#int[{i}]"] = int(m.group(1))
            if len(m.group(1).lstrip("-")) >= 8:
                out[f"{path}#hex[{i}]"] = int(m.group(1).lstrip("-"), 16)
            if _BITS.fullmatch(m.group(1)):
                out[f"{path}#bin[{i}]"] = int(m.group(1), 2)
        elif m.group(2):
            out[f"{path}#{'hex' if m.group(2)[1] in 'xX' else 'bin'}[{i}]"] = int(m.group(2), 0)
        else:
            out[f"{path}#hex[{i}]"] = int(m.group(3), 16)
    for i, m in enumerate(_FRACTION.finditer(text)):
        if i >= MAX_TOKENS:
            break
        digits = re.sub(r"[eE].*$", "", m.group(0)).replace(".", "").lstrip("-")
        if len(digits.lstrip("0")) >= 10:
            out[f"{path}#coef[{i}]"] = int(digits)
    for i, m in enumerate(_WORD.finditer(text)):
        if i >= MAX_TOKENS:
            break
        out.update(_codecs(path, m.group(0), f"[{i}]"))
    for i, m in enumerate(_B85.finditer(text)):
        if i >= MAX_TOKENS:
            break
        if m.group(0) != text:
            out.update(_base85(path, m.group(0), f"[{i}]"))
    # Ascii85's alphabet holds quotes, commas and colons: inside a text, a word between spaces
    for i, word in enumerate(w for w in text.split() if len(w) >= 10 and w != text):
        if i >= MAX_TOKENS:
            break
        out.update({k: v for k, v in _base85(path, word, f"[w{i}]").items() if "#a85" in k})
    return out


#: a uuid in its canonical spelling (8-4-4-4-12 hexadecimal digits)
_UUID = re.compile(r"(?<![0-9a-fA-F])[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
                   r"(?![0-9a-fA-F])")


def _uuid_fields(path: str, text: str, where: str = "") -> dict:
    """The fields of the uuid ``text`` spells (``#uuid.time``, ``.clock_seq``, ``.node``); empty when it is none."""
    if not _UUID.fullmatch(text):
        return {}
    u = uuid.UUID(text)
    return {f"{path}#uuid.{name}{where}": int(getattr(u, name)) for name in ("time", "clock_seq", "node")}


#: nanoseconds per unit of a clock seed
UNITS = {"s": 10 ** 9, "ms": 10 ** 6, "us": 10 ** 3, "ns": 1}


def ticks(v, unit: str):
    """A time kept by the model (a ``datetime``, pandas ``Timestamp``, ``timedelta``, NumPy ``datetime64``) as its
    whole count of ``unit`` since the Unix epoch (a duration: of its length), the seed ``int(time.time())``,
    ``time.time_ns()`` or ``Timestamp.now().value`` takes from the clock; None for anything else."""
    if hasattr(v, "value") and type(v).__module__.startswith("pandas") and isinstance(v.value, (int, np.integer)):
        ns = int(v.value)  # a Timestamp or Timedelta in nanoseconds, whatever unit its pickle keeps
    elif isinstance(v, datetime.datetime):
        epoch = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc if v.tzinfo else None)
        ns = (v - epoch) // datetime.timedelta(microseconds=1) * 1000
    elif isinstance(v, datetime.timedelta):
        ns = v // datetime.timedelta(microseconds=1) * 1000
    elif isinstance(v, (np.datetime64, np.timedelta64)):
        ns = int(v.astype("datetime64[ns]" if isinstance(v, np.datetime64) else "timedelta64[ns]").astype(np.int64))
    else:
        return None
    return ns // UNITS[unit]
