"""PHIST: the locally private partitioning (histogram) regression estimate on a regular grid.

Berrett, Györfi and Walk (2021), "Strongly universally consistent nonparametric
regression and classification with privatised data", EJS 15:2430-2453; the
baseline of LPDT (Ma et al. 2023 Tables 1-3; ``spec/lpdt.md``
section 7.1).

A cubic grid of ``n_bins`` equal bins per feature over the public ``bounds``
(no public data needed); every user privatises the location of their record
in the grid and their label; the estimate in cell ``j`` is
``sum_i Z_ij / sum_i W_ij``.

``randomizer="lpdt"`` (default) uses exactly the LPDT randomiser, mechanisms
(3)-(4) of the LPDT paper, on the grid: the comparison the issue asks for, in
which only the partition differs. ``randomizer="laplace"`` is Berrett et al.'s
own mechanism: ``Z_ij = y 1{x in A_j} + Lap(4A/epsilon)`` and ``W_ij = 1{x in
A_j} + Lap(4/epsilon)`` per cell, with ``A = max(|low|, |high|)`` of the public
``target_bounds``: the ``Z`` vector's L1 sensitivity is ``|y| + |y'| <= 2A``
(not the label range unless the labels are centred, spec 9 D4) and ``W``'s is
2, half of epsilon each. Noise is drawn per user and cell (exact in law), in
chunks of users.

A cell whose denominator is not positive predicts the midpoint of
``target_bounds`` (public); leaf values are clipped to ``target_bounds``.
"""
from __future__ import annotations

from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin

from reference.randomness import PublishSafeMixin, fit_rng
from reference.validation import EDGE_CELL, warn_outside_bounds, warn_outside_target_bounds
from reference.validation import check_positive_finite, check_X, check_y, facts_by_index
from reference.validation import shown
from reference.ledger import PrivacyLedger, Scope
from reference.lpdt.learner import PartitionPredictorMixin, as_y, check_bounds, leaf_estimates
from reference.lpdt.partition import GridPartition
from reference.lpdt.randomizer import CHUNK, LPDTRandomizer, check_target_bounds
from reference.mechanisms import Laplace, TwoSidedGeometric, default_grid

__all__ = ["PHISTRegressor"]

#: the largest grid allowed (the companion code skips d ln(n_bins) > 30 ln 2; we stop earlier, memory per chunk)
MAX_CELLS = 2 ** 16


