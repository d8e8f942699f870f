"""Target ``random-trees``: random decision trees (Bojarski et al., arXiv:1410.6973), audited.

Claims
------
* every voting rule (majority, threshold, probabilistic), private, at
  epsilon in {0.5, 1, 2}, under add/remove and substitution: the released
  labels on a public probe grid (post-processing of the model) [pass];
* the noisy leaf counts themselves, strict accounting, at epsilon = 1 [pass];
* the noise scale of one tree (``Lap(1 / epsilon)``) used for the whole
  forest [violation];
* the add/remove scale ``Lap(k / epsilon)`` claimed under substitution
  (the paper's accounting, spec E1) [violation].

The sampled audits draw whole forests in batches through the learner's own
``_draw_forests`` (the code path ``fit`` uses), so ``quick`` takes seconds.

Theorems live in :mod:`audit.random_trees.theorems`; the error-against-k-and-h
figures are drawn here (:func:`error_grid`).
"""
from __future__ import annotations

import time

import numpy as np

from audit.engine.runs import checkpoint
from audit.engine.estimation.estimate import Claim, audit_pairs
from audit.engine.estimation.neighbours import NeighbourPair, add_remove_pairs, substitute_pairs
from audit.results.report import Report
from audit.engine.presentation.figures import captioned, integer_ticks, legend_below, pyplot, save
from reference.papers import cite
from reference.random_trees import RandomDecisionForestClassifier, noise_scale

DESCRIPTION = (f"random decision trees ({cite('random-trees')}; MV / TA / PA), private and not: sampled audits, "
               "flawed scales, Thms 5.1-5.5")

EPSILONS = (0.5, 1.0, 2.0)
VOTINGS = ("majority", "threshold", "probabilistic")
RELATIONS = ("add-remove", "substitute")
#: samples per input (pilot included) of each sampled claim
N_SAMPLES = {"quick": 30_000, "standard": 100_000, "full": 400_000}
#: samples per input of the flawed-variant claims (their excess is large: e^(2 eps) against e^eps)
N_FLAWED = {"quick": 60_000, "standard": 200_000, "full": 1_000_000}
#: error probability of each sampled row: a correct learner is flagged with probability at most ALPHA
ALPHA = 0.01

PAPER = cite("random-trees")


# --------------------------------------------------------------------------- mechanisms over (X, y)
class OneTreeScaleForest(RandomDecisionForestClassifier):
    """Flawed variant: every count gets ``Lap(1 / epsilon)``, the scale of a single tree,
    whatever the number of trees ``k`` (sequential composition over trees forgotten;
    the correct scale is ``k / epsilon``, paper Section 5.2). Loss ``k * epsilon``."""

    def _noise_scale(self, k):
        if not self.private:
            return None
        return noise_scale(float(self.epsilon), 1, self.neighbouring, self.accounting)


class ForestRelease:
    """``m((X, y), rng)``: fit a forest and release a post-processing of it.

    ``output="probe"``: the labels predicted on the public ``probe`` points by
    the forest's voting rule, encoded as one integer (discrete; what a user of
    the classifier sees). ``output="counts"``: the noisy leaf counts as a float
    vector, class-0 counts negated so that adding a class-1 record or turning
    a class-0 record into class 1 moves every coordinate up (a fixed relabelling
    of the release: post-processing).

    ``batch`` draws ``n`` independent forests at once through the learner's
    ``_draw_forests``, the code path of ``fit``.
    """

    def __init__(self, make_estimator, output="probe", probe=None):
        self.make_estimator = make_estimator
        self.output = output
        self.probe = None if probe is None else np.asarray(probe, dtype=float)

    def _encode(self, forests, est, rng):
        if self.output == "counts":
            c = forests.noisy_counts.copy()
            c[..., 0] *= -1.0
            return c.reshape(c.shape[0], -1)
        probe = np.clip(self.probe, est.bounds_[:, 0] if hasattr(est, "bounds_") else -np.inf,
                        est.bounds_[:, 1] if hasattr(est, "bounds_") else np.inf)
        idx = forests.predict_index(probe, est.voting, rng)  # (F, n_probe)
        n_classes = forests.theta.shape[-1]
        weights = n_classes ** np.arange(idx.shape[1], dtype=np.int64)
        return idx.astype(np.int64) @ weights

    def batch(self, data, n, rng):
        X, y = data
        est = self.make_estimator()
        k, h, bounds, classes, Xc, y_index, _ = est._validate_fit(X, y)
        forests = est._draw_forests(Xc, y_index, n, rng, rng, validated=(k, h, bounds, classes))
        est.bounds_ = bounds
        return self._encode(forests, est, rng)

    def __call__(self, data, rng):
        out = self.batch(data, 1, rng)
        return out[0] if self.output == "counts" else int(out[0])


