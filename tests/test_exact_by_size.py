"""The run reports' section "Exact ε by number of records" (audit.results.exact_by_size): the loss by size of a listed
domain is the running maximum of its pairs' exact losses, the strict curves are the certificates' own, and the
committed reports carry the section the code computes now (nothing is sampled)."""
from __future__ import annotations

import dataclasses
import json
import math
import shutil
from pathlib import Path

import pytest

from audit.results import exact_by_size as ebs
from audit.engine.exact_law.domain import certify_domain, loss_by_size
from audit.results.report import Report

ROOT = Path(__file__).resolve().parents[1]
TARGETS = ("privatree", "diprime", "random-trees")
#: wall times: they differ from run to run
TIMINGS = ("seconds", "seconds_per_box", "seconds_total")


def _numbers(rows: list) -> list:
    return [{k: v for k, v in e.items() if k not in TIMINGS} for e in ebs.jsonable(rows)]


def _g2(max_records: int):
    from audit.privatree.certificate import domains

    d = next(d for d in domains() if d.name == "paper stopping (G2)")
    return dataclasses.replace(d, max_records=max_records)


def test_the_loss_by_size_of_a_listed_domain_is_the_worst_pair_within_each_size():
    from audit.diprime.certificate import domains

    base = next(d for d in domains() if d.name == "strict flip, depth 1")
    curve, res = loss_by_size(dataclasses.replace(base, max_records=4))
    assert [n for n, _, _ in curve] == [1, 2, 3, 4]
    for n, lo, up in curve:  # the same as certifying the domain cut at n records
        small = certify_domain(dataclasses.replace(base, max_records=n))
        assert (lo, up) == pytest.approx((small.worst["lower"], small.worst["upper"]), abs=1e-12), n
    assert all(a[1] <= b[1] for a, b in zip(curve, curve[1:]))  # a running maximum
    assert curve[-1][2] == pytest.approx(res.worst["upper"], abs=1e-12) and curve[0][1] < curve[-1][1]


def test_a_gap_that_stops_on_exact_counts_is_infinite_from_two_records():
    curve, _ = loss_by_size(_g2(3))
    assert math.isfinite(curve[0][1]) and curve[0][1] < 1  # one record: no pure node to stop on yet
    assert all(math.isinf(lo) for _, lo, _ in curve[1:])


@pytest.fixture(scope="module")
def computed() -> dict:
    return {t: ebs.entries(t) for t in TARGETS}


@pytest.mark.parametrize("target", TARGETS)
def test_the_strict_curves_and_bounds_are_the_committed_certificates(target, computed):
    cert = {e["domain"]: e for e in json.loads((ROOT / "reports" / target / "certificate.json").read_text())
            ["all_sizes"]}
    strict = [e for e in computed[target] if e["kind"] == "strict"]
    assert len(strict) == len(cert) > 0
    for e in strict:
        c = cert[e["domain"]]
        assert e["upper"] == pytest.approx(c["upper"], abs=1e-12), e["domain"]
        assert c["lower"] - 5e-5 <= e["lower"] <= e["upper"], e["domain"]
        mine = {p["records"]: p["lower"] for p in e["loss_by_size"]}
        theirs = {p["records"]: p["lower"] for p in c["loss_by_size"]}
        common = set(mine) & set(theirs)
        assert len(common) >= min(len(theirs), 10), e["domain"]
        for n in common:
            assert mine[n] == pytest.approx(theirs[n], abs=1e-9), (e["domain"], n)


@pytest.mark.parametrize("target", TARGETS)
def test_every_gap_exceeds_its_ledger_within_its_domain(target, computed):
    gaps = [e for e in computed[target] if e["kind"] == "gap"]
    assert [g["domain"] for g in gaps] == [g.domain for g in ebs.GAPS[target]]
    for g in gaps:
        assert g["loss_by_size"][-1]["records"] == g["max_records"]
        assert g["loss_by_size"][-1]["lower"] > g["epsilon_claimed"], g["domain"]


@pytest.mark.parametrize("target", TARGETS)
def test_the_committed_report_carries_the_section_the_code_computes(target, computed):
    folder = ROOT / "reports" / target
    data = json.loads((folder / "report.json").read_text())
    assert _numbers(data["exact_by_size"]) == _numbers(computed[target])
    assert list(data)[list(data).index("claims") + 1] == "exact_by_size"
    md = (folder / "report.md").read_text()
    section = "\n".join(ebs.section_lines(data["exact_by_size"]))
    assert section in md and md.count(ebs.TITLE) == 1
    after = md[md.index("## Privacy claims"):]
    assert after.index(ebs.TITLE) == after.index("\n## ", len("## Privacy claims")) + 1  # the next section
    assert (folder / ebs.FIGURE).is_file()