class PHISTRegressor(PublishSafeMixin, PartitionPredictorMixin, RegressorMixin, BaseEstimator):
    """Locally private histogram regression on a regular grid (PHIST).

    Parameters
    ----------
    epsilon : float
        Local privacy parameter of every user's report.
    n_bins : int, default 4
        Bins per feature; the grid has ``n_bins ** d`` cells.
    target_bounds : (float, float)
        Public label range; labels are clipped into it (how many is private and not kept).
    bounds : sequence of (low, high) per feature
        Public domain box.
    randomizer : {"lpdt", "laplace"}
    random_state : int, Generator or None
        Privacy first: the fit's noise comes from fresh OS entropy, whatever this holds, unless seeded fits are
        on (``reference.randomness.seeded_fits``, used by the auditor and reproductions): then an integer seeds
        the fit's stream and a Generator spawns its child (never drawn from or kept), and the seed is a secret key.
        The stream is discarded after fit; a fitted model's pickle drops ``random_state``.

    References
    ----------
    Berrett, Györfi, Walk (2021); spec/lpdt.md 7.1.
    """

    def __init__(self, epsilon=1.0, n_bins=4, target_bounds=None, bounds=None, randomizer="lpdt",
                 random_state=None):
        self.epsilon = epsilon
        self.n_bins = n_bins
        self.target_bounds = target_bounds
        self.bounds = bounds
        self.randomizer = randomizer
        self.random_state = random_state

    def fit(self, X, y):
        epsilon = check_positive_finite("epsilon", self.epsilon)
        if isinstance(self.n_bins, bool) or not isinstance(self.n_bins, Integral) or self.n_bins < 1:
            raise ValueError(f"n_bins must be an integer >= 1, got {shown(self.n_bins)}")
        if self.randomizer not in ("lpdt", "laplace"):
            raise ValueError(f"randomizer must be 'lpdt' or 'laplace', got {shown(self.randomizer)}")
        X = check_X(self, X, reset=True)  # names, counts, 2-D, finite
        y = as_y("y", check_y(self, y, numeric=True), X.shape[0])
        if isinstance(self.bounds, str):
            raise ValueError(f"bounds must be given as (low, high) pairs for PHIST (no public data), got {shown(self.bounds)}")
        bounds = check_bounds(facts_by_index(self, "bounds", self.bounds, X.shape[1], sequence=True), None, X.shape[1])
        tb = check_target_bounds(self.target_bounds)
        if int(self.n_bins) ** X.shape[1] > MAX_CELLS:
            raise ValueError(f"n_bins={self.n_bins} gives {int(self.n_bins) ** X.shape[1]} cells in {X.shape[1]} "
                             f"dimensions; at most {MAX_CELLS} are supported")
        rng = fit_rng(self.random_state, self)  # a fresh child stream, discarded with the fit (reference.randomness)
        self.n_features_in_ = X.shape[1]
        self.target_bounds_, self.bounds_ = tb, bounds
        self.partition_ = part = GridPartition(bounds, int(self.n_bins))
        warn_outside_bounds(self, X, bounds, EDGE_CELL)  # to the caller only: the counts are private
        warn_outside_target_bounds(self, y, tb)
        y_c = np.clip(y, *tb)  # how many labels were clipped is private: not kept
        leaves = part.apply(X)
        n = X.shape[0]
        ledger = PrivacyLedger("substitute")
        fallback = np.full(part.n_leaves, (tb[0] + tb[1]) / 2.0)
        if self.randomizer == "lpdt":
            r = LPDTRandomizer(epsilon, part, tb)
            ones, weighted, total = r.summarise(leaves, y_c, rng)
            D, N, c = ones - n * r.q, weighted - r.q * total, r.c
            ledger.charge("cell indicator, LPDT mechanism (4)", "BitRandomizedResponse", r.bits.epsilon,
                          scope=Scope.root(), sensitivity=2)
            ledger.charge("label, LPDT mechanism (3)", "Laplace", r.label.epsilon, scope=Scope.root(),
                          sensitivity=r.label.sensitivity)
        else:
            A = max(abs(tb[0]), abs(tb[1]))
            # Z on the lattice Laplace's grid: a substitution changes two cells by |y| + |y'| <= 2A in all,
            # and their rounding adds at most one grid unit, hence the sensitivity 2A + grid; W is integer,
            # with exact integer noise (issue 17, Mironov 2012)
            grid = default_grid(epsilon / 2, 2 * A)
            z_mech = Laplace(epsilon / 2, sensitivity=2 * A + grid, grid=grid)
            w_mech = TwoSidedGeometric(epsilon / 2, sensitivity=2.0)
            D, N, c = np.zeros(part.n_leaves), np.zeros(part.n_leaves), 1.0
            for start in range(0, n, CHUNK):
                stop = min(n, start + CHUNK)
                m = stop - start
                onehot = np.zeros((m, part.n_leaves), dtype=np.int64)
                onehot[np.arange(m), leaves[start:stop]] = 1
                N += z_mech.sample_each(onehot * y_c[start:stop, None], rng).sum(axis=0)
                D += w_mech.sample(onehot, rng).sum(axis=0)
            ledger.charge("Z = y 1{x in A_j} + Laplace, per cell", "Laplace", z_mech.epsilon, scope=Scope.root(),
                          sensitivity=2 * A + grid,
                          note=f"L1 sensitivity |y| + |y'| <= 2 max(|low|, |high|), plus one grid step {grid:g}")
            ledger.charge("W = 1{x in A_j} + geometric, per cell", "TwoSidedGeometric", w_mech.epsilon,
                          scope=Scope.root(), sensitivity=2.0)
        self.D_, self.N_ = D, N
        self.leaf_values_, self.guarded_ = leaf_estimates(D, N, n, c, fallback, clip_to=tb)
        self.privacy_ledger_ = ledger
        return self
