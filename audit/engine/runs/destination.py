"""Where a command writes: a committed result is never replaced by accident.

``run`` keeps a report of a larger budget than its own (the committed full-budget report, say) and ``certify``
keeps a certificate that git tracks; either then writes beside it, in ``OUT/.runs/LABEL/TARGET/``, and says so
in one line. This module holds the rule's two tests and the one redirect both commands use.
"""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

__all__ = ["REPORTS", "tracked", "larger_budget", "kept_aside"]

#: the committed reports, beside the package in a source checkout
REPORTS = Path(__file__).resolve().parents[3] / "reports"


def tracked(path: str | Path) -> bool:
    """Whether git tracks the file ``path`` (a committed file: False outside a repository or without git)."""
    path = Path(path)
    if not path.is_file():
        return False
    try:
        proc = subprocess.run(["git", "ls-files", "--error-unmatch", "--", path.name], cwd=path.parent,
                              capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return False
    return proc.returncode == 0


def larger_budget(report_json: str | Path, budget: str) -> str | None:
    """The budget of the report at ``report_json`` when it is larger than ``budget`` (else None)."""
    from audit.engine.runs.budget import BUDGETS

    try:
        old = json.loads(Path(report_json).read_text())["budget"]
        return old if BUDGETS.index(old) > BUDGETS.index(budget) else None
    except (OSError, ValueError, KeyError, TypeError):
        return None


def kept_aside(out: str, target: str, label: str, kept: str, flag: str) -> tuple[str, str]:
    """``(folder, note)`` for a command whose destination ``out/target/`` holds ``kept`` (what is kept, in
    words): the folder ``out/.runs/label`` beside it, and the one-line note saying so (``flag``: how to choose
    otherwise)."""
    aside = str(Path(out) / ".runs" / label)
    return aside, (f"{Path(out) / target}/ holds {kept}, left as it is. This run is in {aside}/{target}/ "
                   f"({flag}).")
