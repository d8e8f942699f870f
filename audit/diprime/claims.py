"""Target ``diprime``: DiPriMe median forests (reference.diprime), audited.

Claims
------
* Sampled with the event chosen from the exact law, expected to pass: the
  strict regression and classification forests, every variant, at epsilon 1
  and 2, depth 1, and DiPriMeFlip at depth 2, on tiny neighbouring datasets
  (add/remove one record), through the forest's whole ``release()``
  (thresholds and leaf values to 6 decimals), drawn by the batched path
  :class:`reference.diprime.batch.DiPriMeBatch` (the same law as fitting the
  reference, checked in ``tests/test_diprime_batch.py``); each row shows the
  exact loss of its pairs and the tightness of its bound
  (:mod:`audit.engine.exact_law.law_event`, laws of :mod:`audit.diprime.cell_law`).
* Sampled, expected violations: the paper's empty-leaf fallback (spec 2.4
  (ii)), V000's index median (2.4 (iii)) and the authors' DiPriMeFlip median
  (2.4 (iv)), each end to end.
* Exact (from the mechanisms' closed-form laws): the V003 Lebesgue median at
  the forest's ``eps_s`` [pass]; V000's index median, the authors' flip
  median and the count-scaled leaf [violation].
* Ledger: the paper's accounting of the K candidate medians (spec 2.4 (i),
  A3) under DiPriMeExp and DiPriMeFlip, whose sound sequential total exceeds
  the claimed epsilon; no sampled attack at the quick budget shows it, so
  the row carries the ledger's total (method ``ledger``).

Theorems and figures come from :mod:`audit.diprime.theorems`.
"""
from __future__ import annotations

import time

import numpy as np

from audit.engine.runs import checkpoint
from audit.engine.estimation.estimate import Claim, audit_pairs
from audit.engine.exact_law.exact import exact_loss
from audit.diprime.cell_law import pair_cell_laws, path_cell_laws
from audit.diprime.exact_law import pair_loss
from audit.engine.exact_law.law_event import PairLaw, audit_pairs_by_law, common_cells
from audit.engine.exact_law.laws import laws_pair_loss
from audit.engine.estimation.learner import LearnerMechanism
from audit.engine.estimation.neighbours import NeighbourPair, add_remove_pairs
from audit.results.report import Report
from audit.targets import residual_delta
from reference.diprime import DiPriMeForestClassifier, DiPriMeForestRegressor
from reference.diprime.batch import DiPriMeBatch
from reference.diprime.mechanisms import AuthorsFlipMedian, CountScaledLeafMean, IndexMedianV000
from reference.mechanisms import IntervalExponential
from reference.validation import shown

DESCRIPTION = ("DiPriMe median forests (Consul and Williamson 2020 and 2021): strict learners pass, "
               "the papers' flawed accounting is caught")
#: outputs per input (pilot included) of each sampled claim
#: (forests are drawn through the batched path, reference.diprime.batch, ~100x the reference's fits/s)
N_SAMPLES = {"quick": 10_000, "standard": 100_000, "full": 1_000_000}
#: outputs per input of the strict rows whose event comes from the exact law (no pilot: all count); the whole
#: release is drawn (thresholds and leaf values to 6 decimals), about 5x slower per forest than the binned one
N_LAW = {"quick": 10_000, "standard": 100_000, "full": 300_000}
#: outputs per input of each paper-mode (violation) claim: one-feature forests, cheap
N_PAPER = {"quick": 5_000, "standard": 50_000, "full": 200_000}
#: outputs per input of the mutant rows (audit.diprime.mutants)
N_MUTANT = {"quick": 4_000, "standard": 20_000, "full": 100_000}
#: error probability of each sampled row (a correct learner is flagged with probability at most ALPHA)
ALPHA = 0.01
EPSILONS = (1.0, 2.0)
VARIANTS = ("base", "exp", "flip")
_SEARCH = {"quick": 200, "standard": 1000, "full": 5000}

#: the tiny dataset of the strict claims: 4 records, 2 features in [0, 1]
X_TINY = np.array([[0.1, 0.8], [0.35, 0.2], [0.6, 0.55], [0.9, 0.3]])
Y_REG = np.array([0.0, 1.0, 0.3, 1.0])
Y_CLF = np.array([0, 1, 0, 1])


