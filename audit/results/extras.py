"""Optional extras: which one provides a missing module, and the line that says how to install it.

``pyproject.toml`` declares the extras ``diffprivlib`` (IBM diffprivlib, with the scikit-learn it needs),
``distributed`` (``--scheduler``) and ``test`` (pytest, hypothesis: ``compare --noise off``). A command that
fails because one of their modules is missing says which extra to install, whatever wrapped the error.
"""
from __future__ import annotations

import re

__all__ = ["EXTRAS", "missing_extra", "hint"]

#: top-level module -> the extra of this project that installs it
EXTRAS = {"diffprivlib": "diffprivlib", "distributed": "distributed", "dask": "distributed",
          "hypothesis": "test", "pytest": "test"}


def _chain(exc):
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        yield exc
        exc = exc.__cause__ or exc.__context__


def missing_extra(exc: BaseException) -> tuple[str, str] | None:
    """``(module, extra)`` when ``exc`` (or an error it wraps, or its message) is a missing module of an extra."""
    for e in _chain(exc):
        names = [getattr(e, "name", None)] if isinstance(e, ImportError) else []
        names += re.findall(r"No module named '([\w.]+)'|import of ([\w.]+) halted", str(e))
        for name in names:
            name = name if isinstance(name, str) else next((n for n in name if n), None)
            top = (name or "").split(".")[0]
            if top in EXTRAS:
                return top, EXTRAS[top]
    return None


def hint(exc: BaseException) -> str:
    """``" (module X is in the optional extra 'E': pip install 'dptree-audit[E]')"``, or ``""``."""
    found = missing_extra(exc)
    if found is None or "dptree-audit[" in str(exc):  # none, or the message already names it
        return ""
    module, extra = found
    return (f" ({module} is in this project's optional extra {extra!r}: pip install 'dptree-audit[{extra}]', "
            f"or pip install -e '.[{extra}]' from a checkout)")