# --------------------------------------------------------------------------- datasets and pairs
BOUNDS = [(0.0, 1.0), (0.0, 1.0)]
CLASSES = [0, 1]
#: public probe grid: the four corners and the centre
PROBE = np.array([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0], [0.5, 0.5]])


def base_data():
    """Six records, three per class, near opposite corners."""
    X = np.array([[0.1, 0.1], [0.2, 0.15], [0.15, 0.3], [0.9, 0.85], [0.8, 0.95], [0.85, 0.7]])
    y = np.array([0, 0, 0, 1, 1, 1])
    return X, y


def rule_pairs(relation):
    X, y = base_data()
    if relation == "add-remove":
        return add_remove_pairs(X, y, bounds=BOUNDS, classes=CLASSES, remove=[0, 3], corners=2)
    return substitute_pairs(X, y, bounds=BOUNDS, classes=CLASSES, records=[0, 3])


def count_pairs(relation):
    """Crafted pairs for the count releases: every tree's counts move (one leaf per tree, h = 0).

    add/remove: four class-0 records, plus one class-1 record. substitution:
    one of four class-0 records relabelled to class 1.
    """
    X = np.full((4, 2), 0.5)
    y = np.zeros(4, dtype=int)
    if relation == "add-remove":
        X1, y1 = np.vstack([X, [[0.5, 0.5]]]), np.r_[y, 1]
        return [NeighbourPair((X, y), (X1, y1), "4 class-0 records, plus one class-1 record", "add-remove")]
    y1 = y.copy()
    y1[0] = 1
    return [NeighbourPair((X, y), (X, y1), "4 class-0 records, record 0 relabelled to class 1", "substitute")]


def _factory(cls=RandomDecisionForestClassifier, **params):
    base = dict(bounds=BOUNDS, classes=CLASSES, private=True)
    base.update(params)
    return lambda: cls(**base)


# --------------------------------------------------------------------------- claims
def rule_claims(budget: str, seed: int) -> list[dict]:
    rows = []
    n = N_SAMPLES[budget]
    i = 0
    for voting in VOTINGS:
        for relation in RELATIONS:
            for eps in EPSILONS:
                i += 1
                cid = f"{voting}-{relation}-eps{eps:g}"
                mech = ForestRelease(_factory(voting=voting, epsilon=eps, neighbouring=relation, n_estimators=3,
                                              max_depth=1), output="probe", probe=PROBE)
                with checkpoint.scope(f"claim:{cid}"):
                    r = audit_pairs(mech, rule_pairs(relation), Claim(eps, 0.0, relation), n_samples=n,
                                    alpha=ALPHA, seed=seed * 1000 + i)
                rows.append(r.claim_row(id=cid, subject=f"RandomDecisionForestClassifier(voting={voting!r}, k=3, h=1, "
                                        f"strict): labels on a 5-point public probe grid", expected="pass"))
    return rows


def count_claims(budget: str, seed: int) -> list[dict]:
    """The noisy counts (strongest release) at epsilon = 1, correct and flawed."""
    rows = []
    eps = 1.0
    cases = [
        ("counts-add-remove-strict", "add-remove", RandomDecisionForestClassifier, "strict", 3, "pass",
         "correct Lap(k/eps), k=3"),
        ("counts-substitute-strict", "substitute", RandomDecisionForestClassifier, "strict", 2, "pass",
         "correct Lap(2k/eps) under substitution, k=2"),
        ("flawed-one-tree-scale", "add-remove", OneTreeScaleForest, "strict", 3, "violation",
         "FLAWED: Lap(1/eps), one tree's scale, for a k=3 forest (true loss k*eps)"),
        ("flawed-add-remove-scale-under-substitution", "substitute", RandomDecisionForestClassifier, "paper", 2,
         "violation", "FLAWED: the paper's Lap(k/eps) claimed under substitution, k=2 (true loss 2*eps)"),
    ]
    for i, (cid, relation, cls, accounting, k, expected, what) in enumerate(cases):
        n = N_FLAWED[budget] if expected == "violation" else N_SAMPLES[budget]
        mech = ForestRelease(_factory(cls, epsilon=eps, neighbouring=relation, accounting=accounting,
                                      n_estimators=k, max_depth=0), output="counts")
        with checkpoint.scope(f"claim:{cid}"):
            r = audit_pairs(mech, count_pairs(relation), Claim(eps, 0.0, relation), n_samples=n, alpha=ALPHA,
                            seed=seed * 1000 + 500 + i)
        rows.append(r.claim_row(id=cid, subject=f"noisy leaf counts (h=0): {what}", expected=expected))
    return rows


