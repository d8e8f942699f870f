"""Bojarski et al.'s Table 1 (random decision trees vs rpart), side by side with the project's learners.

Bojarski, Choromanska, Choromanski and LeCun, "Differentially- and
non-differentially-private random decision trees", arXiv:1410.6973, Section 6
and Table 1 (Bojarski et al. 2014; spec/random_trees.md sections
4.2, 4.3, 4.6). The seed lost most of the protocol's numbers (spec 4.2: the
split percentages, the number of runs, the (k, h) grids and the formula
``epsilon = f(n)``), so the spec's recommendations (4.6) fill them in:

* 10 runs, each a fresh stratified 90/10 train/test split; 10% of the
  training part (stratified) is the validation set, and the models are fit on
  the rest (81% of the data), as the paper's selected models were;
* ``(k, h)``: the values Table 1 prints for each method and dataset (the
  paper chose them on validation error over a grid the seed lost), so no
  selection is re-run;
* the four forests of a run are independent (spec A9: the paper's k = 1
  columns on BTSC differ, so its methods did not share a forest);
* epsilon: ``f(n)`` is lost (spec A12), so the private columns of Table 1 are
  run at ``epsilon = 1`` and a second table repeats them over an epsilon grid,
  showing where the paper's number falls;
* Algorithm 2 with the paper's invalid-count rule (spec 2.4, A4); extra
  columns with the clamp rule (post-processing of the same noisy counts);
* rpart: :class:`reference.baselines.rpart.RpartLikeClassifier` (rpart's
  default controls on scikit-learn's CART; R is not available).

Table 1's "±" are the binomial intervals ``1.96 sqrt(p (1 - p) / n)`` with n
the dataset's size (spec 4.2, checked on all 40 entries), so the paper's
standard error is ``± / 1.96``. Ours is the standard error over the runs.

The paper's privacy claim is under add/remove neighbours, for which its
``Lap(k / epsilon)`` is exact (spec 2.5), so the learner's two accountings
coincide and the tables have one "ours" column; under substitution
``accounting="strict"`` would double the noise (spec E1).
"""
from __future__ import annotations

import numpy as np
from sklearn.model_selection import train_test_split

from reference import datasets as ds
from audit.reproduce import load_datasets, parallel_map
from audit.reproduce.cells import Cell, Reproduction, mean_se

__all__ = ["TITLE", "DATASETS", "UNAVAILABLE", "reproduce", "PAPER_TABLE", "METHODS", "EPSILON", "EPSILONS",
           "split"]

TITLE = "Random decision trees (Bojarski, Choromanska, Choromanski & LeCun): Table 1"
DATASETS = ("Ban_Aut", "BTSC", "CVR", "Mam_Mass", "Mushroom", "Adult")
UNAVAILABLE = ("Covertype (581012 x 54, LIBSVM covtype.binary)", "Quantum (KDD Cup 2004 phy_train, 50000 x 78)")
ABSENT = {"Covertype": UNAVAILABLE[0], "Quantum": UNAVAILABLE[1]}
#: the smoke run's set ships with scikit-learn (offline, no data directory): a pipeline check, no paper number
SMOKE_DATASETS = ("sklearn-breast-cancer",)
#: (k, h) of a set the paper did not run (Table 1 prints them per dataset): Ban_Aut's private columns' trees, the
#: paper's numerical set of the nearest size
SMOKE_KH = {"n-dpRFMV": (21, 15), "n-dpRFTA": (17, 9), "dpRFMV": (21, 11), "dpRFTA": (7, 12)}
N_RUNS, SMOKE_RUNS = 10, 2
TEST_FRACTION, VALIDATION_FRACTION = 0.1, 0.1
#: the epsilon of Table 1's private columns here (the paper's f(n) is lost), and the grid of the second table
EPSILON = 1.0
EPSILONS = (0.1, 0.5, 1.0, 2.0, 5.0, 10.0, 100.0)
Z_95 = 1.96

