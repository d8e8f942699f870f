"""The findings table (README and the documentation's home page) is the one generated from the committed
reports, and every verdict in it agrees with its numbers. These read committed files; nothing is sampled."""
from __future__ import annotations

import json
import os
import math
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from audit.results.exact_eps import METHOD_WORDS, exact_eps_rows, exact_eps_table
from audit.results.findings import FINDINGS, findings_rows, findings_table

ROOT = Path(__file__).resolve().parents[1]
BLOCK = re.compile(r"<!-- findings:start[^>]*-->\n(.*?)<!-- findings:end -->", flags=re.S)


@pytest.mark.parametrize("page", ["README.md", "docs/index.md"])
def test_the_page_shows_the_generated_table(page):
    found = BLOCK.findall((ROOT / page).read_text())
    assert len(found) == 1, f"{page}: one findings block expected, found {len(found)}"
    assert found[0] == findings_table(), \
        f"{page}: rewrite its table with: python -c \"from audit.results.findings import update_pages; " \
        f"update_pages('README.md', 'docs/index.md')\""


def test_the_readme_opens_with_the_findings():
    readme = (ROOT / "README.md").read_text()
    headings = re.findall(r"^## (.+)$", readme, flags=re.M)
    assert headings[0] == "Findings" and len(readme.splitlines()) <= 250


def _loss(cell: str) -> float:
    """The largest loss a table cell states (``∞`` for an infinite loss), before any note in parentheses."""
    values = [math.inf if v == "∞" else float(v) for v in re.findall(r"∞|\d+\.\d+", cell.split("(")[0])]
    return max(values)


def test_each_verdict_agrees_with_its_numbers():
    rows = findings_rows()
    assert len(rows) == len(FINDINGS) and {r["verdict"] for r in rows} >= {"holds"}
    for r in rows:
        claimed, sampled = float(r["epsilon"]), _loss(r["sampled"])
        if r["verdict"] == "holds":  # a pass with an exact loss: both stay within the claim
            assert sampled <= claimed and r["exact"] != "–", r
            assert _loss(r["exact"]) <= claimed * (1 + 1e-6), r
        elif r["verdict"] == "not refuted (lower bound only)":  # a pass with nothing but a sampled lower bound
            assert sampled <= claimed and r["exact"] == "–", r
        else:  # a violation: the sampled bound refutes the claim, and the exact loss is above it
            assert r["verdict"].startswith("does not hold: ") and sampled > claimed, r
            assert r["exact"] == "–" or _loss(r["exact"]) > claimed, r


def test_every_paper_and_the_baselines_have_a_row():
    papers = " ".join(f.paper for f in FINDINGS)
    for who in ("Vos et al. 2023", "Consul and Williamson", "Bojarski et al. 2014", "Ma et al. 2023", "baseline"):
        assert who in papers


def test_a_missing_row_is_an_error_naming_it(tmp_path):
    shutil.copytree(ROOT / "reports", tmp_path / "reports", ignore=shutil.ignore_patterns("figures"))
    path = tmp_path / "reports" / "lpdt" / "report.json"
    report = json.loads(path.read_text())
    report["claims"] = [c for c in report["claims"] if c["id"] != "per-leaf-noise@1/sampled"]
    path.write_text(json.dumps(report))
    with pytest.raises(ValueError, match="per-leaf-noise@1/sampled"):
        findings_table(tmp_path / "reports")


def test_a_verdict_the_report_did_not_expect_is_an_error(tmp_path):
    shutil.copytree(ROOT / "reports", tmp_path / "reports", ignore=shutil.ignore_patterns("figures"))
    path = tmp_path / "reports" / "random-trees" / "report.json"
    report = json.loads(path.read_text())
    for c in report["claims"]:
        if c["id"] == "counts-add-remove-strict":
            c["verdict"] = "violation"
    path.write_text(json.dumps(report))
    with pytest.raises(ValueError, match="counts-add-remove-strict"):
        findings_table(tmp_path / "reports")


