"""Numbers that are memory addresses of this process: masked in observations, as ``0x...`` is in a text.

A registry keyed by ``id(self)``, a cache keyed by ``id(X)``: the key is where CPython put an object, and that
place follows the process's allocation history, which the gate's own harness shapes (a dataset one record
longer allocates its arrays differently before the model is built). An adversary who enumerates addresses gains
nothing about the data from one: the gate holds addresses fixed in fresh processes for that reason, so that
noise *seeded* from ``id()`` is found through the noise. An address that is itself published is masked, the
same way :mod:`audit.gate.observe` masks ``0x7f...`` in a string.

:func:`is_address` says whether an integer is one: aligned as CPython aligns objects (16 bytes on 64-bit
builds, 8 on 32-bit ones) and inside a mapping of this process (``/proc/self/maps``, read again after
:func:`refresh` only for a number outside the mappings known). A 64-bit seed or a timestamp lands in one with probability about the mapped size over
``2**64`` (``2**-30`` for 16 GB); a count never does. Where the process's mappings cannot be read, no number is
masked.
"""
from __future__ import annotations

import bisect
import struct

__all__ = ["is_address", "refresh"]

_ALIGN = 2 * struct.calcsize("P")
_STARTS: list = []
_ENDS: list = []
_STALE = True


def refresh() -> None:
    """Mark this process's memory mappings as stale (the heap grows between fits): the next number that lies in
    none of the mappings read before has them read again, once (``/proc/self/maps`` takes milliseconds to read
    in a process that imported SciPy, so it is never read for an observation that needs no new mapping)."""
    global _STALE
    _STALE = True


def _read() -> None:
    global _STALE
    _STALE = False
    starts, ends = [], []
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                lo, _, hi = line.partition(" ")[0].partition("-")
                starts.append(int(lo, 16))
                ends.append(int(hi, 16))
    except (OSError, ValueError):
        starts, ends = [], []
    order = sorted(range(len(starts)), key=starts.__getitem__)
    _STARTS[:] = [starts[i] for i in order]
    _ENDS[:] = [ends[i] for i in order]


def is_address(value: int) -> bool:
    """Whether ``value`` is an object's address in this process (module docstring)."""
    if value < 1 << 16 or value % _ALIGN:
        return False
    if _inside(value):
        return True
    if _STALE or not _STARTS:
        _read()
        return _inside(value)
    return False


def _inside(value: int) -> bool:
    i = bisect.bisect_right(_STARTS, value) - 1
    return i >= 0 and value < _ENDS[i]
