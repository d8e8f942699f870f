"""PrivaTree's certificate domains (``python -m audit certify privatree``).

Strict PrivaTree is certified over every dataset of any size with one feature of two public bins
(:func:`all_sizes`: branch and bound over the four counts, :mod:`audit.privatree.count_law`), at depths 1, 2
and 3 under add/remove and at depth 2 under substitution; and on a listed one-feature, two-bin domain, where the law is exact (no
truncation: the filter of the only candidate is a finite sum), a listed one-feature, three-bin domain (two
candidate boundaries, :mod:`audit.privatree.three_bin_law`), and listed domains with JointExp's private
edge (the learner's default binning; :mod:`audit.privatree.edge_law`), with one binary categorical feature,
and with both (at epsilon 8, where the two features' histograms are within reach); the published gaps are measured
exactly: the data-dependent stopping of Algorithm 1 line 7 (G2: infinite loss), PrivaTree*'s
exact quantile edges (not DP: infinite loss), and Theorem 3's per-feature node budget (G1: every
record is in every feature's histogram, so two features spend twice the level's budget).

PrivaTree's baselines (section VI of the paper, spec/privatree.md section 3; laws in
:mod:`audit.baselines_law`): the DiffPrivLib-style random tree (strict, epsilon-DP under add/remove) is
certified on one feature at depth 2 and on two features at depth 1; DPGDF and BDPT, documented as not DP,
have their published gaps measured exactly: the data-dependent stopping rules (infinite loss), DPGDF's
smooth-sensitivity leaves (a finite loss far above the claim) and BDPT's merge of the data's own numerical
values (infinite loss).
"""
from __future__ import annotations

from functools import partial

from audit.baselines_law import bdpt_tree, dpgdf_tree, random_tree_pf
from audit.engine.exact_law.allsizes import AllSizesDomain
from audit.engine.exact_law.domain import Domain
from audit.engine.exact_law.quoted import QuotedBoundLaw
from audit.privatree.count_law import PrivaTreeCountLaw
from audit.privatree.exact_law import release_law

__all__ = ["domains", "all_sizes"]

_ONE = dict(bounds=[(0.0, 1.0)], classes=[0, 1], binning="uniform", max_bins=2, epsilon_shares=(0.0, 0.5, 0.5))
_BIN = dict(categories={0: [0, 1]}, classes=[0, 1])
#: the learner's default binning: JointExp's private quantiles, one edge
_JOINTEXP = dict(bounds=[(0.0, 1.0)], classes=[0, 1], max_bins=2, epsilon_shares=(0.2, 0.4, 0.4))
#: the law of ``release(edges=2)``: the tree and each numerical edge's cell among 2 equal cells of its range
_CELLS2 = partial(release_law, edges=2)


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
        Domain("strict, one feature, three bins", "Strict PrivaTree (epsilon 4, depth 2, one feature of three public "
               "bins, node and leaf budgets 1/2 each): every add/remove pair of up to 3 records. Each node chooses "
               "between two boundaries by the Gini of its noisy histogram; the law sums it by separating the "
               "comparison (audit.privatree.three_bin_law).",
               release_law, dict(_ONE, max_bins=3, epsilon=4.0, max_depth=2), [[1 / 6, 0.5, 5 / 6]], [0, 1], 3,
               "add-remove", 4.0, "certified",
               note="the noisy counts are summed out up to a cut-off; the truncated mass is in the interval width"),
        Domain("strict, JointExp edges, depth 2", "Strict PrivaTree with JointExp's private bin edges (the learner's "
               "default binning; max_bins 2: one private edge on the 65,537-point grid, summed over the gaps between "
               "the data's values), epsilon 1 split 0.2 / 0.4 / 0.4 over quantiles, nodes and leaves, depth 2; the "
               "release is the tree and the edge's cell among 2 equal cells of [0, 1] (release(edges=2)): every "
               "add/remove pair of up to 6 records.",
               _CELLS2, dict(_JOINTEXP, epsilon=1.0, max_depth=2), grid1, [0, 1], 6, "add-remove", 1.0,
               "certified"),
        Domain("strict, one binary categorical feature, depth 2", "Strict PrivaTree with one categorical feature of "
               "two categories (section IV-A: the categories ordered by noisy class-1 share; node budget node_cat), "
               "epsilon 1, node and leaf budgets 1/2 each, depth 2: every add/remove pair of up to 6 records. Its "
               "loss is the whole epsilon (every step's ratio reaches its budget on three records).",
               release_law, dict(_BIN, epsilon=1.0, max_depth=2, epsilon_shares=(0.0, 0.5, 0.5)), [[0, 1]], [0, 1],
               6, "add-remove", 1.0, "certified",
               note="the loss equals the claim: certified up to the intervals' rounding slack (CLAIM_SLACK, 3e-12)"),
        Domain("strict, JointExp edges and a binary categorical feature", "Strict PrivaTree with one numerical "
               "feature (JointExp's private edge, max_bins 2) and one binary categorical feature, epsilon 8 split "
               "0.1 / 0.6 / 0.3, depth 1 (two features: every noisy histogram is enumerated, within reach from a "
               "node epsilon of about 1 per feature), release(edges=2): every add/remove pair of up to 2 records.",
               _CELLS2, dict(bounds=[(0.0, 1.0), None], categories={1: [0, 1]}, classes=[0, 1], max_bins=2,
                             epsilon_shares=(0.1, 0.6, 0.3), epsilon=8.0, max_depth=1), [[0.25, 0.75], [0, 1]],
               [0, 1], 2, "add-remove", 8.0, "certified",
               note="the noisy counts are summed out up to a cut-off; the truncated mass is in the interval width"),
    ] + baseline_domains()



