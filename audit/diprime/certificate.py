"""DiPriMe's certificate domains (``python -m audit certify diprime``).

Strict DiPriMeFlip classification trees (one tree, the strict median on public thresholds) are certified
under add/remove at depth 1 and 2 and with two candidate attributes, and under substitution against
``2 epsilon`` (a substitution is a removal and an addition). The seeded mutant spends three times the
leaves' budget and must show an exact loss above the claim.
"""
from __future__ import annotations

from functools import partial

from audit.certify import Domain
from audit.diprime.exact_law import pair_loss
from reference.diprime import DiPriMeForestClassifier
from reference.diprime.grower import Budget

__all__ = ["domains", "TripleLeafBudget"]


class TripleLeafBudget(DiPriMeForestClassifier):
    """Seeded mutant: the leaves' counts get noise for three times their budget (``3 eps_l``)."""

    def _budget(self, eps_tree, k_eff):
        b = super()._budget(eps_tree, k_eff)
        return Budget(b.eps_s, b.eps_a, 3.0 * b.eps_l, b.n_candidates)


_BASE = dict(n_estimators=1, max_depth=1, max_features=1, epsilon=1.0, variant="flip", bounds=[(0.0, 1.0)],
             classes=[0, 1])
_G1 = [[0.25, 0.75]]


def domains() -> list[Domain]:
    return [
        Domain("strict flip, depth 1", "Strict DiPriMeFlip classifier (one tree, epsilon 1, rho 1/2, one feature "
               "on a public grid of two values, 32 public thresholds): every add/remove pair of up to 6 records.",
               None, dict(_BASE), _G1, [0, 1], 6, "add-remove", 1.0, "certified", pair_law=pair_loss),
        Domain("strict flip, depth 2", "The same at depth 2 (each child's median on its own range's 32 "
               "thresholds): every add/remove pair of up to 5 records.",
               None, dict(_BASE, max_depth=2), _G1, [0, 1], 5, "add-remove", 1.0, "certified", pair_law=pair_loss),
        Domain("strict flip, two candidate attributes", "Two features, max_features 2: both medians are drawn and "
               "the attribute chosen by permute-and-flip on -SSE; the unchosen median is summed out. Every "
               "add/remove pair of up to 3 records.", None, dict(_BASE, bounds=[(0.0, 1.0)] * 2, max_features=2),
               _G1 * 2, [0, 1], 3, "add-remove", 1.0, "certified", pair_law=pair_loss),
        Domain("strict flip, substitution", "The depth-1 tree under substitution, against 2 epsilon (a "
               "substitution is a removal and an addition).", None, dict(_BASE), _G1, [0, 1], 4, "substitute",
               2.0, "certified", pair_law=pair_loss),
        Domain("mutant: three times the leaf budget", "The seeded mutant TripleLeafBudget: the leaves' noise is "
               "calibrated to 3 eps_l.", None, dict(_BASE), _G1, [0, 1], 4, "add-remove", 1.0, "gap",
               pair_law=partial(pair_loss, cls=TripleLeafBudget)),
    ]
