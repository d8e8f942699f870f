"""Reports a person reads at a glance (issue 21): a verdict table first, trees written compactly, long
evidence folded, each figure listed once; numbers as plain Python."""
import json

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from audit.render import compact, plain
from audit.results.report import Report, write_report


def test_trees_are_written_compactly():
    tree = ("node", 0, 1, ("leaf", 1), ("leaf", 0))
    assert compact(tree) == "x0 <= b1 ? (leaf 1) : (leaf 0)"
    assert compact(("node", 2, (0, 1), ("leaf", 0), tree)) == \
        "x2 in {0, 1} ? (leaf 0) : (x0 <= b1 ? (leaf 1) : (leaf 0))"
    assert compact(("node", 1, ("leaf", 0), ("leaf", 1))) == "split on x1 ? (leaf 0) : (leaf 1)"
    assert compact((((0, (0.5, 0.75)),), ("leaf", 1))) == "[x0 edges (0.5, 0.75)] leaf 1"
    assert compact((np.int64(2), np.float64(0.5), "a")) == "(2, 0.5, 'a')"
    assert plain(np.float64(np.nan)) == "nan" and plain(np.int64(2)) == "2"


trees = st.recursive(st.tuples(st.just("leaf"), st.integers(0, 3)),
                     lambda sub: st.tuples(st.just("node"), st.integers(0, 5), st.integers(0, 9), sub, sub),
                     max_leaves=8)


@given(trees)
def test_a_compact_tree_has_one_test_per_node_and_no_raw_tuples(tree):
    text = compact(tree)
    assert "'leaf'" not in text and "'node'" not in text
    assert text.count(" ? ") == repr(tree).count("'node'") and text.count("leaf ") == repr(tree).count("'leaf'")


def _claim(i, verdict, expected):
    return {"id": f"c{i}", "subject": "SUBJECT-MARK " + "a long subject " * 10, "neighbouring": "add-remove",
            "epsilon_claimed": 1.0,
            "delta": 0.0, "epsilon_lower": 2.0 if verdict == "violation" else 0.5, "epsilon_point": 0.6,
            "n_samples": 10, "alpha": 0.05, "verdict": verdict, "expected": expected, "detail": "evidence " * 40}


def test_markdown_puts_verdicts_first_and_folds_evidence(tmp_path):
    rep = Report("demo", "quick", 0)
    rep.claims += [_claim(0, "pass", "pass"), _claim(1, "violation", "violation"), _claim(2, "violation", "pass")]
    rep.figures.append(("claims", lambda path: path.write_bytes(b"target's own")))  # a built-in name: drawn once
    write_report(rep, tmp_path)
    md = (tmp_path / "demo" / "report.md").read_text()
    assert md.index("## Verdicts") < md.index("## Privacy claims")
    assert "| c1 | claim | ε 1 | ε ≥ 2 | violation (expected) | ✓ |" in md
    assert "| c2 | claim | ε 1 | ε ≥ 2 | violation, expected pass | ✗ |" in md
    assert md.count("SUBJECT-MARK") == 1 and "| S1 |" in md  # the subject once, by its short name
    assert "<details><summary>Evidence of the claims (3)</summary>" in md
    assert md.index("<details>") < md.index("- `c0`: evidence") < md.index("</details>")
    assert md.count("figures/claims.png") == 1
    assert (tmp_path / "demo" / "figures" / "claims.png").read_bytes().startswith(b"\x89PNG")
    assert json.loads((tmp_path / "demo" / "report.json").read_text())["mismatches"] == ["c2"]


def test_error_messages_show_plain_numbers():
    import pytest

    from reference.privatree import PrivaTreeClassifier

    X, y = np.array([[0.1], [0.9]]), np.array([0, 2])
    with pytest.raises(ValueError, match=r"got nan$"):
        PrivaTreeClassifier(epsilon=np.float64(np.nan), bounds=[(0.0, 1.0)], classes=[0, 1]).fit(X, y)
    with pytest.raises(ValueError) as info:
        PrivaTreeClassifier(epsilon=1.0, bounds=[(0.0, 1.0)], classes=[0, 1]).fit(X, y)
    assert "label 2," in str(info.value) and "np." not in str(info.value)


def test_a_ledger_row_reads_as_its_total_never_as_nan(tmp_path):
    """A claim decided by the learner's ledger (no sample; ``epsilon_lower`` nan) shows the ledger total as an upper
    bound in the verdicts and the progress line, and ``–`` where a sampled row has its bound."""
    from audit.engine.runs.progress import row_line

    rep = Report("demo", "quick", 0)
    row = dict(_claim(0, "violation", "violation"), id="led", epsilon_lower=float("nan"), epsilon_point=float("inf"),
               method="ledger", n_samples=0, alpha=0.0)
    rep.claims.append(row)
    md = rep.to_markdown([])
    assert "nan" not in md
    assert "| led | claim | ε 1 | ledger total ∞ (an upper bound, not a measurement) | violation (expected) | ✓ |" in md
    assert "| led | S1 | add-remove | 1 | 0 | – |" in md
    assert "measured ledger total inf" in row_line("claim", row) and "nan" not in row_line("claim", row)


def test_an_unbounded_reading_names_the_evidence_that_gave_it():
    """ε = ∞ reads "kept state replays the noise" only when kept state decided the row; a row decided by the
    determinism probe alone names a trace of the data that no noise covers."""
    from audit.engine.runs.progress import measured

    row = dict(_claim(0, "violation", "violation"), epsilon_reading="∞")
    assert measured(dict(row, decided_by=["kept state"])) == "ε = ∞ (kept state replays the noise)"
    assert measured(dict(row, decided_by=["determinism"])) == "ε = ∞ (a trace of the data no noise covers)"


def test_a_report_replaces_its_own_files_and_keeps_the_certificate(tmp_path):
    """`run` and `certify` share a target's folder: writing a report keeps the certificate's files byte for byte and
    drops the previous report's figures that the new report does not draw."""
    folder = tmp_path / "demo" / "figures"
    folder.mkdir(parents=True)
    (tmp_path / "demo" / "certificate.md").write_text("# Certificate: demo\n")
    (tmp_path / "demo" / "certificate.json").write_text('{"domains": []}\n')
    (folder / "certificate-0.png").write_bytes(b"certificate figure")
    (folder / "stale-report-figure.png").write_bytes(b"old")
    (tmp_path / "demo" / "report.md").write_text("old report")
    rep = Report("demo", "quick", 0)
    rep.claims += [_claim(0, "pass", "pass")]
    write_report(rep, tmp_path)
    assert (tmp_path / "demo" / "certificate.md").read_text() == "# Certificate: demo\n"
    assert (tmp_path / "demo" / "certificate.json").read_text() == '{"domains": []}\n'
    assert (folder / "certificate-0.png").read_bytes() == b"certificate figure"
    assert not (folder / "stale-report-figure.png").exists()
    assert (tmp_path / "demo" / "report.md").read_text() != "old report"
