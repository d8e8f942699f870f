"""Every standard text spelling of an integer or of bytes is read back (:mod:`audit.gate.state.spelling`).

A seed kept in any of them is replayed by the state probe only if the spelling is read: the entropy map needs the
integer (or a bit permutation of it: bytes are read little-endian, whatever order they were written in), the
reseed replay the integer itself. The properties are exact (no statistics): hypothesis generates the values.
"""
from __future__ import annotations

import base64

from hypothesis import given, settings, strategies as st

from audit.gate.state.spelling import text_integers

WIDE = st.integers(min_value=2**40, max_value=2**128)
RAW = st.binary(min_size=8, max_size=32)


def _base36(n: int) -> str:
    digits = ""
    while n:
        n, r = divmod(n, 36)
        digits = "0123456789abcdefghijklmnopqrstuvwxyz"[r] + digits
    return digits


@settings(max_examples=200, deadline=None)
@given(WIDE, st.booleans())
def test_an_integer_is_read_back_from_every_radix_python_writes(n, upper):
    spellings = [str(n), f"{n:x}", f"0x{n:x}", bin(n), oct(n), f"{n:b}", _base36(n)]
    if upper:
        spellings = [s.upper() if not s.startswith(("0b", "0o", "0x")) else s for s in spellings]
    for text in spellings:
        assert n in text_integers("p", text).values(), text
        # the same inside a line of text, after an "=" (a key and its value)
        assert n in text_integers("p", f"run trace={text} done").values() or len(text) < 8, text


@settings(max_examples=200, deadline=None)
@given(RAW, st.booleans())
def test_bytes_are_read_back_from_base_32_and_64_with_or_without_padding(raw, strip):
    value = int.from_bytes(raw, "little")
    b64 = [base64.b64encode(raw).decode(), base64.urlsafe_b64encode(raw).decode()]
    b32 = [base64.b32encode(raw).decode(), base64.b32encode(raw).decode().lower()]
    for text in b64 + b32:
        text = text.rstrip("=") if strip else text
        if all(c in "0123456789abcdefABCDEF=" for c in text) or not any(c.isalpha() for c in text):
            continue  # read as hexadecimal first, or no letter (a date): each about once in 10^6 random texts
        if text in b64 and text.rstrip("=").isalnum() and text in (text.lower(), text.upper()) and strip:
            continue  # base 64 in one case with no symbol is read as radix 36: rare but possible, as documented
        assert value in text_integers("p", text).values(), text


def test_ordinary_words_spell_nothing_that_changes_and_hex_is_not_read_twice():
    assert text_integers("p", "0123abcdef0123abcdef") == {"p#hex": 0x0123ABCDEF0123ABCDEF}
    # the same in every fit: never a candidate
    assert set(text_integers("p", "classifier")) == {"p#b36", "p#b32", "p#b85", "p#a85"}
    assert text_integers("p", "x" * 600) == {}  # a blob longer than any seed's spelling is not decoded


@settings(max_examples=200, deadline=None)
@given(RAW)
def test_bytes_are_read_back_from_base_85_and_ascii_85(raw):
    value = int.from_bytes(raw, "little")
    b85, a85 = base64.b85encode(raw).decode(), base64.a85encode(raw).decode()
    for text in (b85, a85):
        if len(text) < 10 or all(c in "0123456789abcdefABCDEF" for c in text):
            continue  # Ascii85 writes four zero bytes as one "z" (a text this short is not read: no seed is), and
            # a text of hexadecimal digits only is read as hexadecimal first (random bytes: about once in 10^6)
        assert value in text_integers("p", text).values(), text
    if len(b85) >= 10 and not all(c in "0123456789abcdefABCDEF" for c in b85):  # inside a longer text: base 85's alphabet has no quote or space
        assert value in text_integers("p", f"replay key {b85} (fitted)").values(), b85


@settings(max_examples=200, deadline=None)
@given(st.binary(min_size=8, max_size=32), st.sampled_from([",", ", ", ";", " "]), st.booleans())
def test_a_list_of_small_words_is_read_as_the_bytes_they_print(raw, sep, signed):
    """The bytes printed one by one (``int8`` when ``signed``, else ``uint8``), or as 16-bit words: joined at the
    narrowest width that holds them, little-endian."""
    import numpy as np

    words = np.frombuffer(raw, dtype=np.int8 if signed else np.uint8).tolist()
    value = int.from_bytes(raw, "little")
    assert value in text_integers("p", f"build {sep.join(map(str, words))} done").values()
    if len(raw) % 2 == 0 and max(np.frombuffer(raw, dtype="<u2")) >= 256:
        wide = np.frombuffer(raw, dtype="<u2").tolist()
        assert value in text_integers("p", sep.join(map(str, wide))).values()


@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=0, max_value=2**128 - 1))
def test_addresses_and_joined_groups_are_read(n):
    import ipaddress
    import uuid

    assert n in text_integers("p", f"run from {ipaddress.IPv6Address(n)} ok").values()
    assert n in text_integers("p", f"run {uuid.UUID(int=n)} fitted").values()
    assert n % 2**32 in text_integers("p", f"peer {ipaddress.IPv4Address(n % 2**32)}").values()
