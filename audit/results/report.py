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
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from audit.engine.presentation.figures import CLAIMS_CAPTION, MUTANTS_CAPTION, caption_of, claims_figure, mutants_figure
from audit.engine.estimation.parts import Part, run_parts
from audit.engine.runs.progress import decided_by, finished, gate_status, is_gate, measured
from audit.engine.presentation.render import json_ready as _jsonable
from audit.engine.presentation.theorem_text import bound_cell, interval_cell, reason, with_reading
from reference.papers import cited_in, references

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


class _Rows(list):
    """A report's list of rows of one kind: each row that joins it is announced to the listening console
    (:func:`audit.engine.runs.progress.finished`), so a run's user sees it finish."""

    def __init__(self, kind: str = "claim", rows=()):
        super().__init__(rows)
        self.kind = kind

    def append(self, row) -> None:
        super().append(row)
        finished(self.kind, row)

    def extend(self, rows) -> None:
        rows = list(rows)
        super().extend(rows)
        for row in rows:
            finished(self.kind, row)

    def __iadd__(self, rows):
        self.extend(rows)
        return self


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
    #: CPU seconds of each stage, by claim id then stage (``check``): a measurement like ``elapsed_s``, not a result
    stage_cpu_s: dict[str, dict[str, float]] = field(default_factory=dict)
    #: the deterministic section "Exact ε by number of records" (:mod:`audit.results.exact_by_size`), when the target has one
    exact_by_size: list[dict[str, Any]] = field(default_factory=list)
    #: ``(name, draw)`` pairs; ``draw(path)`` saves one PNG figure
    figures: list = field(default_factory=list, repr=False)

    def __post_init__(self):
        self.versions = versions()
        for kind in ("claim", "theorem", "mutant", "comparison"):
            setattr(self, kind + "s", _Rows(kind, getattr(self, kind + "s")))

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
        for row in self.theorems:  # what the row compares, in words (issue 28 item 4); an added key
            with_reading(row)
        return _jsonable({
            "target": self.target, "budget": self.budget, "seed": self.seed, "versions": self.versions,
            "elapsed_s": round(self.elapsed_s, 3), **({"stage_cpu_s": self.stage_cpu_s} if self.stage_cpu_s else {}),
            "ok": self.ok, "mismatches": self.mismatches(),
            "claims": self.claims, **({"exact_by_size": self.exact_by_size} if self.exact_by_size else {}),
            "theorems": self.theorems, "mutants": self.mutants, "notes": self.notes,
            **({"comparisons": self.comparisons} if self.comparisons else {}),
        })

    # ------------------------------------------------------------------ markdown
    def to_markdown(self, figures: list[str], captions: dict[str, str | None] | None = None) -> str:
        lines = [f"# Audit report: `{self.target}`", ""]
        if self.title:
            lines += [self.title, ""]
        status = gate_status(self, bold=True)
        lines += [f"Budget `{self.budget}`, seed {self.seed}, {self.elapsed_s:.1f} s: {status}.", ""]
        verdicts = self._verdict_rows()
        if verdicts:
            legend = "✓: no loss above the claim was found; ✗: the claim does not hold" if is_gate(self) else \
                "✓: the verdict expected; ✗: not"
            lines += ["## Verdicts", "", f"Every row at a glance ({legend}); details below.", ""]
            lines += _table(["id", "kind", "claimed", "measured", "verdict", ""], verdicts) + [""]
        if self.claims:
            subjects = list(dict.fromkeys(c["subject"] for c in self.claims))
            short = {s: f"S{i + 1}" for i, s in enumerate(subjects)}
            lines += ["## Privacy claims", "",
                      "Claimed epsilon beside the measured lower bound: a `violation` verdict means the "
                      "measured loss exceeds the claim (for sampled rows, at confidence 1 - alpha).", ""]
            with_law = any("exact_loss" in c for c in self.claims)
            if with_law:
                lines += ["Where the whole release has an exact law on the row's inputs, the row shows the exact "
                          "loss of its pairs (max over releases of |ln P(r|D) - ln P(r|D')|, an interval where the "
                          "law's truncation leaves one) and the tightness: the sampled bound over the best bound "
                          "any event attains at the same n and α (1: as good as the sample size allows). `out of "
                          "reach`: the row's law is beyond what can be summed out, and its detail says why.", ""]
                committed = sorted({c["law_source"] for c in self.claims if c.get("law_source")})
                if committed:
                    lines[-1:-1] = ["", f"`(committed)`: the row's exact laws, so its event and its exact loss, were "
                                    f"taken from the committed law certificate {', '.join(committed)} (computed for "
                                    "exactly the row's configuration), not computed in this run; the sample was "
                                    "drawn in this run."]
            law_head = ["exact loss", "tightness"] if with_law else []
            lines += _table(
                ["id", "subject", "neighbours", "claimed ε", "δ", "ε lower", *law_head, "ε point", "method",
                 "n / side", "α"],
                [[c["id"], short[c["subject"]], c["neighbouring"], _num(c["epsilon_claimed"]), _num(c["delta"]),
                  _lower_cell(c), *([_loss_cell(c), _tightness_cell(c)] if with_law else []),
                  _num(c["epsilon_point"]), _method_cell(c),
                  _count(c["n_samples"]), _num(c["alpha"])] for c in self.claims])
            lines += ["", "Subjects:", ""] + [f"- {short[s]}: {s}" for s in subjects]
            lines += _folded("Evidence of the claims", [(c["id"], c.get("detail")) for c in self.claims])
            lines.append("")
        if self.exact_by_size:
            from audit.results.exact_by_size import jsonable, section_lines

            lines += section_lines(jsonable(self.exact_by_size))
        if self.mutants:
            lines += ["## Mutants (known-flawed variants the auditor must catch)", ""]
            with_law = any("exact_loss" in m for m in self.mutants)
            if with_law:
                lines += ["Where the mutant's release has an exact law on its inputs, the row shows the exact loss "
                          "of its pairs and the tightness of the sampled bound (as for the claims); `out of reach`: "
                          "its evidence says why there is none.", ""]
            lines += _table(
                ["id", "description", "source", "claimed ε", "ε lower", *(["exact loss", "tightness"] if with_law
                                                                         else []), "detected"],
                [[m["id"], m["description"], m["source"], _num(m["epsilon_claimed"]), _num(m["epsilon_lower"]),
                  *([_loss_cell(m), _tightness_cell(m)] if with_law else []),
                  "✓ yes" if m["detected"] else "✗ NO"] for m in self.mutants])
            lines += _folded("Evidence of the mutants", [(m["id"], m.get("evidence")) for m in self.mutants])
            lines.append("")
        if self.comparisons:
            lines += ["## Comparisons with the reference (oracle)", "",
                      "`same` means no test rejected equality of the released distributions (Holm-corrected over "
                      "the inputs); `different` means one did. A two-sample test draws n releases on each side; "
                      "an `exact` comparison draws n of the candidate only and tests them against the "
                      "reference's exact law.", ""]
            lines += _table(
                ["id", "candidate", "reference", "test", "n / side", "smallest adjusted p", "verdict", "expected", ""],
                [[c["id"], c["candidate"], c["reference"], c.get("test", "two-sample"), _count(c["n_samples"]),
                  f"{c['p_min']:.3g}",
                  c["verdict"], c["expected"], "✓" if c["verdict"] == c["expected"] else "✗"]
                 for c in self.comparisons])
            lines += _folded("Evidence of the comparisons", [(c["id"], c.get("detail")) for c in self.comparisons])
            lines.append("")
        if self.theorems:
            lines += ["## Theorems (Monte Carlo checks)", "",
                      "Each bound is an upper bound (the theorem says the quantity is at most it), a lower bound "
                      "(at least it) or an exact value. An upper bound is refuted only when even the interval's "
                      "lower end exceeds it, and holds outright when the interval's upper end is within it; "
                      "between the two, the estimate's excess is sampling error and the row reads `holds` "
                      "(not refuted) or `inconclusive`, as its reading says. Lower bounds mirror this.", ""]
            lines += _table(
                ["id", "paper", "statement", "estimate", "interval", "bound", "verdict", "expected"],
                [[t["id"], t["paper"], t["statement"], _num(t["estimate"]), interval_cell(t), bound_cell(t),
                  t["verdict"], t["expected"]] for t in self.theorems])
            lines.append("")
        if figures:
            lines += ["## Figures", ""]
            for f in dict.fromkeys(figures):  # each with a caption line: what it shows, what its error bars are
                text = (captions or {}).get(f) or "No caption was given for this figure."
                lines += [f"![{Path(f).stem}]({f})", "", f"*Figure `{Path(f).stem}`.* {text}", ""]
        if self.notes:
            lines += ["## Notes", ""] + [f"- {n}" for n in self.notes] + [""]
        cited = cited_in("\n".join(lines))
        if cited:  # the papers in full (authors, year, title, venue)
            lines += ["## References", ""] + references(cited) + [""]
        lines += ["## Versions", "", ", ".join(f"{k} {v}" for k, v in self.versions.items()), ""]
        return "\n".join(lines)


    def _verdict_rows(self) -> list[list[str]]:
        """One short row per claim, mutant, theorem and comparison: id, kind, claimed, measured, verdict."""
        def verdict(v, expected, stated=True):
            if not stated:  # the user's own code: the gate's answer, no expectation to compare with
                return v
            return (f"{v} (expected)" if v in ("violation", "refuted") else v) if v == expected else \
                f"{v}, expected {expected}"

        def power(c):  # a pass that could not have seen a loss at the claim says so (issue 27 item 4)
            if c.get("power") == "inconclusive":
                d = c.get("detectable_loss")
                return f" (inconclusive: detects ε ≥ {_num(d)} only)" if d is not None else " (inconclusive: no power)"
            return f" (detects ε ≥ {_num(c['detectable_loss'])})" if c.get("detectable_loss") is not None else ""

        def through(c):  # what decided a violation, when it is not the outputs alone
            by = decided_by(c)
            if c["verdict"] != "violation" or by in ([], ["outputs"]):
                return ""
            return " (through " + " and ".join(("the " if k == "float probe" else "") + k for k in by) + ")"

        def exact(c):  # an exact row's own word: proved, refuted or undecided, on its domain
            return f"{c['exact_verdict']} (exact, this domain)" if "exact_verdict" in c else None

        rows = [[c["id"], "claim", f"ε {_num(c['epsilon_claimed'])}", measured(c, _num) + _truth(c),
                 exact(c) or verdict(c["verdict"], c["expected"], c.get("expected_stated", True)) + through(c) + power(c),
                 _mark(c["verdict"] == c["expected"])]
                for c in self.claims]
        rows += [[m["id"], "mutant", f"ε {_num(m['epsilon_claimed'])}", f"ε ≥ {_num(m['epsilon_lower'])}" + _truth(m),
                  "detected" if m["detected"] else "missed", _mark(m["detected"])] for m in self.mutants]
        rows += [[t["id"], "theorem", bound_cell(t), f"estimate {_num(t['estimate'])}, {interval_cell(t)}",
                  verdict(t["verdict"], t["expected"]) + f": {reason(t)}", _mark(t["verdict"] == t["expected"])]
                 for t in self.theorems]
        rows += [[c["id"], "comparison", "same law", f"smallest p {c['p_min']:.3g}",
                  verdict(c["verdict"], c["expected"]), _mark(c["verdict"] == c["expected"])]
                 for c in self.comparisons]
        return rows


