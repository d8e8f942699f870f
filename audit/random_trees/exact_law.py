"""The exact law of a random decision forest's release on tiny inputs (issue 29).

:class:`reference.random_trees.RandomDecisionForestClassifier`'s ``release()`` (every tree's
structure and leaf values ``theta``, rounded to 6 decimals) written a second time, as a law composed
from the noise's own law, independently of the sampling code (Bojarski et al., Algorithm 2).

Composition
-----------
* **Structure** (Algorithm 2, "Random forest construction"): every inner node draws an attribute
  uniformly and a threshold uniformly in the attribute's public range, without reading the data.
  On a domain whose records take values on a public grid, two thresholds in the same *gap* between
  consecutive grid values route every dataset of the domain alike, so a tree's structure is
  enumerated by *structure classes* (an attribute and a gap per inner node) with probability
  ``prod (1/m) (gap length / range)``. The structure's law is the same for every dataset, so it
  cancels in every likelihood ratio; the loss of a pair is the worst over the classes of positive
  probability. A record goes right iff ``x_a > threshold`` (the routing is written here again).
* **Leaves** (Algorithm 2, "Training"): every count of every leaf gets independent two-sided
  geometric noise ``P(n = c + z) = (1 - a)/(1 + a) a^|z|`` with ``a = exp(-rate)``, ``rate`` the
  one :class:`reference.mechanisms.TwoSidedGeometric` samples with (``1 / scale``, the scale rounded
  up to a rational). ``invalid_rule="paper"``: a leaf whose noisy counts hold a negative one or are
  all zero is *invalid*; ``"clamp"``: negatives are set to 0 first and only all zeros are invalid.
  A valid leaf releases ``theta = n / sum(n)``: an *atom*, the same for every ``n`` on one ray
  ``{j t}``; an invalid leaf releases a uniform point of the simplex (a density, no atom).
  The invalid mass is closed-form: ``P(n_i >= 0) = 1 - a^(c_i + 1)/(1 + a)`` and
  ``P(n_i <= 0) = a^c_i / (1 + a)``.
* The trees are independent and identically distributed, and a tree's leaves are independent
  given its structure, so a release's log-likelihood ratio is a sum over trees and leaves.

Exactness
---------
*Upper end* (analytic, no truncation): every noisy count vector ``n`` has
``P_c(n) / P_c'(n) = a^(|n - c|_1 - |n - c'|_1)`` within ``a^(+-|c - c'|_1)``, so every atom and the
invalid mass (sums over sets of ``n``) keep that ratio: one leaf loses at most ``rate |c - c'|_1``.
*Lower end*: the atoms of ``n`` in ``[0, Hmax]^C`` are enumerated (``P(n_i > Hmax) <= TAIL``);
each release value's probability lies in ``[E, E + T + rho]`` where ``E`` is the enumerated mass of
the atoms that round to it, ``T`` the valid mass left out, and ``rho = 1.01e-6 * P(invalid)`` bounds
what the rounded uniform adds to one 6-decimal value. The uniform part's generic values give the
invalid mass ratio. The 6-decimal rounding of ``theta`` and of the thresholds is post-processing, so
the analytic upper end holds for the release as it runs, and the lower end is computed on the
rounded values themselves.

Limits
------
Two classes (the paper's setting; the uniform rounding bound ``rho`` is for ``theta`` on a segment),
at most :data:`MAX_STRUCTURES` structure classes per tree, ``private=True`` (Algorithm 1 releases
exact ratios: infinite loss whenever a leaf's ratio moves). The voting rule is not in the release
(predictions on public points are post-processing), so one law covers all three rules.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

# the leaf's law and the grid's gaps are shared with DiPriMe: they live in the engine
from audit.engine.exact_law.count_leaf_law import TAIL, UNIFORM_ON_ONE_VALUE, LeafLaw, grid_gaps as _gaps, leaf_cutoff, leaf_law
from audit.engine.exact_law.loss_histogram import PROFILE_STEP, LossHistogram as _Hist
from reference.mechanisms import TwoSidedGeometric
from reference.random_trees import RandomDecisionForestClassifier

#: most structure classes enumerated for one tree
MAX_STRUCTURES = 200_000

__all__ = ["LeafLaw", "leaf_law", "structure_classes", "leaf_of", "PairLoss", "pair_loss", "TAIL", "MAX_STRUCTURES",
           "PROFILE_STEP", "UNIFORM_ON_ONE_VALUE"]


@lru_cache(maxsize=4096)
def _leaf_bounds(c0: tuple, c1: tuple, rate: float, rule: str) -> tuple:
    """``(up, up_lower, up_value, down, down_lower, down_value)`` for one leaf: the analytic upper end
    and a rigorous lower end of ``max_theta ln(P0/P1)`` (up) and of ``max_theta ln(P1/P0)`` (down)."""
    d = sum(abs(x - y) for x, y in zip(c0, c1))
    if d == 0:
        return 0.0, 0.0, None, 0.0, 0.0, None
    bound = d * rate
    hmax = leaf_cutoff(c0 + c1, rate)
    l0, l1 = leaf_law(c0, rate, rule, hmax), leaf_law(c1, rate, rule, hmax)
    out = []
    for a, b in ((l0, l1), (l1, l0)):
        best, arg = -math.inf, None
        for v, e in a.atoms.items():
            den = b.upper(v)
            if e > 0 and den > 0:
                r = math.log(e / den)
                if r > best:
                    best, arg = r, v
        lo_u, hi_u = UNIFORM_ON_ONE_VALUE
        if a.invalid > 0:  # a generic value of the uniform draw (no atom rounds to it)
            r = math.log(lo_u * a.invalid / (hi_u * b.invalid + b.tail))
            if r > best:
                best, arg = r, "uniform"
        out += [bound, min(best, bound), arg]
    return tuple(out)


# ------------------------------------------------------------------ structures
def structure_classes(bounds, grid, max_depth: int) -> list[tuple[tuple, float]]:
    """Every structure class of one tree: ``(((attribute, threshold), ...) in heap order, probability)``."""
    m = len(bounds)
    options = [(j, t, q / m) for j in range(m) for t, q in _gaps(bounds[j][0], bounds[j][1], grid[j])]
    n_inner = 2 ** max_depth - 1
    if len(options) ** n_inner > MAX_STRUCTURES:
        raise ValueError(f"the random forest's exact law enumerates at most {MAX_STRUCTURES} structure classes "
                         f"per tree; max_depth={max_depth} with {len(options)} (attribute, gap) choices per node "
                         f"gives {len(options) ** n_inner}")
    out = []
    for combo in itertools.product(options, repeat=n_inner):
        out.append((tuple((j, t) for j, t, _ in combo), math.prod(q for _, _, q in combo)))
    return out


def leaf_of(x, nodes, max_depth: int) -> int:
    """The leaf (0 to ``2^max_depth - 1``, left to right) a record ``x`` reaches in the structure ``nodes`` (inner
    nodes ``(attribute, threshold)`` in heap order): right iff ``x[attribute] > threshold``."""
    v = 0
    for _ in range(max_depth):
        j, t = nodes[v]
        v = 2 * v + (2 if x[j] > t else 1)
    return v - (2 ** max_depth - 1)


def _counts(X, y_index, nodes, max_depth: int) -> list:
    c = [[0, 0] for _ in range(2 ** max_depth)]
    for x, k in zip(X, y_index):
        c[leaf_of(x, nodes, max_depth)][k] += 1
    return [tuple(v) for v in c]


# ------------------------------------------------------------------ the privacy profile
def _leaf_hist(c0: tuple, c1: tuple, rate: float, rule: str) -> _Hist:
    """The leaf's loss distribution under ``c0`` against ``c1`` on the unrounded release (rounding is
    post-processing): every ray (enumerated mass ``E0`` at loss ``ln(E0 / E1)``, ``E1`` a lower bound of
    its probability under ``c1``), the uniform draw (``ln(I0 / I1)``, exact), the rays left out (their mass
    at an infinite loss). A product outcome's term ``(P0 - e^eps P1)+`` only grows when ``P0`` is raised and
    ``P1`` lowered, so composing these upper measures bounds the true profile."""
    hmax = leaf_cutoff(c0 + c1, rate)
    a, b = leaf_law(c0, rate, rule, hmax), leaf_law(c1, rate, rule, hmax)
    e0 = np.array(list(a.rays.values()) + [a.invalid])
    e1 = np.array([b.rays.get(r, 0.0) for r in a.rays] + [b.invalid])
    inf = a.tail + float(e0[e1 <= 0].sum())
    keep = (e1 > 0) & (e0 > 0)
    loss = np.log(e0[keep] / e1[keep])
    return _Hist.of(e0[keep], loss, inf)


def _tree_hist(X0, y0, X1, y1, structures, h, rate, rule) -> _Hist:
    """One tree's loss distribution: the mixture over structure classes of the product over leaves."""
    out = _Hist(0, np.zeros(1))
    for nodes, w in structures:
        if w <= 0:
            continue
        hist = _Hist.point()
        for a, b in zip(_counts(X0, y0, nodes, h), _counts(X1, y1, nodes, h)):
            if a != b:
                hist = hist.compose(_leaf_hist(a, b, rate, rule))
        out = out.add(hist, w)
    return out


