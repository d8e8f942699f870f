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

An unknown key or a missing ``epsilon`` is an error naming the line and the key.
"""
from __future__ import annotations

import re
import tomllib
from pathlib import Path

from .budget import BUDGETS
from .check import CheckError, Subject

__all__ = ["load_claims"]

TOP_KEYS = {"budget", "seed", "subject"}
SUBJECT_KEYS = {"name", "callable", "params", "epsilon", "delta", "neighbours", "data", "note"}


def _line_of(text: str, key: str, occurrence: int = 0) -> int:
    hits = [i + 1 for i, line in enumerate(text.splitlines()) if re.match(rf"\s*{re.escape(key)}\s*=", line)]
    return hits[occurrence] if occurrence < len(hits) else 0


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
            raise CheckError(f"{path}:{_line_of(text, key)}: unknown key {key!r} (allowed: {sorted(TOP_KEYS)})")
    settings = {"budget": data.get("budget", "standard"), "seed": data.get("seed", 0)}
    if settings["budget"] not in BUDGETS:
        raise CheckError(f"{path}:{_line_of(text, 'budget')}: budget must be one of {BUDGETS}, "
                         f"got {settings['budget']!r}")
    entries = data.get("subject", [])
    if not isinstance(entries, list) or not entries:
        raise CheckError(f"{path}: no [[subject]] tables: a claims file needs at least one subject")
    starts = _subject_lines(text)
    subjects, names = [], set()
    for k, entry in enumerate(entries):
        where = f"{path}:{starts[k] if k < len(starts) else 0}"
        for key in entry:
            if key not in SUBJECT_KEYS:
                line = next((n for n in range(starts[k] if k < len(starts) else 0, len(text.splitlines()) + 1)
                             if n and re.match(rf"\s*{re.escape(key)}\s*=", text.splitlines()[n - 1])), 0)
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
            from .estimate import Claim

            Claim(entry["epsilon"], entry.get("delta", 0.0), entry.get("neighbours", "add-remove"))
        except (TypeError, ValueError) as exc:
            raise CheckError(f"{where}: subject {name!r}: {exc}") from exc
        subjects.append(Subject(name, entry["callable"], float(entry["epsilon"]), float(entry.get("delta", 0.0)),
                                entry.get("neighbours", "add-remove"), dict(entry.get("params", {})),
                                entry.get("data"), note=str(entry.get("note", ""))))
    return subjects, settings
