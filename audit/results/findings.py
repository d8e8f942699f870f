"""The findings table: each paper's privacy claim, what the committed reports measure, and the verdict.

The README opens with this table. Its words (what each paper claims, why a claim fails) are written here once;
its numbers and its verdicts are read from the committed reports (``reports/TARGET/report.json`` and
``reports/TARGET/certificate.json``), so the table cannot drift from them: ``tests/test_findings.py`` checks
that the README's copy equals :func:`findings_table` and that every verdict agrees with its report row.

Each finding names one sampled row of a report (the *sampled lower bound*: a bound on the privacy loss that
holds with probability at least ``1 - alpha``) and, where the release has an exact law, where the *exact loss*
is read: the same row's law, or the worst neighbouring pair of a certificate's tiny domain.

``python -m audit findings`` prints the table; :func:`update_pages` writes it into the README and the
documentation's home page.
"""
from __future__ import annotations

import json
import math
import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

from audit.engine.runs.destination import REPORTS

__all__ = ["Finding", "FINDINGS", "findings_rows", "findings_table", "findings_text", "update_pages"]

#: the false-alarm rate of the committed reports' rows (a row with another says so in its cell)
ALPHA = 0.01


@dataclass(frozen=True)
class Finding:
    """One privacy claim of one paper, and where the reports measure it.

    Parameters
    ----------
    paper : str
        The paper, cited by authors and year.
    claim : str
        What the paper claims, in a few words.
    target : str
        The report holding the measurement (``reports/TARGET/report.json``).
    row : str
        The ``id`` of the claim row (or, with ``section="mutants"``, the mutant row) that measures it.
    reason : str
        Why the claim does not hold, in plain words (empty for a claim that holds).
    exact : tuple of str, optional
        Where the exact loss is read: ``("row",)`` for the row's own law, ``("mutant", ID)`` for a mutant row
        of the same report with the same flaw and claim, ``("certificate", DOMAIN)`` for the worst pair of a
        certificate domain; ``None`` when no law is within reach.
    section : str
        ``"claims"`` (default) or ``"mutants"``.
    """

    paper: str
    claim: str
    target: str
    row: str
    reason: str = ""
    exact: tuple[str, ...] | None = None
    section: str = "claims"


FINDINGS: tuple[Finding, ...] = (
    Finding("Vos et al. 2023 (PrivaTree)", "PrivaTree is ε-DP with the node budget charged per feature (Eqs. 9-10)",
            "privatree", "privatree/paper-accounting/G1@2",
            "each node spends its budget once per feature, so the loss grows with the number of features",
            ("row",)),
    Finding("Vos et al. 2023 (PrivaTree)", "PrivaTree is ε-DP with its stopping rule (Algorithm 1, line 7)",
            "privatree", "privatree/paper-stopping/G2@1",
            "the rule stops on exact counts, so some trees can only come from one of two neighbouring datasets",
            ("row",)),
    Finding("Vos et al. 2023 (PrivaTree)", "PrivaTree with both gaps closed (our strict accounting) is ε-DP",
            "privatree", "privatree/strict/one-numerical-depth2@1", exact=("row",)),
    Finding("Consul and Williamson 2020 (DiPriMe)", "the index median (Algorithm 3) is ε-DP",
            "diprime", "paper-v000-index-median@1",
            "it picks a gap between records by index, not weighted by its length, so a tiny gap gets a density without bound", ("mutant", "diprime-v000-index-median")),
    Finding("Consul and Williamson 2020, 2021 (DiPriMe)", "the regression leaf Laplace(S / (N ε)) is ε-DP",
            "diprime", "paper-leaf-count-scaled@1",
            "the noise scale divides by the private leaf count N, so an empty leaf and a one-record leaf differ "
            "without bound", ("mutant", "diprime-count-scaled-leaf")),
    Finding("Consul and Williamson 2021 (DiPriMe)", "the authors' permute-and-flip median is ε-DP",
            "diprime", "paper-flip-authors-median@1",
            "a gap's length enters its score, so the output's density in a tiny gap is not bounded by ε"),
    Finding("Consul and Williamson 2021 (DiPriMe)", "DiPriMeFlip with our strict accounting is ε-DP",
            "diprime", "strict-classification-flip@1", exact=("row",)),
    Finding("Bojarski et al. 2014 (random trees)", "leaf counts with Laplace(k/ε) over k trees are ε-DP "
            "(add/remove neighbours)", "random-trees", "counts-add-remove-strict",
            exact=("certificate", "strict, add/remove")),
    Finding("Bojarski et al. 2014 (random trees)", "the same noise under substitution of one record",
            "random-trees", "flawed-add-remove-scale-under-substitution",
            "a substitution moves two counts, so the loss is 2ε; Laplace(2k/ε) restores ε",
            ("certificate", "paper noise under substitution")),
    Finding("Ma et al. 2023 (LPDT)", "each user's report is ε-locally private (Theorem 3.1)",
            "lpdt", "randomizer@1/sampled", exact=("certificate", "report, indicator share 1/2")),
    Finding("Ma et al. 2023 (LPDT)", "the authors' code: fresh label noise in every leaf is ε-locally private",
            "lpdt", "per-leaf-noise@1/sampled",
            "every leaf's noise reveals the label again: the loss is (L + 1) ε / 2 for L leaves",
            ("certificate", "authors' code: fresh label noise per leaf")),
    Finding("baseline: DiffPrivLib-style random tree", "ε-DP (permute-and-flip leaves)", "privatree",
            "baseline/diffprivlib-tree@1", exact=("certificate", "DiffPrivLib tree, one feature, depth 2")),
    Finding("baseline: DPGDF", "ε-DP", "privatree", "baseline/dpgdf-stopping@1",
            "it stops on pure nodes and on exact record counts", ("certificate", "DPGDF stopping")),
    Finding("baseline: BDPT", "ε-DP", "privatree", "baseline/bdpt@1",
            "it stops on exact counts and merges the data's own values", ("certificate", "BDPT stopping")),
    Finding("baseline: DP logistic regression (Chaudhuri et al. 2011)", "ε-DP under substitution",
            "privatree", "baseline/dp-lr@1"),
    Finding("diffprivlib 0.6.6 decision tree", "ε-DP (stated for add/remove neighbours)",
            "diffprivlib", "decision-tree/add-remove"),
    Finding("diffprivlib 0.6.6 decision tree", "the same tree under substitution of one record",
            "diffprivlib", "decision-tree/substitute", "a substitution is a removal and an addition: up to 2ε"),
)