def mutant_rows(count_rows: list[dict]) -> list[dict]:
    sources = {
        "flawed-one-tree-scale": "sequential composition over the k trees forgotten (paper Sec. 5.2 uses Theorem "
                                 "3.2 to get Lap(k/eps); this variant keeps the single-tree Lap(1/eps))",
        "flawed-add-remove-scale-under-substitution": "paper Sec. 5.2 / Definition 3.1: counts of sensitivity 1 "
                                                      "hold for add/remove only; under substitution a tree's count "
                                                      "vector moves by 2 (Definition 3.1's 'differ on at most one element' "
                                                      "is ambiguous)",
    }
    return [{"id": r["id"], "description": r["subject"], "source": sources[r["id"]],
             "epsilon_claimed": r["epsilon_claimed"], "epsilon_lower": r["epsilon_lower"],
             "detected": r["verdict"] == "violation"} for r in count_rows if r["id"] in sources]


def ledger_notes() -> list[str]:
    X, y = base_data()
    out = []
    for cls, relation, accounting, k in ((RandomDecisionForestClassifier, "add-remove", "strict", 3),
                                         (RandomDecisionForestClassifier, "substitute", "strict", 3),
                                         (RandomDecisionForestClassifier, "substitute", "paper", 3),
                                         (OneTreeScaleForest, "add-remove", "strict", 3)):
        est = _factory(cls, epsilon=1.0, neighbouring=relation, accounting=accounting, n_estimators=k,
                       max_depth=1, random_state=0)().fit(X, y)
        out.append(f"Ledger of {cls.__name__}(k={k}, h=1, epsilon=1, {relation}, accounting={accounting}): "
                   f"{len(est.privacy_ledger_)} charges (one per tree, leaf and class), noise scale "
                   f"{est.noise_scale_:g}, total epsilon {est.privacy_ledger_.total_epsilon():.6g}.")
    return out


# --------------------------------------------------------------------------- figures: error against k and h
GRID_K = (1, 3, 7, 15, 31)
GRID_H = (1, 2, 4, 6, 8, 10)
FIXED_H, FIXED_K = 6, 15
FIGURE_EPSILON = 1.0
REPEATS = {"quick": 2, "standard": 5, "full": 10}


def datasets(seed: int):
    """name -> (X, y, bounds, classes). Bounds of the real sets are their observed ranges, taken as public
    (the paper assumes public ranges, spec E4); the generated set's are its true domain."""
    from sklearn.datasets import load_breast_cancer, load_wine

    from audit.random_trees.theorems import generated

    out = {}
    for name, loader in (("breast-cancer", load_breast_cancer), ("wine", load_wine)):
        X, y = loader(return_X_y=True)
        out[name] = (X, y, list(zip(X.min(axis=0), X.max(axis=0))), sorted(set(y.tolist())))
    X, y = generated(2000, np.random.default_rng(np.random.SeedSequence([seed, 7])), m=5, flip=0.05)
    out["generated"] = (X, y, [(0.0, 1.0)] * 5, [0, 1])
    return out


def error_grid(budget: str, seed: int) -> dict:
    """Test error of the three rules, private (epsilon = FIGURE_EPSILON) and not, on a k grid (h = FIXED_H)
    and an h grid (k = FIXED_K); 70/30 stratified splits, REPEATS[budget] of them. One forest per fit is
    shared by the three rules (a paired comparison, spec A9)."""
    from sklearn.model_selection import train_test_split

    rng = np.random.default_rng(np.random.SeedSequence([seed, 8]))
    result = {}
    for name, (X, y, bounds, classes) in datasets(seed).items():
        table = {}
        for private in (False, True):
            for axis, grid in (("k", GRID_K), ("h", GRID_H)):
                errs = np.zeros((len(VOTINGS), len(grid)))
                for r in range(REPEATS[budget]):
                    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, stratify=y,
                                                          random_state=int(rng.integers(2 ** 31)))
                    for j, v in enumerate(grid):
                        k, h = (v, FIXED_H) if axis == "k" else (FIXED_K, v)
                        est = RandomDecisionForestClassifier(
                            n_estimators=k, max_depth=h, private=private, epsilon=FIGURE_EPSILON, bounds=bounds,
                            classes=classes, random_state=int(rng.integers(2 ** 31))).fit(Xtr, ytr)
                        Xc = np.clip(Xte, est.bounds_[:, 0], est.bounds_[:, 1])
                        for i, voting in enumerate(VOTINGS):
                            pred = est.classes_[est.forest_.predict_index(Xc, voting, rng)[0]]
                            errs[i, j] += np.mean(pred != yte) / REPEATS[budget]
                table[(private, axis)] = errs
        result[name] = table
    return result


