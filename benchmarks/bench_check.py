"""CPU seconds of a quick ``audit check`` per subject and per stage (issue: a per-pull-request gate costs at most
about a minute of CPU on a correct estimator).

Run: ``PYTHONPATH=. python benchmarks/bench_check.py [--subjects NAME,...] [--budget quick] [--small]``;
``--rerun`` gives each subject's first run and re-run with one witness store (:mod:`audit.gate.witnesses`),
``--reintroduce`` a bug found, fixed and re-introduced under one name.

Each subject is checked with ``--jobs 1`` in this process; the table gives the CPU seconds of the whole check
(``time.process_time`` of this process plus the CPU of its children, ``resource.getrusage(RUSAGE_CHILDREN)``),
the verdict and power, and the CPU seconds of each stage as the report's ``stage_cpu_s`` gives them. CPU seconds,
not wall: the machine may be shared. ``--small`` checks only the lattice-noise classifier at ``--n-samples 1000``
without the scale family (seconds; ``benchmarks/run.py`` calls :func:`small_row`; no timing is asserted).

Subjects: a correct estimator whose fit burns 1 ms of CPU (:class:`SlowMajority`), a newcomer's lattice-noise
classifier of a few lines (:class:`LatticeNoise`), diffprivlib's ``DecisionTreeClassifier``, ``GaussianNB`` and
``LinearRegression`` with public bounds and classes, and OpenDP's float Laplace (a mechanism, batched through
OpenDP's vector Laplace: ``tests/subjects/opendp_float.py``). The optional ones
are left out when their package is missing.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).parent


class SlowMajority:
    """A correct epsilon-DP majority label (noisy max) whose fit burns ``work`` seconds of CPU."""

    def __init__(self, epsilon=1.0, random_state=None, work=10e-3):
        self.epsilon, self.work, self.random_state = epsilon, work, random_state

    def fit(self, X, y):
        end = time.process_time() + self.work
        while time.process_time() < end:
            pass
        counts = np.array([np.sum(np.asarray(y) == c) for c in (0, 1)], dtype=float)
        rng = np.random.default_rng(self.random_state)  # drawn here and dropped: nothing kept (the state probe)
        self.label_ = int(np.argmax(counts + rng.laplace(0, 2 / self.epsilon, 2)))
        return self

    def predict(self, X):
        return np.full(len(X), self.label_)


class LatticeNoise:
    """A newcomer's correct classifier: class counts plus two-sided geometric noise (an integer lattice)."""

    def __init__(self, epsilon=1.0, random_state=None):
        self.epsilon, self.random_state = epsilon, random_state

    def fit(self, X, y):
        rng = np.random.default_rng(self.random_state)
        p = 1 - np.exp(-self.epsilon)
        self.counts_ = np.bincount(np.asarray(y, dtype=int), minlength=2) + rng.geometric(p, 2) - rng.geometric(p, 2)
        return self

    def predict(self, X):
        return np.full(len(X), int(np.argmax(self.counts_)))


DPL_BOUNDS = "([0.0, 0.0], [1.0, 1.0])"
#: name -> (check arguments, the package it needs, fast enough for --small)
SUBJECTS = {
    "1ms-estimator": (["bench_check:SlowMajority", "--params", '{"work": 0.001}', "--epsilon", "1"], None, False),
    "lattice-classifier": (["bench_check:LatticeNoise", "--epsilon", "1"], None, True),
    "dpl-tree": (["diffprivlib.models:DecisionTreeClassifier", "--params",
                  f"{{'epsilon': 1.0, 'bounds': {DPL_BOUNDS}, 'classes': [0, 1], 'max_depth': 2}}", "--epsilon", "1"],
                 "diffprivlib", False),
    "dpl-gaussiannb": (["diffprivlib.models:GaussianNB", "--params",
                        f"{{'epsilon': 1.0, 'bounds': {DPL_BOUNDS}}}", "--epsilon", "1", "--classes", "0,1"],
                       "diffprivlib", False),
    "dpl-linreg": (["diffprivlib.models:LinearRegression", "--params",
                    f"{{'epsilon': 1.0, 'bounds_X': {DPL_BOUNDS}, 'bounds_y': (0.0, 1.0)}}", "--epsilon", "1"],
                   "diffprivlib", False),
    "opendp-float-laplace": (["subjects.opendp_float:FloatLaplace", "--params", '{"epsilon": 1.0}', "--epsilon", "1"],
                             "opendp", False),
}


def cpu_now() -> float:
    """CPU seconds of this process and its finished children."""
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + kids.ru_utime + kids.ru_stime


def run_one(name: str, budget: str, seed: int, extra: list[str]) -> dict:
    from audit.__main__ import main as audit_main

    args, _, _ = SUBJECTS[name]
    out = tempfile.mkdtemp()
    start, wall = cpu_now(), time.perf_counter()
    code = audit_main(["check", *args, "--budget", budget, "--seed", str(seed), "--jobs", "1", "--quiet",
                       "--out", out, *extra])
    cpu, wall = cpu_now() - start, time.perf_counter() - wall
    found = list(Path(out).rglob("report.json"))
    if not found:
        return {"subject": name, "exit": code, "cpu_s": round(cpu, 1), "wall_s": round(wall, 1), "verdict": "error",
                "power": None, "stages": {}}
    report = json.loads(found[0].read_text())
    row = report["claims"][0]
    stages = next(iter(report.get("stage_cpu_s", {}).values()), {})
    return {"subject": name, "exit": code, "cpu_s": round(cpu, 1), "wall_s": round(wall, 1),
            "verdict": row.get("verdict"), "power": row.get("power"), "stages": stages}


