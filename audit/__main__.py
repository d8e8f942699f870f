"""Command line: ``python -m audit list | run TARGET | check MODULE:CALLABLE | check --claims FILE | compare |
reproduce PAPER``.

Exit status: for ``run``, 0 when every verdict matches what is expected and
1 when one does not; for ``check``, 0 when no claim is violated and 1 when
one is, except that a claims-file subject marked ``expected = "violation"`` must be
violated (its row is then as expected); 2 for a usage error (the message says what is wrong).
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from audit import checkpoint, sampling
from audit.budget import BUDGETS
from audit.report import write_report
from audit.targets import TARGETS, load


def _common(p: argparse.ArgumentParser, default_budget: str) -> None:
    p.add_argument("--budget", choices=BUDGETS, default=default_budget,
                   help=f"sample sizes: quick (CI, minutes), standard, full (default: {default_budget})")
    p.add_argument("--out", default="reports", help="directory of reports (default: reports)")
    p.add_argument("--seed", type=int, default=0, help="master seed; the same seed gives the same report")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.add_argument("--resume", action="store_true",
                   help="continue an interrupted run from its saved counts (same seed, same result)")
    p.add_argument("--jobs", type=int, default=1,
                   help="worker processes drawing sample blocks (same seed, same report for any number)")
    p.add_argument("--scheduler", default=None,
                   help="address of a Dask distributed scheduler (tcp://host:8786) that draws the sample blocks "
                        "(extra 'distributed'; same seed, same report)")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m audit", description="Audit differential-privacy claims.")
    sub = p.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="list the audit targets")
    run = sub.add_parser("run", help="audit one target and write its report")
    run.add_argument("target", help="a name from `python -m audit list`")
    _common(run, "standard")
    chk = sub.add_parser("check", help="audit an outside mechanism or estimator, or a claims file")
    chk.add_argument("subject", nargs="?", help="MODULE:CALLABLE (omit with --claims)")
    chk.add_argument("--claims", help="a dp-claims.toml file of several subjects")
    chk.add_argument("--epsilon", type=float, help="the claimed epsilon")
    chk.add_argument("--delta", type=float, default=0.0, help="the claimed delta (default 0)")
    chk.add_argument("--neighbours", choices=("add-remove", "substitute"), default="add-remove")
    chk.add_argument("--params", default="{}", help="JSON object of constructor or factory arguments")
    chk.add_argument("--data", default=None,
                     help="estimators: builtin:NAME or PATH.csv (default builtin:blobs); "
                          "mechanisms: scalar (default) or query:N")
    _common(chk, "quick")
    cmp = sub.add_parser("compare", help="compare a candidate implementation with a reference, in distribution")
    cmp.add_argument("subject", help="MODULE:CALLABLE: the candidate (a class or factory taking the reference's parameters)")
    cmp.add_argument("--reference", required=True, help="the reference's name (see --reference list)")
    cmp.add_argument("--params", default=None, help="JSON object of parameters given to both (default: the reference's)")
    _common(cmp, "quick")
    rep = sub.add_parser("reproduce", help="reproduce a paper's tables side by side with ours")
    rep.add_argument("paper", help="privatree, diprime, random-trees or lpdt")
    rep.add_argument("--datasets", default=None, help="comma-separated dataset names (default: all the paper's)")
    rep.add_argument("--data-dir", default=None,
                     help="directory of the benchmark files (default: $DPTREE_AUDIT_DATA, else ../shared/data)")
    rep.add_argument("--smoke", action="store_true",
                     help="a reduced protocol (one small dataset, one epsilon) that checks the pipeline, not the numbers")
    rep.add_argument("--out", default="reports", help="directory of reports (default: reports)")
    rep.add_argument("--seed", type=int, default=0, help="master seed")
    rep.add_argument("--jobs", type=int, default=1, help="worker processes (same seed, same tables)")
    rep.add_argument("--quiet", action="store_true", help="no progress output")
    return p


def _error(msg: str) -> int:
    print(f"error: {msg}", file=sys.stderr)
    return 2


def _finish(report, out: str, ckpt: checkpoint.Checkpoint, ok: bool) -> int:
    path = write_report(report, out)
    ckpt.discard()
    print(report.to_markdown([]).split("## Versions")[0].rstrip())
    print(f"\nreport written to {path}/report.md and report.json")
    return 0 if ok else 1


def _run(args) -> int:
    if args.target not in TARGETS:
        return _error(f"unknown target {args.target!r}; choose one of: {', '.join(TARGETS)}")
    ckpt_path = Path(args.out) / f".{args.target}.checkpoint-{args.budget}-{args.seed}.json"
    with checkpoint.active(ckpt_path, resume=args.resume) as ckpt:
        report = load(args.target).run(args.budget, args.seed)
    return _finish(report, args.out, ckpt, report.ok)


def _check(args) -> int:
    from audit.check import CheckError, Subject, check_report
    from audit.claims_file import load_claims

    try:
        if args.claims:
            if args.subject:
                return _error("give either MODULE:CALLABLE or --claims FILE, not both")
            subjects, settings = load_claims(args.claims)
            budget = settings["budget"] if "--budget" not in sys.argv else args.budget
            seed, name = settings["seed"], re.sub(r"[^A-Za-z0-9_-]", "_", Path(args.claims).stem)
        else:
            if not args.subject:
                return _error("check needs MODULE:CALLABLE or --claims FILE")
            if args.epsilon is None:
                return _error("check MODULE:CALLABLE needs --epsilon")
            try:
                params = json.loads(args.params)
            except json.JSONDecodeError as exc:
                return _error(f"--params must be a JSON object: {exc}")
            if not isinstance(params, dict):
                return _error(f"--params must be a JSON object, got {args.params!r}")
            from audit.estimate import Claim

            Claim(args.epsilon, args.delta, args.neighbours)
            subjects = [Subject(args.subject, args.subject, args.epsilon, args.delta, args.neighbours, params,
                                args.data)]
            budget, seed = args.budget, args.seed
            name = "check-" + re.sub(r"[^A-Za-z0-9_-]", "_", args.subject.split(":")[-1])
        ckpt_path = Path(args.out) / f".{name}.checkpoint-{budget}-{seed}.json"
        with checkpoint.active(ckpt_path, resume=args.resume) as ckpt:
            report = check_report(subjects, budget, seed, name)
    except (CheckError, ValueError, TypeError) as exc:
        return _error(str(exc))
    violated = [c["id"] + (" (expected)" if c["expected"] == "violation" else "")
                for c in report.claims if c["verdict"] == "violation"]
    if violated:
        print(f"VIOLATED: {', '.join(violated)}", file=sys.stderr)
    return _finish(report, args.out, ckpt, report.ok)


def _compare(args) -> int:
    import time

    from audit.check import CheckError, resolve
    from audit.compare import compare_distributions, map_parameters
    from audit.oracle_cases import REFERENCES
    from audit.report import Report
    from audit.targets.oracle import ALPHA, N_SAMPLES

    if args.reference not in REFERENCES:
        return _error(f"unknown reference {args.reference!r}; choose one of: {', '.join(REFERENCES)}")
    factory, params, inputs = REFERENCES[args.reference]
    try:
        if args.params is not None:
            params = json.loads(args.params)
            if not isinstance(params, dict):
                return _error(f"--params must be a JSON object, got {args.params!r}")
        candidate_cls = resolve(args.subject)
        candidate = candidate_cls(**map_parameters(candidate_cls, params))
        start = time.perf_counter()
        res = compare_distributions(candidate, factory(**params), inputs, n_samples=N_SAMPLES[args.budget],
                                    alpha=ALPHA, seed=args.seed)
    except (CheckError, ValueError, TypeError, json.JSONDecodeError) as exc:
        return _error(str(exc))
    name = "compare-" + re.sub(r"[^A-Za-z0-9_-]", "_", args.subject.split(":")[-1])
    report = Report(name, args.budget, args.seed, title=f"`{args.subject}` against the reference `{args.reference}`.")
    report.comparisons.append({"id": name, "candidate": args.subject, "reference": args.reference,
                               "expected": "same", "verdict": "different" if res.rejected else "same",
                               "p_min": min(r.p_adjusted for r in res.rows), "n_samples": res.n_samples,
                               "alpha": ALPHA, "detail": res.summary()})
    for r in res.rows:
        diffs = "; ".join(f"{o!r}: {a} vs {b}" for o, a, b in r.differences) if r.differences and \
            isinstance(r.differences[0], tuple) else ", ".join(map(str, r.differences))
        report.notes.append(f"input {r.input!r}: {r.test}, statistic {r.statistic:.4g}, p {r.p_value:.3g}, "
                            f"Holm-adjusted {r.p_adjusted:.3g}" + (f"; most different (reference vs candidate counts): "
                                                                   f"{diffs}" if diffs else ""))
    report.elapsed_s = time.perf_counter() - start
    return _finish(report, args.out, checkpoint.Checkpoint(Path(args.out) / f".{name}.unused", resume=False),
                   not res.rejected)


def _reproduce(args) -> int:
    from audit.reproduce import PAPERS, reproduce

    if args.paper not in PAPERS:
        return _error(f"unknown paper {args.paper!r}; choose one of: {', '.join(PAPERS)}")
    names = None if args.datasets is None else [d.strip() for d in args.datasets.split(",") if d.strip()]
    try:
        rep = reproduce(args.paper, names, data_dir=args.data_dir, jobs=args.jobs, smoke=args.smoke,
                        seed=args.seed, out=args.out)
    except ValueError as exc:
        return _error(str(exc))
    marked = sum(c.marked for c in rep.cells)
    print(f"{args.paper}: {len(rep.cells)} cells, {marked} outside 2 SE, {len(rep.skipped)} datasets skipped; "
          f"{rep.elapsed_s:.0f} s")
    print(f"written to {Path(args.out) / 'reproductions' / (args.paper + '.md')}")
    return 0


def main(argv=None) -> int:
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits 2 on usage errors, 0 on --help
        return int(exc.code or 0)
    if args.command == "list":
        for name in TARGETS:
            print(f"{name:16s} {load(name).DESCRIPTION}")
        return 0
    if args.seed < 0:
        return _error(f"--seed must be a non-negative integer, got {args.seed}")
    if args.jobs < 1:
        return _error(f"--jobs must be a positive integer, got {args.jobs}")
    checkpoint.set_progress(not args.quiet)
    if args.command == "reproduce":
        return _reproduce(args)
    with sampling.jobs(args.jobs), sampling.scheduler(args.scheduler):
        return {"run": _run, "check": _check, "compare": _compare}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