def _load(path: Path) -> dict:
    if not path.is_file():
        raise ValueError(f"reports directory has no {path.parent.name}/{path.name}: {path}")
    return json.loads(path.read_text())


def _row(report: dict, section: str, row_id: str, where: str) -> dict:
    for row in report[section]:
        if row["id"] == row_id:
            return row
    raise ValueError(f"{where} has no {section} row with id {row_id!r}")


def _number(x) -> str:
    """A loss as the table writes it: three decimals, ``∞`` for an infinite loss."""
    v = float(x)
    return "∞" if math.isinf(v) else f"{v:.3f}"


def _interval(lo, hi) -> str:
    lo, hi = float(lo), float(hi)
    if math.isinf(lo) or abs(hi - lo) <= 5e-4:
        return _number(hi)
    return f"{_number(lo)} to {_number(hi)}"


def _alpha(row: dict, report: dict) -> str:
    """The row's confidence and budget when they are not the table's usual ones (α = 0.01, full budget)."""
    notes = [f"α = {row['alpha']:.3g}"] if row.get("alpha", ALPHA) != ALPHA else []  # 3 figures: 0.000644
    notes += [f"{report['budget']} budget"] if report.get("budget") != "full" else []
    return f" ({', '.join(notes)})" if notes else ""


def _exact(f: Finding, report: dict, reports: Path) -> str:
    if f.exact is None:
        return "–"
    if f.exact[0] == "row":
        row = _row(report, f.section, f.row, f.target)
        if row.get("exact_loss") is None:
            raise ValueError(f"{f.target} row {f.row!r} has no exact loss")
        return _interval(*row["exact_loss"])
    if f.exact[0] == "mutant":
        row = _row(report, "mutants", f.exact[1], f.target)
        return _interval(*row["exact_loss"])
    cert = _load(reports / f.target / "certificate.json")
    for d in cert["domains"]:
        if d["domain"] == f.exact[1]:
            return f"{_interval(d['worst']['lower'], d['worst']['upper'])} (tiny domain)"
    raise ValueError(f"{f.target}/certificate.json has no domain {f.exact[1]!r}")


def findings_rows(reports: str | Path | None = None) -> list[dict]:
    """The findings as rows of plain strings, read from the committed reports.

    Parameters
    ----------
    reports : str or Path, optional
        The reports directory (default: ``reports/`` of the source checkout).

    Returns
    -------
    list of dict
        One dict per :data:`FINDINGS` entry with the keys ``paper``, ``claim``, ``epsilon``, ``sampled``,
        ``exact`` and ``verdict``.

    Raises
    ------
    ValueError
        When a report, a row or a certificate domain named in :data:`FINDINGS` is missing, or when a row's
        verdict is not the one its report expected (the table would then state an unchecked finding).
    """
    base = Path(reports) if reports is not None else REPORTS
    cache: dict[str, dict] = {}
    rows = []
    for f in FINDINGS:
        report = cache.setdefault(f.target, _load(base / f.target / "report.json"))
        row = _row(report, f.section, f.row, f.target)
        verdict = row["verdict"] if f.section == "claims" else ("violation" if row["detected"] else "pass")
        if f.section == "claims" and verdict != row["expected"]:
            raise ValueError(f"{f.target} row {f.row!r} reads {verdict!r}, its report expected {row['expected']!r}")
        if verdict not in ("pass", "violation"):
            raise ValueError(f"{f.target} row {f.row!r} reads {verdict!r}: neither pass nor violation")
        if (verdict == "violation") != bool(f.reason):
            raise ValueError(f"finding {f.claim!r}: the report reads {verdict!r}, the table's words disagree")
        exact = _exact(f, report, base)
        # a sampled lower bound below the claim does not prove it: "holds" only beside an exact loss
        words = f"does not hold: {f.reason}" if verdict == "violation" else \
            "holds" if exact != "–" else "not refuted (lower bound only)"
        rows.append({"paper": f.paper, "claim": f.claim, "epsilon": f"{float(row['epsilon_claimed']):g}",
                     "sampled": f"ε ≥ {_number(row['epsilon_lower'])}" + _alpha(row, report),
                     "exact": exact, "verdict": words})
    return rows