METHODS = ("rpart", "n-dpRFMV", "n-dpRFTA", "dpRFMV", "dpRFTA")
#: method -> (private, voting rule)
RDT = {"n-dpRFMV": (False, "majority"), "n-dpRFTA": (False, "threshold"),
       "dpRFMV": (True, "majority"), "dpRFTA": (True, "threshold")}
CLAMP = {"dpRFMV (clamp rule)": "dpRFMV", "dpRFTA (clamp rule)": "dpRFTA"}

T1 = f"Table 1 (test error %, the paper's k and h; private columns at ε = {EPSILON:g})"
T_EPS = "Table 1's private columns across ε (the paper's ε = f(n) is lost)"

# ----------------------------------------------------------------------------- the paper's numbers
#: spec/random_trees.md section 4.3, Table 1: test error % and its printed 95% half-width; the RDT columns also
#: carry the chosen (k, h)
PAPER_TABLE = {
    "Ban_Aut": {"rpart": (3.65, 0.99), "n-dpRFMV": (3.09, 0.92, 21, 15), "n-dpRFTA": (3.46, 0.97, 17, 9),
                "dpRFMV": (5.44, 1.20, 21, 11), "dpRFTA": (5.22, 1.18, 7, 12)},
    "BTSC": {"rpart": (18.92, 2.81), "n-dpRFMV": (22.19, 2.98, 1, 14), "n-dpRFTA": (22.47, 2.99, 1, 14),
             "dpRFMV": (23.42, 3.03, 1, 14), "dpRFTA": (23.42, 3.03, 1, 13)},
    "CVR": {"rpart": (9.30, 2.73), "n-dpRFMV": (9.05, 2.70, 19, 6), "n-dpRFTA": (5.95, 2.22, 13, 9),
            "dpRFMV": (8.10, 2.56, 15, 9), "dpRFTA": (6.90, 2.38, 15, 9)},
    "Mam_Mass": {"rpart": (21.88, 2.61), "n-dpRFMV": (16.95, 2.37, 9, 12), "n-dpRFTA": (16.21, 2.33, 19, 15),
                 "dpRFMV": (16.95, 2.37, 5, 12), "dpRFTA": (17.37, 2.40, 9, 8)},
    "Mushroom": {"rpart": (3.33, 0.39), "n-dpRFMV": (0.83, 0.20, 21, 15), "n-dpRFTA": (0.26, 0.11, 13, 14),
                 "dpRFMV": (4.69, 0.46, 3, 13), "dpRFTA": (4.16, 0.43, 3, 15)},
    "Adult": {"rpart": (17.75, 0.42), "n-dpRFMV": (21.70, 0.45, 3, 14), "n-dpRFTA": (21.58, 0.45, 3, 14),
              "dpRFMV": (22.18, 0.45, 3, 11), "dpRFTA": (21.72, 0.45, 7, 11)},
    "Covertype": {"rpart": (26.90, 0.11), "n-dpRFMV": (33.39, 0.12, 21, 15), "n-dpRFTA": (30.80, 0.12, 21, 15),
                  "dpRFMV": (38.75, 0.13, 3, 13), "dpRFTA": (37.82, 0.12, 3, 13)},
    "Quantum": {"rpart": (32.08, 0.41), "n-dpRFMV": (34.81, 0.42, 21, 15), "n-dpRFTA": (33.06, 0.41, 19, 14),
                "dpRFMV": (39.91, 0.43, 21, 13), "dpRFTA": (39.01, 0.43, 13, 9)},
}
#: Table 1's n per dataset (the CI's denominator)
PAPER_N = {"Ban_Aut": 1372, "BTSC": 748, "CVR": 435, "Mam_Mass": 961, "Mushroom": 8124, "Adult": 32561,
           "Covertype": 581012, "Quantum": 50000}
ROWS = tuple(PAPER_TABLE)


def paper_se(half_width: float) -> float:
    """The standard error behind Table 1's binomial 95% half-width (``± = 1.96 SE``, spec 4.2)."""
    return half_width / Z_95


