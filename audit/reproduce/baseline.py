"""A reproduction beside an earlier run of itself: what a change of the code cost in utility.

``python -m audit reproduce PAPER --baseline OLD.json`` matches every cell of the new run with the cell of
the same table, row and column in ``OLD.json`` (an earlier ``PAPER.json``), for our paper-accounting number
and, where both runs have one, our strict number, and measures each change in standard errors,

    z = (new - old) / sqrt(se_new^2 + se_old^2).

The standard errors are those of the folds or repetitions of each run. Both runs use the same seed, so the
same splits: the fold-to-fold spread is shared, so ``sqrt(se_new^2 + se_old^2)`` overstates the spread of the
difference. A change within 1 SE is therefore no change at this resolution. A change beyond it is a candidate
cost (or gain) of the new code. This is how the reproduction reports state the utility cost of issue 17's
lattice releases: the committed pre-lattice run is the baseline.
"""
from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = ["CellChange", "BaselineComparison", "compare_with_baseline", "load_baseline"]


@dataclass(frozen=True)
class CellChange:
    """One number of one cell, before and after."""

    table: str
    row: str
    column: str
    kind: str  # "ours" (paper accounting, or the only number) or "strict"
    before: float
    after: float
    se: float  # sqrt(se_before^2 + se_after^2); NaN when neither run has an SE

    @property
    def change(self) -> float:
        return self.after - self.before

    @property
    def z(self) -> float | None:
        if not math.isfinite(self.se) or self.se == 0:
            return None
        return self.change / self.se


@dataclass
class BaselineComparison:
    """Every matched number of a new run against a baseline run."""

    source: str
    changes: list[CellChange]

    def beyond(self, k: float) -> list[CellChange]:
        return [c for c in self.changes if c.z is not None and abs(c.z) > k]

    def summary(self) -> str:
        """One paragraph: how many numbers moved beyond 1 and 2 SE, and the median change."""
        n = len(self.changes)
        if n == 0:
            return f"no cell of this run has a number in the baseline {self.source}"
        with_se = [c for c in self.changes if c.z is not None]
        b1, b2 = self.beyond(1.0), self.beyond(2.0)
        med = float(np.median([c.change for c in self.changes]))
        worse2 = sum(c.change < 0 for c in b2)
        text = (f"{n} numbers matched with the baseline {self.source} ({len(with_se)} with a standard error); "
                f"median change {med:+.4f}; {len(b1)} beyond 1 SE of the difference, {len(b2)} beyond 2 SE "
                f"({worse2} lower, {len(b2) - worse2} higher)")
        if b2:
            worst = sorted(b2, key=lambda c: -abs(c.z))[:8]
            text += ": " + "; ".join(f"{c.table} / {c.row} / {c.column}{' (strict)' if c.kind == 'strict' else ''}"
                                     f" {c.before:.3f} -> {c.after:.3f} ({c.z:+.1f} SE)" for c in worst)
            if len(b2) > len(worst):
                text += f"; and {len(b2) - len(worst)} more in the JSON"
        return text

    def to_json(self) -> dict:
        return {"source": self.source, "summary": self.summary(),
                "changes": [{"table": c.table, "row": c.row, "column": c.column, "kind": c.kind,
                             "before": c.before, "after": c.after, "change": c.change,
                             "se": None if not math.isfinite(c.se) else c.se, "z": c.z} for c in self.changes]}


def load_baseline(path: str | os.PathLike, paper: str) -> dict:
    """Read a reproduction's JSON; an error names the file when it is not one, or is another paper's."""
    p = Path(path)
    try:
        data = json.loads(p.read_text())
    except (OSError, ValueError) as exc:
        raise ValueError(f"--baseline {str(path)!r}: not a readable reproduction JSON ({exc})") from None
    if not isinstance(data, dict) or "cells" not in data:
        raise ValueError(f"--baseline {str(path)!r}: not a reproduction JSON (no 'cells')")
    if data.get("paper") != paper:
        raise ValueError(f"--baseline {str(path)!r} is a reproduction of {data.get('paper')!r}, not of {paper!r}")
    return data


def _num(v) -> float | None:
    return float(v) if isinstance(v, (int, float)) and math.isfinite(v) else None


def _se(a, b) -> float:
    sa, sb = _num(a), _num(b)
    if sa is None and sb is None:
        return float("nan")
    return math.sqrt((sa or 0.0) ** 2 + (sb or 0.0) ** 2)


def compare_with_baseline(cells, baseline: dict, source: str) -> BaselineComparison:
    """Match ``cells`` (this run's :class:`~audit.reproduce.cells.Cell` objects) with ``baseline['cells']``."""
    old = {(c["table"], c["row"], c["column"]): c for c in baseline.get("cells", [])}
    changes = []
    for c in cells:
        o = old.get((c.table, c.row, c.column))
        if o is None:
            continue
        for kind, se_key in (("ours", "ours_se"), ("strict", "strict_se")):
            before, after = _num(o.get(kind)), _num(getattr(c, kind))
            if before is None or after is None:
                continue
            changes.append(CellChange(c.table, c.row, c.column, kind, before, after,
                                      _se(o.get(se_key), getattr(c, se_key))))
    return BaselineComparison(source, changes)
