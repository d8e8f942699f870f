"""LPDT's Table 2 and synthetic experiment, side by side with the project's learners.

Ma, Zhang, Cai and Yang, "Decision Tree for Locally Private Estimation with
Public Data", NeurIPS 2023 (Ma et al. 2023; spec/lpdt.md
sections 6, 8.1-8.3, 9). The seed does not give Table 2's protocol (spec 8.2,
A9), so the spec's recommendation, which mirrors the authors' companion code,
is run:

* each run a fresh random 80/20 train/test split; 10% of the training part is
  the public sample (identically distributed), the rest the private one;
* hyperparameters chosen as the authors' companion code chooses them (spec 6,
  "oracle"): every grid point is run on every split and the one with the best
  mean test MSE is reported (this tuning is NOT private; so is the paper's);
  LPDT-M's grid is ``max_depth`` 1..6 x ``min_samples_leaf`` {10, 20, 40, 60,
  80, 100, 500, 1000, 2000} at the paper's budget share ``s = 1/2`` (the code
  also tuned s over {0.3, 0.5, 0.7}: cut, see the report's protocol); PHIST's
  ``n_bins`` 1..6 under the companion skip rule (``d ln n_bins <= 30 ln 2``,
  ``d < 32``, and our ``n_bins^d <= 2^16``); DT's ``max_depth`` 1..12 and
  unlimited;
* LPDT-M is :class:`reference.lpdt.LPDTRegressor`: "ours" with
  ``label_noise="per_leaf"`` (the authors' code, which produced the paper's
  numbers; spec 9 D1: it is not epsilon-LDP), "strict" with the paper's
  mechanism (3), one noisy label per user (``"per_user"``); PHIST is
  :class:`reference.baselines.phist.PHISTRegressor` with the LPDT randomiser
  on a regular grid, fit on the private part only; DT is scikit-learn's
  CART on the whole training part (non-private). LPDT-V (the CART rule),
  APHIST and DECONV are not implemented in this project: their cells carry the
  paper's number only.

The synthetic experiment is the configuration of the authors'
``simulation.py`` (spec 8.1), whose results file the spec transcribes: ``X ~
U[0, 1]``, ``y = sin(16 x) + N(0, 1)``, 6000 private, 2000 public and 2000
test points, epsilon 2..10, 5-fold cross-validation on the private part over
the grid above (non-private tuning, as the code); test MSE includes the unit
noise variance. The seed's own figure (X ~ N(0.5, 0.16), 1000 public points)
has no numbers to compare with.
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from audit.reproduce import load_datasets, parallel_map
from audit.reproduce.cells import Cell, Reproduction, mean_se

__all__ = ["TITLE", "DATASETS", "UNAVAILABLE", "reproduce", "PAPER_TABLE2", "PAPER_SYNTHETIC", "T2_METHODS",
           "LPDT_GRID", "phist_bins", "split"]

TITLE = "LPDT (Ma, Zhang, Cai & Yang, NeurIPS 2023): Table 2 and the synthetic experiment (simulation.py)"
DATASETS = ("ABA", "AIR", "ALG", "AQU", "BUI", "CBM", "CCP", "CON", "CPU", "FIS", "HOU", "MUS", "RED", "WHI")
UNAVAILABLE = ("Chicago taxi trips (Table 3: 2,100,000 private credit-card and 24,000 public prepaid-card fares)",)
#: the smoke run's set ships with scikit-learn (offline, no data directory): a pipeline check, no paper number
SMOKE_DATASETS = ("sklearn-diabetes",)
N_RUNS, SMOKE_RUNS = 10, 2
N_SYNTH_RUNS, SMOKE_SYNTH_RUNS = 10, 1
TEST_FRACTION, PUBLIC_FRACTION = 0.2, 0.1
EPSILONS = (2.0, 6.0)

T2 = "Table 2 (test MSE, identically distributed public data)"
TS = "Synthetic experiment (simulation.py configuration; test MSE incl. unit noise variance)"

#: spec/lpdt.md 8.3 Table 2: DT, then per epsilon (2, 6) LPDT-M, LPDT-V, APHIST, PHIST, DECONV (None: "-")
T2_METHODS = ("LPDT-M", "LPDT-V", "APHIST", "PHIST", "DECONV")
_T2_ROWS = {
    "ABA": (5.67e+0, (1.01e+1, 1.01e+1, 1.89e+1, 1.06e+1, 1.01e+7), (8.38e+0, 7.34e+0, 2.05e+1, 1.05e+1, 1.09e+1)),
    "AIR": (2.26e+1, (4.80e+1, 4.69e+1, 1.31e+3, 6.80e+1, 3.00e+2), (4.49e+1, 3.60e+1, 1.60e+3, 4.98e+1, 4.72e+1)),
    "ALG": (2.12e-2, (2.57e-1, 2.43e-1, 2.52e-1, 2.52e-1, 9.26e+4), (2.44e-1, 2.46e-1, 2.63e-1, 2.47e-1, 3.14e-1)),
    "AQU": (1.92e+0, (2.99e+0, 2.99e+0, 4.01e+0, 2.93e+0, 5.74e+3), (2.73e+0, 2.67e+0, 4.75e+0, 2.83e+0, 2.96e+0)),
    "BUI": (1.75e+5, (1.50e+6, 1.64e+6, None, None, 1.20e+9), (1.44e+6, 1.31e+6, None, None, 2.04e+7)),
    "CBM": (4.08e-27, (2.12e+0, 1.65e+0, 9.53e+0, 6.97e+0, 2.37e+3), (7.62e-1, 1.23e-1, 4.94e+0, 3.21e+0, 1.23e+5)),
    "CCP": (2.19e+1, (1.50e+2, 1.06e+2, 2.07e+4, 3.64e+2, 3.03e+2), (8.42e+1, 5.18e+1, 2.24e+4, 3.28e+2, 2.56e+2)),
    "CON": (9.38e+1, (2.94e+2, 2.89e+2, 3.81e+2, 3.00e+2, 2.24e+7), (2.44e+2, 2.13e+2, 4.16e+2, 2.96e+2, 3.13e+2)),
    "CPU": (2.15e+1, (3.41e+2, 9.00e+1, 9.26e+2, 3.42e+2, 2.15e+5), (3.02e+2, 6.15e+1, 9.98e+2, 3.40e+2, 3.98e+2)),
    "FIS": (1.07e+0, (2.15e+0, 2.14e+0, 3.14e+0, 2.22e+0, 3.47e+3), (1.65e+0, 1.76e+0, 3.60e+0, 2.16e+0, 2.21e+0)),
    "HOU": (2.11e+1, (8.10e+1, 8.22e+1, 1.06e+2, 8.52e+1, 1.92e+4), (7.43e+1, 7.10e+1, 1.23e+2, 8.21e+1, 2.44e+2)),
    "MUS": (3.00e+2, (3.47e+2, 3.46e+2, None, None, 9.50e+3), (3.27e+2, 3.27e+2, None, None, 8.09e+3)),
    "RED": (4.76e-1, (7.08e-1, 7.03e-1, 3.18e+0, 7.57e-1, 1.23e+8), (6.75e-1, 6.12e-1, 3.80e+0, 7.12e-1, 8.66e-1)),
    "WHI": (5.77e-1, (8.30e-1, 8.42e-1, 4.01e+0, 8.15e-1, 1.64e+7), (7.03e-1, 6.61e-1, 4.45e+0, 8.03e-1, 1.47e+0)),
}
#: (row, column) -> the paper's number; columns "DT" and "ε = e: METHOD"
PAPER_TABLE2 = {}
for _row, (_dt, _e2, _e6) in _T2_ROWS.items():
    PAPER_TABLE2[(_row, "DT")] = _dt
    for _eps, _vals in ((2.0, _e2), (6.0, _e6)):
        for _m, _v in zip(T2_METHODS, _vals):
            PAPER_TABLE2[(_row, f"ε = {_eps:g}: {_m}")] = _v
#: spec/lpdt.md 8.1: the authors' results/epsilon_mse.csv, mean and sd over 20 repetitions
PAPER_SYNTHETIC = {2: (1.748, 0.068), 3: (1.544, 0.064), 4: (1.651, 0.344), 5: (1.392, 0.089), 6: (1.254, 0.055),
                   7: (1.215, 0.051), 8: (1.157, 0.052), 9: (1.110, 0.036), 10: (1.089, 0.036)}
PAPER_SYNTHETIC_RUNS = 20
NOT_IMPLEMENTED = {"LPDT-V": "the CART-rule variant", "APHIST": "Györfi & Kroll 2022", "DECONV": "Farokhi 2020"}

#: the code's grid (spec 6) at s = 1/2
LPDT_GRID = tuple((depth, leaf) for depth in range(1, 7) for leaf in (10, 20, 40, 60, 80, 100, 500, 1000, 2000))
DT_DEPTHS = tuple(range(1, 13)) + (None,)
ACCOUNTINGS = {"paper": "per_leaf", "strict": "per_user"}


def phist_bins(d: int) -> tuple[int, ...]:
    """PHIST's ``n_bins`` grid 1..6 under the companion skip rule (spec 7.1) and our ``2^16``-cell limit."""
    if d >= 32:
        return ()
    return tuple(b for b in range(1, 7) if d * math.log(b) <= 30 * math.log(2) + 1e-12 and b ** d <= 2 ** 16)


