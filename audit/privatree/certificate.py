"""PrivaTree's certificate domains (``python -m audit certify privatree``).

Strict PrivaTree is certified on a one-feature, two-bin domain, where the law is exact (no
truncation: the filter of the only candidate is a finite sum); the published gaps are measured
exactly: the data-dependent stopping of Algorithm 1 line 7 (G2: infinite loss), PrivaTree*'s
exact quantile edges (not DP: infinite loss), and Theorem 3's per-feature node budget (G1: every
record is in every feature's histogram, so two features spend twice the level's budget).
"""
from __future__ import annotations

from audit.certify import Domain
from audit.privatree.exact_law import release_law

__all__ = ["domains"]

_ONE = dict(bounds=[(0.0, 1.0)], classes=[0, 1], binning="uniform", max_bins=2, epsilon_shares=(0.0, 0.5, 0.5))


def domains() -> list[Domain]:
    grid1 = [[0.25, 0.75]]
    return [
        Domain("strict, one feature, depth 2", "Strict PrivaTree (epsilon 1, depth 2, one feature of two public "
               "bins, node and leaf budgets 1/2 each): every add/remove pair of up to 6 records.",
               release_law, dict(_ONE, epsilon=1.0, max_depth=2), grid1, [0, 1], 6, "add-remove", 1.0,
               "certified"),
        Domain("strict, one feature, substitution", "The same learner under substitution, where add/remove "
               "privacy gives 2 epsilon (a substitution is a removal and an addition).",
               release_law, dict(_ONE, epsilon=1.0, max_depth=2), grid1, [0, 1], 4, "substitute", 2.0,
               "certified"),
        Domain("paper stopping (G2)", "Paper accounting with Algorithm 1 line 7: stop on pure nodes and nodes of "
               "at most one record, a deterministic function of the data.",
               release_law, dict(_ONE, epsilon=1.0, max_depth=2, accounting="paper", stopping="paper"), grid1,
               [0, 1], 4, "add-remove", 1.0, "gap"),
        Domain("PrivaTree* exact quantiles", "Paper accounting with exact quantile bin edges (PrivaTree*, "
               "section VI): the edges move with the data.",
               release_law, dict(bounds=[(0.0, 1.0)], classes=[0, 1], max_bins=2, epsilon_shares=(0.0, 0.5, 0.5),
                                 epsilon=1.0, max_depth=1, accounting="paper", stopping="depth",
                                 use_private_quantiles=False), [[0.2, 0.5, 0.8]], [0, 1], 3, "add-remove", 1.0,
               "gap"),
        Domain("paper per-feature budget (G1)", "Paper accounting, two features of two bins, epsilon 2, depth 1: "
               "Theorem 3 composes the features' histograms in parallel, but every record is in both.",
               release_law, dict(bounds=[(0.0, 1.0)] * 2, classes=[0, 1], binning="uniform", max_bins=2,
                                 epsilon_shares=(0.0, 0.5, 0.5), epsilon=2.0, max_depth=1, accounting="paper",
                                 stopping="depth"), [[0.25, 0.75]] * 2, [0, 1], 2, "add-remove", 2.0, "gap",
               note="the noisy counts are summed out up to a cut-off; the truncated mass is in the interval width"),
    ]
