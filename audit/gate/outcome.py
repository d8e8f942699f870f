"""What ``fit`` did, as an outcome: success, or the exception it raised (type and message).

A refusal is an output of the estimator like any other: whoever sees that ``fit`` raised, and what it said,
learns something about the data. :func:`outcome_code` turns an exception into a number of the released
vector's ``raised`` coordinate (0 is reserved for success):

* the outcome is the exception's qualified type **and** a canonical form of its message
  (:func:`canonical_message`: memory addresses masked, whitespace collapsed, digits kept), so a refusal
  whose message carries the exact record count is as visible as the count itself;
* the code is the first 48 bits of the SHA-256 of that text, plus one: exact in a float64, the same in every
  worker process, and injective in practice; the process keeps the text of every code it made and raises
  :class:`OutcomeCollision` if two different texts ever meet on one code, so a collision cannot pass silently.

:class:`SubjectExit` marks a subject that ended the process (``sys.exit`` or ``exit()`` inside ``fit``): the
auditor cannot treat that as an outcome (the process would have ended for whoever ran it), so ``check``
records it as an error row and exits 2. Refusals of datasets outside the claim's public domain (an empty
dataset: that n >= 1 is public; a single class) are recognised by :func:`refusal_kind` so that ``check`` can
report them apart (:mod:`audit.gate.run`).
"""
from __future__ import annotations

import hashlib
import re

import numpy as np

__all__ = ["outcome_code", "outcome_text", "canonical_message", "SubjectExit", "OutcomeCollision",
           "refusal_kind", "REFUSAL_KINDS", "admit", "refusal_text"]

#: the kinds of refusal ``--exempt`` may name, beside exception type names
REFUSAL_KINDS = ("empty", "one-class")
_ADDRESS = re.compile(r"0x[0-9a-fA-F]{6,}")
_SPACE = re.compile(r"\s+")
#: code -> outcome text, for every code this process made
_TEXTS: dict[int, str] = {}


class SubjectExit(Exception):
    """The subject called ``sys.exit`` (or raised ``SystemExit``) inside ``fit``: an error, never an outcome."""


class OutcomeCollision(RuntimeError):
    """Two different exception outcomes met on one code (probability about 2**-48 per pair of texts)."""


def canonical_message(exc: BaseException) -> str:
    """The exception's message with memory addresses masked and whitespace collapsed (digits kept)."""
    try:
        text = str(exc)
    except Exception:  # noqa: BLE001 - a __str__ that fails is outside code's
        text = "<message could not be read>"
    return _SPACE.sub(" ", _ADDRESS.sub("0x…", text)).strip()[:4000]


def outcome_text(exc: BaseException) -> str:
    """``module.QualName: message`` of the exception (the outcome as words)."""
    t = type(exc)
    return f"{t.__module__}.{t.__qualname__}: {canonical_message(exc)}"


def outcome_code(exc: BaseException) -> int:
    """``1 + h`` with ``h`` the first 48 bits of SHA-256 of :func:`outcome_text` (never 0: success)."""
    text = outcome_text(exc)
    code = 1 + int.from_bytes(hashlib.sha256(text.encode("utf-8", "replace")).digest()[:6], "big")
    seen = _TEXTS.setdefault(code, text)
    if seen != text:
        raise OutcomeCollision(f"exception outcomes {seen!r} and {text!r} share code {code}")
    return code


def admit(exc: BaseException, data) -> BaseException:
    """``exc`` when it is an outcome of the subject's ``fit`` on ``data`` (every exception but Ctrl-C and
    ``SystemExit``); ``SystemExit`` is raised again as :class:`SubjectExit`, Ctrl-C as itself."""
    if isinstance(exc, SystemExit):
        raise subject_exit(exc, data) from None
    if isinstance(exc, KeyboardInterrupt):
        raise exc
    return exc


def refusal_text(exc: BaseException, limit: int = 80) -> str:
    """``Type('message')``, the message canonical and cut at ``limit`` characters: how reports name a refusal."""
    return f"{type(exc).__name__}({canonical_message(exc)[:limit]!r})"


def refusal_kind(data) -> str | None:
    """``"empty"`` for a dataset of no records, ``"one-class"`` for one of a single label, else None."""
    try:
        X, y = data
    except (TypeError, ValueError):
        return None
    y = np.asarray(y)
    if y.shape[0] == 0:
        return "empty"
    if len(set(y.tolist())) < 2:
        return "one-class"
    return None


def subject_exit(exc: SystemExit, data) -> SubjectExit:
    """The :class:`SubjectExit` for a ``SystemExit`` raised while fitting ``data``."""
    n = len(data[1]) if isinstance(data, tuple) and len(data) == 2 else "?"
    return SubjectExit(f"the subject called sys.exit({exc.code!r}) inside fit (on a dataset of {n} records): "
                       "an audit cannot treat ending the process as an output; raise an exception instead")
