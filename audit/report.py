"""Reports: ``report.md`` (tables first, then figures), ``report.json`` and ``figures/*.png``.

The JSON schema is the one fixed in DESIGN.md. A report is written into a
temporary directory beside its destination and moved into place in one step,
so a reader never sees half of one.
"""
from __future__ import annotations

import json
import math
import os
import platform
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["Report", "write_report", "versions", "CLAIM_KEYS", "MUTANT_KEYS", "THEOREM_KEYS"]

CLAIM_KEYS = ("id", "subject", "neighbouring", "epsilon_claimed", "delta", "epsilon_lower", "epsilon_point",
              "n_samples", "alpha", "verdict", "expected")
THEOREM_KEYS = ("id", "paper", "statement", "estimate", "ci", "bound", "verdict", "expected")
MUTANT_KEYS = ("id", "description", "source", "epsilon_claimed", "epsilon_lower", "detected")


def versions() -> dict[str, str]:
    """Versions of everything a report's numbers depend on."""
    import matplotlib
    import pandas
    import scipy
    import sklearn
    import statsmodels

    import reference

    return {
        "dptree-audit": reference.__version__,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "pandas": pandas.__version__,
        "statsmodels": statsmodels.__version__,
        "matplotlib": matplotlib.__version__,
        "scikit-learn": sklearn.__version__,
    }


@dataclass
class Report:
    """Everything one ``audit run TARGET`` found."""

    target: str
    budget: str
    seed: int
    title: str = ""
    claims: list[dict[str, Any]] = field(default_factory=list)
    theorems: list[dict[str, Any]] = field(default_factory=list)
    mutants: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: oracle rows: {"id", "candidate", "reference", "expected": "same"|"different", "verdict", "p_min",
    #: "n_samples", "alpha", "detail"}
    comparisons: list[dict[str, Any]] = field(default_factory=list)
    elapsed_s: float = 0.0
    #: ``(name, draw)`` pairs; ``draw(path)`` saves one PNG figure
    figures: list = field(default_factory=list, repr=False)

    def __post_init__(self):
        self.versions = versions()

    # ------------------------------------------------------------------ verdicts
    def mismatches(self) -> list[str]:
        """Ids of every claim, theorem or mutant whose outcome is not the expected one."""
        bad = [c["id"] for c in self.claims if c["verdict"] != c["expected"]]
        bad += [t["id"] for t in self.theorems if t["verdict"] != t["expected"]]
        bad += [m["id"] for m in self.mutants if not m["detected"]]
        bad += [c["id"] for c in self.comparisons if c["verdict"] != c["expected"]]
        return bad

    @property
    def ok(self) -> bool:
        return not self.mismatches()

    def to_json(self) -> dict[str, Any]:
        for kind, keys, rows in (("claim", CLAIM_KEYS, self.claims), ("theorem", THEOREM_KEYS, self.theorems),
                                 ("mutant", MUTANT_KEYS, self.mutants)):
            for row in rows:
                missing = [k for k in keys if k not in row]
                if missing:
                    raise ValueError(f"{kind} {row.get('id')!r} lacks the report fields {missing}")
        return _jsonable({
            "target": self.target, "budget": self.budget, "seed": self.seed, "versions": self.versions,
            "elapsed_s": round(self.elapsed_s, 3), "ok": self.ok, "mismatches": self.mismatches(),
            "claims": self.claims, "theorems": self.theorems, "mutants": self.mutants, "notes": self.notes,
            **({"comparisons": self.comparisons} if self.comparisons else {}),
        })

    # ------------------------------------------------------------------ markdown
    def to_markdown(self, figures: list[str]) -> str:
        lines = [f"# Audit report: `{self.target}`", ""]
        if self.title:
            lines += [self.title, ""]
        status = "**all verdicts as expected**" if self.ok else f"**MISMATCH** in {', '.join(self.mismatches())}"
        lines += [f"Budget `{self.budget}`, seed {self.seed}, {self.elapsed_s:.1f} s: {status}.", ""]
        if self.claims:
            lines += ["## Privacy claims", "",
                      "Claimed epsilon beside the measured lower bound: a `violation` verdict means the "
                      "measured loss exceeds the claim (for sampled rows, at confidence 1 - alpha).", ""]
            lines += _table(
                ["id", "subject", "neighbours", "claimed ε", "δ", "ε lower", "ε point", "method", "n / side", "α",
                 "verdict", "expected", ""],
                [[c["id"], c["subject"], c["neighbouring"], _num(c["epsilon_claimed"]), _num(c["delta"]),
                  _num(c["epsilon_lower"]), _num(c["epsilon_point"]), c.get("method", "sampled"),
                  _count(c["n_samples"]), _num(c["alpha"]), c["verdict"], c["expected"],
                  "✓" if c["verdict"] == c["expected"] else "✗"] for c in self.claims])
            details = [c for c in self.claims if c.get("detail")]
            if details:
                lines += ["", "Evidence:", ""] + [f"- `{c['id']}`: {c['detail']}" for c in details]
            lines.append("")
        if self.mutants:
            lines += ["## Mutants (known-flawed variants the auditor must catch)", ""]
            lines += _table(
                ["id", "description", "source", "claimed ε", "ε lower", "detected"],
                [[m["id"], m["description"], m["source"], _num(m["epsilon_claimed"]), _num(m["epsilon_lower"]),
                  "✓ yes" if m["detected"] else "✗ NO"] for m in self.mutants])
            lines.append("")
        if self.comparisons:
            lines += ["## Comparisons with the reference (oracle)", "",
                      "`same` means no two-sample test rejected equality of the released distributions "
                      "(Holm-corrected over the inputs); `different` means one did.", ""]
            lines += _table(
                ["id", "candidate", "reference", "n / side", "smallest adjusted p", "verdict", "expected", ""],
                [[c["id"], c["candidate"], c["reference"], _count(c["n_samples"]), f"{c['p_min']:.3g}",
                  c["verdict"], c["expected"], "✓" if c["verdict"] == c["expected"] else "✗"]
                 for c in self.comparisons])
            lines += ["", "Evidence:", ""] + [f"- `{c['id']}`: {c['detail']}" for c in self.comparisons]
            lines.append("")
        if self.theorems:
            lines += ["## Theorems (Monte Carlo checks)", ""]
            lines += _table(
                ["id", "paper", "statement", "estimate", "CI", "bound", "verdict", "expected"],
                [[t["id"], t["paper"], t["statement"], _num(t["estimate"]),
                  f"[{_num(t['ci'][0])}, {_num(t['ci'][1])}]", _num(t["bound"]), t["verdict"], t["expected"]]
                 for t in self.theorems])
            lines.append("")
        if figures:
            lines += ["## Figures", ""] + [f"![{Path(f).stem}]({f})" for f in figures] + [""]
        if self.notes:
            lines += ["## Notes", ""] + [f"- {n}" for n in self.notes] + [""]
        lines += ["## Versions", "", ", ".join(f"{k} {v}" for k, v in self.versions.items()), ""]
        return "\n".join(lines)


def _jsonable(obj):
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, (np.bool_, bool)):
        return bool(obj)
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        f = float(obj)
        return f if math.isfinite(f) else ("inf" if f > 0 else "-inf" if f < 0 else "nan")
    return obj


