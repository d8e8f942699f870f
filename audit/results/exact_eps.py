"""The exact ε of each strict learner at every data size, as the README and the documentation's home page show it.

The numbers are read from the all-sizes sections of the committed certificates
(``reports/TARGET/certificate.json``, key ``all_sizes``, written by ``python -m audit certify TARGET``): for every
dataset of any size on the learner's public grid, the loss is at most ``U``, and a pair of ``N`` records attains
``L``. Where the supremum is only approached as the counts grow without bound, the certificate states its limit,
and the table says so; where the search did not close, the row gives both ends (and, where the entry's analysis
states the supremum at the upper end, says so: the proof's bound is then the exact value, reached by no pair). ``tests/test_findings.py`` checks that each page's copy equals :func:`exact_eps_table`.
"""
from __future__ import annotations

import json
from pathlib import Path

from audit.engine.runs.destination import REPORTS

__all__ = ["EXACT_TARGETS", "METHOD_WORDS", "exact_eps_rows", "exact_eps_table"]

#: the certificates read, in the table's order (target, learner's name in the table)
EXACT_TARGETS: tuple[tuple[str, str], ...] = (
    ("privatree", "strict PrivaTree"),
    ("diprime", "strict DiPriMeFlip"),
    ("random-trees", "strict random decision forest"),
)

#: the table's words for an entry's ``upper_method`` (:class:`audit.engine.exact_law.allsizes.AllSizesDomain`)
METHOD_WORDS = {"law": "the law (bounded on every box)", "proof": "the paper's proof (quoted; the law gives the lower end)"}


def _method(path: Path, entry: dict) -> str:
    method = entry.get("upper_method")
    if method not in METHOD_WORDS:
        raise ValueError(f"reports: {path}: {entry['domain']!r} has upper_method {method!r}, not one of "
                         f"{tuple(METHOD_WORDS)} (python -m audit certify regenerates it)")
    return method


def _reading(entry: dict) -> str:
    """How much of the claim the learner really spends, in words."""
    share = entry["upper"] / entry["epsilon_claimed"]
    if share >= 1 - 1e-6:
        return "the whole claim"
    return f"{share:.2f} of the claim: the ledger's composition is loose here"


def exact_eps_rows(reports: str | Path | None = None) -> list[dict]:
    """One row per all-sizes certificate entry: learner, configuration, neighbours, claim, exact ε, where its upper
    end comes from (``method``: the entry's ``upper_method``), how reached.

    Parameters
    ----------
    reports : str or Path, optional
        The reports directory (default: ``reports/`` of the source checkout).

    Returns
    -------
    list of dict

    Raises
    ------
    ValueError
        When a certificate is missing, has no all-sizes section, or an entry is not certified. An entry whose
        search did not close (``complete`` false) is a row of bounds (``closed`` false, ``lower`` and ``exact``
        the two ends).
    """
    base = Path(reports) if reports is not None else REPORTS
    rows = []
    for target, learner in EXACT_TARGETS:
        path = base / target / "certificate.json"
        if not path.is_file():
            raise ValueError(f"reports: no certificate at {path} (python -m audit certify {target})")
        entries = json.loads(path.read_text()).get("all_sizes") or []
        if not entries:
            raise ValueError(f"reports: {path} has no all-sizes section (python -m audit certify {target})")
        for e in entries:
            if e["verdict"] != "certified":
                raise ValueError(f"reports: {path}: {e['domain']!r} is {e['verdict']}, not certified")
            closed = bool(e.get("complete", False))
            limit = e.get("limit")
            by_analysis = not closed and limit is not None and limit >= e["upper"] * (1 - 1e-9)
            if by_analysis:
                how = (f"not closed by the search: the supremum {limit:g} is the entry's analysis, approached as the "
                       f"counts grow (a pair of {e['worst']['records']:,} records attains {e['lower']:.4f})")
            elif not closed:
                how = (f"not closed: the bounds only (a pair of {e['worst']['records']:,} records attains "
                       f"{e['lower']:.4f}; the certificate's entry says why)")
            elif limit is not None:
                how = (f"supremum {e['limit']:g}, approached as the counts grow without bound "
                       f"({e['lower']:.6f} at {e['worst']['records']:,} records)")
            else:
                how = f"reached within {e['gap']:.0e} by a pair of {e['worst']['records']:,} records"
            config = e["domain"].removeprefix("strict").lstrip(", ") or e["domain"]
            rows.append({"learner": learner, "configuration": config, "relation": e["relation"],
                         "claim": f"{e['epsilon_claimed']:g}", "exact": f"{e['upper']:.4f}", "how": how,
                         "lower": f"{e['lower']:.4f}", "closed": closed, "method": _method(path, e),
                         "reading": _reading(e) if closed else (_reading(e) + ", in the limit (the entry's analysis)"
                                                                if by_analysis else "open: between the bounds")})
    return rows


def exact_eps_table(reports: str | Path | None = None) -> str:
    """The rows of :func:`exact_eps_rows` as a Markdown table ending with a newline."""
    lines = ["| learner | configuration | neighbours | ε claimed | exact ε, every dataset size | upper end from | "
             "how it is reached | reading |", "|---|---|---|---|---|---|---|---|"]
    for r in exact_eps_rows(reports):
        exact = f"≤ {r['exact']}" if r["closed"] else f"in [{r['lower']}, {r['exact']}]"
        lines.append(f"| {r['learner']} | {r['configuration']} | {r['relation']} | {r['claim']} | {exact} | "
                     f"{METHOD_WORDS[r['method']]} | {r['how']} | {r['reading']} |")
    return "\n".join(lines) + "\n"