def _lower_cell(c: dict) -> str:
    """A claim's ``ε lower`` cell: ``∞`` where the row reads ε = ∞ (kept state that replays the noise, a trace
    of the data no noise covers), with the sampled bound that came with it beside, so the table says what the
    verdict says."""
    if c.get("epsilon_reading") == "∞":
        return f"∞ (sampled ≥ {_num(c['epsilon_lower'])})"
    return _num(c["epsilon_lower"])


def _method_cell(c: dict) -> str:
    """A claim's ``method`` cell: the evidence that read ε = ∞ first, where one did."""
    method = c.get("method", "sampled")
    certain = [k for k in c.get("decided_by", []) if k in ("kept state", "determinism")]
    if c.get("epsilon_reading") == "∞" and certain:
        return f"{certain[0]} (certain); {method}"
    return method


def _loss_cell(c: dict) -> str:
    """A claim or mutant row's exact loss: a value, an interval, ``out of reach`` (a stated reason) or ``–``
    (no law)."""
    loss = c.get("exact_loss")
    if loss is None:
        return "out of reach" if c.get("law") else "–"
    lo, hi = (float(v) for v in loss)
    cell = _num(lo) if lo == hi or (math.isfinite(hi) and hi - lo < 5e-5 * max(1.0, hi)) else \
        f"[{_num(lo)}, {_num(hi)}]"
    return f"{cell} (committed)" if c.get("law_source") else cell


