"""The committed law certificate of PrivaTree's strict rows with private edges, three bins or categorical features
(audit/privatree/edge_laws.json, :mod:`audit.privatree.committed_laws`): its laws are the laws the run would
compute, a quick run reads them and says so, and the other budgets compute them. No sampling test here has a
verdict of its own: the rows are compared with each other, exactly (same seed, same draws)."""
from __future__ import annotations

import json

import numpy as np
import pytest

from audit.privatree import claims
from audit.privatree import committed_laws as cl

#: the two cheapest configurations (about 2 and 6 CPU-s) in the default suite, the other two (about 19 and 13)
#: under -m slow
CASES = [pytest.param(k, marks=() if k in (2, 3) else pytest.mark.slow, id=str(k)) for k in range(4)]


def _same(a, b):
    assert set(a.upper) == set(b.upper)
    assert a.lower == b.lower and a.upper == b.upper  # the same floats: JSON floats round-trip exactly


@pytest.mark.parametrize("k", CASES)
def test_the_committed_laws_are_the_laws_the_run_computes(k):
    params, pairs, _ = claims._edge_law_setup(k)
    committed = cl.committed_pair_laws(params, pairs, claims.RELEASE_EDGE_CELLS, claims.EDGE_LAW_TAIL)
    assert committed is not None, "edge_laws.json holds no entry of this configuration: python -m audit.privatree.write_laws"
    computed = claims._pair_laws(params, pairs, edges=claims.RELEASE_EDGE_CELLS, tail=claims.EDGE_LAW_TAIL)
    assert len(committed) == len(computed) == len(pairs)
    for c, f, p in zip(committed, computed, pairs):
        assert c.exact_loss == tuple(f.exact_loss)
        _same(c.law0, f.law0)
        _same(c.law1, f.law1)
        # the same cell for every release the law names, and OTHER for one it does not
        for r in list(f.law0.upper)[:50]:
            assert c.law0.cell(r) == f.law0.cell(r)
        assert c.law0.cell(("no", "such", "release")) == f.law0.cell(("no", "such", "release")) == cl.OTHER


def test_every_row_of_the_run_has_its_entry_in_the_file():
    rows = [json.loads(json.dumps(e))["row"] for e in cl._entries(str(cl.LAW_FILE))]
    assert rows == [claims.edge_law_row_id(k) for k in range(len(claims.EDGE_LAW_CONFIGS))]
    for k in range(len(claims.EDGE_LAW_CONFIGS)):
        params, pairs, _ = claims._edge_law_setup(k)
        assert cl.committed_pair_laws(params, pairs, claims.RELEASE_EDGE_CELLS, claims.EDGE_LAW_TAIL) is not None


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


def test_the_quick_row_from_the_committed_laws_is_the_computed_row_and_says_so(monkeypatch):
    """Same seed, same draws: the row read from the file and the row whose laws are computed in the run agree
    on everything but the sentence naming the file (and its law_source field)."""
    k = 2
    (read,) = claims.edge_law_claim("quick", 0, k)
    monkeypatch.setattr(claims, "committed_pair_laws", lambda *a, **kw: None)
    (computed,) = claims.edge_law_claim("quick", 0, k)
    assert read["law_source"] == cl.LAW_FILE_NAME == "audit/privatree/edge_laws.json"
    assert "law_source" not in computed
    assert read["detail"] == f"{computed['detail']}; {cl.source_note()}"
    assert "committed law certificate audit/privatree/edge_laws.json" in read["detail"]
    same = {key: v for key, v in read.items() if key not in ("detail", "law_source")}
    assert same == {key: v for key, v in computed.items() if key != "detail"}


def test_the_other_budgets_compute_the_laws(monkeypatch):
    seen = []
    monkeypatch.setattr(claims, "committed_pair_laws", lambda *a, **kw: seen.append(a))
    monkeypatch.setattr(claims, "N_STRICT", dict(claims.N_STRICT, standard=200))  # the draws do not matter here
    (row,) = claims.edge_law_claim("standard", 0, 2)
    assert seen == [] and "law_source" not in row and "committed" not in row["detail"]


def test_the_report_marks_a_committed_exact_loss():
    from audit.report import Report

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
