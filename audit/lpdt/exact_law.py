"""The exact law of an LPDT user's report, and the loss of every pair of user records (issue 29).

LPDT's release is post-processing of the users' reports (Theorem 3.1 of Ma, Zhang, Cai and Yang,
NeurIPS 2023), so its exact law is the law of one report by LPDT's local randomiser, written in
:mod:`audit.engine.exact_law.randomizer_law` (PHIST's baseline shares the randomiser) and named here.
"""
from __future__ import annotations

from audit.engine.exact_law.randomizer_law import ROUNDING, TAIL, ReportPairLoss, lattice_hist, randomizer_of, \
    report_logpmf, report_pair_loss

__all__ = ["ReportPairLoss", "report_pair_loss", "report_logpmf", "randomizer_of", "lattice_hist", "TAIL",
           "ROUNDING"]
