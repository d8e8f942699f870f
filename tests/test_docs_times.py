"""Times quoted in the README's sample outputs and the pages have one measured source each, and agree with it
(issue 45 item 4): the `run privatree` sample with the quiet-machine benchmark
(``benchmarks/readme_numbers.json``), the `compare` sample and the full runs' times with the committed reports'
``elapsed_s``. No timing is measured here. Deterministic: no false alarm possible.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
BLOCKS = [body for _, body in re.findall(r"^```(\w*)\n(.*?)^```$", README, flags=re.S | re.M)]


def _block(marker: str) -> str:
    (block,) = [b for b in BLOCKS if marker in b and "Budget quick, seed 0," in b]
    return block


def _total(block: str) -> float:
    return float(re.search(r"Budget quick, seed 0, ([\d.]+) s", block).group(1))


def _elapsed(report: str) -> float:
    return json.loads((ROOT / "reports" / report / "report.json").read_text())["elapsed_s"]


def test_the_run_sample_has_the_benchmarks_time_and_no_row_after_it():
    block = _block("privatree/strict/")
    measured = json.loads((ROOT / "benchmarks" / "readme_numbers.json").read_text())["commands"]
    assert _total(block) == measured["run-privatree-quick"]["wall_s"]
    rows = [int(t) for t in re.findall(r"^\[\d+/\d+ +(\d+) s\]", block, flags=re.M)]
    assert rows and all(t <= _total(block) for t in rows) and rows == sorted(rows)


def test_the_compare_sample_and_pages_have_the_committed_reports_times():
    block = _block("comparison compare-mypkg.fast-MyPrivaTree-vs-privatree")
    committed = _elapsed("oracle/compare-mypkg.fast-MyPrivaTree-vs-privatree")
    assert _total(block) == round(committed, 1)
    steps = [float(s) for s in re.findall(r"\(([\d.]+) s\)$", block, flags=re.M)]
    assert abs(sum(steps) - committed) <= 0.5  # the inputs' own times add up to the whole
    compare_page = (ROOT / "docs" / "guides" / "compare.md").read_text()
    assert f"(quick budget, {round(committed)} s:" in compare_page
    start = (ROOT / "docs" / "getting-started.md").read_text()
    assert f"`privatree` {round(_elapsed('privatree')):,} s, `diprime` {round(_elapsed('diprime')):,} s" in start