def split(y: np.ndarray, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Stratified (fit, validation, test) indices: 10% test, then 10% of the rest as validation."""
    idx = np.arange(y.size)
    rest, test = train_test_split(idx, test_size=TEST_FRACTION, stratify=y, random_state=seed % 2**32)
    fit, val = train_test_split(rest, test_size=VALIDATION_FRACTION, stratify=y[rest],
                                random_state=(seed + 1) % 2**32)
    return fit, val, test


# ----------------------------------------------------------------------------- one run
def _kh(row: str, method: str) -> tuple[int, int]:
    """Table 1's (k, h) for ``method`` on ``row``; :data:`SMOKE_KH` for a set the paper did not run."""
    return tuple(PAPER_TABLE[row][method][2:4]) if row in PAPER_TABLE else SMOKE_KH[method]


def _run(task) -> dict:
    """One split of one dataset: ``{(table, column): test error %}``."""
    from reference.baselines.rpart import RpartLikeClassifier
    from reference.random_trees import RandomDecisionForestClassifier

    name, data, run, seed, epsilons = task
    rng = np.random.default_rng(seed)
    fit, _val, test = split(data.y, int(rng.integers(2**31 - 1)))
    X_fit, y_fit, X_te, y_te = data.X[fit], data.y[fit], data.X[test], data.y[test]
    bounds = data.bounds_list()

    def err(est) -> float:
        return 100.0 * float(np.mean(est.fit(X_fit, y_fit).predict(X_te) != y_te))

    def rdt(method, epsilon=1.0, invalid_rule="paper"):
        private, voting = RDT[method]
        k, h = _kh(name, method)
        return err(RandomDecisionForestClassifier(
            n_estimators=k, max_depth=h, voting=voting, private=private, epsilon=epsilon, accounting="paper",
            invalid_rule=invalid_rule, bounds=bounds, classes=data.classes,
            random_state=int(rng.integers(2**31 - 1))))

    out = {(T1, "rpart"): err(RpartLikeClassifier(random_state=int(rng.integers(2**31 - 1))))}
    for method in ("n-dpRFMV", "n-dpRFTA"):
        out[(T1, method)] = rdt(method)
    for column, method in [("dpRFMV", "dpRFMV"), ("dpRFTA", "dpRFTA"), *CLAMP.items()]:
        rule = "clamp" if column in CLAMP else "paper"
        for eps in epsilons:
            value = rdt(method, eps, rule)
            out[(T_EPS, f"{column}, ε = {eps:g}")] = value
            if eps == EPSILON:
                out[(T1, column)] = value
    return out


# ----------------------------------------------------------------------------- explanations of marked cells
_MAM_MASS = (
    "data difference, in part: the file's out-of-range BI-RADS value 55 (the others are 0-6) is kept, so that "
    "feature's public range is [0, 55] and about 9 in 10 random thresholds on BI-RADS, the most predictive "
    "feature, fall above every ordinary value; replacing 55 by 5 lowered our n-dpRFMV error from 20.7% to 18.7% "
    "(20 splits, a side check, not the protocol, since the paper does not say it cleaned the value); the rest "
    "of the gap (the paper's unstated handling of the 162 '?' cells) is unexplained")
_MUSHROOM_DP = (
    "finding: with the paper's invalid-count rule as we reconstruct it (Algorithm 2), a pure leaf whose zero count "
    "turns negative gets a uniform θ. Our counts get integer noise (two-sided geometric), which keeps a zero "
    "count at zero with probability (1 - a) / (1 + a), a = exp(-ε / k): few pure leaves are randomised at large "
    "ε, and our error reaches the paper's 4.69% / 4.16% from ε = 5 on, but stays above it at small ε, where the "
    "paper's number needs a larger f(n) or the clamp rule. (With float Laplace noise, as this project used "
    "before, a zero count turned negative with probability 1/2 at any ε, and the error stayed above 10% up to "
    "ε = 100.)")
_ADULT = (
    "no specific cause found: our non-private forests at the paper's (k, h) are also about 1 pp worse than its "
    "numbers, so the gap is not the noise; one candidate is our reading of the attribute draw (attributes drawn with replacement: with "
    "123 sparse binary features a repeated attribute on a path sends every record one way and wastes depth), "
    "another an unstated a9a preprocessing")
#: explanations of cells outside 2 SE, written after reading the committed run's numbers
#: (reports/reproductions/random-trees.md); key (row, method) with method None for the whole row
EXPLANATIONS: dict[tuple, str] = {
    ("CVR", "rpart"): (
        "specification ambiguity: one split on physician-fee-freeze alone errs on 4.4% of CVR's records and our "
        "rpart-like tree on 4.1%; the paper's 9.30% is over twice that, so its rpart ran with a setting the paper "
        "does not state (how '?' reached it, other controls); R is not available to check"),
    ("Mam_Mass", "rpart"): (
        "no specific cause found: the paper's handling of the '?' cells is unstated (rpart would treat them as "
        "missing with surrogate splits; we impute), and its rpart is worse than its own random trees here while "
        "ours is better than ours"),
    ("Mushroom", "rpart"): (
        "specification ambiguity: rpart splits a nominal attribute by subsets of its levels, ours by ordered "
        "codes, and the split sizes are lost; ours errs less (1.6% vs 3.33%), so the paper's rpart differed in an "
        "unstated setting; R is not available to check"),
    ("Mam_Mass", None): _MAM_MASS,
    ("Mushroom", "dpRFMV"): _MUSHROOM_DP,
    ("Mushroom", "dpRFTA"): _MUSHROOM_DP,
    ("Adult", None): _ADULT,
    ("CVR", "dpRFMV"): (
        "CVR's 352 fitting records fall into 512 leaves per tree (k = 15, h = 9), so Lap(15/ε) dwarfs every count "
        "unless ε is large: the paper's numbers are met at ε = 100 with its rule (ε = 10 with the clamp rule), "
        "which suggests its lost f(n) gave a large ε here"),
}
EXPLANATIONS[("CVR", "dpRFTA")] = EXPLANATIONS[("CVR", "dpRFMV")]
#: the private columns' common cause: the epsilon
_EPS_T1 = (f"the paper's ε = f(n) is lost and Table 1 here runs ε = {EPSILON:g}, our choice; the "
           "ε table and the note 'where the paper's private numbers fall' give the ε at which ours meets the paper")
_EPS_SWEEP = ("expected in part: this table sweeps ε around the paper's lost f(n), so most cells run at an ε other "
              "than the paper's; a row that misses the paper at every ε has its own cause")


def _explain(table, row, column) -> str:
    base = column.split(",")[0]
    parts = [EXPLANATIONS.get((row, base)) or EXPLANATIONS.get((row, None)) or ""]
    if base in ("dpRFMV", "dpRFTA"):
        parts.insert(0, _EPS_T1 if table == T1 else _EPS_SWEEP)
    text = "; ".join(p for p in parts if p)
    return text or "outside 2 SE; no explanation found"


def _paper(row, column):
    entry = PAPER_TABLE.get(row, {}).get(column.split(",")[0])
    if entry is None:
        return None, None
    return entry[0], paper_se(entry[1])


def _cells(results: dict[str, list[dict]], epsilons, smoke: bool) -> list[Cell]:
    cells = []
    tables = ((T1, METHODS + tuple(CLAMP)),
              (T_EPS, tuple(f"{m}, ε = {e:g}" for m in ("dpRFMV", "dpRFTA", *CLAMP) for e in epsilons)))
    for table, columns in tables:
        for row in ROWS + tuple(r for r in results if r not in ROWS):
            if row not in results and not (row in ABSENT and not smoke and table == T1):
                continue
            for column in columns:
                paper, pse = _paper(row, column)
                cell = Cell(table, row, column, paper, pse)
                notes = []
                base = column.split(",")[0]
                if row in ABSENT:
                    if base in CLAMP:
                        continue
                    notes.append(f"dataset not available to this project ({ABSENT[row]})")
                else:
                    runs = [r[(table, column)] for r in results[row]]
                    cell.ours, cell.ours_se = mean_se(runs)
                    cell.n_runs = len(runs)
                    if base in RDT or base in CLAMP:
                        k, h = _kh(row, CLAMP.get(base, base))
                        notes.append(f"k = {k}, h = {h}" + ("" if row in PAPER_TABLE else " (not in the paper)"))
                    if base in CLAMP:
                        notes.append("our extra column: clamp rule (no paper number)")
                    if cell.marked:
                        notes.insert(0, "smoke run: not comparable" if smoke else _explain(table, row, column))
                cell.note = "; ".join(notes)
                cells.append(cell)
    return cells


def _nearest_epsilon(results, epsilons) -> list[str]:
    """Per dataset and private method: the grid epsilon whose mean error is nearest the paper's number."""
    out = []
    for row, runs in results.items():
        if row not in PAPER_TABLE:
            continue
        parts = []
        for method in ("dpRFMV", "dpRFTA"):
            paper = PAPER_TABLE[row][method][0]
            found = []
            for label, column in (("paper rule", method), ("clamp", f"{method} (clamp rule)")):
                means = {e: float(np.mean([r[(T_EPS, f"{column}, ε = {e:g}")] for r in runs])) for e in epsilons}
                best = min(means, key=lambda e: abs(means[e] - paper))
                found.append(f"{label} ε = {best:g} ({means[best]:.2f}%)")
            parts.append(f"{method} {paper:.2f}%: " + ", ".join(found))
        out.append(f"{row}: " + "; ".join(parts))
    return out


def _draw_epsilon(results, epsilons, path) -> None:
    """Test error against epsilon for the private columns, with the paper's number as a band."""
    from audit.engine.presentation.figures import legend_below, pyplot, save

    plt = pyplot()

    rows = [r for r in ROWS if r in results] or list(results)
    fig, axes = plt.subplots(1, len(rows), figsize=(3.2 * len(rows), 3.2), squeeze=False)
    for ax, row in zip(axes[0], rows):
        for method, colour in (("dpRFMV", "C0"), ("dpRFTA", "C1")):
            for column, style in ((method, "o-"), (f"{method} (clamp rule)", "s:")):
                m, s = zip(*(mean_se([r[(T_EPS, f"{column}, ε = {e:g}")] for r in results[row]]) for e in epsilons))
                ax.errorbar(epsilons, m, yerr=2 * np.nan_to_num(np.asarray(s)), fmt=style, color=colour,
                            label=column.replace(" rule", ""), capsize=2, ms=3)
            if row not in PAPER_TABLE:
                continue
            p, hw = PAPER_TABLE[row][method][:2]
            ax.axhspan(p - 2 * paper_se(hw), p + 2 * paper_se(hw), color=colour, alpha=0.15)
            ax.axhline(p, color=colour, ls="--", lw=0.8)
        ax.set_xscale("log")
        ax.set_xlabel("ε")
        ax.set_title(row, fontsize=9)
    axes[0][0].set_ylabel("test error % (paper: dashed, ± 2 SE band)")
    legend_below(fig, ncol=4)
    save(fig, path)


#: what the epsilon figure's error bars are
EPSILON_CAPTION = ("Points: our mean test error over the runs at each ε; error bars: ± 2 standard errors of that "
                   "mean. Dashed lines: the paper's Table 1 number; shaded bands: its ± 2 standard errors (from its "
                   "printed ± 1.96 √(p(1-p)/n)).")


# ----------------------------------------------------------------------------- the reproduction
def reproduce(datasets=None, *, data_dir=None, jobs: int = 1, smoke: bool = False, seed: int = 0) -> Reproduction:
    """Run the protocol of the module docstring on ``datasets`` (default :data:`DATASETS`)."""
    rep = Reproduction("random-trees", TITLE, seed=seed, smoke=smoke)
    names = list(SMOKE_DATASETS if smoke and datasets is None else (DATASETS if datasets is None else datasets))
    n_runs = SMOKE_RUNS if smoke else N_RUNS
    epsilons = (EPSILON,) if smoke else EPSILONS
    loaded = list(load_datasets("random-trees", names, data_dir, rep))
    tasks = []
    for name, data in loaded:
        index = ROWS.index(name) if name in ROWS else len(ROWS) + sorted(ds.BUNDLED).index(name)
        for run in range(n_runs):
            task_seed = int(np.random.SeedSequence([seed, index, run]).generate_state(1)[0])
            tasks.append((name, data, run, task_seed, epsilons))
    outputs = parallel_map(_run, tasks, jobs)
    results: dict[str, list[dict]] = {}
    for (name, *_), out in zip(tasks, outputs):
        results.setdefault(name, []).append(out)
    rep.cells = _cells(results, epsilons, smoke)
    if results and len(epsilons) > 1:
        rep.figures.append(("epsilon", lambda path, r=results, e=epsilons: _draw_epsilon(r, e, path),
                            EPSILON_CAPTION))
        rep.notes.append("where the paper's private numbers fall on our ε grid (the grid ε whose mean is nearest "
                         "the paper's number, with the paper's invalid-count rule and with the clamp rule): " + " | ".join(_nearest_epsilon(results, epsilons)))
    rep.protocol += [
        f"{n_runs} runs per dataset (the paper's number of runs is lost); each run a fresh stratified split: "
        f"{TEST_FRACTION:.0%} test, then {VALIDATION_FRACTION:.0%} of the rest held out as validation; every model "
        "is fit on the remaining 81% and scored on the test part",
        "k and h: the values Table 1 prints for each method and dataset (the paper selected them on validation "
        "error over grids lost from the paper's text available here); the validation part is therefore unused, and no selection is re-run",
        "the methods of a run use independent forests; MV: + iff more than k/2 trees vote + "
        "(θ > 1/2); TA: + iff the mean θ > 1/2",
        f"private columns: Algorithm 2, Lap(k/ε) on every count of every leaf, the paper's invalid-count rule; "
        f"Table 1 at ε = {EPSILON:g} (the paper's ε = f(n) is lost), the second table over ε ∈ "
        f"{{{', '.join(f'{e:g}' for e in epsilons)}}}; the clamp-rule columns are the same noisy counts "
        "post-processed by the clamp (negative noisy counts set to 0)",
        "rpart: reference.baselines.rpart.RpartLikeClassifier (Gini CART, minsplit 20, minbucket 7, maxdepth 30, "
        "pruned at cp = 0.01 on the misclassification risk: rpart's defaults; R itself is not available)",
        "ours = mean ± standard error (ddof=1) over the runs, in %; paper SE = Table 1's ± / 1.96 (its ± is "
        "1.96 √(p(1-p)/n) with n the dataset size)",
        "one accounting: the paper's relation is add/remove, under which Lap(k/ε) is exactly ε-DP, "
        "so accounting='paper' and 'strict' coincide",
    ]
    if not smoke and datasets is None:
        rep.protocol.append("the protocol above was run on every available dataset; nothing was cut (the (k, h) "
                            "selection itself is not re-run: its grids are lost)")
    if smoke:
        rep.protocol.append(f"SMOKE: {', '.join(names)}, {n_runs} runs, ε = {EPSILON:g}; a pipeline check, not a "
                            "reproduction")
    for name, data in loaded:
        rep.notes.append(f"{name}: {data.n} rows, {data.d} features; " + "; ".join(data.notes))
    if not smoke and "Mushroom" in results:
        rep.notes.append(
            "finding (Mushroom): under the invalid-count rule we reconstruct (a leaf with a negative "
            "noisy count is randomised), a pure leaf's zero count decides the error. With float Laplace noise "
            "(as this project used before) that count was negative half the time at any ε, so half of all pure "
            "leaves were randomised and the error stayed >= 10% up to ε = 100, far above the paper's 4.69% (MV) and 4.16% "
            "(TA). The counts now get integer (two-sided geometric) noise, which leaves a zero count at exactly "
            "zero with probability (1 - a) / (1 + a), a = exp(-ε / k), close to 1 at large ε: our errors fall to "
            "the paper's level from ε = 5 on (see the change from the baseline run below). So the paper's "
            "numbers are consistent with integer-valued noisy counts, or with the clamp rule")
    rep.notes += [
        "privacy caveats the paper shares: the feature ranges are read from the data for "
        "Ban_Aut, BTSC, Mam_Mass and Mushroom, and (k, h) were chosen on private validation data; neither is "
        "covered by ε",
    ]
    return rep