class ReleaseMechanism(LearnerMechanism):
    """:class:`audit.engine.estimation.learner.LearnerMechanism` whose output is the forest's discrete
    ``release(bins, leaf_bins)``: thresholds on a public grid, coarse leaf codes."""

    def __init__(self, make_estimator, bins=2, leaf_bins=2, post=None):
        super().__init__(make_estimator, output="discrete")
        self.bins, self.leaf_bins, self.post = bins, leaf_bins, post

    def _fit(self, data, rng):
        # as the parent, without sklearn's signature inspection in set_params (a third of a tiny fit's time)
        est = self.make_estimator()
        est.random_state = int(rng.integers(0, 2**31 - 1))
        return est.fit(*data)

    def release_of(self, est):
        rel = est.release(bins=self.bins, leaf_bins=self.leaf_bins)
        return rel if self.post is None else self.post(rel)


def _params(task, **kw) -> dict:
    """The estimator parameters of ``_forest(task, **kw)`` (the tiny forest of the claims)."""
    params = dict(n_estimators=1, max_depth=1, max_features=2, bounds=[(0.0, 1.0)] * 2)
    params.update({"target_bounds": (0.0, 1.0)} if task == "regression" else {"classes": [0, 1]})
    params.update(kw)
    return params


def _batch(task, bins=2, leaf_bins=2, post=None, **kw):
    """The batched path of ``_forest(task, **kw)`` wrapped as ``ReleaseMechanism`` (same release, same law;
    checked against the reference in tests/test_diprime_batch.py)."""
    return DiPriMeBatch(task, bins=bins, leaf_bins=leaf_bins, post=post, **_params(task, **kw))


def _forest(task, **kw):
    cls = DiPriMeForestRegressor if task == "regression" else DiPriMeForestClassifier
    return cls(**_params(task, **kw))


def _strict_pairs(task):
    y = Y_REG if task == "regression" else Y_CLF
    return add_remove_pairs(X_TINY, y, bounds=[(0.0, 1.0)] * 2, classes=[0, 1], remove=[3], corners=1)


def _pair_law(task, params: dict, pair, path: bool = False) -> PairLaw:
    """The whole release's laws under a pair's two datasets on common cells (:mod:`audit.diprime.cell_law`: the
    depth-1 tree's cells, or with ``path`` the cells of the extra record's path), with the pair's exact loss
    (:func:`audit.diprime.exact_law.pair_loss`)."""
    cls = DiPriMeForestRegressor if task == "regression" else DiPriMeForestClassifier
    loss = pair_loss(params, pair.d0, pair.d1, cls=cls)
    laws = (path_cell_laws if path else pair_cell_laws)(params, pair.d0, pair.d1, cls=cls)
    return PairLaw(*laws, (float(loss.lower), float(loss.upper)))


def strict_claims(budget: str, seed: int) -> list[dict]:
    """The strict forests at depth 1, every variant, epsilon 1 and 2: the whole release (thresholds and leaf
    values to 6 decimals) has an exact law, which chooses each pair's event; the row shows the exact loss and
    the tightness (:mod:`audit.engine.exact_law.law_event`)."""
    rows, n, k = [], N_LAW[budget], 0
    for task in ("regression", "classification"):
        pairs = _strict_pairs(task)
        for variant in VARIANTS:
            for eps in EPSILONS:
                params = _params(task, epsilon=eps, variant=variant)
                delta = residual_delta(lambda: _forest(task, epsilon=eps, variant=variant, random_state=0), pairs)
                with checkpoint.scope(f"strict-law:{task}:{variant}@{eps:g}"):
                    res = audit_pairs_by_law(_batch(task, bins=None, leaf_bins=None, epsilon=eps, variant=variant),
                                             pairs, [_pair_law(task, params, p) for p in pairs], Claim(eps, delta),
                                             n_samples=n, alpha=ALPHA, seed=seed * 1000 + k)
                k += 1
                rows.append(res.claim_row(
                    id=f"strict-{task}-{variant}@{eps:g}", expected="pass",
                    subject=f"DiPriMe{'' if variant == 'base' else variant.capitalize()} {task} forest, "
                            "accounting='strict', depth 1, K=2, 4 records, release = the whole tree (threshold "
                            "and leaf values to 6 decimals)"))
    # a depth-2 tree on 8 records: DiPriMeFlip, whose law reaches depth 2 on the extra record's path
    # (IntervalExponential medians do not: a child's grid depends on the exact parent threshold, 65,537 of them)
    rng = np.random.default_rng(seed)
    X8 = np.round(rng.random((8, 2)), 3)
    for task in ("regression", "classification"):
        y8 = np.round(rng.random(8), 3) if task == "regression" else rng.integers(0, 2, 8)
        pairs = add_remove_pairs(X8, y8, bounds=[(0.0, 1.0)] * 2, classes=[0, 1], remove=[7], corners=1)
        params = _params(task, epsilon=1.0, variant="flip", max_depth=2)
        delta = residual_delta(lambda: _forest(task, random_state=0, **params), pairs)
        with checkpoint.scope(f"strict-law:{task}:flip-depth2"):
            res = audit_pairs_by_law(_batch(task, bins=None, leaf_bins=None, epsilon=1.0, variant="flip", max_depth=2),
                                     pairs, [_pair_law(task, params, p, path=True) for p in pairs], Claim(1.0, delta),
                                     n_samples=n, alpha=ALPHA, seed=seed * 1000 + 100 + k)
        k += 1
        rows.append(res.claim_row(
            id=f"strict-{task}-flip-depth2@1", expected="pass",
            subject=f"DiPriMeFlip {task} forest, accounting='strict', depth 2, K=2, 8 records, release = the whole "
                    "tree (thresholds and leaf values to 6 decimals)"))
    return rows