def rerun_rows(name: str, budget: str, seed: int, extra: list[str]) -> dict:
    """A first run and a re-run of one subject with a witness store of their own (``audit.gate.witnesses``): the
    re-run finds the fingerprint unchanged, re-tests the stored witnesses and skips the full audit."""
    store = tempfile.mkdtemp()
    first = run_one(name, budget, seed, [*extra, "--witnesses", store])
    again = run_one(name, budget, seed, [*extra, "--witnesses", store])
    return {"subject": name, "first_cpu_s": first["cpu_s"], "rerun_cpu_s": again["cpu_s"],
            "ratio": round(again["cpu_s"] / max(first["cpu_s"], 1e-9), 3), "first": first["verdict"],
            "rerun": again["verdict"]}


#: a lattice classifier whose noise strength is a constant of its source (1.0 correct; 5.0 the bug)
REINTRODUCED = """import numpy as np
STRENGTH = {strength}
class Counts:
    def __init__(self, epsilon=1.0, random_state=None):
        self.epsilon, self.random_state = epsilon, random_state
    def fit(self, X, y):
        rng = np.random.default_rng(self.random_state)
        p = 1 - np.exp(-self.epsilon * STRENGTH)
        self.counts_ = np.bincount(np.asarray(y, dtype=int), minlength=2) + rng.geometric(p, 2) - rng.geometric(p, 2)
        return self
    def predict(self, X):
        return np.full(len(X), int(np.argmax(self.counts_)))
{comment}"""


def reintroduced_rows(budget: str, seed: int) -> list[dict]:
    """A bug found, fixed and re-introduced under the same module and class name, each version checked in a
    fresh interpreter (``python -m audit check``) with one witness store: CPU seconds of each run."""
    import os
    import subprocess

    work = Path(tempfile.mkdtemp())
    (work / "bench_bug").mkdir()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(work), str(HERE.parent)])}
    rows = []
    for what, strength, comment in (("correct", 1.0, ""), ("bug", 5.0, ""), ("fixed", 1.0, "# fixed"),
                                    ("bug re-introduced", 5.0, "")):
        (work / "bench_bug" / "__init__.py").write_text(REINTRODUCED.format(strength=strength, comment=comment))
        start = cpu_now()
        proc = subprocess.run([sys.executable, "-m", "audit", "check", "bench_bug:Counts", "--epsilon", "1",
                               "--bounds", "[[0, 1]]", "--classes", "0,1", "--budget", budget, "--seed", str(seed),
                               "--jobs", "1", "--quiet", "--out", str(work / "out"), "--witnesses",
                               str(work / "store")], cwd=work, env=env, capture_output=True, text=True)
        report = json.loads(next((work / "out").rglob("report.json")).read_text())["claims"][0]
        rows.append({"run": what, "exit": proc.returncode, "cpu_s": round(cpu_now() - start, 1),
                     "decided_by": report.get("decided_by"), "outputs": report.get("n_samples")})
    return rows


#: the options of ``--small``
SMALL = ["--n-samples", "1000", "--no-scale", "--witnesses", "off"]


def small_row() -> dict:
    """The ``--small`` row (the lattice classifier at 1,000 outputs per input, no scale family), for
    ``benchmarks/run.py``, which loads this file as the module ``bench_check``."""
    return run_one("lattice-classifier", "quick", 0, SMALL)


def main(argv=None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--subjects", default=None, help="comma list of " + ", ".join(SUBJECTS))
    p.add_argument("--budget", default="quick")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--small", action="store_true", help="the lattice classifier at --n-samples 1000 (seconds, for CI)")
    p.add_argument("--json", default=None, help="also write the rows to this file")
    p.add_argument("--rerun", action="store_true",
                   help="per subject, a first run and a re-run with one witness store (the re-run's share of CPU)")
    p.add_argument("--reintroduce", action="store_true",
                   help="a bug found, fixed and re-introduced under one name, with one witness store")
    args = p.parse_args(argv)
    sys.modules.setdefault("bench_check", sys.modules[__name__])
    sys.path.insert(0, str(HERE.parent / "tests"))  # subjects.opendp_float
    names = args.subjects.split(",") if args.subjects else [k for k, v in SUBJECTS.items() if v[2] or not args.small]
    extra = SMALL if args.small else []
    if args.reintroduce:
        for row in reintroduced_rows(args.budget, args.seed):
            print(f"{row['run']}: exit {row['exit']}, {row['cpu_s']:.1f} CPU-s, decided by {row['decided_by']}, "
                  f"{row['outputs']:,} outputs per input", flush=True)
        return 0
    if args.rerun:
        for name in names:
            if SUBJECTS[name][1] and importlib.util.find_spec(SUBJECTS[name][1]) is None:
                continue
            row = rerun_rows(name, args.budget, args.seed, extra)
            print(f"{name}: first run {row['first_cpu_s']:.1f} CPU-s ({row['first']}), re-run {row['rerun_cpu_s']:.1f} "
                  f"CPU-s ({row['rerun']}): {row['ratio']:.1%} of the first", flush=True)
        return 0
    extra = extra + ["--witnesses", "off"]  # the full audit's own cost, as before the store (the last flag wins)
    rows = []
    for name in names:
        needs = SUBJECTS[name][1]
        if needs and importlib.util.find_spec(needs) is None:
            print(f"{name}: skipped ({needs} not installed)")
            continue
        row = run_one(name, args.budget, args.seed, extra)
        rows.append(row)
        stages = ", ".join(f"{k} {v:.1f}" for k, v in row["stages"].items())
        print(f"{name}: {row['cpu_s']:.1f} CPU-s (wall {row['wall_s']:.0f} s), {row['verdict']}, "
              f"{row['power']}; stages: {stages}", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
