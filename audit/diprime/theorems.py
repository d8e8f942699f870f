"""Checks of the DiPriMe papers' theorems (spec/diprime.md section 2.5), and the target's figures.

* V003 Theorem 3 and Corollary 3.1, exactly from the median's law on its public grid
  (:meth:`reference.mechanisms.IntervalExponential.cdf`; the span ``d`` measured in grid
  points, the base measure of the released mechanism), swept over ``t``,
  ``eps_s`` and three data distributions, and confirmed by sampling.
* V003 Theorem 1 (single-split regression) with the conditional expectation
  in closed form; V003 Theorem 2's flip probability by Monte Carlo.
* V000 Theorem 2 (leaf-occupancy tail; the paper's Figure 2) by Monte Carlo
  with V000's index median.
* V000 Theorem 1: the nested-set algebra holds; the statement is refuted by
  the counterexample of spec section 2.2.
"""
from __future__ import annotations

import math

import numpy as np
from scipy import stats

from audit.engine.presentation.figures import captioned, integer_ticks, legend_below, pyplot, save
from reference.diprime.mechanisms import IndexMedianV000
from reference.mechanisms.grid import grid_searchsorted
from reference.mechanisms import IntervalExponential
from reference.papers import cite

V000 = cite("diprime-v000")
V003 = cite("diprime-v003")
EPS_SWEEP = (0.02, 0.05, 0.1, 0.5, 1.0, 2.0, 5.0)
T_SWEEP = (2, 5, 10, 20, 30, 40, 45)
_MC = {"quick": 20_000, "standard": 100_000, "full": 400_000}
_DEPTH_V000 = {"quick": 7, "standard": 9, "full": 10}
_REPS = {"quick": 2, "standard": 5, "full": 10}


def _row(id, paper, statement, estimate, ci, bound, verdict, expected="holds", **extra):
    row = {"id": id, "paper": paper, "statement": statement, "estimate": float(estimate),
           "ci": [float(ci[0]), float(ci[1])], "bound": float(bound), "verdict": verdict, "expected": expected}
    row.update(extra)
    return row


def _cp(k, n, alpha=1e-3):
    lo = stats.beta.ppf(alpha / 2, k, n - k + 1) if k > 0 else 0.0
    hi = stats.beta.ppf(1 - alpha / 2, k + 1, n - k) if k < n else 1.0
    return float(lo), float(hi)


