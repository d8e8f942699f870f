"""The committed exact laws of PrivaTree's strict rows whose laws take seconds to compute.

The report's strict rows with two features (:data:`audit.privatree.claims.COMMITTED_LAW_CONFIGS`) and with
private edges, three bins or categorical features (:data:`audit.privatree.claims.EDGE_LAW_CONFIGS`) take
their event and their exact loss from the exact law of every pair's two releases
(:func:`audit.privatree.exact_law.release_law`), and those laws were the costliest step of a quick run: about
45 of its CPU seconds, for the same numbers every time (a law is a pure function of the learner's parameters,
the pair's datasets, the release and the truncation; the budget and the seed do not enter). The laws are
written once to :data:`LAW_FILE`, a law certificate committed beside this module, by ``python -m
audit.privatree.write_laws`` (:func:`audit.privatree.claims.committed_law_rows` lists the rows); a quick run
reads each row's laws from it when its entry was computed for exactly the row's configuration
(:func:`config_key`: the parameters, both datasets of every pair, the release's edge cells and the truncated
mass), and the row says so, naming the file (:func:`source_note`; the report marks its exact loss
``(committed)``). The standard and full budgets compute every law in the run. A law read from the file
chooses the same event as the law computed in the run (the same floats, so the same report for the same
seed), and a wrong law can only choose a poor event, never an invalid bound
(:mod:`audit.engine.exact_law.law_event`).

The file's laws are held against the laws computed afresh in tests/test_privatree_committed_laws.py (the three
cheapest rows in the default suite, all six under ``-m slow``), so a change to the law's code
that changes a law fails there until the file is written again.

Format: ``{"configs": [{"row": id, "key": config_key, "datasets": [[[cell, lower, upper], ...], ...],
"pairs": [{"d0": i, "d1": j, "exact_loss": [lo, hi]}, ...]}, ...]}``: the cell law of each distinct dataset
(:func:`audit.privatree.cell_law.privatree_cell_law`; a pair's laws are put on common cells as in the run,
:func:`audit.engine.exact_law.law_event.common_cells`), each cell the ``repr`` of a release
(nested tuples of strings and integers, read back with :func:`ast.literal_eval`) or
:data:`audit.engine.comparison.exact_oracle.OTHER`; probabilities as JSON floats (exact round trip).
"""
from __future__ import annotations

import ast
import json
from functools import lru_cache
from pathlib import Path

import numpy as np

from audit.engine.comparison.exact_oracle import OTHER, CellLaw
from audit.engine.runs import progress
from audit.engine.exact_law.law_event import PairLaw, common_cells

__all__ = ["LAW_FILE", "LAW_FILE_NAME", "config_key", "committed_pair_laws", "quick_laws", "law_row", "source_note",
           "write"]

#: the committed law certificate (package data)
LAW_FILE = Path(__file__).with_name("edge_laws.json")
#: its path in the repository, as the report names it
LAW_FILE_NAME = "audit/privatree/edge_laws.json"


def _jsonable(v):
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in sorted(v.items(), key=lambda kv: str(kv[0]))}
    if isinstance(v, (list, tuple, np.ndarray)):
        return [_jsonable(x) for x in v]
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (np.floating,)):
        return float(v)
    return v


def config_key(params: dict, pairs, edges, tail: float) -> dict:
    """What a row's laws are a function of: the learner's parameters, both datasets of every pair (features
    and labels), the release's edge cells and the truncated mass per noisy count (JSON-able; equal keys give
    equal laws)."""
    data = [[[_jsonable(np.asarray(X, dtype=float)), _jsonable(np.asarray(y))] for X, y in (p.d0, p.d1)]
            for p in pairs]
    return {"params": _jsonable(params), "pairs": data, "edges": edges, "tail": float(tail)}


def _cell_name(c) -> str:
    return OTHER if c == OTHER else repr(c)


def _cell_value(s: str):
    return OTHER if s == OTHER else ast.literal_eval(s)