def _in_gap(gap=1e-3):
    """Public post-processing: does the root threshold fall in [0.5, 0.5 + gap)?"""
    return lambda rel: int(0.5 <= rel[0][0][2] < 0.5 + gap)


def _gap_pair(gap=1e-3):
    X0, y0 = np.array([[0.5]]), np.array([0.5])
    X1, y1 = np.array([[0.5], [0.5 + gap]]), np.array([0.5, 0.5])
    return NeighbourPair((X0, y0), (X1, y1), f"add a record {gap:g} above the only one (a tiny gap)")


def paper_claims(budget: str, seed: int) -> list[dict]:
    """End-to-end violations of the paper-mode learners, each with a pair built to show its flaw."""
    n = N_PAPER[budget]
    one = dict(n_estimators=1, max_depth=1, max_features=1, bounds=[(0.0, 1.0)])
    empty_leaf = NeighbourPair((np.array([[0.0]]), np.array([0.5])),
                               (np.array([[0.0], [1.0]]), np.array([0.5, 1.0])),
                               "a record at the lower bound (right leaf always empty) vs one added at the upper bound")
    keep = None
    cases = [
        ("paper-leaf-count-scaled", "regression forest, accounting='paper': leaf noise S/(N eps_l) with the true "
         "count and Uniform(B_L, B_U) for an empty leaf (both versions' section 3)",
         dict(epsilon=1.0, variant="base", accounting="paper", **one), [empty_leaf], 2, keep),
        ("paper-v000-index-median", "V000 forest (index median of V000's Algorithm 3), accounting='paper'",
         dict(epsilon=1.0, version="v000", accounting="paper", **one), [_gap_pair()],
         None, _in_gap()),
        ("paper-flip-authors-median", "DiPriMeFlip forest, accounting='paper': the authors' PF median with score "
         "2 ln|I| - |2i - N| (the authors' code)",
         dict(epsilon=1.0, variant="flip", accounting="paper", **one), [_gap_pair()],
         None, _in_gap()),
    ]
    rows = []
    for k, (cid, subject, params, pairs, bins, post) in enumerate(cases):
        with checkpoint.scope(f"paper:{cid}"):
            mech = _batch("regression", bins, bins, post, **params)
            res = audit_pairs(mech, pairs, Claim(1.0), n_samples=n, alpha=ALPHA,
                              seed=seed * 1000 + 500 + k)
        rows.append(res.claim_row(id=f"{cid}@1", subject=subject, expected="violation"))
    return rows


def _exact_row(cid, subject, m, pair, eps, expected, detail=""):
    w = exact_loss(m, *pair)
    return {"id": cid, "subject": subject, "neighbouring": "add-remove", "epsilon_claimed": eps, "delta": 0.0,
            "epsilon_lower": w.epsilon, "epsilon_point": w.epsilon, "n_samples": 0, "alpha": 0.0,
            "method": "exact", "verdict": "violation" if w.epsilon > eps * (1 + 1e-9) else "pass",
            "expected": expected, "detail": f"{detail}witness output {shown(w.output)}".strip()}


