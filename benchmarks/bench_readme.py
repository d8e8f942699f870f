"""The README's commands, timed: every time the README quotes comes from here.

    python benchmarks/bench_readme.py                  # every command below, into readme_numbers.json
    python benchmarks/bench_readme.py --only test-suite
    python benchmarks/run.py --readme                  # the same, from the benchmark table's entry point

Each command runs in a subprocess from the repository root (or ``examples/`` where the README says so),
writing its reports (and a ``check``'s witness store, so that each is timed as a first run) to a temporary
folder; the commands the README shows a sample of (:data:`SAMPLES`) keep their whole standard output; the wall time, the CPU time of the child processes, the exit
code and the load average before the start and at the end are recorded in ``benchmarks/readme_numbers.json`` with the
machine's facts. The README quotes a time as ``<!-- bench:ID -->N s``; ``tests/test_readme.py`` holds every
quoted time within 25% of the recorded wall time (no timing is measured in the tests themselves).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).parent
ROOT = HERE.parent
RESULTS = HERE / "readme_numbers.json"

_CHECK_PARAMS = ('{"epsilon": 1, "max_depth": 2, "bounds": [[-12, 12], [-12, 12]], "classes": [0, 1, 2], '
                 '"binning": "uniform", "max_bins": 4, "n_public": 60}')
_SCALE_PARAMS = ('{"epsilon": 2, "max_depth": 1, "bounds": [[0, 1]], "classes": [0, 1], '
                 '"epsilon_shares": [0.5, 0.25, 0.25]}')

#: the commands whose output the README shows as a sample: their whole standard output is kept (``output``), so
#: the sample's lines are held to the run they come from (tests/test_docs_times.py), times and bounds alike
SAMPLES = ("run-privatree-quick", "check-claims-quick")

#: id -> (what the README calls it, argv after ``python``, working folder relative to the root)
COMMANDS = {
    "run-privatree-quick": ("the main command: `python -m audit run privatree` at the quick budget",
                            ["-m", "audit", "run", "privatree", "--out", "{out}"], "."),
    "test-suite": ("the README's test command: `python -m pytest -n auto` (slow tests deselected)",
                   ["-m", "pytest", "-n", "auto", "-q", "-p", "no:cacheprovider"], "."),
    "quick-suite": ("the README's first check: `python -m pytest -m quick`",
                    ["-m", "pytest", "-m", "quick", "-q", "-p", "no:cacheprovider"], "."),
    "check-privatree-quick": ("`audit check` of the reference PrivaTree at the quick budget (README, Check your "
                              "fast implementation)",
                              ["-m", "audit", "check", "reference.privatree:PrivaTreeClassifier", "--params",
                               _CHECK_PARAMS, "--epsilon", "1", "--release", "release", "--out", "{out}",
                               "--witnesses", "{out}/witnesses"], "."),
    "certify-privatree": ("`audit certify privatree --jobs 2`",
                          ["-m", "audit", "certify", "privatree", "--jobs", "2", "--out", "{out}"], "."),
    "certify-random-trees": ("`audit certify random-trees`",
                             ["-m", "audit", "certify", "random-trees", "--out", "{out}"], "."),
    "certify-lpdt": ("`audit certify lpdt`", ["-m", "audit", "certify", "lpdt", "--out", "{out}"], "."),
    "certify-diprime": ("`audit certify diprime`", ["-m", "audit", "certify", "diprime", "--out", "{out}"], "."),
    "check-claims-quick": ("the README's claims file: `cd examples && python -m audit check --claims dp-claims.toml`",
                           ["-m", "audit", "check", "--claims", "dp-claims.toml", "--out", "{out}",
                            "--witnesses", "{out}/witnesses"],
                           "examples"),
    "check-underflow-standard": ("the scale family's worked example (standard budget)",
                                 ["-m", "audit", "check", "audit.privatree.underflow_jointexp:UnderflowPrivaTree",
                                  "--epsilon", "2", "--params", _SCALE_PARAMS, "--bounds", "[[0, 1]]", "--classes",
                                  "0,1", "--budget", "standard", "--n-samples", "2000", "--release", "release",
                                  "--out", "{out}", "--witnesses", "{out}/witnesses"], "."),
}


def machine() -> dict:
    return {"machine": platform.machine(), "cores": os.cpu_count(), "python": platform.python_version(),
            "system": platform.system(), "date": time.strftime("%Y-%m-%d")}


def time_command(cid: str) -> dict:
    """Run one README command; ``{"wall_s", "cpu_s", "exit", "loadavg_start", ...}``."""
    label, argv, cwd = COMMANDS[cid]
    with tempfile.TemporaryDirectory() as out:
        argv = [a.replace("{out}", out) for a in argv]
        load = os.getloadavg()[0]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        proc = subprocess.run([sys.executable, *argv], cwd=ROOT / cwd, capture_output=True, text=True)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    row = {"label": label, "command": "python " + " ".join(argv).replace(out, "OUT"), "cwd": cwd,
           "wall_s": round(wall, 1), "cpu_s": round(cpu, 1), "exit": proc.returncode, "loadavg_start": round(load, 2),
           "loadavg_end": round(os.getloadavg()[0], 2)}  # the machine is shared: its load during the run, roughly
    if cid in SAMPLES:
        row["output"] = [line.replace(out, "OUT") for line in proc.stdout.splitlines()]
    if proc.returncode != 0:  # a violation found (check exits 1) or a failure: keep what it said
        row["output_tail"] = (proc.stdout + proc.stderr).splitlines()[-30:]
    return row


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--only", action="append", choices=sorted(COMMANDS), help="time only this command (repeatable)")
    p.add_argument("--output", default=str(RESULTS), help="where to write the JSON (default: %(default)s)")
    args = p.parse_args(argv)
    path = Path(args.output)
    data = json.loads(path.read_text()) if path.exists() else {"commands": {}}
    for cid in args.only or list(COMMANDS):
        print(f"== {cid}: {COMMANDS[cid][0]}", flush=True)
        row = time_command(cid)
        print(f"   {row['wall_s']} s wall, {row['cpu_s']} s CPU, exit {row['exit']}, load {row['loadavg_start']}",
              flush=True)
        for line in row.get("output_tail", []):
            print(f"   | {line}", flush=True)
        data["commands"][cid] = row
    data["machine"] = machine()
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(data, indent=2) + "\n")
    tmp.replace(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
