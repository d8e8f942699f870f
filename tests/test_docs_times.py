"""Times quoted in the README's sample outputs and the pages have one measured source each, and agree with it
(issue 45 item 4): the `run privatree` sample with the quiet-machine benchmark
(``benchmarks/readme_numbers.json``), the `compare` sample and the full runs' times with the committed reports'
``elapsed_s``. No timing is measured here. Deterministic: no false alarm possible.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

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


MEASURED = json.loads((ROOT / "benchmarks" / "readme_numbers.json").read_text())["commands"]


@pytest.mark.parametrize("marker,cid", [("privatree/strict/", "run-privatree-quick"),
                                        ("claim majority-vote", "check-claims-quick")])
def test_each_readme_sample_is_lines_of_the_measured_run(marker, cid):
    """A sample's every line (its times and bounds) is a line the benchmark's run printed
    (``benchmarks/bench_readme.py`` keeps the whole output of the commands the README shows), in the same order;
    ``...`` stands for lines left out."""
    block, output = _block(marker), MEASURED[cid]["output"]
    lines = [line for line in block.splitlines() if line.strip() and line.strip() != "..." and
             not line.startswith("Report: ")]  # the report's path is the benchmark's temporary folder
    at = [output.index(line) if line in output else None for line in lines]
    assert None not in at, [line for line, i in zip(lines, at) if i is None]
    assert at == sorted(at)


def test_the_claims_samples_prose_says_what_its_run_did():
    output = "\n".join(MEASURED["check-claims-quick"]["output"])
    prose = README.replace("\n", " ")
    stopped = re.findall(r"this one stopped at look (\d+) of (\d+)", prose)
    if stopped:
        assert f"sequential confirmation stopped at look {stopped[0][0]} of {stopped[0][1]} " in output
    else:  # it ran every look: the last look's lines are in the output, no stop line
        assert "this one ran all six looks" in prose
        assert "(look 6 of 6)" in output and "sequential confirmation stopped" not in output


def test_cpu_seconds_quoted_are_the_benchmarks():
    """``<!-- bench-cpu:ID -->N CPU-seconds`` in the README or a page is within 25% of the recorded CPU time."""
    texts = [README] + [p.read_text() for p in (ROOT / "docs").rglob("*.md")]
    quoted = [q for text in texts for q in re.findall(r"<!-- bench-cpu:([\w-]+) -->([\d.,]+) CPU-seconds", text)]
    assert {cid for cid, _ in quoted} >= {"run-privatree-quick", "check-claims-quick"}
    for cid, value in quoted:
        measured = MEASURED[cid]["cpu_s"]
        assert abs(float(value.replace(",", "")) - measured) <= 0.25 * measured, (cid, value, measured)


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
