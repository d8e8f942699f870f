"""A reproduction: the paper's table cells beside ours, written as ``PAPER.md`` and ``PAPER.json``.

Every cell holds the paper's number (and its standard error when the paper
prints one) and ours (mean and standard error over folds or repetitions). The
difference is measured in standard errors of the difference,

    z = (ours - paper) / sqrt(se_ours^2 + se_paper^2),

with ``se_paper = 0`` when the paper prints none; ``|z| > 2`` marks the cell
(roughly a 5% two-sided test per cell if both numbers were normal means of the
same quantity; with many cells some marks are expected by chance, and every
marked cell needs a sentence of explanation, given by ``Cell.note``).

For learners with two accountings a cell also holds ``strict`` (mean, se):
our provably private version at the same settings; its difference from the
paper-accounting number is the *price of strict accounting*.

Files are written to a temporary name and moved into place, so a reader never
sees half a reproduction.
"""
from __future__ import annotations

import json
import math
import os
import platform
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from audit.engine.presentation.figures import caption_of

__all__ = ["Cell", "Reproduction", "mean_se", "write_reproduction"]

#: cells further than this many standard errors from the paper are marked
MARK_SE = 2.0


def mean_se(values) -> tuple[float, float]:
    """Mean and standard error of the mean (ddof=1, as pandas ``sem``); se is NaN for one value."""
    v = pd.Series(np.asarray(values, dtype=float))
    return float(v.mean()), float(v.sem()) if len(v) > 1 else float("nan")


@dataclass
class Cell:
    """One table cell: the paper's number and ours."""

    table: str
    row: str
    column: str
    paper: float | None
    paper_se: float | None = None
    ours: float | None = None
    ours_se: float | None = None
    n_runs: int = 0
    #: our strict-accounting number at the same settings (learners with two accountings)
    strict: float | None = None
    strict_se: float | None = None
    #: the explanation of a marked cell (or any remark)
    note: str = ""

    @property
    def z(self) -> float | None:
        """(ours - paper) in standard errors of the difference; None if either is missing."""
        if self.paper is None or self.ours is None or not math.isfinite(self.ours):
            return None
        se2 = (self.ours_se or 0.0) ** 2 if self.ours_se is not None and math.isfinite(self.ours_se) else 0.0
        se2 += (self.paper_se or 0.0) ** 2
        diff = self.ours - self.paper
        if se2 == 0.0:
            return 0.0 if diff == 0 else math.copysign(math.inf, diff)
        return diff / math.sqrt(se2)

    @property
    def marked(self) -> bool:
        z = self.z
        return z is not None and abs(z) > MARK_SE

    @property
    def price(self) -> float | None:
        """strict - paper accounting (negative: strict costs accuracy); None without both."""
        if self.strict is None or self.ours is None:
            return None
        return self.strict - self.ours

    @property
    def price_se(self) -> float | None:
        if self.price is None:
            return None
        return math.sqrt((self.ours_se or 0.0) ** 2 + (self.strict_se or 0.0) ** 2)

    def to_json(self) -> dict:
        d = asdict(self)
        d.update(z=self.z, marked=self.marked, price=self.price, price_se=self.price_se)
        return {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in d.items()}