# ------------------------------------------------------------------ the loss of a pair
@dataclass(eq=False)
class PairLoss:
    """Exact loss of a pair as an interval, a release class that attains the upper end, and the inputs
    the privacy profile is computed from (on demand: :meth:`delta`)."""

    lower: float
    upper: float
    release: str
    n_estimators: int
    rate: float
    inputs: tuple = ()
    _profile: dict | None = None

    def delta(self, epsilon: float) -> float:
        """Upper bound on the forest's privacy profile ``delta(epsilon)`` (both directions), from the two
        exact laws: each tree's loss distribution (:func:`_leaf_hist`, mixed over structure classes) composed
        ``k`` times, losses rounded up to :data:`PROFILE_STEP`; 0 from the analytic upper end on, where the
        release is pure ``upper``-DP."""
        if epsilon >= self.upper:
            return 0.0
        if self._profile is None:
            X0, y0, X1, y1, structures, h, rule = self.inputs
            self._profile = {}
            for name, args in (("up", (X0, y0, X1, y1)), ("down", (X1, y1, X0, y0))):
                tree = _tree_hist(*args, structures, h, self.rate, rule)
                forest = _Hist.point()
                for _ in range(self.n_estimators):
                    forest = forest.compose(tree)
                self._profile[name] = forest
        return float(max(hist.delta(epsilon) for hist in self._profile.values()))


