"""DiPriMe's certificate domains (``python -m audit certify diprime``).

Strict DiPriMeFlip classification trees (one tree, the strict median on public thresholds) are certified
over every dataset of any size on the grid {0.25, 0.75} at depth 1 (:func:`all_sizes`, branch and bound over
the four counts, :mod:`audit.diprime.count_law`), and on listed datasets under add/remove at depth 1 and 2 and with two candidate attributes, and under substitution against
``2 epsilon`` (a substitution is a removal and an addition). DiPriMeExp and base DiPriMe classifiers
(IntervalExponential medians on the 2^16-step public grid, depth 1), the strict regressor (noisy sum over noisy
count leaves) and DP-ERT (V003 section 4; classifier and regressor) are certified under add/remove. The
papers' count-scaled regression leaf (V003 section 3, ``Laplace(S / (N eps))`` with the private ``N``) is a
measured gap; the seeded mutants spend three times the leaves' budget and must show an exact loss above the
claim.
"""
from __future__ import annotations

from functools import partial

from audit.diprime.count_law import DiPriMeFlipCountLaw
from audit.diprime.exact_law import pair_loss
from audit.engine.exact_law.allsizes import AllSizesDomain
from audit.engine.exact_law.domain import Domain
from reference.baselines.dp_ert import DPExtraTreesClassifier, DPExtraTreesRegressor
from reference.diprime import DiPriMeForestClassifier, DiPriMeForestRegressor
from reference.diprime.grower import Budget

__all__ = ["domains", "all_sizes", "TripleLeafBudget", "TripleLeafBudgetRegressor", "TripleLeafERTClassifier",
           "TripleLeafERTRegressor"]


class _TripleLeaf:
    """Seeded mutant: the leaves get noise for three times their budget (``3 eps_l``)."""

    def _budget(self, eps_tree, k_eff):
        b = super()._budget(eps_tree, k_eff)
        return Budget(b.eps_s, b.eps_a, 3.0 * b.eps_l, b.n_candidates)


class TripleLeafBudget(_TripleLeaf, DiPriMeForestClassifier):
    """Seeded mutant: the leaves' counts get noise for three times their budget (``3 eps_l``)."""


class TripleLeafBudgetRegressor(_TripleLeaf, DiPriMeForestRegressor):
    """Seeded mutant: the regression leaves' sum and count get noise for three times their budget."""


class TripleLeafERTClassifier(_TripleLeaf, DPExtraTreesClassifier):
    """Seeded mutant of DP-ERT: the leaves' counts get noise for three times the tree's budget."""


class TripleLeafERTRegressor(_TripleLeaf, DPExtraTreesRegressor):
    """Seeded mutant of DP-ERT: the regression leaves get noise for three times the tree's budget."""


_BASE = dict(n_estimators=1, max_depth=1, max_features=1, epsilon=1.0, variant="flip", bounds=[(0.0, 1.0)],
             classes=[0, 1])
_G1 = [[0.25, 0.75]]
_REG = dict(n_estimators=1, max_depth=1, max_features=1, epsilon=1.0, variant="exp", bounds=[(0.0, 1.0)],
            target_bounds=(-1.0, 1.0))
