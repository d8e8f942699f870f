"""What a theorem row compares, in words: the bound's direction, the interval used, and why the verdict follows.

A theorem row (``report.json`` ``theorems``) holds an ``estimate``, an interval ``ci`` and a ``bound``. Alone
they read like contradictions (``estimate 10.86, bound 10.82: holds``), so every row also says

* ``direction``: ``"upper"`` (the theorem says the quantity is at most the bound), ``"lower"`` (at least the
  bound) or ``"equal"`` (the bound is the quantity's exact value, a formula);
* ``interval``: what ``ci`` is, e.g. ``"99.9% Clopper-Pearson"``, ``"99% normal"`` or ``"exact"`` (no
  sampling error: ``ci`` is the value itself);

and :func:`reading` turns them into one sentence: which end of the interval meets the bound, on which side,
and what that makes the verdict. The usual rule (sampling error never refutes a true statement):

* an upper bound is *refuted* when even the interval's lower end exceeds it, *holds* when the interval's
  upper end is within it, and otherwise is *not refuted* (verdict ``holds`` in rows that say so, the
  estimate's excess being within sampling error) or *inconclusive*;
* a lower bound mirrors it; an exact value is refuted when it falls outside the interval.

A row whose check is not a comparison of these three numbers (a count of changed certified predictions, a
maximum over configurations, a slope with an allowance) carries its own reason in ``why``. ``report.json``
stores the sentence as ``reading``.
"""
from __future__ import annotations

import math

__all__ = ["reading", "reason", "bound_cell", "interval_cell", "DIRECTIONS", "with_reading"]

DIRECTIONS = ("upper", "lower", "equal")
_SIDE = {"upper": "≤", "lower": "≥", "equal": "="}


def _n(x) -> str:
    """A number short and plain (never a numpy repr)."""
    if x is None:
        return "–"
    x = float(x)
    if math.isinf(x):
        return "∞" if x > 0 else "-∞"
    return f"{x:.4g}"


def _exact(row) -> bool:
    lo, hi = row["ci"]
    return row.get("interval") == "exact" or (float(lo) == float(hi) == float(row["estimate"])
                                              and row.get("interval") is None)


def bound_cell(row) -> str:
    """The bound with its direction: ``upper bound 10.82`` (or the bare number for a row without one)."""
    d = row.get("direction")
    if d == "equal":
        return f"exact value {_n(row['bound'])}"
    return f"{d} bound {_n(row['bound'])}" if d in DIRECTIONS else f"bound {_n(row['bound'])}"


def interval_cell(row) -> str:
    """The interval with its kind: ``99.9% Clopper-Pearson [0.27, 0.28]``, or ``exact`` for an exact value."""
    if _exact(row):
        return "exact"
    lo, hi = row["ci"]
    kind = row.get("interval")
    return f"{kind + ' ' if kind else ''}[{_n(lo)}, {_n(hi)}]"


def reason(row) -> str:
    """Why the row's verdict follows, without the verdict itself (see the module's docstring)."""
    if row.get("why"):
        return str(row["why"])
    d, v = row.get("direction"), row["verdict"]
    est, b = float(row["estimate"]), float(row["bound"])
    lo, hi = (float(x) for x in row["ci"])
    if d not in DIRECTIONS:
        return f"estimate {_n(est)}, interval [{_n(lo)}, {_n(hi)}], bound {_n(b)} (the row does not say which side)"
    if _exact(row):
        ok = est <= b if d == "upper" else est >= b if d == "lower" else est == b
        rel = _SIDE[d] if ok else {"upper": ">", "lower": "<", "equal": "≠"}[d]
        what = "the exact value" if d == "equal" else f"the {d} bound"
        return f"computed exactly (no sampling error), {_n(est)} {rel} {what} {_n(b)}"
    kind = f"{row.get('interval') or 'confidence'} interval"
    if d == "equal":
        inside = lo <= b <= hi
        return (f"the theorem's exact value {_n(b)} lies {'inside' if inside else 'outside'} the {kind} "
                f"[{_n(lo)}, {_n(hi)}] around the estimate {_n(est)}"
                + ("" if inside else ", more than sampling error explains"))
    upper = d == "upper"
    # the end that could refute the bound, and the end that shows the whole interval on its side
    near, far = (lo, hi) if upper else (hi, lo)
    near_name, far_name = ("lower", "upper") if upper else ("upper", "lower")
    beyond = near > b if upper else near < b
    within = far <= b if upper else far >= b
    ok, bad = ("≤", ">") if upper else ("≥", "<")
    if v == "refuted" and beyond:
        return (f"the {kind}'s {near_name} end {_n(near)} {bad} the {d} bound {_n(b)}: even the most favourable "
                "value the data allow breaks the bound")
    if v == "holds" and within:
        return f"the {kind}'s {far_name} end {_n(far)} {ok} the {d} bound {_n(b)}: the whole interval keeps the bound"
    if v == "holds" and not beyond:
        past = est > b if upper else est < b
        return (f"the {kind}'s {near_name} end {_n(near)} {ok} the {d} bound {_n(b)}, so the bound is not refuted"
                + (f" (the estimate {_n(est)} is past it by less than the sampling error)" if past else
                   f" (the interval [{_n(lo)}, {_n(hi)}] reaches past it by sampling error only)"))
    if v == "inconclusive" and not beyond and not within:
        return (f"the {kind} [{_n(lo)}, {_n(hi)}] contains the {d} bound {_n(b)}: neither kept nor broken at this "
                "sample size")
    # a verdict decided by more than these three numbers (e.g. a check over several configurations)
    return (f"the {kind} [{_n(lo)}, {_n(hi)}] against the {d} bound {_n(b)} (the quantity {ok} the bound) is "
            "one part of the check; the row's evidence gives the rest")


def reading(row) -> str:
    """The verdict and why it follows: ``holds: the 99.9% normal interval's lower end 10.7 ≤ the upper bound
    10.82, so the bound is not refuted (...)``."""
    return f"{row['verdict']}: {reason(row)}"


def with_reading(row: dict) -> dict:
    """``row`` with its ``reading`` (the verdict and why) filled in: an added key, the schema's are untouched."""
    row["reading"] = reading(row)
    return row
