"""What a run tells its user while it works, and when it ends.

While a :class:`Console` is listening (``with progress.listening(console):``), every row a run finishes (a
claim, mutant, theorem or comparison) is announced with :func:`finished`, from where it is made
(:meth:`audit.engine.estimation.estimate.AuditResult.claim_row`) or when it joins a :class:`audit.results.report.Report`. The
console prints one flushed line per row with its verdict and one per finished part of a run (:func:`part`, with
the elapsed time), whether or not the output is a terminal,
keeps an overall bar with the time left on a terminal (tqdm), and ends with :meth:`Console.summary`:
the verdict counts and where the report is. A row is announced once, however many times it is passed on.
A console with ``steps`` (``check``, ``compare``) also prints the steps inside a row announced with
:func:`step`: the candidate pairs screened, each pair confirmed, each scale pattern, each input compared,
with the time left on a terminal (where tqdm bars also count the datasets drawn).
"""
from __future__ import annotations

import contextlib
import contextvars
import json
import re
import sys
import time
from collections import Counter
from pathlib import Path

__all__ = ["Console", "listening", "silent", "finished", "step", "part", "row_line", "summary_lines", "summary_json",
           "expected_rows", "gate_status", "is_gate"]

_LISTENER: contextvars.ContextVar["Console | None"] = contextvars.ContextVar("progress_listener", default=None)

KINDS = ("claim", "mutant", "theorem", "comparison")


def step(text: str, *, done: int | None = None, total: int | None = None, since: float | None = None) -> None:
    """Announce a step inside a row (a pair screened or confirmed, an input compared) to the listening console,
    if it shows steps (``check`` and ``compare`` do, ``run`` does not); ``done`` of ``total`` steps since the
    ``time.perf_counter()`` value ``since`` give the time left, shown when stderr is a terminal."""
    console = _LISTENER.get()
    if console is not None:
        console.step(text, done=done, total=total, since=since)


def part(text: str) -> None:
    """Announce a finished part of a run (:mod:`audit.engine.estimation.parts`) to the listening console: one line with the
    elapsed time, printed whether or not the output is a terminal (``--quiet`` silences it), so a run whose output
    goes to a file says what it has done while its rows wait for their turn."""
    console = _LISTENER.get()
    if console is not None:
        console.part(text)


def _terminal() -> bool:
    return sys.stderr.isatty()


def _duration(seconds: float) -> str:
    seconds = max(0.0, float(seconds))
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.0f} min"


def finished(kind: str, row: dict) -> None:
    """Announce a finished row of ``kind`` (one of :data:`KINDS`) to the listening console, if any."""
    console = _LISTENER.get()
    if console is not None:
        console.row(kind, row)


@contextlib.contextmanager
def listening(console: "Console"):
    """Send the rows finished inside this block to ``console``; close its bar on the way out."""
    token = _LISTENER.set(console)
    try:
        yield console
    finally:
        _LISTENER.reset(token)
        console.close()


@contextlib.contextmanager
def silent():
    """Announce nothing inside this block (a worker process computing rows that the parent announces)."""
    token = _LISTENER.set(None)
    try:
        yield
    finally:
        _LISTENER.reset(token)


def _num(x) -> str:
    """A number as plain Python prints it, short (never a numpy repr)."""
    if x is None:
        return "-"
    try:
        return f"{float(x):.4g}"
    except (TypeError, ValueError):
        return str(x)


def as_expected(kind: str, row: dict) -> bool:
    if kind == "mutant":
        return bool(row["detected"])
    return row["verdict"] == row["expected"]


#: what a claim's console line says when a violation was decided by something other than its outputs
def decided_by(row: dict) -> list[str]:
    """The kinds of evidence that decided a row (``decided_by``: a list; a string in reports written before)."""
    kinds = row.get("decided_by") or []
    return [kinds] if isinstance(kinds, str) else list(kinds)


DECIDED_BY = {
    "float probe": "through the floating-point probe (float bit patterns only one input produces; "
                   "--no-float-probe audits real arithmetic)",
    "exception": "through an exception (fit refuses one dataset of the pair; --exceptions report decides on the "
                 "outputs)",
    "kept state": "through kept state (the fitted model, its pickle or the fit's output keeps what replays its noise; --state warn "
                  "reports it)",
}


def is_gate(report) -> bool:
    """A report of ``check`` on the user's own code with no expectation stated (no claims file ``expected``):
    its verdicts are the gate's answers, never compared with an expectation."""
    return bool(report.claims) and not report.theorems and not report.mutants and \
        not any(c.get("expected_stated", True) for c in report.claims)