def split(n: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(private, public, test) indices: 20% test, then 10% of the rest public (at least 2 points)."""
    perm = np.random.default_rng(seed).permutation(n)
    n_test = int(round(TEST_FRACTION * n))
    test, rest = perm[:n_test], perm[n_test:]
    n_pub = max(2, int(round(PUBLIC_FRACTION * rest.size)))
    return rest[n_pub:], rest[:n_pub], test


# ----------------------------------------------------------------------------- one run
def _lpdt(eps, depth, leaf, accounting, target_bounds, d, seed):
    from reference.lpdt import LPDTRegressor

    return LPDTRegressor(epsilon=eps, max_depth=depth, min_samples_leaf=leaf, target_bounds=target_bounds,
                         bounds=[(0.0, 1.0)] * d, label_noise=ACCOUNTINGS[accounting], random_state=seed)


def _mse(est, X, y) -> float:
    return float(np.mean((est.predict(X) - y) ** 2))


def _table2_run(task) -> dict:
    """One split of one dataset: ``{(column, accounting, config): test MSE}`` for every grid point."""
    from sklearn.tree import DecisionTreeRegressor

    from reference.baselines.phist import PHISTRegressor

    name, data, run, seed, grid, epsilons = task
    rng = np.random.default_rng(seed)
    pri, pub, test = split(data.n, int(rng.integers(2**31 - 1)))
    X, y, tb, d = data.X, data.y, data.target_bounds, data.d
    out = {}
    for depth in DT_DEPTHS:
        dt = DecisionTreeRegressor(max_depth=depth, random_state=int(rng.integers(2**31 - 1)))
        out[("DT", None, depth)] = _mse(dt.fit(X[np.r_[pri, pub]], y[np.r_[pri, pub]]), X[test], y[test])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the per-leaf flaw's warning, on purpose
        for eps in epsilons:
            column = f"ε = {eps:g}: LPDT-M"
            for depth, leaf in grid:
                for acc in ACCOUNTINGS:
                    est = _lpdt(eps, depth, leaf, acc, tb, d, int(rng.integers(2**31 - 1)))
                    out[(column, acc, (depth, leaf))] = _mse(est.fit(X[pri], y[pri], X[pub], y[pub]), X[test],
                                                             y[test])
            for bins in phist_bins(d):
                est = PHISTRegressor(epsilon=eps, n_bins=bins, target_bounds=tb, bounds=[(0.0, 1.0)] * d,
                                     random_state=int(rng.integers(2**31 - 1)))
                out[(f"ε = {eps:g}: PHIST", None, bins)] = _mse(est.fit(X[pri], y[pri]), X[test], y[test])
    return out


def synthetic_data(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``simulation.py``'s model (spec 8.1): ``X ~ U[0, 1]``, ``y = sin(16 x) + N(0, 1)``."""
    X = rng.random((n, 1))
    return X, np.sin(16 * X[:, 0]) + rng.normal(size=n)


def _synthetic_run(task) -> dict:
    """One repetition at one epsilon: 5-fold CV on the private part (paper accounting), then both accountings."""
    eps, run, seed, grid, folds = task
    rng = np.random.default_rng(seed)
    X, y = synthetic_data(rng, 6000)
    Xp, yp = synthetic_data(rng, 2000)
    Xt, yt = synthetic_data(rng, 2000)
    tb = (float(yp.min()), float(yp.max()))  # public label range (the code reads the private one, spec 9 D2)
    fold = rng.permutation(6000) % folds
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        scores = {}
        for depth, leaf in grid:
            s = []
            for f in range(folds):
                est = _lpdt(eps, depth, leaf, "paper", tb, 1, int(rng.integers(2**31 - 1)))
                s.append(_mse(est.fit(X[fold != f], y[fold != f], Xp, yp), X[fold == f], y[fold == f]))
            scores[(depth, leaf)] = float(np.mean(s))
        best = min(scores, key=scores.get)
        out = {"config": best}
        for acc in ACCOUNTINGS:
            est = _lpdt(eps, *best, acc, tb, 1, int(rng.integers(2**31 - 1)))
            out[acc] = _mse(est.fit(X, y, Xp, yp), Xt, yt)
    return out


# ----------------------------------------------------------------------------- cells
def _best(runs: list[dict], column: str, accounting) -> tuple[object, list[float]]:
    """The grid point with the best mean test MSE over the runs (the companion code's oracle), and its values."""
    configs = {k[2] for k in runs[0] if k[0] == column and k[1] == accounting}
    if not configs:
        return None, []
    means = {c: np.mean([r[(column, accounting, c)] for r in runs]) for c in configs}
    best = min(configs, key=lambda c: (means[c], str(c)))
    return best, [r[(column, accounting, best)] for r in runs]


#: explanations of cells outside 2 SE, written after reading the committed run (reports/reproductions/lpdt.md);
#: key (row or None, column prefix or None)
_NO_SE = "Table 2 prints no uncertainty, so z uses our 10-run SE alone; "
_CLIP = ("our leaf values are clipped to the label range (post-processing) and the code's are not, which "
         "lowers our MSE where noisy leaves overshoot")
EXPLANATIONS: dict[tuple, str] = {
    (None, "DT"): _NO_SE + (
        "specification ambiguity: the paper does not state its non-private tree's settings; ours (scikit-learn CART "
        "on the whole training part, depth chosen by the best mean test MSE up to unlimited) errs less wherever it "
        "is marked, so the paper's DT was more constrained (for instance the LPDT code's depth grid <= 6); on CBM "
        "both are essentially 0"),
    (None, "LPDT-M"): _NO_SE + (
        "specification ambiguity: Table 2's protocol is not in the paper's text available here (public fraction, number of runs, the "
        "budget share s, which the code tunes over {0.3, 0.5, 0.7} and we fix at 1/2); the marks go both ways; "
        "where ours is lower (CBM and CCP at ε = 2, CCP, RED, WHI at ε = 6) a likely cause is that " + _CLIP),
    (None, "PHIST"): _NO_SE + (
        "specification ambiguity: our PHIST runs the LPDT randomiser on a regular grid (only the partition "
        "differs), the authors' Berrett et al.'s Laplace mechanism with one variance-matched draw per cell and "
        "uncentred labels, whose label noise grows with max |y| rather than the range: that is "
        "consistent with the paper's far worse PHIST on CCP (labels 420-496) and CBM; where ours is worse the "
        "chosen grid is one cell (a noisy global mean) and the split sizes differ from the paper's unknown ones"),
    (None, "synthetic"): (
        "ours is lower: " + _CLIP + ", and its leaves are routed by thresholds (the code predicts 0 outside the "
        "box); the code's own ε = 4 row shows the heavy tail of unclipped estimates (two repetitions at "
        "2.46 and 2.70); the code also tunes s, and ran 20 repetitions to our 10"),
}


def _explain(row, column) -> str:
    for key in ((row, column), (None, column), (row, None)):
        if key in EXPLANATIONS:
            return EXPLANATIONS[key]
    for (r, c), text in EXPLANATIONS.items():
        if r in (row, None) and c is not None and column.endswith(c):
            return text
    return "outside 2 SE; no explanation found"


def _table2_cells(results, epsilons, smoke) -> list[Cell]:
    cells = []
    columns = ["DT"] + [f"ε = {e:g}: {m}" for e in epsilons for m in T2_METHODS]
    for row in DATASETS + tuple(r for r in results if r not in DATASETS):
        if row not in results:
            continue
        runs = results[row]
        for column in columns:
            paper = PAPER_TABLE2.get((row, column))
            cell = Cell(T2, row, column, paper)
            method = column.split(": ")[-1]
            notes = []
            if method in NOT_IMPLEMENTED:
                notes.append(f"{method} ({NOT_IMPLEMENTED[method]}) is not implemented in this project")
            elif method == "PHIST" and paper is None and row in DATASETS:
                notes.append("not run, as in the paper (d >= 32: the companion skip rule)")
            else:
                acc = "paper" if method == "LPDT-M" else None
                config, values = _best(runs, column, acc)
                if values:
                    cell.ours, cell.ours_se = mean_se(values)
                    cell.n_runs = len(values)
                    notes.append(f"chosen: {_config_text(method, config)}")
                    if method == "LPDT-M":
                        sconfig, svalues = _best(runs, column, "strict")
                        cell.strict, cell.strict_se = mean_se(svalues)
                        notes.append(f"strict chosen: {_config_text(method, sconfig)}")
                elif method == "PHIST":
                    notes.append("no PHIST grid point fits our 2^16-cell limit at this d")
                if cell.marked:
                    notes.insert(0, "smoke run: not comparable" if smoke else _explain(row, column))
            cell.note = "; ".join(notes)
            cells.append(cell)
    return cells


def _config_text(method, config) -> str:
    if method == "LPDT-M":
        return f"max_depth {config[0]}, min_samples_leaf {config[1]}"
    if method == "PHIST":
        return f"n_bins {config}"
    return f"max_depth {config}"


def _synthetic_cells(synth, smoke) -> list[Cell]:
    cells = []
    for eps in sorted(synth):
        runs = synth[eps]
        mean, sd = PAPER_SYNTHETIC[eps]
        cell = Cell(TS, f"ε = {eps:g}", "LPDT-M", mean, sd / math.sqrt(PAPER_SYNTHETIC_RUNS))
        cell.ours, cell.ours_se = mean_se([r["paper"] for r in runs])
        cell.strict, cell.strict_se = mean_se([r["strict"] for r in runs])
        cell.n_runs = len(runs)
        configs = sorted({r["config"] for r in runs})
        notes = ["chosen (max_depth, min_samples_leaf): " + ", ".join(f"{c}" for c in configs)]
        if cell.marked:
            notes.insert(0, "smoke run: not comparable" if smoke else _explain(f"ε = {eps:g}", "synthetic"))
        cell.note = "; ".join(notes)
        cells.append(cell)
    return cells


def _draw_synthetic(cells, path) -> None:
    from audit.engine.presentation.figures import legend_below, pyplot, save

    plt = pyplot()

    eps = [float(c.row.split("= ")[1]) for c in cells]
    fig, ax = plt.subplots(figsize=(5, 3.5))
    ax.errorbar(eps, [c.paper for c in cells], yerr=[2 * c.paper_se for c in cells], fmt="k^--", capsize=3,
                label="authors' code (epsilon_mse.csv)")
    ax.errorbar(eps, [c.ours for c in cells], yerr=[2 * (c.ours_se or 0) for c in cells], fmt="o-", capsize=3,
                label="ours, per-leaf label noise (code)")
    ax.errorbar(eps, [c.strict for c in cells], yerr=[2 * (c.strict_se or 0) for c in cells], fmt="s:", capsize=3,
                label="ours, per-user label noise (strict)")
    ax.axhline(1.0, color="0.6", lw=0.8)
    ax.set_xlabel("ε")
    ax.set_ylabel("test MSE (± 2 SE)")
    ax.set_title("Synthetic experiment: test MSE against ε", fontsize=9)
    legend_below(ax, ncol=1)
    save(fig, path, dpi=120)


#: what the synthetic figure's error bars are
SYNTHETIC_CAPTION = ("Points: mean test MSE over the repetitions (the authors' code's recorded runs and ours); error "
                     "bars: ± 2 standard errors of those means. The grey line marks MSE 1, the label noise's "
                     "variance.")


# ----------------------------------------------------------------------------- the reproduction
def reproduce(datasets=None, *, data_dir=None, jobs: int = 1, smoke: bool = False, seed: int = 0) -> Reproduction:
    """Run the protocol of the module docstring on ``datasets`` (default :data:`DATASETS`) and the synthetic model."""
    rep = Reproduction("lpdt", TITLE, seed=seed, smoke=smoke)
    names = list(SMOKE_DATASETS if smoke and datasets is None else (DATASETS if datasets is None else datasets))
    n_runs = SMOKE_RUNS if smoke else N_RUNS
    epsilons = EPSILONS[:1] if smoke else EPSILONS
    grid = LPDT_GRID[::9] if smoke else LPDT_GRID  # smoke: min_samples_leaf 10 only
    loaded = list(load_datasets("lpdt", names, data_dir, rep))
    tasks = []
    for name, data in loaded:
        for run in range(n_runs):
            index = DATASETS.index(name) if name in DATASETS else len(DATASETS)  # a bundled set: after the paper's
            s = int(np.random.SeedSequence([seed, index, run]).generate_state(1)[0])
            tasks.append(("t2", (name, data, run, s, grid, epsilons)))
    synth_eps = (2,) if smoke else tuple(PAPER_SYNTHETIC)
    n_synth = SMOKE_SYNTH_RUNS if smoke else N_SYNTH_RUNS
    folds = 2 if smoke else 5
    for eps in synth_eps:
        for run in range(n_synth):
            s = int(np.random.SeedSequence([seed, 1000 + eps, run]).generate_state(1)[0])
            tasks.append(("syn", (eps, run, s, grid, folds)))
    outputs = parallel_map(_dispatch, tasks, jobs)
    results: dict[str, list[dict]] = {}
    synth: dict[int, list[dict]] = {}
    for (kind, args), out in zip(tasks, outputs):
        if kind == "t2":
            results.setdefault(args[0], []).append(out)
        else:
            synth.setdefault(args[0], []).append(out)
    rep.cells = _table2_cells(results, epsilons, smoke) + _synthetic_cells(synth, smoke)
    syn_cells = [c for c in rep.cells if c.table == TS]
    if len(syn_cells) > 1:
        rep.figures.append(("synthetic", lambda path, c=syn_cells: _draw_synthetic(c, path), SYNTHETIC_CAPTION))
    priced = [c for c in rep.cells if c.price is not None and c.price_se]
    if priced:
        worse = sum(c.price > 2 * c.price_se for c in priced)
        better = sum(c.price < -2 * c.price_se for c in priced)
        rel = [c.price / c.ours for c in priced if c.ours]
        rep.notes.append(f"price of strict accounting (per-user minus per-leaf label noise, MSE): {len(priced)} "
                         f"cells; strict worse by more than 2 SE in {worse}, better in {better}; median relative "
                         f"change {np.median(rel):+.1%}")
    rep.protocol += [
        f"Table 2: {n_runs} runs per dataset, each a fresh random split: {TEST_FRACTION:.0%} test, then "
        f"{PUBLIC_FRACTION:.0%} of the rest public and the remainder private (our reconstruction; the "
        "paper's protocol is not in its text available here); ε ∈ {" + ", ".join(f"{e:g}" for e in epsilons) + "}",
        "tuning as the authors' companion code (NOT private): the grid point with the best mean test MSE "
        "over the runs is reported; LPDT-M grid max_depth 1..6 x min_samples_leaf {10, 20, 40, 60, 80, 100, 500, "
        "1000, 2000} at s = 1/2 (the code's s ∈ {0.3, 0.5, 0.7} was cut to the paper's s = 1/2 to fit the time "
        "budget); PHIST n_bins 1..6 under the companion skip rule; DT max_depth 1..12 or unlimited",
        "LPDT-M: ours = label_noise='per_leaf' (the authors' code: each user's label released once per "
        "leaf, not ε-LDP), strict = 'per_user' (the paper's mechanism (3), ε-LDP); price of strict = strict - ours",
        "labels clipped to the public label range and leaf values clipped to it (post-processing); a leaf whose "
        "debiased count is negative takes its public mean (the code's guard)",
        "PHIST: the LPDT randomiser on a regular grid of n_bins^d cells over [0, 1]^d, private part only; DT: "
        "scikit-learn DecisionTreeRegressor on the whole training part (public + private), non-private",
        "the paper prints no uncertainty for Table 2, so z uses our standard error alone",
        f"synthetic: simulation.py's model and sizes, ε = {', '.join(str(e) for e in synth_eps)}, {n_synth} "
        f"repetitions (the code: 20), {folds}-fold CV on the private part over the LPDT-M grid with per-leaf noise "
        "(the code's tuning; s fixed at 1/2), the chosen grid point refit with both label-noise forms; public label "
        "range as target_bounds; paper SE = sd / √20 from the code's results file",
    ]
    if not smoke:
        rep.protocol.append(f"cut for time (2 shared cores): {n_runs} Table-2 runs instead of the companion code's 50 "
                            f"and {n_synth} synthetic repetitions instead of 20; s fixed at 1/2; a full run (50 and "
                            "20, s tuned) needs about 15x this run's time")
    if smoke:
        rep.protocol.append(f"SMOKE: {', '.join(names)}, {n_runs} runs, ε = 2, a 6-point grid, one synthetic "
                            "repetition with 2 folds; a pipeline check, not a reproduction")
    for name, data in loaded:
        rep.notes.append(f"{name}: {data.n} rows, {data.d} features; " + "; ".join(data.notes))
    rep.notes += [
        "the abbreviation-to-file mapping is inferred from the file names (MANIFEST 1.4); ALG's target (column 0) "
        "is the binary fire class and CBM's the lever position, both doubtful (Table 2's DT MSE of 4e-27 on CBM "
        "fits a target the features determine exactly, as the lever position is)",
        "privacy caveats shared with the paper: hyperparameters tuned on test or private data, feature scaling and "
        "label range read from the whole file",
    ]
    return rep


def _dispatch(task):
    kind, args = task
    return _table2_run(args) if kind == "t2" else _synthetic_run(args)