def baseline_domains() -> list[Domain]:
    """The baselines' domains (module docstring)."""
    rt = dict(epsilon=1.0, bounds=[(0.0, 1.0)], classes=[0, 1])
    return [
        Domain("DiffPrivLib tree, one feature, depth 2", "DiffPrivLib-style random tree (PrivaTree section III-A: "
               "uniform feature, threshold uniform in the node's cell, monotone permute-and-flip leaves with the whole "
               "epsilon 1), release without thresholds: every add/remove pair of up to 6 records; the structure "
               "is summed out over its classes (a feature and a gap between grid values per node).",
               None, dict(rt, max_depth=2), [[0.25, 0.75]], [0, 1], 6, "add-remove", 1.0, "certified",
               pair_law=random_tree_pf.pair_loss,
               note="upper end: the largest ratio over the structure classes (their law is the same under both "
                    "datasets); lower end: the mixture's intervals (class probabilities closed-form, slack 1e-9)"),
        Domain("DiffPrivLib tree, two features, depth 1", "The same learner with two features of two grid values "
               "each, depth 1: every add/remove pair of up to 3 records.",
               None, dict(rt, bounds=[(0.0, 1.0)] * 2, max_depth=1), [[0.25, 0.75]] * 2, [0, 1], 3, "add-remove",
               1.0, "certified", pair_law=random_tree_pf.pair_loss),
        Domain("DPGDF stopping", "DPGDF (Xin et al. 2019 as the PrivaTree authors re-implemented it; epsilon 1, "
               "depth 1, min_samples_split 2, one binary categorical feature): a pure node, or one of fewer than "
               "min_samples_split records, is a leaf, a deterministic function of the data.",
               dpgdf_tree.release_law, dict(_BIN, epsilon=1.0, max_depth=1, min_samples_split=2), [[0, 1]],
               [0, 1], 4, "add-remove", 1.0, "gap"),
        Domain("DPGDF smooth-sensitivity leaf", "DPGDF at depth 0 (one leaf, epsilon 1 on the leaf): the "
               "exponential mechanism with smooth sensitivity exp(-epsilon gap) has rate epsilon e^(epsilon gap), "
               "so adding a record to a majority of 5 costs about e^6 - e^5 (not epsilon-DP).",
               dpgdf_tree.release_law, dict(_BIN, epsilon=1.0, max_depth=0), [[0, 1]], [0, 1], 6, "add-remove",
               1.0, "gap"),
        Domain("BDPT stopping", "BDPT (Guan et al. 2020 as the PrivaTree authors re-implemented it; epsilon 1, "
               "depth 1, one binary categorical feature): pure nodes and nodes of fewer than 2 records are leaves, a "
               "deterministic function of the data.",
               bdpt_tree.release_law, dict(_BIN, epsilon=1.0, max_depth=1), [[0, 1]], [0, 1], 4, "add-remove",
               1.0, "gap", note="the hidden noisy count and the leaves' noise are summed out up to a cut-off; "
                                "the truncated mass is in the interval width"),
        Domain("BDPT numerical merge", "BDPT with one numerical feature merged from the data's own unique values "
               "in runs of merge_samples = 2: a third distinct value creates a group index that other "
               "datasets cannot release.",
               bdpt_tree.release_law, dict(epsilon=1.0, max_depth=1, classes=[0, 1], merge_samples=2),
               [[0.25, 0.5, 0.75]], [0, 1], 3, "add-remove", 1.0, "gap",
               note="the stopping rule also gives infinite losses here; tests/test_baselines_law_trees.py isolates "
                    "the merge on a pair where both datasets split"),
    ]


#: the quoted upper end of the configurations without a count law (:mod:`audit.engine.exact_law.quoted`)
_PROOF = ("U is strict PrivaTree's privacy bound, quoted (Vos et al. 2023, Theorem 3 with the strict ledger: "
          "JointExp's quantile budget, one node budget per level, the leaf budget, composed along a record's path: "
          "epsilon on every add/remove pair); the search supplies the lower end from the listed-dataset law.")