def _user_comparison(report) -> bool:
    """A report of ``compare`` on the user's own code: its answer is the comparison's, not an expectation met."""
    return bool(report.comparisons) and not report.claims and not report.theorems and not report.mutants and \
        not any(c.get("expected_stated", True) for c in report.comparisons)


def gate_status(report, bold: bool = False) -> str:
    """The closing status: ``all verdicts as expected`` / ``MISMATCH in ...`` where expectations were stated,
    else the gate's answer (``no claim refuted`` / ``not shown private: ...``) or, for a user's ``compare``, the
    comparison's (``no difference found`` / ``DIFFERENT: ...``)."""
    b = "**" if bold else ""
    if _user_comparison(report):
        bad = [c["id"] for c in report.comparisons if c["verdict"] != "same"]
        return f"{b}no difference found{b}" if not bad else f"{b}DIFFERENT{b}: {', '.join(bad)}"
    if is_gate(report):
        bad = [c["id"] for c in report.claims if c["verdict"] != "pass"]
        return f"{b}no claim refuted{b}" if not bad else f"{b}not shown private{b}: {', '.join(bad)}"
    return f"{b}all verdicts as expected{b}" if report.ok else f"{b}MISMATCH{b} in {', '.join(report.mismatches())}"


def measured(row: dict, num=None) -> str:
    """What a claim row measured: ``ε ≥ x``, or, for a row decided by the learner's ledger (no sample), its total,
    which bounds the loss from above; ``num`` writes the number (default: this module's short form)."""
    num = num or _num
    if row.get("method") == "ledger":
        return f"ledger total {num(row['epsilon_point'])} (an upper bound, not a measurement)"
    if "exact_epsilon" in row:  # check --exact: the interval on its domain
        lo, hi = row["exact_epsilon"]
        return f"exact ε in [{num(lo)}, {num(hi)}] on this domain"
    if row.get("epsilon_reading") == "∞":
        why = "kept state replays the noise" if "kept state" in row.get("decided_by", ()) else \
            "a trace of the data no noise covers"
        return f"ε = ∞ ({why})"
    if row.get("verdict") == "error":
        return "nothing (the audit could not finish)"
    return f"ε ≥ {num(row['epsilon_lower'])}"


def row_line(kind: str, row: dict) -> str:
    """One line for a finished row: whether it is as expected, its id, its verdict and its numbers."""
    stated = kind != "claim" or row.get("expected_stated", True)
    mark = "✓" if (as_expected(kind, row) if stated else row["verdict"] == "pass") else "✗"
    if kind == "claim" and row["verdict"] == "error":
        what = str(row.get("detail", "error"))
    elif kind == "claim":
        what = f"{row.get('exact_verdict') or row['verdict']}: claimed ε {_num(row['epsilon_claimed'])}, measured {measured(row)}"
    elif kind == "mutant":
        what = (f"{'detected' if row['detected'] else 'MISSED'}: claimed ε {_num(row['epsilon_claimed'])}, "
                f"measured ε ≥ {_num(row['epsilon_lower'])}")
    elif kind == "theorem":
        from audit.engine.presentation.theorem_text import reading

        what = reading(row)
    else:
        what = str(row["verdict"])
    if kind == "claim" and row.get("power") == "inconclusive":
        d = row.get("detectable_loss")
        what += (f" (inconclusive: only a loss of {_num(d)} or more would have been caught)" if d is not None
                 else " (inconclusive: no power on the winning pair)")
    if kind == "claim" and row["verdict"] == "violation":
        said = [DECIDED_BY[k] for k in decided_by(row) if k in DECIDED_BY]
        if said:
            what += " " + " and ".join(said)
    if not stated:
        pass
    elif not as_expected(kind, row):
        what += f" (expected {'detected' if kind == 'mutant' else row['expected']})"
    elif kind == "claim" and row["verdict"] == "violation":
        what += " (as expected)"
    return f"{mark} {kind} {row['id']}: {what}"


def expected_rows(target: str, *dirs) -> int | None:
    """How many rows ``target`` gave in the first earlier report found under ``dirs`` (the bar's total)."""
    for d in dirs:
        path = Path(d) / target / "report.json"
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        return sum(len(data.get(k + "s", [])) for k in KINDS) or None
    return None