def findings_table(reports: str | Path | None = None) -> str:
    """The findings as a Markdown table (the README's copy must equal it).

    Parameters
    ----------
    reports : str or Path, optional
        The reports directory (default: ``reports/`` of the source checkout).

    Returns
    -------
    str
        A Markdown table, one line per finding, ending with a newline.
    """
    lines = ["| paper | what the paper claims | ε claimed | sampled lower bound | exact loss | verdict |",
             "|---|---|---|---|---|---|"]
    for r in findings_rows(reports):
        lines.append(f"| {r['paper']} | {r['claim']} | {r['epsilon']} | {r['sampled']} | {r['exact']} | "
                     f"{r['verdict']} |")
    return "\n".join(lines) + "\n"


def findings_text(width: int = 80, reports: str | Path | None = None) -> str:
    """The findings for a terminal: one block per finding, its verdict first (``✓`` holds, ``✗`` does not,
    ``·`` not refuted), then the paper and its claim, the numbers, each line wrapped to ``width`` columns.

    Parameters
    ----------
    width : int
        The terminal's columns (at least 40 are used).
    reports : str or Path, optional
        The reports directory (default: ``reports/`` of the source checkout).

    Returns
    -------
    str
        The blocks, separated by blank lines, ending with a newline.
    """
    width = max(40, int(width))
    blocks = []
    for r in findings_rows(reports):
        mark = "✗" if r["verdict"].startswith("does not hold") else "✓" if r["verdict"] == "holds" else "·"
        lines = textwrap.wrap(f"{mark} {r['verdict']}", width, subsequent_indent="    ")
        lines += textwrap.wrap(f"{r['paper']}: {r['claim']}", width, initial_indent="    ", subsequent_indent="    ")
        lines += textwrap.wrap(f"ε claimed {r['epsilon']}; sampled {r['sampled']}; exact loss {r['exact']}", width,
                               initial_indent="    ", subsequent_indent="    ")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + "\n"


#: the table's place in a page: between these two comments
BLOCK = re.compile(r"(<!-- findings:start[^>]*-->\n)(.*?)(<!-- findings:end -->)", flags=re.S)
#: the exact-epsilon table's place (:mod:`audit.results.exact_eps`), where a page shows it
EXACT_BLOCK = re.compile(r"(<!-- exact-eps:start[^>]*-->\n)(.*?)(<!-- exact-eps:end -->)", flags=re.S)


def update_pages(*paths: str | Path, reports: str | Path | None = None) -> list[Path]:
    """Write the generated table into each page's findings block (after the committed reports changed).

    Parameters
    ----------
    *paths : str or Path
        Pages holding exactly one block ``<!-- findings:start ... -->`` ... ``<!-- findings:end -->``
        (the README and ``docs/index.md``); a page holding a block ``<!-- exact-eps:start ... -->`` ...
        ``<!-- exact-eps:end -->`` gets :func:`audit.results.exact_eps.exact_eps_table` there too.
    reports : str or Path, optional
        The reports directory (default: ``reports/`` of the source checkout).

    Returns
    -------
    list of Path
        The pages whose table changed.

    Raises
    ------
    ValueError
        When a page does not hold exactly one findings block (nothing is written then).
    """
    from audit.results.exact_eps import exact_eps_table

    table, exact = findings_table(reports), None
    texts = {}
    for path in map(Path, paths):
        text = path.read_text()
        if len(BLOCK.findall(text)) != 1:
            raise ValueError(f"paths: {path} holds {len(BLOCK.findall(text))} findings blocks, expected 1")
        text = BLOCK.sub(lambda m: m.group(1) + table + m.group(3), text)
        if EXACT_BLOCK.search(text):  # the exact-epsilon table too, where the page shows it
            exact = exact if exact is not None else exact_eps_table(reports)
            text = EXACT_BLOCK.sub(lambda m: m.group(1) + exact + m.group(3), text)
        texts[path] = text
    changed = [p for p, t in texts.items() if t != p.read_text()]
    for p in changed:
        p.write_text(texts[p])
    return changed