def exact_claims(budget: str, seed: int) -> list[dict]:
    """Each median and leaf mechanism at the epsilon a depth-1 forest with rho = 1/2 gives it."""
    rng = np.random.default_rng(seed)
    rows = []
    for eps in EPSILONS:
        eps_base, eps_half, eps_l = 0.5 * eps, 0.25 * eps, 0.5 * eps  # rho eps / d, rho eps / (2d), (1 - rho) eps
        m = IntervalExponential(eps_base, (0.0, 1.0))
        best, best_pair = -1.0, None
        for _ in range(_SEARCH[budget]):
            d0 = [float(v) for v in rng.random(int(rng.integers(0, 6))) ** 3]
            d1 = d0 + [float(rng.choice([0.0, 1.0, rng.random()]))]
            loss = exact_loss(m, d0, d1).epsilon
            if loss > best:
                best, best_pair = loss, (d0, d1)
        rows.append(_exact_row(f"v003-lebesgue-median@{eps_base:g}/exact",
                               f"V003 Lebesgue EM median (DiPriMe, eps = {eps:g}), largest loss over "
                               f"{_SEARCH[budget]} random add/remove pairs", m, best_pair, eps_base, "pass",
                               f"worst pair {np.round(best_pair[0], 4).tolist()} + {round(best_pair[1][-1], 4)}; "))
        pair = ([0.5], [0.5, 0.5 + 1e-6])
        rows.append(_exact_row(f"v000-index-median@{eps_half:g}/exact", f"V000 index median (Algorithm 3, lines "
                               f"42-47; eps = {eps:g}), a value added 1e-6 above the only one",
                               IndexMedianV000(eps_half, (0.0, 1.0)), pair, eps_half, "violation"))
        rows.append(_exact_row(f"authors-flip-median@{eps_half:g}/exact", "authors' DiPriMeFlip median (PF, score "
                               f"2 ln|I| - |2i - N|; eps = {eps:g}), a value added 1e-6 above the only one",
                               AuthorsFlipMedian(eps_half, (0.0, 1.0)), pair, eps_half, "violation"))
        leaf = CountScaledLeafMean(eps_l, (0.0, 1.0), 1.0)
        rows.append(_exact_row(f"count-scaled-leaf-N1-N2@{eps_l:g}/exact", "paper regression leaf, Laplace scale "
                               f"R/(N eps_l) (eps = {eps:g}): N = 1 {{0}} vs N = 2 {{0, 1}}", leaf,
                               ([0.0], [0.0, 1.0]), eps_l, "violation"))
        rows.append(_exact_row(f"count-scaled-leaf-empty@{eps_l:g}/exact", "paper regression leaf: empty "
                               f"(Uniform) vs one record {{1}} (clipped Laplace, atoms; eps = {eps:g})", leaf,
                               ([], [1.0]), eps_l, "violation"))
    return rows


def ledger_claims(budget: str, seed: int) -> list[dict]:
    """The K-candidate accounting of the paper (spec 2.4 (i)), shown by the ledger's sound composition."""
    rows = []
    X = np.random.default_rng(seed).random((64, 5))
    y = (X[:, 0] > 0.5).astype(int)
    for variant in ("exp", "flip"):
        for eps in EPSILONS:
            # classification (Laplace leaves, DP) on all records: the medians are what the total shows
            m = DiPriMeForestClassifier(epsilon=eps, variant=variant, accounting="paper", n_estimators=2,
                                        max_depth=3, max_features=5, partition=False, bounds=[(0.0, 1.0)] * 5,
                                        classes=[0, 1], random_state=seed).fit(X, y)
            total = m.privacy_ledger_.total_epsilon()
            how = ("= d_max (K eps_s + eps_a) + eps_l" if variant == "exp" else
                   "(infinite: the authors' DiPriMeFlip median is not DP, and is charged inf)")
            rows.append({
                "id": f"paper-k-candidates-{variant}@{eps:g}/ledger",
                "subject": f"DiPriMe{variant.capitalize()}, accounting='paper', K=5, depth 3: the K candidate "
                           "medians charged once (V003 section 3.1)",
                "neighbouring": "add-remove", "epsilon_claimed": eps, "delta": 0.0,
                "epsilon_lower": float("nan"), "epsilon_point": total, "n_samples": 0, "alpha": 0.0,
                "method": "ledger", "verdict": "violation" if total > eps * (1 + 1e-9) else "pass",
                "expected": "violation",
                "detail": (f"sequential composition of every call gives {total:.4g} {how} "
                           f"against the claimed {eps:g}; this is an upper bound from the ledger, not a measured "
                           "loss: no sampled attack in this report exhibits the excess (epsilon_point "
                           "holds the ledger total)")})
    return rows