#: JointExp edges at depth 2: pairs ``(c, cell)`` of the family the note names (counts: 0.25 class 0, 0.25 class 1,
#: 0.75 class 0, 0.75 class 1), found by a scan of count vectors; the search evaluates them first (a lower end only)
_JOINTEXP_WITNESSES = tuple(((1, 0, n, 0), 1) for n in (14, 20, 32, 64, 128))

#: three bins at depth 2: the family of the supremum (bin 0 empty, bins 1 and 2 alike, a class-0 record added to
#: bin 0; cells bin b class k at 2 b + k), by number of records; the search evaluates them first (a lower end only)
_THREE_BIN_WITNESSES = tuple(((0, 0, a, b, a, b), 0) for a, b in ((15, 10), (30, 20), (60, 40), (120, 80),
                                                                   (189, 126), (191, 134)))

_THREE_BIN_LIMIT = (
    "the root splits at boundary 1 (bins 0, 1 | bin 2) with bin 0 empty and bins 1 and 2 of n records each with the "
    "same class-1 share p < 1/2; a class-0 record is added to bin 0 and the left child is a leaf labelled 1. As n "
    "grows, with N gini / 2 = q(x) + q(y + z) against q(x + y) + q(z) (q(w) = w0 w1 / |w|), boundary 1 loses to "
    "boundary 0 by s (p - r)^2 + O(1/n) whenever bin 0's noisy count x = (a, b) is not empty (s = a + b, r = b / s; "
    "the big bins' noise moves the comparison by O(1/n) only), so the root keeps boundary 1 only when x is empty: "
    "its choice ratio tends to e^(epsilon_level) = e; the left child does not split only when at least two of its "
    "three noisy bins are empty, in the limit bin 0 and bin 2, so its ratio tends to e too; the leaf's label, its "
    "class-1 count at most its class-0 count, moves by e^(epsilon_leaf) = e^2 exactly: 1 + 1 + 2 = 4 (with p's "
    "denominator growing too, so that noisy counts of bin 0 with share exactly p, ties kept by boundary 0 only "
    "up to O(1/n), lose their mass)")


