"""Where a fit's seed came from: every integer seed the fit hands a generator, traced back to what the fit keeps.

A seed the fit draws from fresh entropy and throws away is private. A seed it *derives* from something it keeps is
not: a scratch file's name, a run label, a data-free fingerprint of the configuration kept on the model or printed
by the fit, hashed to an integer (``zlib.crc32(name.encode())``, ``int(hashlib.sha256(tag).hexdigest()[:8], 16)``,
``hash(run_name) % 2**32``). Whoever holds the model hashes the same text, seeds the same generator and subtracts
the noise. The digest hides the spelling, so no reading of the text's integers finds it
(:mod:`audit.gate.state.spelling`).

:func:`traced` runs the other way round. The probe's fits record the seeds they hand to ``default_rng`` and
``random.Random`` (:func:`audit.gate.state.reseed.recorded`; a seed handed to ``RandomState`` or ``SeedSequence``
directly is not recorded: they are C types, and replacing them would change what ``isinstance`` says in the fit).
Each text and
bytes value the fitted model holds, and each text the fit printed, logged or named as a file, with each word of it
(``#word[i]``: a label inside a printed line; ``#name``: a file's name inside its path), is put through the
standard derivations (:func:`derivations`): CRC-32 and Adler-32; MD5, SHA-1, SHA-256, SHA-512 and BLAKE2b, read
whole, as their first or last 4 or 8 bytes in either byte order, and modulo 2**31, 2**32, 2**63 and 2**64; and
Python's own ``hash()``, as it is, masked to 32 or 64 bits, its absolute value and both modulo 2**32. A
derivation that equals a seed of the fit becomes a candidate seed under ``PATH#DERIVATION`` (``model.scratch_#crc32``)
and is replayed like any other (:mod:`audit.gate.state.replay`): the finding stands only when a fit seeded with
it reproduces the published model on D and not on D'. A seed derived from a kept text that only breaks ties
reproduces nothing and is no finding.

Python's ``hash()`` of a text is salted per process; the adversary who shares the process (or reads its
``PYTHONHASHSEED``) computes the same one, so it counts.
"""
from __future__ import annotations

import hashlib
import re
import zlib

from audit.gate.state.walk import walk

__all__ = ["derivations", "traced", "MAX_TEXTS", "MAX_CHARS", "MAX_WORDS"]

#: texts and bytes values read per fit, at most (in walk order), and characters of each
MAX_TEXTS = 512
MAX_CHARS = 1 << 16
_DIGESTS = ("md5", "sha1", "sha256", "sha512", "blake2b")
_MODULI = ((31, "%2**31"), (32, "%2**32"), (63, "%2**63"), (64, "%2**64"))


def derivations(value) -> dict:
    """``{suffix: integer}``: the standard derivations of a text or bytes ``value`` (module docstring)."""
    data = value.encode("utf-8", "surrogatepass") if isinstance(value, str) else bytes(value)
    out = {"#crc32": zlib.crc32(data), "#adler32": zlib.adler32(data)}
    for name in _DIGESTS:
        d = hashlib.new(name, data).digest()
        whole = int.from_bytes(d, "big")
        out[f"#{name}"] = whole
        for k in (4, 8):
            out[f"#{name}[:{k}]"] = int.from_bytes(d[:k], "big")
            out[f"#{name}[:{k}]le"] = int.from_bytes(d[:k], "little")
            out[f"#{name}[-{k}:]le"] = int.from_bytes(d[-k:], "little")
        for bits, tag in _MODULI:  # (the last 4 and 8 bytes, big-endian, are the whole modulo 2**32 and 2**64)
            out[f"#{name}{tag}"] = whole % (1 << bits)
    h = hash(value if isinstance(value, str) else data)
    out.update({"#hash": h, "#hash&2**32": h & 0xFFFFFFFF, "#hash&2**64": h & 0xFFFFFFFFFFFFFFFF, "#abs(hash)": abs(h),
                "#abs(hash)%2**32": abs(h) % (1 << 32), "#hash%2**32": h % (1 << 32)})
    return out


#: a word of a text: what is between spaces, quotes, brackets and the signs that join a key to its value
_WORD = re.compile(r"[^\s=:,;'\"()\[\]{}<>|]{4,}")
#: words of each text read on their own, at most
MAX_WORDS = 32


def _words(path: str, text) -> list:
    """``(path, part)``: a text, its words when it has more than one (``PATH#word[i]``), and the last component of
    the text or a word that is a path (``#name``, ``#word[i]#name``): a label printed inside a line, a file's name
    inside its path."""
    if not isinstance(text, str):
        return [(path, text)]
    words = _WORD.findall(text)
    parts = [(path, text)] + [(f"{path}#word[{i}]", w) for i, w in enumerate(words[:MAX_WORDS])
                              if len(words) > 1 or w != text]
    return parts + [(f"{where}#name", part.rstrip("/").rsplit("/", 1)[1]) for where, part in parts
                    if "/" in part.strip("/")]


def _texts(model, emitted) -> list:
    """``(path, text or bytes)``: the model's texts and bytes (walk order), then what the fit printed, logged and
    named as files, each with its words (:func:`_words`)."""
    found = []
    for path, node in walk(model, "model", max_nodes=20_000):
        if isinstance(node, (str, bytes, bytearray)) and 0 < len(node) <= MAX_CHARS:
            found.append((path, node))
            if len(found) >= MAX_TEXTS:
                break
    if emitted is not None:
        for name in ("stdout", "stderr"):
            if getattr(emitted, name, ""):
                found.append((f"emitted['{name}']", getattr(emitted, name)))
        found += [(f"emitted['logs'][{i}]", text) for i, text in enumerate(getattr(emitted, "logs", [])[:64])]
        names = sorted(getattr(emitted, "files", {}))[:64]
        found += [(f"emitted['file names'][{i}]", path) for i, path in enumerate(names)]
    return [part for path, text in found for part in _words(path, text)]


def traced(seeds, model, emitted=None) -> dict:
    """``{PATH#DERIVATION: seed}`` for every seed of ``seeds`` that a derivation of a text ``model`` holds or the
    fit emitted (``emitted``: :class:`audit.gate.emissions.Emitted`) equals; empty when no seed was handed over."""
    wanted = {int(s) for s in seeds}
    if not wanted:
        return {}
    out = {}
    for path, text in _texts(model, emitted):
        for suffix, number in derivations(text).items():
            if number in wanted:
                out.setdefault(path + suffix, number)
    return out
