"""Command line: ``python -m audit list | run TARGET``.

Exit status: 0 when every verdict matches what is expected, 1 when one does
not, 2 for a usage error (the message says what is wrong).
"""
from __future__ import annotations

import argparse
import sys

from audit.report import write_report
from audit.targets import BUDGETS, TARGETS, load


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m audit", description="Audit differential-privacy claims.")
    sub = p.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="list the audit targets")
    run = sub.add_parser("run", help="audit one target and write its report")
    run.add_argument("target", help="a name from `python -m audit list`")
    run.add_argument("--budget", choices=BUDGETS, default="standard",
                     help="sample sizes: quick (CI, minutes), standard (default), full (committed reports)")
    run.add_argument("--out", default="reports", help="directory of reports (default: reports)")
    run.add_argument("--seed", type=int, default=0, help="master seed; the same seed gives the same report")
    return p


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
    if args.target not in TARGETS:
        print(f"error: unknown target {args.target!r}; choose one of: {', '.join(TARGETS)}", file=sys.stderr)
        return 2
    if args.seed < 0:
        print(f"error: --seed must be a non-negative integer, got {args.seed}", file=sys.stderr)
        return 2
    report = load(args.target).run(args.budget, args.seed)
    path = write_report(report, args.out)
    print(report.to_markdown([]).split("## Versions")[0].rstrip())
    print(f"\nreport written to {path}/report.md and report.json")
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
