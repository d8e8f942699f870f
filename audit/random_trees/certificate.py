"""The random decision forest's certificate domains (``python -m audit certify random-trees``).

Strict forests are certified over every dataset of any size on the grid {0.25, 0.75} under both relations
(:func:`all_sizes`, :mod:`audit.random_trees.count_law`: the bound, the law's own supremum, is the claim itself,
reached up to a few millionths), and on listed datasets under both relations, with the paper's and the clamping rule for
invalid leaves; the published substitution gap (Section 5.2's ``Lap(k / epsilon)`` with a count
vector of L1 sensitivity 2 under substitution) is measured exactly. The voting rule is not part
of the release (predictions on public points are post-processing), so these domains cover all
three rules.
"""
from __future__ import annotations

from functools import partial

from audit.engine.exact_law.allsizes import AllSizesDomain
from audit.engine.exact_law.domain import Domain
from audit.random_trees.claims import OneTreeScaleForest
from audit.random_trees.count_law import ForestCountLaw
from audit.random_trees.exact_law import pair_loss

__all__ = ["domains", "all_sizes"]

_BASE = dict(n_estimators=2, max_depth=2, epsilon=1.0, bounds=[(0.0, 1.0)], classes=[0, 1])
_GRID1 = [[0.25, 0.75]]


def domains() -> list[Domain]:
    return [
        Domain("strict, add/remove", "Strict forest (2 trees of height 2, epsilon 1, one feature on a public "
               "grid of two values): every add/remove pair of up to 6 records.",
               None, dict(_BASE, neighbouring="add-remove"), _GRID1, [0, 1], 6, "add-remove", 1.0, "certified",
               pair_law=pair_loss),
        Domain("strict, substitution", "The same forest claimed under substitution: strict accounting doubles "
               "the noise scale (2k / epsilon), as a replaced record changes two counts.",
               None, dict(_BASE, neighbouring="substitute"), _GRID1, [0, 1], 5, "substitute", 1.0, "certified",
               pair_law=pair_loss),
        Domain("strict, clamping rule, two features", "Strict forest with invalid_rule='clamp', two features "
               "(structure classes over both), 2 trees of height 2: every add/remove pair of up to 3 records.",
               None, dict(_BASE, bounds=[(0.0, 1.0)] * 2, neighbouring="add-remove", invalid_rule="clamp"),
               _GRID1 * 2, [0, 1], 3, "add-remove", 1.0, "certified", pair_law=pair_loss),
        Domain("paper noise under substitution", "Paper accounting claimed under substitution: Lap(k / epsilon) "
               "per count (Section 5.2) while one tree's count vector moves by 2 in L1.",
               None, dict(_BASE, neighbouring="substitute", accounting="paper"), _GRID1, [0, 1], 4, "substitute",
               1.0, "gap", pair_law=pair_loss),
        Domain("mutant: one tree's noise scale", "The seeded mutant OneTreeScaleForest: every count gets the "
               "noise of a single tree (scale 1 / epsilon) whatever the number of trees k, forgetting the "
               "sequential composition over trees (expected loss k epsilon).",
               None, dict(_BASE, neighbouring="add-remove"), _GRID1, [0, 1], 4, "add-remove", 1.0, "gap",
               pair_law=partial(pair_loss, cls=OneTreeScaleForest)),
    ]


#: where the forest's all-sizes upper end comes from (:mod:`audit.random_trees.count_law`, "Upper end")
_LAW_NOTE = ("U is the law's own supremum on every box: the trees are independent and the structures public, so the "
             "loss is k times the worst structure class's sum, over the leaves the record moves, of each leaf's largest "
             "log-ratio over its events (a ray of noisy counts, or the invalid set). Each event's ratio is a weighted "
             "mean of its noisy count vectors' ratios e^(r S), |S| <= the leaf's move, and the unrounded release attains "
             "the extreme at every count vector (a record added or removed: the ray on which the moved class's noisy "
             "count is 0, and the ray (c + 1, 1); a class changed within a leaf: the ray (1, 0) or (0, 1), or the rays "
             "(p, 1) as p grows), so U equals the privacy proof's k r |c - c'|_1 (Bojarski et al. 2014, section 5) and "
             "no bound from the law can be lower; the released values, rounded to 6 decimals, are post-processing. The "
             "gap U - L is the slack of the enumerated rounded release at the pair found (the uniform draw's mass on one "
             "6-decimal value, known within 1%)")


def all_sizes() -> list[AllSizesDomain]:
    """The strict forest (2 trees of height 2, epsilon 1) over every dataset of any size on {0.25, 0.75}: the
    law's leaf suprema give the claim on every box (:data:`_LAW_NOTE`), and the search looks for the pair
    closest to it (tolerance 1e-5, 2e-5 under substitution, where each pair's leaf laws take longer to enumerate: the
    leaf's value (1, 0) shares its mass with the rounded uniform draw, known to 1e-6 relative). No loss by size is
    reported: the bound is the claim at every size."""
    return [
        AllSizesDomain("strict, add/remove", "Strict forest (2 trees of height 2, epsilon 1, one feature on the "
                       "public values 0.25 and 0.75): every add/remove pair of datasets of any size.",
                       ForestCountLaw, dict(_BASE, neighbouring="add-remove"), "add-remove", 1.0, tol=1e-5,
                       sizes=0, upper_method="law", upper_note=_LAW_NOTE),
        AllSizesDomain("strict, substitution", "The same forest claimed under substitution (noise scale 2k / "
                       "epsilon): every substitution pair of datasets of any size.", ForestCountLaw,
                       dict(_BASE, neighbouring="substitute"), "substitute", 1.0, tol=2e-5, sizes=0,
                       upper_method="law", upper_note=_LAW_NOTE),
    ]