@dataclass
class Reproduction:
    """What ``audit reproduce PAPER`` found."""

    paper: str
    title: str
    seed: int = 0
    smoke: bool = False
    cells: list[Cell] = field(default_factory=list)
    #: protocol actually run, one sentence per item (splits, folds, repetitions, epsilons, depths)
    protocol: list[str] = field(default_factory=list)
    #: datasets requested but whose files are absent from the data directory
    skipped: list[str] = field(default_factory=list)
    #: datasets the paper used that the data directory does not provide at all
    unavailable: list[str] = field(default_factory=list)
    #: per dataset: how its public facts were obtained
    facts: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    elapsed_s: float = 0.0
    data_dir: str | None = None
    #: (name, draw) pairs; draw(path) saves one PNG
    figures: list = field(default_factory=list, repr=False)
    #: this run beside an earlier one (:mod:`audit.reproduce.baseline`), when ``--baseline`` was given
    baseline: object = None

    # ------------------------------------------------------------------ content
    def to_json(self) -> dict:
        from audit.results.report import versions

        return {"paper": self.paper, "title": self.title, "seed": self.seed, "smoke": self.smoke,
                "elapsed_s": round(self.elapsed_s, 1), "machine": machine(), "versions": versions(),
                "data_dir": self.data_dir, "protocol": self.protocol, "skipped": self.skipped,
                "unavailable": self.unavailable, "facts": self.facts, "notes": self.notes,
                "cells": [c.to_json() for c in self.cells],
                **({"baseline": self.baseline.to_json()} if self.baseline is not None else {})}

    def to_markdown(self, figures=(), captions=None) -> str:
        L = [f"# Reproduction: {self.title}", ""]
        if self.smoke:
            L += ["**Smoke run**: a pipeline check on a reduced protocol; the numbers are not a reproduction.", ""]
        n_marked = sum(c.marked for c in self.cells)
        n_cmp = sum(c.z is not None for c in self.cells)
        L += [f"{len(self.cells)} cells; {n_cmp} compared with the paper; **{n_marked} outside "
              f"{MARK_SE:g} standard errors** (marked ✗, each explained in its note). "
              f"Took {self.elapsed_s:.0f} s on {machine()['summary']}.", ""]
        for table in dict.fromkeys(c.table for c in self.cells):
            cells = [c for c in self.cells if c.table == table]
            has_strict = any(c.strict is not None for c in cells)
            L += [f"## {table}", ""]
            head = ["row", "column", "paper", "ours", "z", ""]
            if has_strict:
                head += ["ours, strict", "price of strict"]
            head += ["runs", "note"]
            L += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
            for c in cells:
                z = c.z
                r = [c.row, c.column, _pm(c.paper, c.paper_se), _pm(c.ours, c.ours_se),
                     "" if z is None else f"{z:+.1f}", "✗" if c.marked else ""]
                if has_strict:
                    r += [_pm(c.strict, c.strict_se), _pm(c.price, c.price_se, sign=True)]
                r += [str(c.n_runs), c.note.replace("|", "\\|")]
                L.append("| " + " | ".join(r) + " |")
            L.append("")
        L += ["## Protocol", ""] + [f"- {p}" for p in self.protocol] + [""]
        if self.facts:
            L += ["## Public facts", ""] + [f"- **{k}**: {v}" for k, v in self.facts.items()] + [""]
        if self.skipped or self.unavailable:
            L += ["## Datasets not run", ""]
            L += [f"- skipped (file absent): {s}" for s in self.skipped]
            L += [f"- not available to this project: {s}" for s in self.unavailable]
            L.append("")
        if self.notes:
            L += ["## Notes", ""] + [f"- {n}" for n in self.notes] + [""]
        if self.baseline is not None:
            L += ["## Change from the baseline run", "", self.baseline.summary() + ".", "",
                  "Both runs use the same seed and splits, so the SE of the difference (from each run's folds "
                  "or repetitions) overstates its spread: a change within 1 SE is no change at this resolution.",
                  ""]
        for f in figures:  # each with a caption line: what it shows, what its error bars are
            text = (captions or {}).get(f) or "No caption was given for this figure."
            L += [f"![{Path(f).stem}]({f})", "", f"*Figure `{Path(f).stem}`.* {text}", ""]
        m = machine()
        L += ["## Machine", "", f"{m['summary']}; data from `{self.data_dir}`; seed {self.seed}.", ""]
        return "\n".join(L)


def _pm(mean, se, sign=False) -> str:
    if mean is None or (isinstance(mean, float) and not math.isfinite(mean)):
        return "–"
    s = f"{mean:+.3f}" if sign else f"{mean:.3f}" if abs(mean) < 1000 else f"{mean:.4g}"
    if se is not None and math.isfinite(se):
        s += f" ± {se:.3f}" if abs(se) < 1000 else f" ± {se:.3g}"
    return s


def machine() -> dict:
    cores = os.cpu_count()
    try:
        mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    except (ValueError, OSError, AttributeError):
        mem = float("nan")
    summary = f"{platform.machine()}, {cores} cores, {mem:.0f} GiB, Python {platform.python_version()}"
    return {"summary": summary, "cores": cores, "memory_gib": round(mem, 1),
            "date": time.strftime("%Y-%m-%d", time.gmtime())}


def write_reproduction(rep: Reproduction, out_dir: str | os.PathLike) -> Path:
    """Write ``out_dir/reproductions/{PAPER.md, PAPER.json, figures/PAPER-*.png}``; returns the .md path."""
    payload = json.dumps(rep.to_json(), indent=2) + "\n"
    d = Path(out_dir) / "reproductions"
    (d / "figures").mkdir(parents=True, exist_ok=True)
    figures, captions = [], {}
    written = []
    try:
        for entry in rep.figures:  # (name, draw) or (name, draw, caption)
            name, draw = entry[0], entry[1]
            tmp = d / "figures" / f".{rep.paper}-{name}.png.tmp.png"
            draw(tmp)
            written.append((tmp, d / "figures" / f"{rep.paper}-{name}.png"))
            figures.append(f"figures/{rep.paper}-{name}.png")
            captions[figures[-1]] = caption_of(entry)
        for suffix, text in ((".json", payload), (".md", rep.to_markdown(figures, captions))):
            fd, tmp = tempfile.mkstemp(prefix=f".{rep.paper}", suffix=suffix, dir=d)
            with os.fdopen(fd, "w") as fh:
                fh.write(text)
            os.chmod(tmp, 0o644)  # mkstemp makes it private; a report is for reading
            written.append((Path(tmp), d / f"{rep.paper}{suffix}"))
    except BaseException:
        for tmp, _ in written:
            tmp.unlink(missing_ok=True)
        raise
    for tmp, final in written:
        os.replace(tmp, final)
    return d / f"{rep.paper}.md"
