"""Audit targets: what ``python -m audit run NAME`` audits and checks.

Each target module defines ``DESCRIPTION`` (one line) and
``run(budget, seed) -> audit.report.Report``.
"""
from __future__ import annotations

import importlib

#: target name -> module path
TARGETS = {
    "mechanisms": "audit.targets.mechanisms",
    "lpdt": "audit.targets.lpdt",
    "oracle": "audit.targets.oracle",
    "privatree": "audit.targets.privatree",
    "random-trees": "audit.targets.random_trees",
    "diprime": "audit.targets.diprime",
}

#: sample-size multipliers of the budgets; ``quick`` fits CI
BUDGETS = ("quick", "standard", "full")


def load(name: str):
    if name not in TARGETS:
        raise KeyError(name)
    return importlib.import_module(TARGETS[name])