def _num(x) -> str:
    if x is None:
        return "–"
    x = float(x)
    if math.isinf(x):
        return "∞"
    return f"{x:.4g}"


def _count(n) -> str:
    return "exact" if not n else f"{int(n):,}"


def _table(header, rows) -> list[str]:
    def cell(v):
        return str(v).replace("|", "\\|").replace("\n", " ")

    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return out


def _claims_figure(report: Report, path: Path) -> bool:
    """Each claim's measured lower bound as a fraction of its claimed epsilon: past the line at 1 is a violation."""
    if not report.claims:
        return False
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    claims = report.claims
    y = np.arange(len(claims))
    cap = 3.0
    ratio = [min(float(c["epsilon_lower"]) / float(c["epsilon_claimed"]), cap) for c in claims]
    colour = ["tab:red" if c["verdict"] == "violation" else "tab:green" for c in claims]
    width = [2.0 if c["verdict"] != c["expected"] else 0.0 for c in claims]  # outline = unexpected verdict
    fig, ax = plt.subplots(figsize=(8, 0.28 * len(claims) + 1.4))
    ax.barh(y, ratio, color=colour, alpha=0.75, edgecolor="k", linewidth=width)
    ax.axvline(1.0, color="k", lw=1, ls="--")
    ax.set_yticks(y, [f"{c['id']} (expected {c['expected']})" for c in claims], fontsize=7)
    ax.invert_yaxis()
    ax.set_xlim(0, cap * 1.02)
    ax.set_xlabel(f"epsilon lower bound / claimed epsilon (capped at {cap:g})\nred: violation; outlined: not the expected verdict")
    ax.set_title(f"{report.target}: claims", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def _mutants_figure(report: Report, path: Path) -> bool:
    """Each mutant's lower bound as a multiple of its claim: every bar must cross the line at 1."""
    if not report.mutants:
        return False
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = report.mutants
    y = np.arange(len(rows))
    ratio = [min(float(m["epsilon_lower"]) / float(m["epsilon_claimed"]), 10.0) for m in rows]
    fig, ax = plt.subplots(figsize=(8, 0.3 * len(rows) + 1.4))
    ax.barh(y, ratio, color=["tab:red" if m["detected"] else "tab:gray" for m in rows], alpha=0.75)
    ax.axvline(1.0, color="k", lw=1, ls="--")
    ax.set_yticks(y, [m["id"] for m in rows], fontsize=7)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.set_xlabel("epsilon lower bound / claimed epsilon (log scale, capped at 10)\nred: detected; grey: missed")
    ax.set_title(f"{report.target}: mutants", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def write_report(report: Report, out_dir: str | os.PathLike) -> Path:
    """Write ``out_dir/<target>/{report.md, report.json, figures/*.png}`` atomically.

    Returns the target's directory.
    """
    payload = json.dumps(report.to_json(), indent=2) + "\n"  # validates the schema before anything is written
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    final = out_dir / report.target
    tmp = Path(tempfile.mkdtemp(prefix=f".{report.target}-", dir=out_dir))
    try:
        (tmp / "figures").mkdir()
        figures = []
        for name, draw in (("claims", _claims_figure), ("mutants", _mutants_figure)):
            if draw(report, tmp / "figures" / f"{name}.png"):
                figures.append(f"figures/{name}.png")
        for name, draw in report.figures:
            draw(tmp / "figures" / f"{name}.png")
            figures.append(f"figures/{name}.png")
        (tmp / "report.json").write_text(payload)
        (tmp / "report.md").write_text(report.to_markdown(figures))
        if final.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{report.target}-old-", dir=out_dir))
            os.replace(final, old / "x")
            os.replace(tmp, final)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return final
