"""The committed law certificate of PrivaTree's strict rows with private edges, three bins or categorical features
(audit/privatree/edge_laws.json, :mod:`audit.privatree.committed_laws`): its laws are the laws the run would
compute, a quick run reads them and says so, and the other budgets compute them. No sampling test here has a
verdict of its own: the rows are compared with each other, exactly (same seed, same draws)."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

from audit.privatree import claims
from audit.privatree import committed_laws as cl

ROWS = claims.committed_law_rows()
#: the three cheapest rows (two features at epsilon 8, two categorical features, about 0.3 and 2 CPU-s; a
#: numerical beside a categorical feature, about 6) in the default suite, the other three (two features at
#: epsilon 4, about 5; three bins, 19; three features, 13) under -m release
CHEAP = ("privatree/strict/two-numerical-depth1@8", "privatree/strict/two-categorical-depth1@4",
         "privatree/strict/numerical+categorical-private-edges-depth1@8")
CASES = [pytest.param(r, marks=() if r[0] in CHEAP else pytest.mark.release, id=r[0]) for r in ROWS]


#: how far a committed float may be from the one this machine computes: the last bits of libm's exp and log
#: differ between numpy builds (2.8279272977376264 committed, 2.827927297737626 computed by numpy 2.4.6), and a
#: loss summed over many releases carries that difference further (3e-12 relative on the depth-2 row)
REL = 1e-9


def _close(a, b) -> bool:
    """``a`` and ``b`` equal, floats (and numpy floats) within :data:`REL` of each other, in any nesting."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b))
    if isinstance(a, (float, np.floating)) and isinstance(b, (float, np.floating, int)):
        return a == b or math.isclose(a, b, rel_tol=REL, abs_tol=1e-300)
    return a == b


def _same(a, b):
    assert set(a.upper) == set(b.upper)
    assert _close(a.lower, b.lower) and _close(a.upper, b.upper)  # JSON floats round-trip exactly; libm may not


@pytest.mark.parametrize("row", CASES)
def test_the_committed_laws_are_the_laws_the_run_computes(row):
    _, params, pairs, edges, tail = row
    committed = cl.committed_pair_laws(params, pairs, edges, tail)
    assert committed is not None, "edge_laws.json holds no entry of this row: python -m audit.privatree.write_laws"
    computed = claims._pair_laws(params, pairs, edges=edges, tail=tail)
    assert len(committed) == len(computed) == len(pairs)
    for c, f in zip(committed, computed):
        assert _close(c.exact_loss, tuple(f.exact_loss))
        _same(c.law0, f.law0)
        _same(c.law1, f.law1)
        # the same cell for every release the law names, and OTHER for one it does not
        for r in f.law0.upper:
            assert c.law0.cell(r) == f.law0.cell(r) and c.law1.cell(r) == f.law1.cell(r)
        assert c.law0.cell(("no", "such", "release")) == f.law0.cell(("no", "such", "release")) == cl.OTHER


def test_every_committed_row_has_its_entry_in_the_file():
    assert [e["row"] for e in cl._entries(str(cl.LAW_FILE))] == [r[0] for r in ROWS]
    for _, params, pairs, edges, tail in ROWS:
        assert cl.committed_pair_laws(params, pairs, edges, tail) is not None
    # every row with private edges, three bins or categorical features, and the two-feature rows
    assert {claims.edge_law_row_id(k) for k in range(len(claims.EDGE_LAW_CONFIGS))} < {r[0] for r in ROWS}
    assert {"privatree/strict/two-numerical-depth1@4", "privatree/strict/two-numerical-depth1@8"} < {r[0] for r in ROWS}


def test_another_configuration_finds_no_committed_law():
    params, pairs, _ = claims._edge_law_setup(2)
    edges, tail = claims.RELEASE_EDGE_CELLS, claims.EDGE_LAW_TAIL
    assert cl.committed_pair_laws(dict(params, epsilon=params["epsilon"] + 1), pairs, edges, tail) is None
    assert cl.committed_pair_laws(params, pairs, edges, tail * 10) is None
    assert cl.committed_pair_laws(params, pairs, edges + 1, tail) is None
    moved = [type(p)(p.d0, (np.asarray(p.d1[0]) * 0.5, p.d1[1]), p.description) for p in pairs]
    assert cl.committed_pair_laws(params, moved, edges, tail) is None