def distributions(n: int, seed: int) -> dict[str, np.ndarray]:
    """Three sorted samples in [0, 1]: uniform, a clipped Gaussian and two tight clusters."""
    rng = np.random.default_rng(seed)
    return {
        "uniform": np.sort(rng.random(n)),
        "gaussian": np.sort(np.clip(rng.normal(0.5, 0.15, n), 0.0, 1.0)),
        "clustered": np.sort(np.clip(np.concatenate((rng.normal(0.2, 0.03, n // 2), rng.normal(0.8, 0.03, n - n // 2))),
                                     0.0, 1.0)),
    }


def median_tail(x: np.ndarray, eps: float, t: int) -> tuple[float, float, float]:
    """Exact ``P(min block <= t)`` of the Lebesgue median on sorted ``x`` in [0, 1],
    the centre span ``d`` (the share of the public grid's points in ``(x_(t+1), x_(N-t)]``, the
    counting-measure analogue of ``x_(N-t) - x_(t+1)``: Theorem 3's proof holds for any base
    measure of total mass ``R = 1``) and Theorem 3's bound on ``P(min block >= t)``.

    The smaller block has at most ``t`` records iff ``r <= x_(t+1)`` or ``r > x_(N-t)``
    (1-indexed), so the probability is ``F(x_(t+1)) + 1 - F(x_(N-t))``.
    """
    m = IntervalExponential(eps, (0.0, 1.0))
    n = x.size
    a, b = x[t], x[n - t - 1]
    p_small = float(m.cdf(a, x) + 1.0 - m.cdf(b, x))
    # the median is released on the public grid (reference.mechanisms.grid): the theorem's span is the base
    # measure of the centre (a, b], here the fraction of grid points in it (Lebesgue: b - a)
    inside = grid_searchsorted(np.array([a, b]), 0.0, 1.0, m.grid, "right")
    d = float(inside[1] - inside[0]) / (m.grid + 1)
    bound = d / (math.exp(-eps) + d * (1.0 - math.exp(-eps)))
    return p_small, d, bound


def theorem3(budget: str, seed: int):
    rows, curves = [], {}
    worst = (math.inf, None)  # smallest exact / bound - 1
    worst_cor = (-math.inf, None)
    for name, x in distributions(100, seed).items():
        for eps in EPS_SWEEP:
            for t in T_SWEEP:
                p_small, d, bound = median_tail(x, eps, t)
                slack = (1.0 - p_small) / bound - 1.0
                if slack < worst[0]:
                    worst = (slack, (name, eps, t, 1.0 - p_small, bound))
                gap = p_small - (1.0 - d)  # Corollary 3.1: P(med <= t) - P(random <= t) <= 0
                if gap > worst_cor[0]:
                    worst_cor = (gap, (name, eps, t, p_small, 1.0 - d))
                curves.setdefault((name, eps), []).append((t, 1.0 - p_small, bound))
    name, eps, t, p, bound = worst[1]
    n_cfg = 3 * len(EPS_SWEEP) * len(T_SWEEP)
    # the tightest configuration is the one with the smallest ratio of the exact probability to the bound
    rows.append(_row("v003-thm3/exact", V003, "Theorem 3: with the Lebesgue EM median, the smaller block holds at least "
                     "t records with probability >= d / (R e^-eps + d (1 - e^-eps))", p, (p, p), bound,
                     "holds" if worst[0] >= -1e-12 else "refuted", direction="lower", interval="exact",
                     why=f"computed exactly from the median's law over {n_cfg} configurations; at the tightest "
                         f"({name}, eps_s = {eps:g}, t = {t}) P = {p:.6g} {'≥' if p >= bound else '<'} the lower "
                         f"bound {bound:.6g}",
                     detail=f"exact over {n_cfg} configurations (3 distributions, N = 100, eps_s in {EPS_SWEEP}, "
                            f"t in {T_SWEEP}); tightest at {name}, eps_s = {eps:g}, t = {t}: P(min >= t+1) = {p:.4g} "
                            f"vs bound {bound:.4g}"))
    name, eps, t, p_med, p_rand = worst_cor[1]
    rows.append(_row("v003-cor3.1/exact", V003, "Corollary 3.1: P(N_c^med <= t) <= P(N_c^rand <= t)", p_med,
                     (p_med, p_med), p_rand, "holds" if worst_cor[0] <= 1e-12 else "refuted",
                     direction="upper", interval="exact",
                     why=f"computed exactly over {n_cfg} configurations; at the closest ({name}, eps_s = {eps:g}, "
                         f"t = {t}) P(N_c^med <= t) = {p_med:.4g} {'≤' if p_med <= p_rand else '>'} the upper bound "
                         f"P(N_c^rand <= t) = {p_rand:.4g}",
                     detail=f"exact over the same {n_cfg} configurations; closest at {name}, eps_s = {eps:g}, t = {t}"))
    # Monte Carlo confirmation of the exact law at a few configurations
    rng = np.random.default_rng(seed + 1)
    n_mc = _MC[budget]
    x = distributions(100, seed)["gaussian"]
    outside = []
    for eps, t in ((0.02, 10), (0.05, 30)):
        r = IntervalExponential(eps, (0.0, 1.0)).batch(x, n_mc, rng)
        below = np.searchsorted(x, r, side="left")  # records < r
        k = int(np.count_nonzero(np.minimum(below, x.size - below) <= t))
        p_small, _, bound = median_tail(x, eps, t)
        lo, hi = _cp(k, n_mc)
        ok = lo <= p_small <= hi
        outside.append(not ok)
        rows.append(_row(f"v003-thm3-mc@{eps:g},t={t}", V003, "Theorem 3 by sampling (gaussian data, N = 100)",
                         1.0 - k / n_mc, (1.0 - hi, 1.0 - lo), bound,
                         # a sampled frequency that disagrees with the exact law makes the row inconclusive
                         ("holds" if 1.0 - k / n_mc >= bound else ("refuted" if 1.0 - lo < bound else "inconclusive"))
                         if ok else "inconclusive", direction="lower", interval="99.9% Clopper-Pearson",
                         **({} if ok else {"why": "the sampled frequency disagrees with the exact law (the exact "
                                                  "value lies outside its interval), so this sample cannot judge "
                                                  "the bound"}),
                         detail=f"{n_mc:,} draws; the exact P(min >= t+1) = {1 - p_small:.4g} "
                                f"{'lies' if ok else 'does NOT lie'} in the 99.9% Clopper-Pearson interval"))
    return rows, curves


def theorem1_v003(budget: str, seed: int):
    """Single-split regression bound with the conditional expectation in closed form."""
    rng = np.random.default_rng(seed + 2)
    n, b, eps_s, eps_l, t = 100, 1.0, 1.0, 1.0, 10
    x = np.sort(rng.random(n))
    y = np.clip(np.where(x < 0.5, 0.5, -0.5) + rng.normal(0, 0.3, n), -b, b)
    def sse(v):
        return float(np.sum((v - v.mean()) ** 2)) if v.size else 0.0
    exact = sse(y[: n // 2]) + sse(y[n // 2:])
    bound = 4 * b * b * n - 8 * b * b * t + 16 * b * b / (eps_l ** 2 * t)
    r = IntervalExponential(eps_s, (0.0, 1.0)).batch(x, _MC[budget] // 10, rng)
    k = np.searchsorted(x, r, side="left")
    worst, held = -math.inf, 0
    for kk in np.unique(k):
        if min(kk, n - kk) <= t:
            continue
        e = sse(y[:kk]) + sse(y[kk:]) + 8 * b * b / (kk * eps_l ** 2) + 8 * b * b / ((n - kk) * eps_l ** 2)
        worst = max(worst, e - exact)
    zeta = float(np.mean(np.minimum(k, n - k) <= t))
    held = worst <= bound
    return [_row("v003-thm1/exact-conditional", V003, "Theorem 1: E[SSE~] - SSE <= 4B^2 N - 8B^2 t + 16B^2/(eps_l^2 t) "
                 "when the smaller block exceeds t", worst, (worst, worst), bound, "holds" if held else "refuted",
                 direction="upper", interval="exact",
                 detail=f"N = {n}, B = 1, eps_s = eps_l = 1, t = {t}: largest conditional excess over every split "
                        f"drawn; the event min block <= t had frequency zeta_t = {zeta:.4g}")]


def flip_probability(budget: str, seed: int):
    """V003 Theorem 2's flip probability ``(eps k / 4 + 1/2) e^(-eps k)`` by Monte Carlo."""
    rng = np.random.default_rng(seed + 3)
    n = _MC[budget] * 5
    rows = []
    for n0, n1, eps in ((0, 1, 1.0), (0, 1, 0.2), (1, 3, 0.5), (2, 10, 0.3)):
        a = np.maximum(0.0, n0 + rng.laplace(0, 1 / eps, n))
        c = np.maximum(0.0, n1 + rng.laplace(0, 1 / eps, n))
        flips = (a > c) | ((a == c) & (rng.random(n) < 0.5))
        k = int(flips.sum())
        kk = n1 - n0
        formula = (eps * kk / 4 + 0.5) * math.exp(-eps * kk)
        lo, hi = _cp(k, n)
        rows.append(_row(f"v003-thm2-flip@n=({n0},{n1}),eps={eps:g}", V003, "Theorem 2 (proof, step 2): the "
                         "flip probability of clipped noisy counts is (eps k/4 + 1/2) e^(-eps k)", k / n, (lo, hi),
                         formula, "holds" if lo <= formula <= hi else "refuted", direction="equal",
                         interval="99.9% Clopper-Pearson",
                         detail=f"{n:,} draws with the clip at 0 and a coin on ties; 99.9% Clopper-Pearson interval"))
    return rows


def _index_tree_leaves(x, lo, hi, depth, eps, rng, out):
    if depth == 0:
        out.append(x.size)
        return
    r = IndexMedianV000(eps, (lo, hi)).sample(x, rng)
    _index_tree_leaves(x[x < r], lo, r, depth - 1, eps, rng, out)
    _index_tree_leaves(x[x >= r], r, hi, depth - 1, eps, rng, out)


def v000_tail_bound(t, eps, d):
    gamma = 8 * (1 - 2.0 ** (-2 * d)) / 3
    beta = math.sqrt(0.5 * (math.sqrt(1 - 2 / math.e) + 1))
    cheb = gamma / (eps ** 2 * t ** 2)
    sub = max(2 * math.exp(-eps ** 2 * t ** 2 / (4 * gamma)), 2 * math.exp(-eps * beta * t / 2))
    return min(cheb, sub)


def theorem2_v000(budget: str, seed: int):
    rng = np.random.default_rng(seed + 4)
    d, m, trees = _DEPTH_V000[budget], 50, 20
    rows, curves = [], {}
    for eps in (0.25, 1.0):
        counts = []
        for _ in range(trees):
            x = np.sort(rng.random(2 ** d * m))
            _index_tree_leaves(x, 0.0, 1.0, d, eps, rng, counts)
        dev = np.abs(np.asarray(counts) - m)
        ts = np.arange(1, 41)
        emp = np.array([np.mean(dev >= t) for t in ts])
        bnd = np.array([v000_tail_bound(t, eps, d) for t in ts])
        curves[eps] = (ts, emp, bnd)
        # the t where the bound is tightest, among those where it says something (bound < 1)
        i = int(np.argmax(np.where((emp > 0) & (bnd < 1), emp / bnd, -np.inf)))
        k, n = int(np.sum(dev >= ts[i])), dev.size
        lo, hi = _cp(k, n)
        verdict = "holds" if np.all(emp <= bnd) else ("refuted" if lo > bnd[i] else "inconclusive")
        rows.append(_row(f"v000-thm2-tail@eps1={eps:g}", V000, "Theorem 2: P(|N_i - N/2^d| >= t) <= min(gamma/(eps^2 t^2), "
                         "max(2e^(-eps^2 t^2/(4 gamma)), 2e^(-eps beta t/2)))", emp[i], (lo, hi), bnd[i], verdict,
                         direction="upper", interval="99.9% Clopper-Pearson",
                         detail=f"index median at every node, d = {d}, m = {m} records per leaf, {trees} trees "
                                f"({n} leaves, dependent within a tree); closest at t = {ts[i]}"))
    return rows, curves


def theorem1_v000(seed: int):
    rng = np.random.default_rng(seed + 5)
    worst = -math.inf
    for _ in range(2000):
        mm = int(rng.integers(4, 201))
        y = rng.choice([-1.0, 1.0], mm) * rng.random(mm) ** 0.3
        delta = int(rng.integers(1, mm))
        keep = rng.permutation(mm)[delta:]
        lhs = abs(mm * y.var() - (mm - delta) * y[keep].var())
        worst = max(worst, lhs - 4 * delta)
    rows = [_row("v000-thm1-nested", V000, "Theorem 1's algebra (proof A.2.1) for nested leaves: |M var(A) - (M - delta) "
                 "var(B)| <= 4 B^2 delta", worst, (worst, worst), 0.0, "holds" if worst <= 1e-9 else "refuted",
                 direction="upper", interval="exact",
                 why=f"exact algebra on 2000 random leaves: the largest excess of the left side over 4 B^2 delta is "
                     f"{worst:.4g} {'≤' if worst <= 1e-9 else '>'} the upper bound 0 (the bound is 0 because the row "
                     "measures the excess over the theorem's right side; a positive excess on any leaf would refute it)",
                 detail="largest excess over 2000 random leaves (M in 4..200, B = 1) with delta random records removed")]
    b = 1.0
    y = np.zeros(16)
    y[8], y[9] = b, -b  # y_9 = B, y_10 = -B (1-indexed)
    exact_leaf2 = y[4:8]  # x = 5..8
    noisy_leaf2 = y[6:10]  # x = 7..10: the first split sends 10 left, the left child splits 6 | 4
    obj_exact = float(np.sum((exact_leaf2 - exact_leaf2.mean()) ** 2))
    obj_noisy = float(np.sum((noisy_leaf2 - noisy_leaf2.mean()) ** 2))
    t = abs(noisy_leaf2.size - 16 / 4)
    diff = abs(obj_noisy - obj_exact)
    rows.append(_row("v000-thm1-statement", V000, "Theorem 1 as stated: |Ñ_i - N/2^d| <= t implies "
                     "|Obj^i_MedianNoise - Obj^i_NoNoise| <= 4B^2 t", diff, (diff, diff), 4 * b * b * t,
                     "holds" if diff <= 4 * b * b * t else "refuted", expected="refuted", direction="upper",
                     interval="exact",
                     why=f"on the counterexample, leaf 2 holds exactly N/4 records, so t = 0 and the theorem allows "
                         f"no change (upper bound 4B^2 t = 0), yet its objective moves by {diff:g} B^2 > 0",
                     detail="counterexample: x_i = i, N = 16, d = 2, splits 10 | 6 then 6 | 4 (each of "
                            "positive probability under the private median); y = 0 except y_9 = B, y_10 = -B; leaf 2 "
                            f"has exactly N/4 records (t = 0) yet its objective moves by {diff:g} B^2"))
    return rows


# --------------------------------------------------------------------------- figures
def split_fractions(tree, X) -> list[float]:
    """|D_L| / |D| at every node of a tree that receives records of ``X``."""
    out = []

    def walk(node, idx):
        if node.is_leaf or idx.size == 0:
            return
        x = X[idx, node.feature]
        left = np.isin(x, node.left_categories) if node.categorical else x < node.threshold
        out.append(float(left.mean()))
        walk(node.left, idx[left])
        walk(node.right, idx[~left])

    walk(tree, np.arange(X.shape[0]))
    return out


def _public_bounds(X):
    return [(float(lo), float(hi)) for lo, hi in zip(X.min(axis=0), X.max(axis=0))]


def occupancy(seed: int):
    """V000 Figure 1 / V003 Figure 4: split fractions, DiPriMe against DP-ERT (breast cancer data)."""
    from sklearn.datasets import load_breast_cancer

    from reference.baselines.dp_ert import DPExtraTreesClassifier
    from reference.diprime import DiPriMeForestClassifier

    X, y = load_breast_cancer(return_X_y=True)
    common = dict(epsilon=10.0, n_estimators=20, max_depth=5, bounds=_public_bounds(X), classes=[0, 1],
                  partition=False, random_state=seed)
    dp = DiPriMeForestClassifier(variant="base", **common).fit(X, y)
    ert = DPExtraTreesClassifier(**common).fit(X, y)
    return {"DiPriMe": [f for t in dp.estimators_ for f in split_fractions(t, X)],
            "DP-ERT": [f for t in ert.estimators_ for f in split_fractions(t, X)]}


def error_vs_epsilon(budget: str, seed: int):
    """Test error of the variants, DP-ERT and the non-private references against epsilon."""
    from sklearn.datasets import load_breast_cancer, load_diabetes, make_classification
    from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
    from sklearn.model_selection import train_test_split

    from reference.baselines.dp_ert import DPExtraTreesClassifier, DPExtraTreesRegressor
    from reference.baselines.median_forest import MedianForestClassifier, MedianForestRegressor
    from reference.diprime import DiPriMeForestClassifier, DiPriMeForestRegressor

    Xd, yd = load_diabetes(return_X_y=True)
    yd = (yd - yd.min()) / (yd.max() - yd.min())
    Xb, yb = load_breast_cancer(return_X_y=True)
    Xg, yg = make_classification(2000, 8, n_informative=4, random_state=seed)
    sets = {"diabetes (MSE)": (Xd, yd, True), "breast cancer (error)": (Xb, yb, False),
            "generated (error)": (Xg, yg, False)}
    epsilons = (0.5, 1.0, 2.0, 5.0, 10.0)
    out = {}
    for name, (X, y, reg) in sets.items():
        res = {}
        for rep in range(_REPS[budget]):
            Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.1, random_state=seed + rep)
            pub = dict(bounds=_public_bounds(X), **({"target_bounds": (0.0, 1.0)} if reg else {"classes": [0, 1]}))
            err = (lambda p: float(np.mean((p - yte) ** 2))) if reg else (lambda p: float(np.mean(p != yte)))
            for eps in epsilons:
                for label, make in (
                        ("DiPriMe", lambda: (DiPriMeForestRegressor if reg else DiPriMeForestClassifier)(variant="base")),
                        ("DiPriMeExp", lambda: (DiPriMeForestRegressor if reg else DiPriMeForestClassifier)(variant="exp")),
                        ("DiPriMeFlip", lambda: (DiPriMeForestRegressor if reg else DiPriMeForestClassifier)(variant="flip")),
                        ("DP-ERT", lambda: (DPExtraTreesRegressor if reg else DPExtraTreesClassifier)())):
                    m = make().set_params(epsilon=eps, n_estimators=10, max_depth=3, random_state=seed + rep, **pub)
                    res.setdefault(label, {}).setdefault(eps, []).append(err(m.fit(Xtr, ytr).predict(Xte)))
            for label, m in (("median forest", (MedianForestRegressor if reg else MedianForestClassifier)(
                                 n_estimators=10, max_depth=5, random_state=seed + rep, **pub)),
                             ("random forest", (RandomForestRegressor if reg else RandomForestClassifier)(
                                 n_estimators=10, max_depth=5, random_state=seed + rep))):
                res.setdefault(label, []).append(err(m.fit(Xtr, ytr).predict(Xte)))
        out[name] = res
    return epsilons, out


def _draw(fn, caption: str):
    """A report figure from ``fn(plt) -> Figure``, with its caption (what its error bars are)."""
    def draw(path):
        fig = fn(pyplot())
        legend_below(fig, ncol=getattr(fig, "legend_columns", 2))
        save(fig, path)

    return captioned(draw, caption)


def add_to(report, budget: str, seed: int) -> None:
    """Append the theorem rows and figures of this paper to ``report``."""
    rows3, curves3 = theorem3(budget, seed)
    report.theorems += rows3
    report.theorems += theorem1_v003(budget, seed)
    report.theorems += flip_probability(budget, seed)
    rows_t, curves_t = theorem2_v000(budget, seed)
    report.theorems += rows_t
    report.theorems += theorem1_v000(seed)
    occ = occupancy(seed)
    epsilons, errors = error_vs_epsilon(budget, seed)
    report.notes.append("Figures use public bounds taken from each whole dataset (as the authors' code does): "
                        "fine for a utility comparison, not a privacy claim. Error-vs-epsilon: 10 trees, depth 3, "
                        f"K = 5, rho = 1/2, {_REPS[budget]} random 90/10 splits; DP-ERT puts all of epsilon on its "
                        "leaves.")

    def fig_occ(plt):
        fig, ax = plt.subplots(figsize=(6, 3.5))
        for label, f in occ.items():
            ax.hist(f, bins=20, range=(0, 1), alpha=0.55, label=f"{label} ({len(f)} nodes)", density=True)
        ax.set_xlabel("|D_L| / |D| at a node")
        ax.set_ylabel("density")
        ax.set_title("Split balance, breast cancer, 20 trees, depth 5, eps = 10", fontsize=9)
        return fig

    def fig_thm3(plt):
        fig, axes = plt.subplots(1, 3, figsize=(11, 3.4), sharey=True)
        for ax, name in zip(axes, ("uniform", "gaussian", "clustered")):
            for k, eps in enumerate((0.02, 0.1, 0.5)):
                pts = np.array(curves3[(name, eps)])
                ax.plot(pts[:, 0], pts[:, 1], "o-", color=f"C{k}", label=f"exact, eps_s={eps:g}")
                ax.plot(pts[:, 0], pts[:, 2], "--", color=f"C{k}", label=f"Theorem 3 lower bound, eps_s={eps:g}")
            ax.set_title(f"{name}, N = 100", fontsize=9)
            ax.set_xlabel("t (records)")
            integer_ticks(ax.xaxis)
        axes[0].set_ylabel("P(smaller block > t)")
        fig.suptitle("V003 Theorem 3: the exact probability against its lower bound", fontsize=9)
        fig.legend_columns = 3
        return fig

    def fig_tail(plt):
        fig, ax = plt.subplots(figsize=(6, 3.5))
        floor = 1.5e-4
        for k, (eps, (ts, emp, bnd)) in enumerate(curves_t.items()):
            seen = emp > 0
            ax.semilogy(ts[seen], emp[seen], "o", ms=3, color=f"C{k}", label=f"empirical, eps_1={eps:g}")
            if not seen.all():  # a frequency of 0 has no place on a log axis: a mark at the floor instead
                ax.semilogy(ts[~seen], np.full((~seen).sum(), floor), "v", ms=4, mfc="white", color=f"C{k}",
                            label=f"empirical 0 (drawn at the floor), eps_1={eps:g}")
            ax.semilogy(ts, bnd, "-", color=f"C{k}", label=f"Theorem 2 upper bound, eps_1={eps:g}")
        ax.set_xlabel("t (records)")
        integer_ticks(ax.xaxis)
        ax.set_ylabel("P(|N_i - N/2^d| >= t)")
        ax.set_ylim(1e-4, 2)
        ax.set_title("V000 Figure 2: leaf occupancy tail (index median)", fontsize=9)
        return fig

    def fig_err(plt):
        fig, axes = plt.subplots(1, len(errors), figsize=(4 * len(errors), 3.4))
        for ax, (name, res) in zip(np.atleast_1d(axes), errors.items()):
            for k, (label, vals) in enumerate(res.items()):
                if isinstance(vals, dict):
                    ax.plot(epsilons, [np.mean(vals[e]) for e in epsilons], "o-", color=f"C{k}", label=label)
                else:
                    ax.axhline(np.mean(vals), ls="--", color=f"C{k}", label=label)
            ax.set_xscale("log")
            ax.set_xlabel("epsilon")
            ax.set_title(name, fontsize=9)
        np.atleast_1d(axes)[0].set_ylabel("test error (MSE for diabetes)")
        fig.suptitle("Test error against epsilon: the DiPriMe variants, DP-ERT and non-private forests", fontsize=9)
        fig.legend_columns = 3
        return fig

    reps = _REPS[budget]
    report.figures += [
        ("leaf_occupancy", _draw(fig_occ, "Histograms (density) of the split balance |D_L| / |D| over every node "
                                          "of one fit of each method; no error bars.")),
        ("thm3_exact_vs_bound", _draw(fig_thm3, "Exact probabilities from the private median's law on its grid "
                                                "(no sampling, so no error bars) beside Theorem 3's lower bound "
                                                "(dashed).")),
        ("v000_leaf_tail", _draw(fig_tail, "Points: the frequency over the leaves of 20 sampled trees (no error "
                                           "bars; the leaves of one tree are dependent); open triangles: a "
                                           "frequency of 0, drawn at the bottom of the log axis; lines: Theorem "
                                           "2's upper bound.")),
        ("error_vs_epsilon", _draw(fig_err, f"Points: mean test error (MSE for diabetes) over {reps} random 90/10 "
                                            "splits; no error bars drawn. Dashed lines: non-private forests' "
                                            "means over the same splits.")),
    ]
