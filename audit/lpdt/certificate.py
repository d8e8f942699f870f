"""LPDT's certificate domains (``python -m audit certify lpdt``).

LPDT's claim is local differential privacy (Theorem 3.1): a pair is any two user records, so each
domain enumerates every pair of one-record datasets on a public grid of features and labels
(substitution of the one record). The report's law is exact (:mod:`audit.lpdt.exact_law`); what the
curator publishes is computed from the reports alone, so the report's certificate covers it. The
authors' code's fresh label noise per leaf is measured exactly.

LPDT's baseline PHIST (Berrett, Györfi and Walk 2021; spec/lpdt.md section 7.1) claims the same local
privacy on a regular grid: its report is certified with LPDT's randomiser and with Berrett et al.'s
Laplace mechanism (on lattices, as implemented; :mod:`audit.baselines_law.phist_report`).
"""
from __future__ import annotations

from audit.baselines_law import phist_report
from audit.engine.exact_law.domain import Domain
from audit.lpdt.exact_law import report_pair_loss

__all__ = ["domains"]

_BASE = dict(epsilon=1.0, bounds=[(0.0, 1.0)], n_bins=4, target_bounds=(0.0, 1.0))
_X = [[0.1, 0.3, 0.5, 0.7, 0.9]]
_Y = [0.0, 0.125, 0.25, 0.375, 0.5, 0.625, 0.75, 0.875, 1.0]


def domains() -> list[Domain]:
    return [
        Domain("report, indicator share 1/2", "The LPDT randomiser (mechanisms (3) and (4), epsilon 1, a public "
               "grid partition of 4 leaves, labels in [0, 1]): every pair of user records on 5 feature values "
               "and 9 labels.", None, dict(_BASE), _X, _Y, 1, "substitute", 1.0, "certified",
               pair_law=report_pair_loss),
        Domain("report, indicator share 0.3", "The same randomiser spending 30% of epsilon on the indicator "
               "bits (the authors' code's proportion_budget).", None, dict(_BASE, indicator_share=0.3), _X, _Y,
               1, "substitute", 1.0, "certified", pair_law=report_pair_loss),
        Domain("authors' code: fresh label noise per leaf", "The authors' code draws new label noise for every "
               "leaf (one noisy label per leaf recoverable from the report): expected loss (L + 1) epsilon / 2.",
               None, dict(_BASE, per_leaf_noise=True), _X, _Y, 1, "substitute", 1.0, "gap",
               pair_law=report_pair_loss),
        Domain("PHIST report, LPDT randomiser", "PHIST (randomizer='lpdt', epsilon 1, a regular grid of 4 bins, "
               "labels in [0, 1]): LPDT's randomiser on PHIST's grid; every pair of user records on 5 feature "
               "values and 9 labels.", None, dict(_PHIST, randomizer="lpdt"), _X, _Y, 1, "substitute", 1.0,
               "certified", pair_law=phist_report.pair_loss),
        Domain("PHIST report, lattice Laplace", "PHIST (randomizer='laplace', Berrett et al.'s mechanism: per "
               "cell Z = y 1{x in A_j} + lattice Laplace and W = 1{x in A_j} + two-sided geometric, half of "
               "epsilon 1 each): every pair of user records on 5 feature values and 9 labels.", None,
               dict(_PHIST, randomizer="laplace"), _X, _Y, 1, "substitute", 1.0, "certified",
               pair_law=phist_report.pair_loss),
    ]


_PHIST = dict(epsilon=1.0, bounds=[(0.0, 1.0)], n_bins=4, target_bounds=(0.0, 1.0))