def test_the_command_prints_the_table():
    proc = subprocess.run([sys.executable, "-m", "audit", "findings"], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == findings_table()  # piped: the README's Markdown


def test_the_text_format_fits_the_terminal_and_puts_each_verdict_first():
    env = {**os.environ, "COLUMNS": "72"}
    proc = subprocess.run([sys.executable, "-m", "audit", "findings", "--format", "text"], capture_output=True,
                          text=True, cwd=ROOT, env=env)
    assert proc.returncode == 0, proc.stderr
    blocks = proc.stdout.rstrip("\n").split("\n\n")
    rows = findings_rows()
    assert len(blocks) == len(rows) and all(len(line) <= 72 for line in proc.stdout.splitlines())
    for block, row in zip(blocks, rows):
        assert block[0] in "✓✗·" and block[2:].replace("\n    ", " ").startswith(row["verdict"])


def test_update_pages_writes_the_table_into_its_block_only(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("before\n<!-- findings:start -->\nold table\n<!-- findings:end -->\nafter\n")
    from audit.results.findings import update_pages

    assert update_pages(page) == [page] and update_pages(page) == []
    assert page.read_text() == f"before\n<!-- findings:start -->\n{findings_table()}<!-- findings:end -->\nafter\n"
    other = tmp_path / "other.md"
    other.write_text("no block\n")
    with pytest.raises(ValueError, match="paths: .*other.md holds 0 findings blocks"):
        update_pages(page, other)


def test_the_readme_shows_the_generated_exact_epsilon_table():
    """The README's exact-epsilon block equals the one generated from the committed certificates' all-sizes
    sections, and each row's bound stays within its claim (a certificate of a strict learner)."""
    found = re.findall(r"<!-- exact-eps:start[^>]*-->\n(.*?)<!-- exact-eps:end -->", (ROOT / "README.md").read_text(),
                       flags=re.S)
    assert found == [exact_eps_table()]
    rows = exact_eps_rows()
    assert {r["learner"] for r in rows} == {"strict PrivaTree", "strict DiPriMeFlip", "strict random decision forest"}
    assert all(float(r["exact"]) <= float(r["claim"]) * (1 + 1e-6) for r in rows)
    # where each upper end comes from: the forest's is its law's (leaf suprema on every box), as are DiPriMe's
    assert {r["method"] for r in rows if r["learner"] != "strict PrivaTree"} == {"law"}
    # a law's upper end closes; a quoted one with bounds only says so (no row claims an exact value it lacks)
    assert all(r["closed"] for r in rows if r["method"] == "law")
    assert all(float(r["lower"]) <= float(r["exact"]) for r in rows)
    assert all(("in [" in line) == ("not closed" in line) for line in found[0].splitlines()[2:])
    assert all(METHOD_WORDS[r["method"]] in found[0] for r in rows)


def test_the_exact_epsilon_table_refuses_an_entry_without_its_upper_method(tmp_path):
    for target in ("privatree", "diprime", "random-trees"):
        shutil.copytree(ROOT / "reports" / target, tmp_path / target, ignore=shutil.ignore_patterns("figures"))
    path = tmp_path / "diprime" / "certificate.json"
    cert = json.loads(path.read_text())
    del cert["all_sizes"][0]["upper_method"]
    path.write_text(json.dumps(cert))
    with pytest.raises(ValueError, match="upper_method None"):
        exact_eps_table(tmp_path)


def test_the_exact_epsilon_table_refuses_a_certificate_without_an_all_sizes_section(tmp_path):
    for target in ("privatree", "diprime", "random-trees"):
        (tmp_path / target).mkdir()
        (tmp_path / target / "certificate.json").write_text(json.dumps({"domains": []}))
    with pytest.raises(ValueError, match="no all-sizes section"):
        exact_eps_table(tmp_path)