def _tightness_cell(c: dict) -> str:
    """The sampled bound over the attainable one, for rows whose event came from an exact law."""
    return _num(c.get("tightness")) if "attainable" in c else "–"


def _truth(c: dict) -> str:
    """`` (exact X, tightness T)`` for a verdict row with an exact law, else nothing."""
    if c.get("exact_loss") is None or "attainable" not in c:
        return ""
    return f" (exact {_loss_cell(c)}, tightness {_tightness_cell(c)})"


def _mark(ok: bool) -> str:
    return "✓" if ok else "✗"


def _folded(title: str, items) -> list[str]:
    """Long evidence folded into a ``<details>`` section (closed until clicked)."""
    items = [(i, text) for i, text in items if text]
    if not items:
        return []
    return ["", f"<details><summary>{title} ({len(items)})</summary>", ""] + \
        [f"- `{i}`: {text}" for i, text in items] + ["", "</details>"]


def _num(x) -> str:
    """A number for a table cell: 4 significant digits, ``∞``, or ``–`` for none (``None`` or nan: a row that
    measured nothing there, e.g. a ledger row's lower bound)."""
    if x is None:
        return "–"
    x = float(x)
    if math.isnan(x):
        return "–"
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
    """Each claim's measured lower bound as a fraction of its claimed epsilon (:func:`figures.claims_figure`)."""
    return claims_figure(report.target, report.claims, path)


