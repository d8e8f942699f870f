"""The claims file (``dp-claims.toml``): several subjects audited in one command.

::

    budget = "quick"          # optional: quick | standard | full
    seed = 0                  # optional

    [[subject]]
    name = "my-laplace"                      # unique; names the report row
    callable = "mypkg.noise:make_laplace"    # MODULE:CALLABLE (see audit.check)
    params = { epsilon = 1.0 }               # optional: constructor or factory arguments
    epsilon = 1.0                            # the claim (required)
    delta = 0.0                              # optional
    neighbours = "add-remove"                # optional: add-remove | substitute
    data = "scalar"                          # optional: see audit.check
    note = "why this claim is made"          # optional: shown beside the verdict
    expected = "violation"                   # optional: pass (default) | violation
    pairs = "mypkg.tests:tiny_pairs"         # optional: MODULE:FUNCTION returning extra pairs
    bounds = [[0, 1], [0, 1]]                # optional: public bounds per feature (estimators)
    classes = [0, 1]                         # optional: public classes (estimators)
    n_samples = 50000                        # optional: outputs per input (default: the budget's)
    release = "auto"                         # optional: auto | predictions | structure | "ATTR,ATTR"
    search = true                            # optional: neighbour search (estimators)
    exceptions = "fail"                      # optional: exceptions in fit: "fail", "report" or "off" (estimators)
    float_probe = true                       # optional: floating-point events (mechanisms)
    scale = true                             # optional: the scale family of the search (estimators)
    state = "fail"                           # optional: kept random state: "fail", "warn" or "off" (estimators)
    strict_power = false                     # optional: an inconclusive pass fails the gate

``expected = "violation"`` records a violation the user already knows of (for example a library whose
claim is stated under add/remove neighbours, audited under substitution): the row still reads
``violation``, but it is the expected verdict, so the report says "as expected" and the exit status is 0.
Without it every subject is expected to pass, and any violation exits 1.

An unknown key, a missing ``epsilon`` or an ``expected`` other than pass/violation is an error naming the
line and the key.
"""
from __future__ import annotations

import re
import tomllib
from pathlib import Path

from audit.engine.budget import BUDGETS
from audit.check import CheckError, Subject, parse_bounds, parse_classes, parse_release

__all__ = ["load_claims"]

EXPECTED = ("pass", "violation")
TOP_KEYS = {"budget", "seed", "subject"}
SUBJECT_KEYS = {"name", "callable", "params", "epsilon", "delta", "neighbours", "data", "note", "expected",
                "pairs", "bounds", "classes", "n_samples", "release", "search", "exceptions", "float_probe", "scale",
                "state", "strict_power"}


def _key_line(text: str, key: str, start: int = 1) -> int:
    """The first line (1-based) at or after ``start`` that sets ``key``; 0 if none."""
    lines = text.splitlines()
    return next((n for n in range(max(start, 1), len(lines) + 1)
                 if re.match(rf"\s*{re.escape(key)}\s*=", lines[n - 1])), 0)


def _subject_lines(text: str) -> list[int]:
    return [i + 1 for i, line in enumerate(text.splitlines()) if re.match(r"\s*\[\[\s*subject\s*\]\]", line)]


def load_claims(path) -> tuple[list[Subject], dict]:
    """Parse and validate a claims file: ``(subjects, settings)``."""
    path = Path(path)
    if not path.exists():
        raise CheckError(f"claims file {str(path)!r} does not exist")
    text = path.read_text()
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise CheckError(f"{path}: not valid TOML: {exc}") from exc
    for key in data:
        if key not in TOP_KEYS:
            raise CheckError(f"{path}:{_key_line(text, key)}: unknown key {key!r} (allowed: {sorted(TOP_KEYS)})")
    settings = {"budget": data.get("budget", "standard"), "seed": data.get("seed", 0)}
    if settings["budget"] not in BUDGETS:
        raise CheckError(f"{path}:{_key_line(text, 'budget')}: budget must be one of {BUDGETS}, "
                         f"got {settings['budget']!r}")
    entries = data.get("subject", [])
    if not isinstance(entries, list) or not entries:
        raise CheckError(f"{path}: no [[subject]] tables: a claims file needs at least one subject")
    starts = _subject_lines(text)
    subjects, names = [], set()
    for k, entry in enumerate(entries):
        start = starts[k] if k < len(starts) else 0
        where = f"{path}:{start}"
        for key in entry:
            if key not in SUBJECT_KEYS:
                line = _key_line(text, key, start)
                raise CheckError(f"{path}:{line}: unknown key {key!r} in subject {k + 1} "
                                 f"(allowed: {sorted(SUBJECT_KEYS)})")
        for key in ("callable", "epsilon"):
            if key not in entry:
                raise CheckError(f"{where}: subject {k + 1} has no {key!r}")
        name = entry.get("name", entry["callable"])
        if name in names:
            raise CheckError(f"{where}: subject name {name!r} is used twice")
        names.add(name)
        try:
            from audit.engine.estimate import Claim

            Claim(entry["epsilon"], entry.get("delta", 0.0), entry.get("neighbours", "add-remove"))
        except (TypeError, ValueError) as exc:
            raise CheckError(f"{where}: subject {name!r}: {exc}") from exc
        expected = entry.get("expected", "pass")
        if expected not in EXPECTED:
            raise CheckError(f"{path}:{_key_line(text, 'expected', start)}: subject {name!r}: expected must be "
                             f"one of {EXPECTED}, got {expected!r}")
        try:
            options = {"pairs": entry.get("pairs"), "bounds": parse_bounds(entry.get("bounds")),
                       "classes": parse_classes(entry.get("classes")), "n_samples": entry.get("n_samples"),
                       "release": parse_release(entry.get("release", "auto")),
                       **{k: bool(entry.get(k, True)) for k in ("search", "float_probe", "scale")}}
            exc = entry.get("exceptions", "fail")
            options["exceptions"] = "fail" if exc is True else "off" if exc is False else exc
            if options["exceptions"] not in ("fail", "report", "off"):
                raise CheckError(f"exceptions must be 'fail', 'report', 'off' or a boolean, got {exc!r}")
            state = entry.get("state", "fail")
            if state not in ("fail", "warn", "off"):
                raise CheckError(f"state must be 'fail', 'warn' or 'off', got {state!r}")
            options["state"] = state
            options["strict_power"] = bool(entry.get("strict_power", False))
        except CheckError as exc:
            raise CheckError(f"{where}: subject {name!r}: {exc}") from exc
        subjects.append(Subject(name, entry["callable"], float(entry["epsilon"]), float(entry.get("delta", 0.0)),
                                entry.get("neighbours", "add-remove"), dict(entry.get("params", {})),
                                entry.get("data"), expect=expected, note=str(entry.get("note", "")), **options))
    return subjects, settings
