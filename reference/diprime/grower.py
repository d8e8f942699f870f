"""Growing one DiPriMe median tree: budgets, candidate splits, attribute choice, leaves.

This is the body of V003 Algorithm 1 (FITTREE, FINDSPLIT, SPLITRANGE;
Consul and Williamson 2021) and V000 Algorithms 1 and 3
(Consul and Williamson 2020), as specified in spec/diprime.md section 1.7. The
estimators of :mod:`reference.diprime` validate their inputs and call
:class:`TreeGrower`; the baselines (:mod:`reference.baselines`) subclass it.

Conventions (spec section 1.7 and section 5):

* Root depth 0; every node above ``max_depth`` splits, even an empty one (the
  mechanisms are uniform on no data): nothing stops on the data (A13).
* A continuous split ``r`` sends ``x < r`` left; the children's ranges are
  ``[lo, r)`` and ``[r, hi]``; a feature whose child range has zero length is
  dropped there (A10). A categorical split sends the categories ``C`` left;
  a child with a single category drops the feature (V003 SPLITRANGE).
* Every mechanism call is charged to the ledger with the scope of the node's
  records: ``tree scope / split<path>=L|R`` (by value).

Nothing here stores a private count: ``TreeGrower`` keeps only what the
mechanisms released.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from reference.mechanisms.base import record_units, span_up
from reference.diprime.mechanisms import AuthorsFlipMedian, CountScaledLeafMean, IndexMedianV000
from reference.ledger import PrivacyLedger, Scope
from reference.tree import Node, route
from reference.mechanisms.grid import DEFAULT_GRID, effective_grid
from reference.mechanisms import ExponentialMechanism, IntervalExponential, Laplace, PermuteAndFlip, TwoSidedGeometric

__all__ = ["Node", "Budget", "TreeGrower", "budget", "route_leaves", "bipartitions", "FLIP_GRID",
           "MAX_CATEGORIES"]

#: public thresholds per node for the strict DiPriMeFlip median (spec A6)
FLIP_GRID = 32
#: largest category set a categorical feature may have (2^(m-1) - 1 candidate bipartitions, spec A9)
MAX_CATEGORIES = 12


@dataclass(frozen=True)
class Budget:
    """Per-call epsilons of one tree: median ``eps_s``, attribute ``eps_a``, leaves ``eps_l``."""

    eps_s: float
    eps_a: float
    eps_l: float
    n_candidates: int  # median candidates per node (1 for the uniform attribute of "base")


def budget(eps_tree: float, rho: float, max_depth: int, variant: str, version: str, accounting: str,
           max_features: int) -> Budget:
    """The per-call budgets of one tree (spec section 1.7, "budgets").

    Parameters
    ----------
    eps_tree : float
        The tree's epsilon (epsilon, or epsilon / n_estimators without partitioning;
        V000 Algorithm 2, V003 Algorithm 2).
    rho : float
        Share of ``eps_tree`` spent on splits.
    max_depth, variant, version, accounting, max_features : see the estimators.

    Returns
    -------
    Budget
        V003 section 4: base DiPriMe ``eps_s = rho eps / d_max`` (``eps_a = 0``);
        DiPriMeExp and DiPriMeFlip ``eps_s = eps_a = rho eps / (2 d_max)``; V000
        Algorithm 1, line 12: ``eps_1 = rho eps / (2 d_max)`` for both EMs.
        ``eps_l = (1 - rho) eps``. Strict accounting divides ``eps_s`` by the
        number of candidate attributes ``K`` (spec A3): the K medians all read
        the node's records and the chosen attribute depends on all of them.
    """
    eps_l = (1.0 - rho) * eps_tree
    if variant == "base":
        return Budget(rho * eps_tree / max_depth, 0.0, eps_l, 1)
    eps_s = eps_a = rho * eps_tree / (2.0 * max_depth)
    if accounting == "strict":
        eps_s /= max_features
    return Budget(eps_s, eps_a, eps_l, max_features)


def bipartitions(m: int) -> np.ndarray:
    """Boolean matrix (2^(m-1) - 1, m): every unordered proper bipartition of m
    categories, as the set ``C`` sent left; category 0 always goes right (spec A9)."""
    codes = np.arange(1, 2 ** (m - 1))
    bits = (codes[:, None] >> np.arange(m - 1)[None, :]) & 1
    return np.hstack((np.zeros((codes.size, 1), dtype=bool), bits.astype(bool)))


def _sse(y: np.ndarray, n_classes: int) -> float:
    """Within-node sum of squared errors: of the targets (regression), of the
    one-hot labels (classification, ``N * Gini``; spec A4, A5)."""
    if y.size == 0:
        return 0.0
    if n_classes == 0:
        return float(np.sum((y - y.mean()) ** 2))
    counts = np.bincount(y, minlength=n_classes)
    return float(y.size - np.dot(counts, counts) / y.size)


@dataclass
class TreeGrower:
    """Grows one tree over records ``(X, y)`` and charges every mechanism call.

    Parameters
    ----------
    X : (n, m) float array, numerical features clipped to ``bounds``
    y : (n,) targets clipped to ``target_bounds`` (regression) or class indices
    bounds : dict feature -> (low, high) of every numerical feature
    categories : dict feature -> tuple of category values of every categorical feature
    n_classes : 0 for regression
    target_bounds : (B_L, B_U) for regression
    max_depth, max_features, variant, version, accounting : see the estimators
    budget : Budget
    ledger : PrivacyLedger
    scope : Scope of the tree's records
    tag : prefix of the tree's partition names in the ledger (unique per tree)
    rng : numpy Generator
    """

    X: np.ndarray
    y: np.ndarray
    bounds: dict
    categories: dict
    n_classes: int
    target_bounds: tuple
    max_depth: int
    max_features: int
    variant: str
    version: str
    accounting: str
    budget: Budget
    ledger: PrivacyLedger
    scope: Scope
    tag: str
    rng: np.random.Generator
    _bip: dict = field(default_factory=dict)
    _mechs: dict = field(default_factory=dict)

    def _mech(self, cls, *args):
        """One mechanism object per (class, parameters) and tree: constructing them is much of a tiny fit."""
        key = (cls, args)
        if key not in self._mechs:
            self._mechs[key] = cls(*args)
        return self._mechs[key]

    # ------------------------------------------------------------------ driver
    def grow(self) -> Node:
        ranges = {j: tuple(b) for j, b in self.bounds.items()}
        ranges.update({j: tuple(c) for j, c in self.categories.items()})
        return self._grow(np.arange(self.y.size), ranges, 0, "", self.scope)

    def _active(self, ranges) -> list[int]:
        return [j for j, r in sorted(ranges.items())
                if (len(r) >= 2 if j in self.categories else r[1] > r[0])]

    def _grow(self, idx, ranges, depth, path, scope) -> Node:
        active = self._active(ranges)
        if depth >= self.max_depth or not active:
            return self.leaf(idx, scope, path)
        j, split = self.find_split(idx, ranges, active, scope, path)
        node = Node(feature=j, categorical=j in self.categories)
        x = self.X[idx, j]
        left_r, right_r = dict(ranges), dict(ranges)
        if node.categorical:
            node.left_categories = tuple(split)
            go_left = np.isin(x, np.asarray(split, dtype=float))
            left_r[j] = tuple(split)
            right_r[j] = tuple(c for c in ranges[j] if c not in split)
        else:
            node.threshold = float(split)
            go_left = x < split
            left_r[j] = (ranges[j][0], float(split))
            right_r[j] = (float(split), ranges[j][1])
        part = f"{self.tag}split{path}"
        node.left = self._grow(idx[go_left], left_r, depth + 1, path + "L", scope.child(part, "L"))
        node.right = self._grow(idx[~go_left], right_r, depth + 1, path + "R", scope.child(part, "R"))
        return node

    # ------------------------------------------------------------------ FINDSPLIT
    def find_split(self, idx, ranges, active, scope, path):
        """V003 Algorithm 1, FINDSPLIT: candidate medians for ``min(K, |A|)``
        random attributes, then the attribute by ``M_a``. Base DiPriMe draws its
        one attribute uniformly first (the same law as choosing uniformly among
        K candidates) and computes only its median."""
        note = f"{self.tag}node{path or '(root)'}"
        if self.variant == "base":
            cand = [active[int(self.rng.integers(len(active)))]]
        else:
            k = min(self.max_features, len(active))
            cand = [active[i] for i in np.sort(self.rng.choice(len(active), size=k, replace=False))]
        splits = [self.candidate(idx, j, ranges[j], scope, note) for j in cand]
        if len(cand) == 1 and self.variant == "base":
            return cand[0], splits[0]
        choice = self.choose_attribute(idx, cand, splits, scope, note)
        return cand[choice], splits[choice]

    def _charge(self, component, mechanism, eps, scope, note, sensitivity=1.0, delta=0.0):
        self.ledger.charge(component, mechanism, eps, scope=scope, sensitivity=sensitivity, delta=delta, note=note)

    def candidate(self, idx, j, rng_j, scope, note):
        """One attribute's private median split (V003 section 3.1; V000 Algorithm 3)."""
        eps = self.budget.eps_s
        x = self.X[idx, j]
        flip = self.variant == "flip"
        if j in self.categories:
            cats = rng_j
            if len(cats) not in self._bip:
                self._bip[len(cats)] = bipartitions(len(cats))
            masks = self._bip[len(cats)]
            counts = np.array([np.count_nonzero(x == c) for c in cats], dtype=float)
            u = -np.abs(2.0 * (masks @ counts) - x.size)
            mech = self._mech(PermuteAndFlip if flip else ExponentialMechanism, eps)
            k = int(mech.batch(u, 1, self.rng)[0]) if flip else mech.sample(u, self.rng)
            # the exponential mechanism draws from float probabilities: its residual delta (reference.mechanisms.grid)
            self.ledger.charge("median", type(mech).__name__, eps, scope=scope,
                               delta=mech.residual_delta(len(masks)),
                               note=f"{note} feature {j} (categorical)")
            return tuple(c for c, m in zip(cats, masks[k]) if m)
        lo, hi = rng_j
        if self.version == "v000":
            mech = IndexMedianV000(eps, (lo, hi))
            self._charge("median", "IndexMedianV000", math.inf, scope,
                         f"{note} feature {j}: V000 index median, NOT DP")
            return mech.sample(x, self.rng)
        if flip and self.accounting == "paper":
            mech = AuthorsFlipMedian(eps, (lo, hi))
            self._charge("median", "AuthorsFlipMedian", math.inf, scope,
                         f"{note} feature {j}: PF with score 2ln|I|-|2i-N|, NOT DP")
            return mech.sample(x, self.rng)
        if flip:
            grid = lo + (hi - lo) * np.arange(1, FLIP_GRID + 1) / (FLIP_GRID + 1)
            below = np.searchsorted(np.sort(x), grid, side="left")
            u = -np.abs(2.0 * below - x.size)
            self._charge("median", "PermuteAndFlip", eps, scope, f"{note} feature {j}: PF on {FLIP_GRID} public thresholds",
                         delta=self._mech(PermuteAndFlip, eps).residual_delta(FLIP_GRID))
            return float(grid[int(self._mech(PermuteAndFlip, eps).batch(u, 1, self.rng)[0])])
        mech = self._mech(IntervalExponential, eps, (lo, hi), 1.0, effective_grid(DEFAULT_GRID, lo, hi))
        self.ledger.charge("median", "IntervalExponential", eps, scope=scope, delta=mech.residual_delta,
                           note=f"{note} feature {j}: on a public grid of {mech.grid} steps")
        return mech.sample(x, self.rng)

    def _split_sse(self, idx, j, split) -> float:
        x, y = self.X[idx, j], self.y[idx]
        left = np.isin(x, np.asarray(split, dtype=float)) if j in self.categories else x < split
        return _sse(y[left], self.n_classes) + _sse(y[~left], self.n_classes)

    def score_sensitivity(self) -> tuple[float, float]:
        """``(factor, Delta)``: the attribute score is ``-factor * SSE`` with sensitivity
        ``Delta`` (spec A4, A5): regression ``4 B^2``; classification, one-hot SSE with
        ``Delta = 2``, except the paper's binary 0/1 SSE (half the one-hot SSE) with ``Delta = 4``."""
        if self.n_classes == 0:
            b = max(abs(self.target_bounds[0]), abs(self.target_bounds[1]))
            return 1.0, 4.0 * b * b
        if self.n_classes == 2 and self.accounting == "paper":
            return 0.5, 4.0
        return 1.0, 2.0

    def choose_attribute(self, idx, cand, splits, scope, note) -> int:
        """``M_a``: EM (exp, v000) or PF (flip) with score ``-SSE``, sensitivity from
        :meth:`score_sensitivity` (V003 section 3.1; V000 section 3, Algorithm 3 line 52)."""
        factor, delta = self.score_sensitivity()
        u = np.array([-factor * self._split_sse(idx, j, s) for j, s in zip(cand, splits)])
        eps = self.budget.eps_a
        if self.variant == "flip":
            self._charge("attribute", "PermuteAndFlip", eps, scope, note, delta,
                         self._mech(PermuteAndFlip, eps, delta).residual_delta(len(cand)))
            return int(self._mech(PermuteAndFlip, eps, delta).batch(u, 1, self.rng)[0])
        mech = self._mech(ExponentialMechanism, eps, delta)
        # float probabilities drawn by inverse CDF over the K public candidates: residual delta (reference.mechanisms.grid)
        self._charge("attribute", "ExponentialMechanism", eps, scope, note, delta, mech.residual_delta(len(cand)))
        return mech.sample(u, self.rng)

    # ------------------------------------------------------------------ leaves
    def leaf(self, idx, scope, path) -> Node:
        """Leaf statistics with ``eps_l`` (V003 section 3; V000 section 3; spec A7)."""
        eps, y = self.budget.eps_l, self.y[idx]
        note = f"{self.tag}leaf{path or '(root)'}"
        if self.n_classes:
            # integer counts, integer noise: the exact two-sided geometric keeps them on Z (issue 17)
            counts = np.bincount(y, minlength=self.n_classes)
            noisy = np.maximum(self._mech(TwoSidedGeometric, eps, 1.0).sample(counts, self.rng), 0).astype(float)
            self._charge("leaf", "TwoSidedGeometric", eps, scope, f"{note}: class counts")
            total = noisy.sum()
            value = noisy / total if total > 0 else np.full(self.n_classes, 1.0 / self.n_classes)
            return Node(value=value)
        lo, hi = self.target_bounds
        if self.accounting == "paper":
            s = (hi - lo) if self.version == "v000" else 2.0 * max(abs(lo), abs(hi))
            self._charge("leaf", "CountScaledLeafMean", math.inf, scope,
                         f"{note}: Laplace scale S/(N eps) with the private N, NOT DP")
            return Node(value=CountScaledLeafMean(eps, (lo, hi), s).sample(y, self.rng))
        centre, half = (lo + hi) / 2.0, span_up(lo, hi) / 2.0
        # the centred sum on the lattice Laplace's public grid, the count with integer noise: both exact
        # lattice releases, so the leaf value below is post-processing of them (issue 17, Mironov 2012).
        # Each record is put in whole grid units (clamped to the charged sensitivity) and the units are summed
        # as integers, so neighbours' sums are at most the charged units apart (issue 26 finding 4)
        mech = self._mech(Laplace, eps / 2.0, half)
        units = int(record_units(y - centre, mech.grid, mech.grid_sensitivity).sum())
        noisy_sum = mech.sample(float(units) * mech.grid, self.rng)
        noisy_n = self._mech(TwoSidedGeometric, eps / 2.0, 1.0).sample(int(y.size), self.rng)
        self._charge("leaf", "Laplace", eps / 2.0, scope, f"{note}: centred sum", half)
        self._charge("leaf", "TwoSidedGeometric", eps / 2.0, scope, f"{note}: count")
        return Node(value=float(np.clip(centre + noisy_sum / max(noisy_n, 1.0), lo, hi)))


#: the routing of :mod:`reference.tree` under the name DiPriMe's modules used
route_leaves = route