class Console:
    """Lines per finished row (to ``stream``, flushed), an overall tqdm bar on a terminal, a closing summary.

    Parameters
    ----------
    lines : bool
        Print a line per finished row (``--quiet`` turns it off).
    bar : bool
        Show the overall bar when stderr is a terminal.
    total : int or None
        Rows the run is expected to give (from an earlier report), for the bar's time left.
    stream : file, default sys.stdout
    """

    def __init__(self, *, lines: bool = True, bar: bool = True, total: int | None = None, stream=None,
                 desc: str = "audit", steps: bool = False):
        self.lines, self.stream = lines, stream if stream is not None else sys.stdout
        self.steps = steps
        self.start = time.perf_counter()
        self.seen: set[tuple[str, str]] = set()
        self.counts: Counter = Counter()
        self.total = total
        self._bar = None
        if bar and sys.stderr.isatty():
            from tqdm import tqdm

            self._bar = tqdm(total=total, desc=desc, unit="row", file=sys.stderr, position=0, leave=False,
                             dynamic_ncols=True)

    def row(self, kind: str, row: dict) -> None:
        key = (kind, str(row.get("id")))
        if key in self.seen:
            return
        self.seen.add(key)
        self.counts[kind] += 1
        if self._bar is not None:
            self._bar.update(1)
        if self.lines:
            n = len(self.seen)
            pos = f"{n}/{self.total}" if self.total and n <= self.total else f"{n}"
            self.write(f"[{pos} {time.perf_counter() - self.start:5.0f} s] {row_line(kind, row)}")

    def step(self, text: str, *, done: int | None = None, total: int | None = None,
             since: float | None = None) -> None:
        """One indented line for a step inside a row (with ``steps`` and ``lines`` on); on a terminal, the time
        left from ``done`` of ``total`` steps since ``since``."""
        if not (self.lines and self.steps):
            return
        left = ""
        if done and total and since is not None and done < total and _terminal():
            per = (time.perf_counter() - since) / done
            left = f"; about {_duration(per * (total - done))} left"
        self.write(f"[{time.perf_counter() - self.start:5.0f} s]   {text}{left}")

    def part(self, text: str) -> None:
        """One line for a finished part of a run (with ``lines`` on, ``steps`` or not)."""
        if self.lines:
            self.write(f"[{time.perf_counter() - self.start:5.0f} s]   {text}")

    def write(self, line: str) -> None:
        if self._bar is not None or _terminal():  # above any progress bar on the terminal
            from tqdm import tqdm

            tqdm.write(line, file=self.stream)
        else:
            print(line, file=self.stream)
        self.stream.flush()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None


def _counts(report) -> dict:
    out = {}
    if report.claims:
        out["claims"] = dict(Counter(c["verdict"] for c in report.claims))
    if report.mutants:
        out["mutants"] = {"detected": sum(bool(m["detected"]) for m in report.mutants),
                          "missed": sum(not m["detected"] for m in report.mutants)}
    if report.theorems:
        out["theorems"] = dict(Counter(t["verdict"] for t in report.theorems))
    if report.comparisons:
        out["comparisons"] = dict(Counter(c["verdict"] for c in report.comparisons))
    return out


def summary_lines(report, path: Path, note: str = "") -> list[str]:
    """The closing summary: budget and verdict (a line starting ``Budget``), counts per kind, where the report is."""
    status = gate_status(report)
    lines = [f"Budget {report.budget}, seed {report.seed}, {report.elapsed_s:.1f} s: {status}."]
    parts = []
    for kind, counts in _counts(report).items():
        parts.append(f"{kind} " + ", ".join(f"{n} {v}" for v, n in counts.items()))
    weak = sum(c.get("power") == "inconclusive" and c["verdict"] == "pass" for c in report.claims)
    if weak:
        parts.append(f"{weak} of the passes inconclusive (a loss of 1.25 times the claim would likely have passed "
                     "too at this budget)")
    if parts:
        lines.append(f"{report.target}: " + "; ".join(parts) + ".")
    # the note's sentences, less the one that names where this run is: the line says it already
    tail = " ".join(s for s in re.split(r"(?<=\.) ", note) if s and f"{path}/" not in s)
    lines.append(f"Report: {path}/report.md (and report.json" + (", figures/" if (path / "figures").exists() else "")
                 + ")." + (f" {tail}" if tail else ""))
    return lines


def summary_json(report, path: Path, note: str = "") -> str:
    """The closing summary as one JSON object (``--format json``)."""
    return json.dumps({"target": report.target, "budget": report.budget, "seed": report.seed,
                       "elapsed_s": round(report.elapsed_s, 3), "ok": report.ok, "mismatches": report.mismatches(),
                       "counts": _counts(report), "report": str(path / "report.md"),
                       "report_json": str(path / "report.json"), **({"note": note} if note else {})})