def test_a_file_without_the_entry_or_no_file_finds_nothing(tmp_path):
    params, pairs, _ = claims._edge_law_setup(2)
    empty = tmp_path / "laws.json"
    empty.write_text('{"configs": []}')
    assert cl.committed_pair_laws(params, pairs, 2, 1e-9, path=empty) is None
    assert cl.committed_pair_laws(params, pairs, 2, 1e-9, path=tmp_path / "absent.json") is None


def _law_rows(monkeypatch):
    """law_claims at one feature, epsilon 0.5, and two features, epsilon 8 (the cheap rows)."""
    (one, *a, _), (two, *b, _) = claims.LAW_CONFIGS
    monkeypatch.setattr(claims, "LAW_CONFIGS", ((one, *a, (0.5,)), (two, *b, (8.0,))))


@pytest.mark.parametrize("which", ["edge", "law"])
def test_the_quick_row_from_the_committed_laws_is_the_computed_row_and_says_so(monkeypatch, which):
    """Same seed, same draws: the row read from the file and the row whose laws are computed in the run agree
    on everything but the sentence naming the file (and its law_source field)."""
    if which == "law":
        _law_rows(monkeypatch)
        one, read = claims.law_claims("quick", 0)
        assert "law_source" not in one  # one feature: a finite sum, computed in every run
    else:
        (read,) = claims.edge_law_claim("quick", 0, 2)
    monkeypatch.setattr(claims, "quick_laws", lambda *a, **kw: None)
    computed = claims.law_claims("quick", 0)[1] if which == "law" else claims.edge_law_claim("quick", 0, 2)[0]
    assert read["law_source"] == cl.LAW_FILE_NAME == "audit/privatree/edge_laws.json"
    assert "law_source" not in computed
    assert read["detail"] == f"{computed['detail']}; {cl.source_note()}"
    assert "committed law certificate audit/privatree/edge_laws.json" in read["detail"]
    same = {key: v for key, v in read.items() if key not in ("detail", "law_source")}
    assert _close(same, {key: v for key, v in computed.items() if key != "detail"})


def test_the_other_budgets_compute_the_laws(monkeypatch):
    seen = []
    monkeypatch.setattr(cl, "committed_pair_laws", lambda *a, **kw: seen.append(a))
    monkeypatch.setattr(claims, "N_STRICT", dict(claims.N_STRICT, standard=200))  # the draws do not matter here
    (row,) = claims.edge_law_claim("standard", 0, 2)
    assert seen == [] and "law_source" not in row and "committed" not in row["detail"]


def test_the_report_marks_a_committed_exact_loss():
    from audit.results.report import Report

    rep = Report("privatree", "quick", 0)
    (row,) = claims.edge_law_claim("quick", 0, 2)
    rep.claims.append(row)
    md = rep.to_markdown([])
    assert "(committed)" in md and "committed law certificate audit/privatree/edge_laws.json" in md
    row = dict(row)
    del row["law_source"]
    rep.claims[:] = [row]
    md = rep.to_markdown([])
    assert "(committed)" not in md


def test_the_writer_writes_what_the_committed_file_holds(monkeypatch, tmp_path):
    """python -m audit.privatree.write_laws, on the two cheapest rows, into a file of its own: the same laws,
    exactly, as the committed file's."""
    from audit.privatree import write_laws

    cheap = [r for r in ROWS if r[0] in CHEAP[:2]]
    monkeypatch.setattr(write_laws, "committed_law_rows", lambda: cheap)
    path = write_laws.write_committed_laws(tmp_path / "laws.json")
    for _, params, pairs, edges, tail in cheap:
        mine = cl.committed_pair_laws(params, pairs, edges, tail, path=path)
        theirs = cl.committed_pair_laws(params, pairs, edges, tail)
        assert mine is not None and theirs is not None
        for a, b in zip(mine, theirs):
            assert _close(a.exact_loss, b.exact_loss)
            _same(a.law0, b.law0)
            _same(a.law1, b.law1)