def test_a_fresh_report_puts_the_section_where_splice_does(tmp_path, computed):
    rows = computed["diprime"]
    report = Report("diprime", "quick", 0)
    report.claims.append({"id": "c", "subject": "s", "neighbouring": "add-remove", "epsilon_claimed": 1.0,
                          "delta": 0.0, "epsilon_lower": 0.5, "epsilon_point": 0.6, "n_samples": 10, "alpha": 0.05,
                          "verdict": "pass", "expected": "pass"})
    report.mutants.append({"id": "m", "description": "d", "source": "s", "epsilon_claimed": 1.0,
                           "epsilon_lower": 2.0, "detected": True})
    report.exact_by_size = rows
    from audit.results.report import write_report

    folder = write_report(report, tmp_path)
    text = (folder / "report.md").read_text()
    assert text.index("## Privacy claims") < text.index(ebs.TITLE) < text.index("## Mutants")
    assert (folder / ebs.FIGURE).is_file()
    fresh = json.loads((folder / "report.json").read_text())
    assert _numbers(fresh["exact_by_size"]) == _numbers(rows)
    # splicing into the fresh report changes nothing but the figure's bytes: same text, same place
    copy = tmp_path / "copy"
    shutil.copytree(folder, copy)
    ebs.splice(copy, rows=fresh["exact_by_size"])
    assert (copy / "report.md").read_text() == text
    assert json.loads((copy / "report.json").read_text()) == fresh


#: what only a run that read the certificate adds or changes: the entry's source and the sentence saying so
READ = TIMINGS + ("source", "why")


def test_a_quick_run_takes_the_strict_entries_the_certificate_holds_for_exactly_their_domains(computed):
    quick = ebs.entries("privatree", committed=True)
    strip = [{k: v for k, v in e.items() if k not in READ} for e in ebs.jsonable(quick)]
    assert strip == [{k: v for k, v in e.items() if k not in READ} for e in ebs.jsonable(computed["privatree"])]
    from audit.privatree.certificate import all_sizes

    in_run = {d.name for d in all_sizes() if d.in_run}
    taken = {e["domain"] for e in quick if e.get("source")}
    assert taken == in_run  # every entry the run would search, none of the gaps
    for e in quick:
        if e.get("source"):
            assert e["source"] == "reports/privatree/certificate.json" and e["seconds_total"] == 0.0
            assert "taken from the committed certificate reports/privatree/certificate.json" in e["why"]
    text = "\n".join(ebs.section_lines(ebs.jsonable(quick)))
    assert text.count("(committed)") == 3 * len(taken) + 1 and "Marked (committed): 5 strict entries" in text
    assert "(committed)" not in "\n".join(ebs.section_lines(ebs.jsonable(computed["privatree"])))


def test_an_entry_computed_for_other_parameters_is_searched_again(computed):
    # the random forest's certificate entries: add/remove's search ran out of boxes (not closed) and has no curve,
    # substitution's was searched to 2e-5 where a run searches to 5e-5 (LOOSER_TOL): neither is the run's domain,
    # so both are searched, as without the shortcut
    quick = ebs.entries("random-trees", committed=True)
    assert not any(e.get("source") for e in quick)
    assert _numbers(quick) == _numbers(computed["random-trees"])
    from audit.privatree.certificate import all_sizes

    d = next(d for d in all_sizes() if d.name == "strict, one feature, depth 3")
    stored = ebs._committed_all_sizes("privatree")[d.name]
    assert ebs._matches(d, stored, [1, 2, 20])  # its curve: up to 20 records
    for change in ({"params": dict(stored["params"], epsilon=2.0)}, {"tol": stored["tol"] * 2},
                   {"complete": False}, {"description": "other"}, {"relation": "substitute"},
                   {"epsilon_claimed": 2.0}, {"upper_method": "proof"}):
        assert not ebs._matches(d, dict(stored, **change), [1, 2]), change
    assert not ebs._matches(d, stored, [1, 2, 30])  # a size its curve lacks
    assert not ebs._matches(d, None, [1])