def all_sizes() -> list[AllSizesDomain]:
    """Strict PrivaTree over every dataset of any size (one feature of two public bins, two classes, epsilon 1,
    node and leaf budgets 1/2 each): depth 2 and depth 1 under add/remove, depth 2 under substitution (claim
    2 epsilon), depth 3 under add/remove. The same configurations as the listed domains above, whose maxima the search reproduces when
    capped at their sizes (tests/test_privatree_count_law.py)."""
    two = dict(_ONE, epsilon=1.0, max_depth=2)
    one = dict(_ONE, epsilon=1.0, max_depth=1)
    return [
        AllSizesDomain("strict, one feature, depth 2", "Strict PrivaTree (epsilon 1, depth 2, one feature of two "
                       "public bins): every add/remove pair of datasets of any size (any feature values: they enter "
                       "through their bin).", PrivaTreeCountLaw, two, "add-remove", 1.0),
        AllSizesDomain("strict, one feature, depth 1", "The same learner at depth 1 (its node level then holds the "
                       "whole node budget 1/2).", PrivaTreeCountLaw, one, "add-remove", 1.0),
        AllSizesDomain("strict, one feature, depth 2, substitution", "Depth 2 under substitution, where add/remove "
                       "privacy gives 2 epsilon.", PrivaTreeCountLaw, two, "substitute", 2.0),
        AllSizesDomain("strict, one feature, depth 3", "The same learner at depth 3 (node budget 1/2 over three "
                       "levels: 1/6 each; 1,446 releases).", PrivaTreeCountLaw, dict(two, max_depth=3),
                       "add-remove", 1.0, sizes=20, split="best",
                       note="boxes cut on their best coordinate (split='best'): cut on an infinite coordinate first, "
                            "the bound stays at 0.6853 against 2/3; the loss by size is computed up to 20 records "
                            "(each capped search closes to 1e-9; 30 records take 25 s alone)"),
        AllSizesDomain("strict, one binary categorical feature, depth 2", "Strict PrivaTree with one categorical "
                       "feature of two categories (section IV-A: ordered by noisy class-1 share), epsilon 1, node and "
                       "leaf budgets 1/2 each, depth 2: every add/remove pair of datasets of any size.",
                       partial(QuotedBoundLaw, release_law, grid=[[0, 1]], classes=[0, 1], bound=1.0,
                               max_point_records=6),
                       dict(_BIN, epsilon=1.0, max_depth=2, epsilon_shares=(0.0, 0.5, 0.5)), "add-remove", 1.0,
                       sizes=6, max_boxes=4000, upper_method="proof",
                       upper_note=_PROOF + " No count law bounds this release on boxes yet: the split names the "
                       "category sent left by comparing the two categories' noisy class-1 shares, a sum over four "
                       "noisy counts with no monotone factor form. The listed law reaches the proof's bound on three "
                       "records, so the loss is exact at every size: the whole epsilon."),
        AllSizesDomain("strict, JointExp edges, depth 2", "Strict PrivaTree with JointExp's private bin edge (the "
                       "learner's default binning, max_bins 2), epsilon 1 split 0.2 / 0.4 / 0.4 over quantiles, nodes "
                       "and leaves, depth 2, features on the public values 0.25 and 0.75; the release is the tree and "
                       "the edge's cell among 2 equal cells (release(edges=2)): every add/remove pair of datasets of "
                       "any size.",
                       partial(QuotedBoundLaw, _CELLS2, grid=[[0.25, 0.75]], classes=[0, 1], bound=1.0,
                               max_point_records=10, witnesses=_JOINTEXP_WITNESSES),
                       dict(_JOINTEXP, epsilon=1.0, max_depth=2), "add-remove", 1.0, sizes=6, max_boxes=8000,
                       in_run=False, upper_method="proof",
                       upper_note=_PROOF + " No count law bounds this release on boxes yet: the edge's law is "
                       "JointExp's over the gaps between the sorted data (its utility a rank, moving with both "
                       "values' counts) and the tree's law depends on which side of the edge each value falls; no "
                       "monotone factor bound of the pair over unbounded counts is derived. Bounds, not closed: the "
                       "lower end is the worst pair found, the listed law's pairs of at most 10 records (0.5487 at "
                       "6, 0.5592 at 10) and the family found by a scan of count vectors (every count in 0, 1, 2, "
                       "4, 8, 16, 32, and the counts at 0.25 up to 4 with those at 0.75 up to 32; the mirror "
                       "images give the same): a class-1 record at 0.25 added to one class-0 record at 0.25 and n "
                       "of class 0 "
                       "at 0.75 (counts (1, 0, n, 0) and (1, 1, n, 0)), whose loss rises with n and settles at "
                       "0.562089 (0.561815 at 16 records, 0.562064 at 22, 0.562089 at 34, the same to 1e-9 from 66 "
                       "on). With a public edge the tree alone at these budgets is at most 0.2 + 0.4 = 0.6 (the "
                       "two-bin count law's certificate at node level 0.2 and leaf 0.4); whether the private edge's "
                       "mixture lets any pair come closer to the proof's 1 is open."),
        AllSizesDomain("strict, one feature, three bins, depth 2", "Strict PrivaTree (epsilon 4, depth 2, one feature "
                       "of three public bins, node and leaf budgets 1/2 each): every add/remove pair of datasets of "
                       "any size. Each node chooses between two boundaries by the Gini of its noisy histogram.",
                       partial(QuotedBoundLaw, release_law, grid=[[1 / 6, 0.5, 5 / 6]], classes=[0, 1], bound=4.0,
                               max_point_records=4, witnesses=_THREE_BIN_WITNESSES,
                               witness_law=partial(release_law, tail=1e-10), limit=(4.0, _THREE_BIN_LIMIT)),
                       dict(_ONE, max_bins=3, epsilon=4.0, max_depth=2), "add-remove", 4.0, sizes=4, max_boxes=2000,
                       in_run=False, upper_method="proof",
                       upper_note=_PROOF + " No law bound below it can exist: the proof's 4 is the supremum of the "
                       "loss (the limit stated), approached as the counts grow and reached by no pair, so the box "
                       "search's law bound would be 4 too. Each node's boundary is the least Gini of a noisy "
                       "histogram of 3 bins x 2 classes, a comparison of two ratios of sums of six noisy counts "
                       "with no monotone factor form; its choice ratio is at most the noise's e^(epsilon_level) and "
                       "tends to it. Not closed by the search: the lower end is the worst pair found, the listed "
                       "law's pairs of at most 4 records (2.6986 at 1, 2.8470 at 2, 3.1225 at 3, 3.1935 at 4) "
                       "and the family of the limit, evaluated at a cut-off of 1e-10 per noisy count: bin 0 empty, bins 1 and 2 of "
                       "n records each with the same class-1 share, one class-0 record added to bin 0; its loss "
                       "rises with the records as 4 - L of about 18 / N (share 2/5: 3.7021 at 51 records, 3.8270 at "
                       "101, 3.9057 at 201, 3.9539 at 401, 3.9715 at 631; share 134/325: 3.9759 at 651). Its "
                       "counts stop near 190 a cell: the three-bin law's float keys order the Gini comparisons "
                       "exactly only for noisy counts of about 215 or fewer (audit.privatree.three_bin_law)."),
    ]
