"""The command line's shared pieces (:mod:`audit.__main__`): a parser whose usage errors come first and short, and
the options every auditing command takes."""
from __future__ import annotations

import argparse
import sys

from audit.engine.runs.budget import BUDGETS

__all__ = ["Parser", "common_options"]


class Parser(argparse.ArgumentParser):
    """Usage errors say what is wrong without the whole usage block first (``--help`` prints it); a missing
    command prints the list of commands."""

    def error(self, message):
        if "required: COMMAND" in message:
            self.print_help(sys.stderr)
        self.exit(2, f"{self.prog}: error: {message}\n({self.prog} --help lists the options)\n")


def common_options(p: argparse.ArgumentParser, default_budget: str) -> None:
    """The options of every command that audits (``run``, ``check``, ``compare``)."""
    p.add_argument("--budget", choices=BUDGETS, default=default_budget,
                   help=f"sample sizes: quick (CI, minutes), standard, full (default: {default_budget})")
    p.add_argument("--out", default=None,
                   help="directory of reports (default: reports; `run` writes beside a committed report of a "
                        "larger budget, in reports/.runs/BUDGET, rather than replace it)")
    p.add_argument("--seed", type=int, default=0, help="master seed; the same seed gives the same report")
    p.add_argument("--quiet", action="store_true", help="no progress bars or per-row lines: only the closing summary")
    p.add_argument("--format", choices=("text", "json"), default="text",
                   help="the closing summary as text (default) or as one JSON object on stdout")
    p.add_argument("--print-report", action="store_true", help="also print the report's Markdown on stdout")
    p.add_argument("--resume", action="store_true",
                   help="continue an interrupted run from its saved counts (same seed, same result)")
    p.add_argument("--jobs", type=int, default=None,
                   help="worker processes (same seed, same report for any number; default: for run, the cores "
                        "available, which compute the run's parts side by side; for check and compare, 1)")
    p.add_argument("--scheduler", default=None,
                   help="address of a Dask distributed scheduler (tcp://host:8786) that draws the sample blocks "
                        "(extra 'distributed'; same seed, same report)")