def _grid_figure(name: str, table: dict, repeats: int):
    def draw(path):
        plt = pyplot()
        fig, axes = plt.subplots(2, 2, figsize=(9, 6.5), sharey=True)
        for col, private in enumerate((False, True)):
            for row, (axis, grid) in enumerate((("k", GRID_K), ("h", GRID_H))):
                ax = axes[row, col]
                for i, voting in enumerate(VOTINGS):
                    ax.plot(grid, table[(private, axis)][i], "o-", ms=3, label=voting)
                fixed = f"h = {FIXED_H}" if axis == "k" else f"k = {FIXED_K}"
                priv = f"private, eps = {FIGURE_EPSILON:g}" if private else "non-private"
                ax.set_title(f"{name}: {priv}, {fixed}", fontsize=9)
                ax.set_xlabel("k (trees)" if axis == "k" else "h (tree height)")
                integer_ticks(ax.xaxis)
                ax.set_ylabel("test error")
        legend_below(fig, ncol=3)
        save(fig, path)

    return captioned(draw, f"Points: mean test error over {repeats} 70/30 stratified split(s), one forest per fit "
                           "shared by the three voting rules; no error bars drawn.")


def figures(budget: str, seed: int) -> tuple[list, list[str]]:
    from audit.random_trees.theorems import error_vs_k_figure

    grid = error_grid(budget, seed)
    figs = [(f"error-vs-k-h-{name}", _grid_figure(name, table, REPEATS[budget])) for name, table in grid.items()]
    figs.append(("error-vs-k-log", error_vs_k_figure(budget, seed)))
    notes = [f"Figures error-vs-k-h-*: test error against k (h = {FIXED_H}) and h (k = {FIXED_K}), 70/30 stratified "
             f"splits, {REPEATS[budget]} repetition(s); private forests at epsilon = {FIGURE_EPSILON:g} (add/remove, "
             "paper invalid-count rule). Ranges of the real data sets are taken from the data and treated as public "
             "(as the paper assumes); no hyperparameter is tuned."]
    for name, table in grid.items():
        spread, widths = [], []
        for i, voting in enumerate(VOTINGS):
            e = np.concatenate([table[(True, "k")][i], table[(True, "h")][i]])
            widths.append(e.max() - e.min())
            spread.append(f"{voting} {e.min():.3f}-{e.max():.3f} (spread {e.max() - e.min():.3f})")
        least = VOTINGS[int(np.argmin(widths))]
        verdict = "agrees with" if least == "majority" else "does NOT reproduce"
        notes.append(f"Sensitivity to k and h, private, {name}: test error range over the grids: " + "; ".join(spread)
                     + f". Least sensitive here: {least}; this {verdict} the paper's finding that majority voting "
                     "is the least sensitive (dpRFMV, Section 6).")
    return figs, notes


# --------------------------------------------------------------------------- run
def run(budget: str, seed: int) -> Report:
    from audit.results import exact_by_size
    from audit.random_trees import theorems

    start = time.perf_counter()
    report = Report("random-trees", budget, seed,
                    title=f"Random decision trees with majority voting, threshold averaging and probabilistic "
                          f"averaging ({PAPER}): privacy audits of "
                          f"`reference.random_trees.RandomDecisionForestClassifier`, flawed noise scales, "
                          f"Monte Carlo checks of Theorems 5.1-5.5, and error against k and h.")
    report.claims += rule_claims(budget, seed)
    counts = count_claims(budget, seed)
    report.claims += counts
    report.exact_by_size = exact_by_size.entries("random-trees")  # deterministic: no sampling
    report.mutants += mutant_rows(counts)
    report.theorems += theorems.rows(budget, seed)
    figs, fig_notes = figures(budget, seed)
    report.figures += figs
    report.notes += ledger_notes()
    report.notes.append(
        f"Sampled rows: the two-batch protocol (audit.engine.estimation.estimate), {N_SAMPLES[budget]:,} outputs per input for correct "
        f"learners and {N_FLAWED[budget]:,} for the flawed variants (20% pilot), alpha = {ALPHA} per row shared by "
        "Bonferroni over its pairs and both directions: a correct learner is flagged with probability at most alpha.")
    report.notes.append(
        "Voting-rule rows release the predicted labels on the public probe grid "
        f"{PROBE.tolist()} (post-processing of the model, so any loss seen there is a real loss); count rows "
        "release the noisy leaf counts, the strongest release (leaf values, votes and predictions are all "
        "post-processing of them), on crafted data where every tree's counts move.")
    report.notes += theorems.NOTES
    report.notes += fig_notes
    report.elapsed_s = time.perf_counter() - start
    return report