def _mutants_figure(report: Report, path: Path) -> bool:
    """Each mutant's lower bound as a multiple of its claim (:func:`figures.mutants_figure`)."""
    return mutants_figure(report.target, report.mutants, path)


#: the captions of the report's own figures
BUILT_IN = (("claims", _claims_figure, CLAIMS_CAPTION), ("mutants", _mutants_figure, MUTANTS_CAPTION))


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _draw_to(draw, path) -> None:
    draw(path)


#: files of a target's folder that ``python -m audit certify`` owns: a report written there keeps them
CERTIFICATE_FILES = ("certificate.md", "certificate.json", "figures/certificate-*.png")


def _keep_certificate(final: Path, tmp: Path) -> None:
    """Copy the certificate's files of the folder being replaced into the new one (a report replaces only its own
    files: ``report.md``, ``report.json`` and its figures)."""
    for pattern in CERTIFICATE_FILES:
        for path in final.glob(pattern):
            if path.is_file():
                (tmp / path.relative_to(final)).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(path, tmp / path.relative_to(final))


def write_report(report: Report, out_dir: str | os.PathLike) -> Path:
    """Write ``out_dir/<target>/{report.md, report.json, figures/*.png}`` atomically (``figures/`` only when a
    figure is drawn); a certificate already in the folder (:data:`CERTIFICATE_FILES`, written by
    ``python -m audit certify``) is kept.

    Returns the target's directory.
    """
    payload = json.dumps(report.to_json(), indent=2) + "\n"  # validates the schema before anything is written
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    final = out_dir / report.target
    tmp = Path(tempfile.mkdtemp(prefix=f".{report.target}-", dir=out_dir))
    try:
        os.chmod(tmp, 0o777 & ~_umask())  # mkdtemp makes it 0700; a report folder is as readable as any other
        (tmp / "figures").mkdir()
        figures, captions = [], {}
        built_in = {name for name, _, _ in BUILT_IN}
        # every figure is drawn into its own file: side by side under --jobs (audit.engine.estimation.parts), same bytes
        extra = [e for e in report.figures if e[0] not in built_in]
        # matplotlib imported once, here, before the figures' workers fork: each would import it again (about 1 CPU
        # second each; this process draws the exact-by-size figure anyway)
        from audit.engine.presentation.figures import pyplot

        pyplot()
        drawn = run_parts([Part(name, partial(draw, report, tmp / "figures" / f"{name}.png"))
                           for name, draw, _ in BUILT_IN] +
                          [Part(e[0], partial(_draw_to, e[1], tmp / "figures" / f"{e[0]}.png")) for e in extra],
                          announce=False)
        for (name, _, caption), ok in zip(BUILT_IN, drawn):
            if ok:
                figures.append(f"figures/{name}.png")
                captions[figures[-1]] = caption
        for entry in extra:  # (name, draw) or (name, draw, caption); a caption may ride on draw
            next(drawn)
            figures.append(f"figures/{entry[0]}.png")
            captions[figures[-1]] = caption_of(entry)
        drawn.close()
        for entry in report.figures:  # a figure named as a built-in one: drawn once, in the one encoding
            name = entry[0]
            if name in built_in and f"figures/{name}.png" not in figures:
                entry[1](tmp / "figures" / f"{name}.png")
                figures.append(f"figures/{name}.png")
                captions[figures[-1]] = caption_of(entry)
        if report.exact_by_size:  # the section's one figure, shown in the section (audit.results.exact_by_size)
            from audit.results.exact_by_size import FIGURE, figure

            figure(report.exact_by_size, tmp / FIGURE)
        (tmp / "report.json").write_text(payload)
        (tmp / "report.md").write_text(report.to_markdown(figures, captions))
        if not any((tmp / "figures").iterdir()):  # no figure drawn: no empty folder (compare's reports)
            (tmp / "figures").rmdir()
        if final.exists():
            _keep_certificate(final, tmp)
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
