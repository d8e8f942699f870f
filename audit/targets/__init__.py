"""Audit targets: what ``python -m audit run NAME`` audits and checks.

Each target module defines ``DESCRIPTION`` (one line) and
``run(budget, seed) -> audit.results.report.Report``.
"""
from __future__ import annotations

import importlib

#: target name -> module path
TARGETS = {
    "mechanisms": "audit.mechanisms.claims",
    "lpdt": "audit.lpdt.claims",
    "oracle": "audit.oracle.claims",
    "privatree": "audit.privatree.claims",
    "random-trees": "audit.random_trees.claims",
    "diprime": "audit.diprime.claims",
}

#: sample-size multipliers of the budgets; ``quick`` fits CI
BUDGETS = ("quick", "standard", "full")


def load(name: str):
    if name not in TARGETS:
        raise KeyError(name)
    return importlib.import_module(TARGETS[name])


def residual_delta(make_estimator, pairs) -> float:
    """The largest ledger delta of a fit on any dataset of ``pairs``: the floating-point residual delta that the
    strict learners charge for their selections (``reference.mechanisms.grid.selection_delta``), stated as the claim's
    delta so the report shows it (issue 17). ``make_estimator()`` returns an unfitted reference learner."""
    worst = 0.0
    for pair in pairs:
        d0, d1 = (pair.d0, pair.d1) if hasattr(pair, "d0") else pair
        for X, y in (d0, d1):
            worst = max(worst, make_estimator().fit(X, y).privacy_ledger_.total_delta())
    return worst