def _dump_law(law: CellLaw) -> list:
    return [[_cell_name(c), float(law.lower.get(c, 0.0)), float(law.upper[c])]
            for c in sorted(law.upper, key=_cell_name)]


def _load_law(rows: list) -> CellLaw:
    lower = {_cell_value(c): lo for c, lo, _ in rows}
    upper = {_cell_value(c): hi for c, _, hi in rows}
    known = set(upper)
    return CellLaw(lower, upper, lambda r: r if r in known else OTHER)


def _load_pairs(entry: dict) -> list[PairLaw]:
    laws = [_load_law(rows) for rows in entry["datasets"]]
    return [PairLaw(*common_cells(laws[p["d0"]], laws[p["d1"]]), tuple(p["exact_loss"])) for p in entry["pairs"]]


@lru_cache(maxsize=None)
def _entries(path: str) -> tuple:
    p = Path(path)
    if not p.is_file():
        return ()
    return tuple(json.loads(p.read_text(encoding="utf-8"))["configs"])


def committed_pair_laws(params: dict, pairs, edges, tail: float, path: Path | None = None) -> list[PairLaw] | None:
    """The committed :class:`audit.engine.exact_law.law_event.PairLaw` of every pair, or ``None`` when the law
    file (``path``, default :data:`LAW_FILE`) holds no entry of exactly this configuration
    (:func:`config_key`)."""
    key = json.loads(json.dumps(config_key(params, pairs, edges, tail)))
    for entry in _entries(str(path or LAW_FILE)):
        if entry["key"] == key:
            return _load_pairs(entry)
    return None


def quick_laws(budget: str, params: dict, pairs, edges, tail: float) -> list[PairLaw] | None:
    """At the quick budget, :func:`committed_pair_laws` (``None`` when the file lacks the configuration); at the
    other budgets ``None``: the run computes the laws."""
    return committed_pair_laws(params, pairs, edges, tail) if budget == "quick" else None


def law_row(res, committed, **kw) -> dict:
    """``res.claim_row(**kw)`` (a :class:`audit.engine.exact_law.law_event.LawAuditResult`); when its laws were
    ``committed`` (read from the file), the row names the file (``law_source``, and :func:`source_note` in its
    detail) before it is announced."""
    row = res.claim_row(announce=committed is None, **kw)
    if committed is not None:
        row.update(law_source=LAW_FILE_NAME)
        row["detail"] = f"{row['detail']}; {source_note()}"
        progress.finished("claim", row)
    return row


def source_note(name: str = LAW_FILE_NAME) -> str:
    """The sentence a row appends when its laws (so its event and its exact loss) come from the committed file."""
    return (f"the pairs' exact laws (the event and the exact loss) were taken from the committed law certificate "
            f"{name} (computed for exactly these parameters, datasets, release and truncation by `python -m "
            "audit.privatree.write_laws`), not computed in this run; the standard and full budgets compute them")


def write(configs, path: Path | None = None) -> Path:
    """Write ``configs`` to ``path`` (default :data:`LAW_FILE`): per row ``(row id, config_key, cell laws,
    pairs)``, the cell laws those of its distinct datasets (:func:`audit.privatree.cell_law.privatree_cell_law`)
    and each pair ``(index of d0, index of d1, exact loss)``; :func:`audit.privatree.write_laws.write_committed_laws`
    computes them."""
    out = [{"row": row, "key": key, "datasets": [_dump_law(law) for law in laws],
            "pairs": [{"d0": i, "d1": j, "exact_loss": [float(v) for v in loss]} for i, j, loss in pairs]}
           for row, key, laws, pairs in configs]
    path = Path(path or LAW_FILE)
    text = json.dumps({"about": "exact laws of the rows of audit.privatree.claims.committed_law_rows() "
                                "(audit/privatree/committed_laws.py); written by `python -m audit.privatree.write_laws`",
                       "configs": out}, separators=(",", ":"))
    path.write_text(text.replace('},{"row"', '},\n{"row"') + "\n", encoding="utf-8")
    _entries.cache_clear()
    return path