def forest_setup(params: dict, X, y, cls=RandomDecisionForestClassifier):
    """The public facts of a random decision forest of ``params`` on ``(X, y)`` that its exact law reads (the
    parameters validated by the estimator itself)."""
    est = cls(**params)
    k, h = est._validate_params()
    if not est.private:
        raise ValueError("the exact law covers private forests (Algorithm 2); private=False releases exact ratios")
    bounds = np.asarray(est.bounds, dtype=float)
    classes = list(est.classes)
    if len(classes) != 2:
        raise ValueError(f"the random forest's exact law covers two classes, got classes={classes!r}")
    X = np.asarray(X, dtype=float).reshape(-1, len(bounds))
    X = np.clip(X, bounds[:, 0], bounds[:, 1])
    y_index = [classes.index(v) for v in np.asarray(y).tolist()]
    rate = TwoSidedGeometric(1.0 / est._noise_scale(k), 1.0).noise_law.rate
    return k, h, bounds, X, y_index, rate, est.invalid_rule


def pair_loss(params: dict, d0, d1, grid=None, cls=RandomDecisionForestClassifier) -> PairLoss:
    """:class:`PairLoss` of ``d0 = (X0, y0)`` and ``d1 = (X1, y1)`` for the forest with ``params``.

    ``grid`` lists each feature's public values (default: the values present in the two datasets);
    the structure classes are the gaps between them. ``cls``: the estimator class whose ``_noise_scale``
    sets the noise (a seeded mutant may change it; everything else is the law above).
    """
    k, h, bounds, X0, y0, rate, rule = forest_setup(params, *d0, cls=cls)
    _, _, _, X1, y1, _, _ = forest_setup(params, *d1, cls=cls)
    if grid is None:
        grid = [sorted(set(X0[:, j].tolist()) | set(X1[:, j].tolist())) for j in range(len(bounds))]
    best = {"up": (-1.0, 0.0, None), "down": (-1.0, 0.0, None)}
    lowest = 0.0  # the largest lower end over the classes and directions
    structures = structure_classes(bounds.tolist(), grid, h)
    for nodes, w in structures:
        if w <= 0:
            continue
        c0, c1 = _counts(X0, y0, nodes, h), _counts(X1, y1, nodes, h)
        up = lo_up = down = lo_down = 0.0
        vals_up, vals_down = [], []
        for leaf, (a, b) in enumerate(zip(c0, c1)):
            u, lu, vu, dn, ld, vd = _leaf_bounds(a, b, rate, rule)
            up, lo_up, down, lo_down = up + u, lo_up + lu, down + dn, lo_down + ld
            if vu is not None:
                vals_up.append((leaf, vu))
                vals_down.append((leaf, vd))
        lowest = max(lowest, lo_up, lo_down)
        for name, hi, lo, vals in (("up", up, lo_up, vals_up), ("down", down, lo_down, vals_down)):
            if hi > best[name][0] or (hi == best[name][0] and lo > best[name][1]):
                best[name] = (hi, lo, (nodes, vals))
    name = max(best, key=lambda s: (best[s][0], best[s][1]))
    hi, lo, (nodes, vals) = best[name]
    lower = k * lowest
    side = "D" if name == "up" else "D'"
    release = (f"every tree: inner nodes {[(j, round(t, 6)) for j, t in nodes]}, "
               f"leaves {[(leaf, v) for leaf, v in vals]} (more likely under {side})")
    return PairLoss(lower, k * hi, release, k, rate, (X0, y0, X1, y1, structures, h, rule))