def mutant_rows(budget: str, seed: int) -> list[dict]:
    """DiPriMe's flawed mechanisms (audit.diprime.mutants), each of which must be flagged; the event of each comes
    from its release's exact law (:meth:`audit.diprime.mutants.Indicator.law`), and the row shows the exact loss."""
    from audit.diprime.mutants import mutant_cases

    rows, n = [], N_MUTANT[budget]
    for k, case in enumerate(mutant_cases(1.0)):
        mech, pairs = case.make(), case.pairs()
        laws = []
        for p in pairs:
            law0, law1 = mech.law(p.d0), mech.law(p.d1)
            loss = laws_pair_loss(law0, law1)
            laws.append(PairLaw(*common_cells(law0, law1), (loss.lower, loss.upper)))
        with checkpoint.scope(f"mutant:{case.id}"):
            res = audit_pairs_by_law(mech, pairs, laws, Claim(case.epsilon), n_samples=n, alpha=ALPHA,
                                     seed=seed * 1000 + 900 + k)
        rows.append(res.mutant_row(case))
    return rows


def run(budget: str, seed: int) -> Report:
    from audit.results import exact_by_size
    from audit.diprime import theorems

    start = time.perf_counter()
    report = Report("diprime", budget, seed,
                    title="DiPriMe median forests (Consul and Williamson, V000 and V003): the strict reference "
                          "learners against their claimed epsilon, and the papers' flawed accounting.")
    report.claims += exact_claims(budget, seed)
    report.claims += ledger_claims(budget, seed)
    report.claims += strict_claims(budget, seed)
    report.claims += paper_claims(budget, seed)
    report.exact_by_size = exact_by_size.entries("diprime")  # deterministic: no sampling
    report.mutants += mutant_rows(budget, seed)
    theorems.add_to(report, budget, seed)
    report.notes.append(
        f"Sampled rows: {N_SAMPLES[budget]:,} forests fitted per input (20% pilot), alpha = {ALPHA} per row shared "
        "by Bonferroni over its pairs and both directions: a correct learner is flagged with probability at most "
        "alpha. Their outputs are the forests' discrete release (threshold bin on a public grid, leaf codes "
        "'low'/'high' at a bound or a bin), post-processing of the model.")
    report.notes.append(
        f"Strict rows: {N_LAW[budget]:,} forests per input, every one counted: the event is the "
        "likelihood-ratio event of the two exact laws of the whole release (audit.diprime.cell_law: thresholds and "
        "leaf values to 6 decimals; a leaf's rare values and the regression leaf's windows grouped into cells), "
        "so no pilot is spent; the row shows the pairs' exact loss (audit.diprime.exact_law.pair_loss; the "
        "regression leaf's interval is wide where its lower end comes from a few released values) and the "
        "tightness, the sampled bound over the best bound any event attains at the same n and alpha. The depth-2 "
        "rows were DiPriMeExp, whose law is out of reach at depth 2 (a child's grid depends on the exact parent "
        "threshold, 65,537 of them); they are now DiPriMeFlip, the nearest configuration within reach, whose law "
        "follows the extra record's path (audit.diprime.cell_law.path_cell_laws: every node and leaf off that path "
        "grows on the same records under both datasets, so the path's cells lose nothing).")
    report.notes.append(
        "Neighbouring relation: add/remove one record (V003 appendix A). Strict accounting divides eps_s by K, "
        "uses a noisy centred sum over a noisy count at regression leaves, a public threshold grid for the "
        "DiPriMeFlip median and an independent uniform tree for every record.")
    report.elapsed_s = time.perf_counter() - start
    return report
