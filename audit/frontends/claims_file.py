"""The claims file (``dp-claims.toml``): several subjects audited in one command.

::

    budget = "quick"          # optional: quick | standard | full
    seed = 0                  # optional

    [[subject]]
    name = "my-laplace"                      # unique; names the report row
    callable = "mypkg.noise:make_laplace"    # MODULE:CALLABLE (see audit.gate.run)
    params = { epsilon = 1.0 }               # optional: constructor or factory arguments (a table, or a string:
                                             # a Python literal dict, "{'bounds': ((0, 0), (1, 1))}", or
                                             # "MODULE:FUNCTION" returning the dict)
    epsilon = 1.0                            # the claim (required)
    delta = 0.0                              # optional
    neighbours = "add-remove"                # optional: add-remove | substitute
    data = "scalar"                          # optional: see audit.gate.run
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
    determinism = "fail"                     # optional: deterministic traces of the data: "fail", "warn" or "off"
    after_finding = "stop"                   # optional: after kept state or determinism: "stop" or "sample"
    strict_power = false                     # optional: an inconclusive pass fails the gate

``expected = "violation"`` records a violation the user already knows of (for example a library whose
claim is stated under add/remove neighbours, audited under substitution): the row still reads
``violation``, but it is the expected verdict, so the report says "as expected" and the exit status is 0.
Without it every subject is expected to pass, and any violation exits 1.

An unknown key (a table header such as ``[[subjects]]``, a dotted or quoted key included), a missing
``epsilon``, an ``expected`` other than pass/violation or a bad value is an error naming the line of the
key (``PATH:LINE: ...``, with the nearest allowed key when one is close), a TOML syntax error its line.
"""
from __future__ import annotations

import difflib
import re
import tomllib
from pathlib import Path

from audit.engine.runs.budget import BUDGETS
from audit.gate.verdict import AFTER_FINDING
from audit.gate.run import CheckError, Subject, parse_bounds, parse_classes, parse_params, parse_release

__all__ = ["load_claims"]

EXPECTED = ("pass", "violation")
TOP_KEYS = {"budget", "seed", "subject"}
SUBJECT_KEYS = {"name", "callable", "params", "epsilon", "delta", "neighbours", "data", "note", "expected", "exempt",
                "pairs", "bounds", "classes", "n_samples", "release", "search", "exceptions", "float_probe", "scale",
                "state", "determinism", "after_finding", "strict_power", "grow", "scale_records", "grow_max"}


def _name(key: str) -> str:
    """A TOML key as it may be written: bare, or in double or single quotes."""
    k = re.escape(key)
    return rf"(?:{k}|\"{k}\"|'{k}')"


def _headers(lines) -> list[int]:
    return [n for n, line in enumerate(lines, 1) if re.match(r"\s*\[", line)]


def _key_line(text: str, key: str, start: int = 1, end: int | None = None, table: str | None = None) -> int:
    """The first line (1-based) in ``[start, end)`` that defines ``key``: ``key = ...``, a dotted ``key.x = ...``,
    or a table header ``[key]``, ``[[key]]``, ``[key.x]`` (``[table.key]`` inside ``table``); 0 if none."""
    lines = text.splitlines()
    end = len(lines) + 1 if end is None else min(end, len(lines) + 1)
    k = _name(key)
    within = rf"{_name(table)}\s*\.\s*" if table else ""
    assign = re.compile(rf"\s*{k}\s*[=.]")
    header = re.compile(rf"\s*\[\[?\s*{within}{k}\s*[\].]")
    return next((n for n in range(max(start, 1), end) if assign.match(lines[n - 1]) or header.match(lines[n - 1])), 0)


def _top_line(text: str, key: str) -> int:
    """Where a top-level ``key`` is defined: an assignment before the first table, or a table header of it."""
    lines = text.splitlines()
    first = next(iter(_headers(lines)), len(lines) + 1)
    return _key_line(text, key, 1, first) or next(
        (n for n in _headers(lines) if re.match(rf"\s*\[\[?\s*{_name(key)}\s*[\].]", lines[n - 1])), 0)


def _subject_lines(text: str) -> list[int]:
    return [i + 1 for i, line in enumerate(text.splitlines()) if re.match(r"\s*\[\[\s*subject\s*\]\]", line)]


def _unknown(key: str, allowed, where: str = "") -> str:
    close = difflib.get_close_matches(key, sorted(allowed), n=1)
    return f"unknown key {key!r}{where}" + (f" (did you mean {close[0]!r}?)" if close else "") + \
        f" (allowed: {sorted(allowed)})"


def _decode_error(path: Path, exc: Exception) -> CheckError:
    """A TOML syntax error at its line: ``PATH:LINE: not valid TOML: ...``."""
    line = getattr(exc, "lineno", None)
    if line is None:
        found = re.search(r"at line (\d+)", str(exc))
        line = int(found.group(1)) if found else None
    return CheckError(f"{path}:{line}: not valid TOML: {exc}" if line else f"{path}: not valid TOML: {exc}")