_T = [-1.0, 1.0]  # the regression domains' public targets
_ERT = dict(n_estimators=1, max_depth=2, epsilon=1.0, bounds=[(0.0, 1.0)])
reg_loss = partial(pair_loss, cls=DiPriMeForestRegressor)


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
        Domain("strict exp, depth 1", "Strict DiPriMeExp classifier (one tree, epsilon 1, rho 1/2, depth 1): the "
               "median by IntervalExponential on the 2^16-step public grid (V003 section 3.1), one candidate "
               "attribute. Every add/remove pair of up to 6 records.", None, dict(_BASE, variant="exp"), _G1,
               [0, 1], 6, "add-remove", 1.0, "certified", pair_law=pair_loss),
        Domain("strict exp, two candidate attributes", "Two features, max_features 2: both IntervalExponential "
               "medians (eps_s / 2 each) drawn, the attribute by the exponential mechanism on -SSE; the "
               "unchosen median summed out. Every add/remove pair of up to 3 records.", None,
               dict(_BASE, variant="exp", bounds=[(0.0, 1.0)] * 2, max_features=2), _G1 * 2, [0, 1], 3,
               "add-remove", 1.0, "certified", pair_law=pair_loss),
        Domain("strict base, depth 1", "Base DiPriMe classifier: a uniform attribute and its IntervalExponential "
               "median with eps_s = rho epsilon. Every add/remove pair of up to 6 records.", None,
               dict(_BASE, variant="base"), _G1, [0, 1], 6, "add-remove", 1.0, "certified", pair_law=pair_loss),
        Domain("strict regressor (exp), depth 1", "Strict DiPriMeExp regressor (targets in [-1, 1] on the public "
               "values -1 and 1): leaves release clip(centre + noisy sum / max(noisy count, 1)), the sum on the "
               "lattice Laplace's grid and the count two-sided geometric (eps_l / 2 each). Every add/remove "
               "pair of up to 6 records.", None, dict(_REG), _G1, _T, 6, "add-remove", 1.0, "certified",
               pair_law=reg_loss, note="the leaf's lower end is a bound from a few released values: the "
               "interval is wide (see the width)"),
        Domain("strict regressor (flip), depth 2", "The strict DiPriMeFlip regressor at depth 2. Every "
               "add/remove pair of up to 5 records.", None, dict(_REG, variant="flip", max_depth=2), _G1, _T, 5,
               "add-remove", 1.0, "certified", pair_law=reg_loss),
        Domain("paper: count-scaled regression leaf", "Base DiPriMe regressor with the papers' leaf "
               "(accounting='paper', V003 section 3): Laplace(S / (N eps_l)) with the private count N, "
               "Uniform(B_L, B_U) for an empty leaf, rounded to 6 decimals as released. Every add/remove pair of "
               "up to 4 records.", None, dict(_REG, variant="base", accounting="paper"), _G1, _T, 4,
               "add-remove", 1.0, "gap", pair_law=reg_loss),
        Domain("mutant: regressor, three times the leaf budget", "The seeded mutant TripleLeafBudgetRegressor "
               "(strict DiPriMeExp regressor, leaves at 3 eps_l).", None, dict(_REG), _G1, _T, 4, "add-remove",
               1.0, "gap", pair_law=partial(pair_loss, cls=TripleLeafBudgetRegressor)),
        Domain("DP-ERT classifier, depth 2", "DP-ERT (V003 section 4): data-independent uniform splits, the whole "
               "epsilon on the clamped geometric leaves; the worst structure over the gaps of the domain. Every "
               "add/remove pair of up to 6 records.", None, dict(_ERT, classes=[0, 1]), _G1, [0, 1], 6,
               "add-remove", 1.0, "certified", pair_law=partial(pair_loss, cls=DPExtraTreesClassifier)),
        Domain("DP-ERT regressor, depth 2", "DP-ERT regression: random splits and the strict regression leaf. "
               "Every add/remove pair of up to 6 records.", None, dict(_ERT, target_bounds=(-1.0, 1.0)), _G1, _T,
               6, "add-remove", 1.0, "certified", pair_law=partial(pair_loss, cls=DPExtraTreesRegressor)),
        Domain("paper: DP-ERT, count-scaled regression leaf", "DP-ERT regression with the authors' leaf "
               "(accounting='paper'): the same count-scaled Laplace leaf under random splits. Every add/remove "
               "pair of up to 4 records.", None, dict(_ERT, target_bounds=(-1.0, 1.0), accounting="paper"), _G1,
               _T, 4, "add-remove", 1.0, "gap", pair_law=partial(pair_loss, cls=DPExtraTreesRegressor)),
        Domain("mutant: DP-ERT, three times the leaf budget", "The seeded mutant TripleLeafERTClassifier.", None,
               dict(_ERT, classes=[0, 1]), _G1, [0, 1], 4, "add-remove", 1.0, "gap",
               pair_law=partial(pair_loss, cls=TripleLeafERTClassifier)),
    ]


def all_sizes() -> list[AllSizesDomain]:
    """The strict DiPriMeFlip classifier at depth 1 over every dataset of any size on the grid {0.25, 0.75}, under
    add/remove and substitution (the listed domains "strict flip, depth 1" and "strict flip, substitution" are
    their first six and four records; tests/test_diprime_count_law.py holds them)."""
    return [AllSizesDomain("strict flip, depth 1", "Strict DiPriMeFlip classifier (one tree, epsilon 1, rho 1/2, "
                           "one feature on the public values 0.25 and 0.75, 32 public thresholds): every add/remove "
                           "pair of datasets of any size.", DiPriMeFlipCountLaw, dict(_BASE), "add-remove", 1.0,
                           tol=1e-8, note="the node law is PermuteAndFlip.logpmf_all in double precision: the "
                           "intervals carry a relative slack of 1e-9"),
            AllSizesDomain("strict flip, depth 1, substitution", "The same classifier under substitution, against 2 "
                           "epsilon (a substitution is a removal and an addition): every substitution pair of "
                           "datasets of any size.", DiPriMeFlipCountLaw, dict(_BASE), "substitute", 2.0, tol=1e-8,
                           sizes=20, note="the node law is PermuteAndFlip.logpmf_all in double precision: the "
                           "intervals carry a relative slack of 1e-9")]
