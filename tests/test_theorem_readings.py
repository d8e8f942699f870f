"""Theorem rows say what they compare (issue 28 item 4): the bound's direction, the interval used and why the
verdict follows, in report.json, the Verdicts table and the console line; rows comparing 0 with 0 say why."""
import json

import pytest

from audit.engine.runs.progress import row_line
from audit.engine.presentation.theorem_text import DIRECTIONS, reading
from audit.results.report import Report, write_report


def _row(id, estimate, ci, bound, verdict, **extra):
    return {"id": id, "paper": "P", "statement": "S", "estimate": estimate, "ci": list(ci), "bound": bound,
            "verdict": verdict, "expected": "holds", **extra}


def test_an_upper_bound_past_the_estimate_reads_as_not_refuted_by_the_lower_end():
    r = _row("pf", 10.95, (10.7, 11.2), 10.82, "holds", direction="upper", interval="99.9% normal")
    text = reading(r)
    assert text.startswith("holds: ") and "upper bound 10.82" in text
    assert "99.9% normal interval's lower end 10.7 ≤" in text and "not refuted" in text


def test_a_lower_bound_below_the_interval_reads_as_kept_by_the_whole_interval():
    r = _row("acc", 0.75, (0.74, 0.77), 0.25, "holds", direction="lower", interval="99% normal")
    text = reading(r)
    assert "lower bound 0.25" in text and "lower end 0.74 ≥" in text and "whole interval" in text


@pytest.mark.parametrize("direction, ci, bound, verdict, words", [
    ("upper", (1.2, 1.4), 1.0, "refuted", ("lower end 1.2 >", "breaks")),
    ("lower", (0.1, 0.2), 0.5, "refuted", ("upper end 0.2 <", "breaks")),
    ("upper", (0.9, 1.1), 1.0, "inconclusive", ("contains the upper bound 1",)),
    ("equal", (0.2, 0.3), 0.25, "holds", ("inside",)),
    ("equal", (0.2, 0.3), 0.5, "refuted", ("outside",)),
])
def test_every_direction_and_verdict_says_which_end_decides(direction, ci, bound, verdict, words):
    text = reading(_row("x", sum(ci) / 2, ci, bound, verdict, direction=direction, interval="95% CP"))
    assert text.startswith(verdict + ": ")
    for w in words:
        assert w in text, text


def test_exact_rows_say_there_is_no_sampling_error_and_rows_may_give_their_own_reason():
    assert "exactly" in reading(_row("e", 0.5, (0.5, 0.5), 1.0, "holds", direction="upper", interval="exact"))
    assert reading(_row("w", 0, (0, 0), 0, "holds", direction="upper", why="BECAUSE")) == "holds: BECAUSE"


def test_theorem_rows_of_the_targets_state_direction_and_interval():
    from audit.diprime.theorems import flip_probability, theorem1_v000, theorem3
    from audit.privatree.theorems import corollary1_rows
    from audit.random_trees.theorems import rows

    all_rows = theorem1_v000(0) + flip_probability("quick", 0) + theorem3("quick", 0)[0] + \
        corollary1_rows("quick", 0) + rows("quick", 0)
    for r in all_rows:
        assert r["direction"] in DIRECTIONS and r.get("interval"), r["id"]
        text = reading(r)
        assert "upper" in text or "lower" in text or "exact value" in text, (r["id"], text)
        assert "np." not in text and "(direction" not in text
    # the 0-vs-0 style row (bound 0) says why 0 is the bound
    nested = next(r for r in all_rows if r["id"] == "v000-thm1-nested")
    assert "the bound is 0 because" in reading(nested)


def test_dpa_rows_comparing_zero_with_zero_say_why_that_is_a_test():
    from audit.privatree import theorems

    src = open(theorems.__file__).read()
    start = src.index('"id": f"dpa/certificate/')
    block = src[start:src.index("\"detail\"", start)]
    assert '"why":' in block and "a single change would refute it" in block


def test_verdicts_table_console_and_json_carry_the_reading(tmp_path):
    rep = Report("demo", "quick", 0)
    rep.theorems.append(_row("pf", 10.95, (10.7, 11.2), 10.82, "holds", direction="upper",
                             interval="99.9% normal"))
    rep.theorems.append(_row("zero", 0, (0, 0), 0, "holds", direction="upper", interval="exact",
                             why="0 of 5 certified points changed; one change would refute it"))
    out = write_report(rep, tmp_path)
    md = (out / "report.md").read_text()
    line = next(l for l in md.splitlines() if l.startswith("| pf | theorem"))
    assert "upper bound 10.82" in line and "99.9% normal [10.7, 11.2]" in line and "not refuted" in line
    zero = next(l for l in md.splitlines() if l.startswith("| zero | theorem"))
    assert "one change would refute it" in zero
    data = json.loads((out / "report.json").read_text())
    assert all(t["reading"].startswith(t["verdict"]) for t in data["theorems"])
    assert data["theorems"][0]["direction"] == "upper"
    console = row_line("theorem", rep.theorems[0])
    assert "upper bound 10.82" in console and "lower end 10.7" in console