def _exceptions(value) -> str:
    mode = "fail" if value is True else "off" if value is False else value
    if mode not in ("fail", "report", "off"):
        raise CheckError(f"exceptions must be 'fail', 'report', 'off' or a boolean, got {value!r}")
    return mode


def _state(value, key: str = "state") -> str:
    if value not in ("fail", "warn", "off"):
        raise CheckError(f"{key} must be 'fail', 'warn' or 'off', got {value!r}")
    return value


def _after_finding(value) -> str:
    if value not in AFTER_FINDING:
        raise CheckError(f"after_finding must be one of {', '.join(map(repr, AFTER_FINDING))}, got {value!r}")
    return value


def load_claims(path) -> tuple[list[Subject], dict]:
    """Parse and validate a claims file: ``(subjects, settings)``."""
    path = Path(path)
    if not path.exists():
        raise CheckError(f"claims file {str(path)!r} does not exist")
    text = path.read_text()
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise _decode_error(path, exc) from exc
    for key in data:
        if key not in TOP_KEYS:
            raise CheckError(f"{path}:{_top_line(text, key) or 1}: {_unknown(key, TOP_KEYS)}")
    settings = {"budget": data.get("budget", "quick"), "seed": data.get("seed", 0)}
    if settings["budget"] not in BUDGETS:
        raise CheckError(f"{path}:{_top_line(text, 'budget')}: budget must be one of {BUDGETS}, "
                         f"got {settings['budget']!r}")
    entries = data.get("subject", [])
    if not isinstance(entries, list) or not entries:
        raise CheckError(f"{path}: no [[subject]] tables: a claims file needs at least one subject")
    starts = _subject_lines(text)
    if len(starts) != len(entries):  # written as an array of inline tables: ``subject = [{...}, ...]``
        starts = [_top_line(text, "subject") or 1] * len(entries)
    ends = starts[1:] + [None]
    subjects, names = [], set()
    for k, entry in enumerate(entries):
        start, end = starts[k], ends[k] if ends[k] != starts[k] else None
        where = f"{path}:{start}"

        def at(key: str) -> str:
            """``PATH:LINE`` of ``key`` in this subject (the subject's own line when it is not found)."""
            return f"{path}:{_key_line(text, key, start, end, table='subject') or start}"

        if not isinstance(entry, dict):
            raise CheckError(f"{where}: subject {k + 1} must be a table, got {entry!r}")
        for key in entry:
            if key not in SUBJECT_KEYS:
                raise CheckError(f"{at(key)}: {_unknown(key, SUBJECT_KEYS, f' in subject {k + 1}')}")
        for key in ("callable", "epsilon"):
            if key not in entry:
                raise CheckError(f"{where}: subject {k + 1} has no {key!r}")
        name = entry.get("name", entry["callable"])
        if name in names:
            raise CheckError(f"{at('name') if 'name' in entry else where}: subject name {name!r} is used twice")
        names.add(name)
        try:
            from audit.engine.estimation.estimate import Claim

            Claim(entry["epsilon"], entry.get("delta", 0.0), entry.get("neighbours", "add-remove"))
        except (TypeError, ValueError) as exc:
            key = next((key for key in ("neighbours", "delta", "epsilon") if key in entry and
                        key[:9] in str(exc)), "epsilon")
            raise CheckError(f"{at(key)}: subject {name!r}: {exc}") from exc
        expected = entry.get("expected", "pass")
        if expected not in EXPECTED:
            raise CheckError(f"{at('expected')}: subject {name!r}: expected must be one of {EXPECTED}, "
                             f"got {expected!r}")
        options = {"pairs": entry.get("pairs"), "n_samples": entry.get("n_samples"),
                   **{k: bool(entry.get(k, True)) for k in ("search", "float_probe", "scale", "grow")},
                   "strict_power": bool(entry.get("strict_power", False)),
                   "scale_records": entry.get("scale_records"), "grow_max": entry.get("grow_max"),
                   "expected_stated": "expected" in entry, "exempt": entry.get("exempt")}
        for key, least in (("scale_records", 1_000), ("grow_max", 2)):
            value = entry.get(key)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < least):
                raise CheckError(f"{at(key)}: subject {name!r}: {key} must be an integer >= {least}, got {value!r}")
        for key, parse in (("params", lambda v: parse_params(v, "params")), ("bounds", parse_bounds),
                           ("classes", parse_classes), ("release", parse_release),
                           ("exceptions", _exceptions), ("state", _state),
                           ("determinism", lambda v: _state(v, "determinism")), ("after_finding", _after_finding)):
            try:
                options[key] = parse(entry[key]) if key in entry else \
                    {"release": "auto", "exceptions": "fail", "state": "fail", "determinism": "fail",
                     "after_finding": "stop", "params": {}}.get(key)
            except CheckError as exc:
                raise CheckError(f"{at(key)}: subject {name!r}: {exc}") from exc
        subjects.append(Subject(name, entry["callable"], float(entry["epsilon"]), float(entry.get("delta", 0.0)),
                                entry.get("neighbours", "add-remove"), options.pop("params"),
                                entry.get("data"), expect=expected, note=str(entry.get("note", "")), **options))
    return subjects, settings
