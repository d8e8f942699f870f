"""LPDT: locally private decision-tree regression with public data.

Ma, Zhang, Cai and Yang, "Decision Tree for Locally Private Estimation with
Public Data", NeurIPS 2023 (Ma et al. 2023; full method in
``spec/lpdt.md``).

Algorithm 1 (spec 3):

1. the curator grows a max-edge partition on the *public* data only
   (:func:`reference.lpdt.partition.grow_max_edge`);
2. it broadcasts the partition; every user runs the local randomiser
   (:class:`reference.lpdt.randomizer.LPDTRandomizer`, mechanisms (3) and (4))
   once, on their own side;
3. the curator sums the reports per leaf: ``D_j = sum_i U~_i^j`` and
   ``N_j = sum_i Y~_i U~_i^j``;
4. the leaf value is ``N_j / D_j`` (the debiasing factor ``c = 1 - 2q``
   cancels in the ratio), with the guard of spec 3.5 when the debiased count
   ``D_j / c`` is below ``min_ratio * n`` (by default: when ``D_j < 0``): the
   leaf's public mean. Leaf values are clipped to ``target_bounds``
   (post-processing, spec A3).

Privacy (Theorem 3.1): each user's report is epsilon-LDP for any partition;
everything the curator computes is post-processing, so the fitted tree is
epsilon-DP in the central view under substitution of one record as well.
The paper's accounting is right; the authors' code is not (spec 9):

* D1, fresh label noise per leaf: available as ``label_noise="per_leaf"``
  only to reproduce the flaw; its ledger shows ``(L + 1) epsilon / 2``;
* D2, the label range read from the private data: refused; ``target_bounds``
  is a public fact (or ``"public"``: the range of the public labels);
* D3, the global NumPy seed: we draw from a ``numpy.random.Generator`` seeded
  by ``random_state`` (``None``: OS entropy).

Not implemented here: the CART-rule variant LPDT-V and the hyperparameter
selection modes of spec 6.
"""
from __future__ import annotations

import warnings

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin

from reference.randomness import PublishSafeMixin, fit_rng
from reference.validation import EDGE_CELL, warn_outside_bounds, warn_outside_target_bounds
from reference.validation import (check_choice, check_fitted, check_int, check_positive_finite, check_probability, check_X,
                                  check_y, facts_by_index)
from reference.validation import shown
from reference.ledger import PrivacyLedger, Scope
from reference.lpdt.partition import TreePartition, grow_max_edge
from reference.lpdt.randomizer import LPDTRandomizer, PerLeafNoiseRandomizer, check_target_bounds

__all__ = ["LPDTRegressor", "PublicPartitionTreeRegressor", "leaf_estimates", "check_bounds", "check_public"]

DENOMINATOR_GUARDS = ("public_mean", "midpoint")
LABEL_NOISE = ("per_user", "per_leaf")


# --------------------------------------------------------------------------- validation
def check_bounds(bounds, X_pub: np.ndarray | None, d: int) -> np.ndarray:
    """The public domain box as a ``(d, 2)`` array; ``"public"`` takes it from the public features."""
    if bounds is None:
        raise ValueError("bounds is required: the public (low, high) range of every feature, or 'public' to "
                         "take it from the public data; it is never read from the private data")
    if isinstance(bounds, str):
        if bounds != "public":
            raise ValueError(f"bounds must be a sequence of (low, high) pairs or 'public', got {shown(bounds)}")
        low, high = X_pub.min(axis=0), X_pub.max(axis=0)
        pad = np.where(high > low, 0.01 * (high - low), 0.5)  # the code's 1% widening (spec 2)
        return np.column_stack((low - pad, high + pad))
    try:
        arr = np.asarray(bounds, dtype=float).reshape(-1, 2)
    except (TypeError, ValueError):
        raise ValueError(f"bounds must be a sequence of (low, high) pairs, got {shown(bounds)}") from None
    if arr.shape[0] != d:
        raise ValueError(f"bounds has {arr.shape[0]} ranges but X has {d} features")
    bad = np.flatnonzero(~(np.isfinite(arr).all(axis=1) & (arr[:, 0] < arr[:, 1])))
    if bad.size:
        raise ValueError(f"bounds[{bad[0]}] must be finite with low < high, got {shown(tuple(arr[bad[0]]))}")
    return arr


def _as_X(name: str, X) -> np.ndarray:
    X = np.asarray(X, dtype=float)
    if X.ndim == 1:
        X = X[:, None]
    if X.ndim != 2:  # no rows is valid for the private data (the public sample is checked apart)
        raise ValueError(f"{name} must be a 2-D array, got shape {X.shape}")
    if not np.all(np.isfinite(X)):
        i, j = np.argwhere(~np.isfinite(X))[0]
        raise ValueError(f"{name} must be finite, found {name}[{i}, {j}] = {shown(X[i, j])}")
    return X


def as_y(name: str, y, n: int) -> np.ndarray:
    """``y`` as a float vector of ``n`` labels (a ``ValueError`` naming ``name`` otherwise)."""
    y = np.asarray(y, dtype=float).ravel()
    if y.shape[0] != n:
        raise ValueError(f"{name} has {y.shape[0]} labels for {n} rows")
    if not np.all(np.isfinite(y)):
        raise ValueError(f"{name} must be finite, found {shown(y[~np.isfinite(y)][0])}")
    return y


def check_public(X_public, y_public, d: int | None = None):
    """Validate the public sample; an empty or missing one is an error naming it."""
    if X_public is None or y_public is None:
        raise ValueError("X_public and y_public are required: LPDT grows its partition on public data "
                         "(pass them to fit or as public_data=(X_public, y_public))")
    if np.asarray(X_public).size == 0:
        raise ValueError("X_public is empty: LPDT needs at least one public point to grow its partition")
    Xp = _as_X("X_public", X_public)
    yp = as_y("y_public", y_public, Xp.shape[0])
    if d is not None and Xp.shape[1] != d:
        raise ValueError(f"X_public has {Xp.shape[1]} features but X has {d}")
    return Xp, yp






# --------------------------------------------------------------------------- the estimator of step 5
def leaf_estimates(D: np.ndarray, N: np.ndarray, n: int, c: float, fallback: np.ndarray, *,
                   min_ratio: float = 0.0, clip_to=None) -> tuple[np.ndarray, np.ndarray]:
    """Leaf values ``N_j / D_j`` with the denominator guard of spec 3.5.

    Parameters
    ----------
    D, N : ndarray (L,)
        Debiased-shift sums ``sum_i U~_i^j`` and ``sum_i Y~_i U~_i^j``.
    n : int
        Number of users.
    c : float
        ``1 - 2q``: ``D_j / c`` estimates the leaf's user count.
    fallback : ndarray (L,)
        Value of a guarded leaf (public information only).
    min_ratio : float
        A leaf is guarded when ``D_j / c < min_ratio * n`` (the code's
        ``min_ratio_pri_est``; 0 guards exactly the non-positive denominators).
    clip_to : (low, high) or None

    Returns
    -------
    values : ndarray (L,)
    guarded : bool ndarray (L,)
    """
    guarded = ~(D / c > min_ratio * n) if min_ratio > 0 else ~(D > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        values = np.where(guarded, fallback, N / np.where(guarded, 1.0, D))
    if clip_to is not None:
        values = np.clip(values, clip_to[0], clip_to[1])
    return values, guarded


# --------------------------------------------------------------------------- shared fitting steps
class PartitionPredictorMixin:
    """``predict`` and ``release`` of a fitted partition estimator (``partition_``, ``leaf_values_``)."""

    def predict(self, X):
        X = check_X(self, X, reset=False)  # NotFittedError; names, counts, 2-D, finite
        return self.leaf_values_[self.partition_.apply(X)]

    def release(self) -> tuple:
        """Everything the fitted model publishes: the public structure and the leaf values (6 decimals)."""
        check_fitted(self)
        return (type(self).__name__, self.partition_.structure(),
                tuple(round(float(v), 6) for v in self.leaf_values_))


class _PartitionRegressor(PublishSafeMixin, PartitionPredictorMixin, RegressorMixin, BaseEstimator):
    """Shared validation and public partition (prediction and release: :class:`PartitionPredictorMixin`)."""

    def _public_facts(self, X, y, X_public, y_public):
        X = check_X(self, X, reset=True)  # names, counts, 2-D, finite
        y = as_y("y", check_y(self, y, numeric=True), X.shape[0])
        if X_public is None and y_public is None and self.public_data is not None:
            X_public, y_public = self.public_data
        Xp, yp = check_public(X_public, y_public, X.shape[1])
        if isinstance(self.target_bounds, str) and self.target_bounds == "public":
            tb = (float(yp.min()), float(yp.max()))
            if tb[0] == tb[1]:
                tb = (tb[0] - 0.5, tb[1] + 0.5)
        else:
            tb = check_target_bounds(self.target_bounds)
        bounds = check_bounds(facts_by_index(self, "bounds", self.bounds, X.shape[1], sequence=True), Xp, X.shape[1])
        warn_outside_bounds(self, X, bounds, EDGE_CELL, stacklevel=4)  # to the caller only: the counts are private
        warn_outside_target_bounds(self, y, tb, stacklevel=4)
        return X, y, Xp, np.clip(yp, *tb), tb, bounds

    def _grow(self, Xp, yp, bounds) -> TreePartition:
        depth = check_int("max_depth", self.max_depth, 0)
        if depth > 20:
            raise ValueError(f"max_depth must be at most 20 (up to 2**max_depth leaves), got {shown(depth)}")
        leaf = check_int("min_samples_leaf", self.min_samples_leaf, 1)
        split = check_int("min_samples_split", self.min_samples_split, 2)
        part = grow_max_edge(Xp, yp, bounds, depth, leaf, split)
        self.partition_ = part
        self.n_leaves_ = part.n_leaves
        self.depth_ = part.max_leaf_depth
        self.n_leaves_stopped_early_ = int(np.sum(part.leaf_stopped_early))
        #: True when max_depth was not reached anywhere because the public data could not support it
        self.depth_limited_by_public_data_ = self.depth_ < depth
        return part

class LPDTRegressor(_PartitionRegressor):
    """Locally private decision tree regressor with a public max-edge partition (Algorithm 1).

    Parameters
    ----------
    epsilon : float
        Local privacy parameter of every user's report (Theorem 3.1).
    max_depth : int, default 4
        Depth ``p`` of the partition (Theorem 3.4: ``p ~ log(n epsilon^2)``).
    min_samples_leaf : int, default 1
        ``n_l``: fewest public points in each child of a split.
    target_bounds : (float, float) or "public"
        Public label range ``[-M, M]`` (any ``(low, high)``); private labels are
        clipped into it (how many is private and not kept). ``"public"`` takes the
        range of the public labels. Required: never read from the private data.
    bounds : sequence of (low, high) per feature, or "public"
        The public domain box. ``"public"``: the public features' range widened
        by 1% each side (the authors' ``range_x="auto"``).
    min_samples_split : int, default 2
    indicator_share : float, default 0.5
        Share ``s`` of epsilon spent on the indicator bits (paper: 1/2).
    denominator_guard : {"public_mean", "midpoint"}
        Value of a leaf whose debiased count is too small: its public mean (the
        authors' code), or the midpoint of ``target_bounds``.
    min_ratio : float, default 0.0
        Guard a leaf when ``D_j / c < min_ratio * n``.
    clip_to_bound : bool, default True
        Clip leaf values to ``target_bounds`` (post-processing).
    label_noise : {"per_user", "per_leaf"}
        ``"per_user"``: the paper's mechanism (3). ``"per_leaf"``: the authors'
        code, NOT epsilon-LDP; the ledger shows its true cost.
    public_data : (X_public, y_public) or None
        Public sample, used when ``fit`` is not given one.
    random_state : int, numpy.random.Generator or None
        Privacy first: the privatisation draws fresh OS entropy, whatever this holds, unless seeded fits are on
        (``reference.randomness.seeded_fits``, used by the auditor and tests): then it seeds a fresh child stream
        and is a secret key. The stream is discarded after fit; a fitted model's pickle drops ``random_state``.

    Attributes
    ----------
    partition_, n_leaves_, depth_, depth_limited_by_public_data_, n_leaves_stopped_early_
    randomizer_ : LPDTRandomizer
    D_, N_ : the per-leaf sums of step 4; guarded_ : leaves that took the guard value
    leaf_values_, privacy_ledger_

    References
    ----------
    Ma et al. 2023: mechanisms (3)-(4), Theorem 3.1, Theorem 3.4, "Max-edge Partition Rule".
    """

    def __init__(self, epsilon=1.0, max_depth=4, min_samples_leaf=1, target_bounds=None, bounds=None,
                 min_samples_split=2, indicator_share=0.5, denominator_guard="public_mean", min_ratio=0.0,
                 clip_to_bound=True, label_noise="per_user", public_data=None, random_state=None):
        self.epsilon = epsilon
        self.max_depth = max_depth
        self.min_samples_leaf = min_samples_leaf
        self.target_bounds = target_bounds
        self.bounds = bounds
        self.min_samples_split = min_samples_split
        self.indicator_share = indicator_share
        self.denominator_guard = denominator_guard
        self.min_ratio = min_ratio
        self.clip_to_bound = clip_to_bound
        self.label_noise = label_noise
        self.public_data = public_data
        self.random_state = random_state

    def _rng(self) -> np.random.Generator:
        return fit_rng(self.random_state, self)  # a fresh child stream, discarded with the fit (reference.randomness)

    def fit(self, X, y, X_public=None, y_public=None):
        """Grow the partition on public data, randomise every private record once, aggregate.

        Parameters
        ----------
        X, y : private features (n, d) and labels (n,)
        X_public, y_public : public sample (else ``public_data``)

        Returns
        -------
        self
        """
        epsilon = check_positive_finite("epsilon", self.epsilon)
        share = check_probability("indicator_share", self.indicator_share, open_low=True, open_high=True)
        guard = check_choice("denominator_guard", self.denominator_guard, DENOMINATOR_GUARDS)
        noise = check_choice("label_noise", self.label_noise, LABEL_NOISE)
        min_ratio = float(self.min_ratio)
        if not (np.isfinite(min_ratio) and min_ratio >= 0):
            raise ValueError(f"min_ratio must be a finite number >= 0, got {shown(self.min_ratio)}")
        X, y, Xp, yp, tb, bounds = self._public_facts(X, y, X_public, y_public)
        self.n_features_in_ = X.shape[1]
        self.target_bounds_, self.bounds_ = tb, bounds
        part = self._grow(Xp, yp, bounds)
        rng = self._rng()

        # step 3: each user's local randomiser (labels clipped to the public range first)
        y_c = np.clip(y, *tb)  # how many labels were clipped is private: not kept
        cls = PerLeafNoiseRandomizer if noise == "per_leaf" else LPDTRandomizer
        self.randomizer_ = r = cls(epsilon, part, tb, share)
        leaves = part.apply(X)
        ones, weighted, label_total = r.summarise(leaves, y_c, rng)

        # step 4-5: aggregate and estimate (spec 3.5)
        n = X.shape[0]
        self.D_ = ones - n * r.q
        self.N_ = weighted - r.q * label_total
        if guard == "public_mean":
            fallback = np.asarray(part.leaf_public_mean, dtype=float)
        else:
            fallback = np.full(part.n_leaves, (tb[0] + tb[1]) / 2.0)
        self.leaf_values_, self.guarded_ = leaf_estimates(
            self.D_, self.N_, n, r.c, fallback, min_ratio=min_ratio, clip_to=tb if self.clip_to_bound else None)
        self.privacy_ledger_ = self._ledger(r, noise)
        return self

    def _ledger(self, r: LPDTRandomizer, noise: str) -> PrivacyLedger:
        """Each user's report, charged once at the root (one record changes under substitution).

        The curator's steps 4-5 only post-process the reports. For
        ``label_noise="per_leaf"`` one label charge per leaf is made, the same
        record read ``L`` times: sequential composition gives the true cost.
        """
        ledger = PrivacyLedger("substitute")
        root = Scope.root()
        low, high = r.target_bounds
        ledger.charge("leaf indicator U~, mechanism (4)", "BitRandomizedResponse", r.bits.epsilon, scope=root,
                      sensitivity=2, note=f"per coordinate epsilon {r.bits.eps_bit:.6g}; one-hot vectors of two "
                                          "users differ in 2 coordinates")
        copies = r.n_leaves if noise == "per_leaf" else 1
        for j in range(copies):
            ledger.charge("label Y~, mechanism (3)" + (f" (fresh copy for leaf {j}, the authors' code)" if copies > 1 else ""),
                          "Laplace", r.label.epsilon, scope=root, sensitivity=r.label.sensitivity,
                          note=f"scale {r.label.scale:.6g} for labels in [{low:g}, {high:g}]")
        if copies > 1:
            warnings.warn(f"label_noise='per_leaf' is the authors' code's flaw: the reports are "
                          f"{ledger.total_epsilon():.4g}-LDP, not {self.epsilon}-LDP", RuntimeWarning, stacklevel=3)
        return ledger

    def randomizer(self, x, y, rng) -> np.ndarray:
        """What user ``(x, y)`` sends: ``[Y~, bit_0, ..., bit_{L-1}]`` (mechanisms (3)-(4))."""
        return self.randomizer_.sample((x, y), rng)

    def aggregate(self, reports) -> np.ndarray:
        """Leaf values from dense reports (rows of :meth:`randomizer`): the curator's steps 4-5."""
        reports = np.atleast_2d(np.asarray(reports, dtype=float))
        r = self.randomizer_
        k = reports.shape[1] - r.n_leaves
        labels, bits = reports[:, :k], reports[:, k:]
        U = bits - r.q
        D = U.sum(axis=0)
        N = (labels * U).sum(axis=0) if k > 1 else labels[:, 0] @ U
        fallback = np.asarray(self.partition_.leaf_public_mean, dtype=float)
        if self.denominator_guard == "midpoint":
            fallback = np.full(r.n_leaves, sum(self.target_bounds_) / 2.0)
        values, _ = leaf_estimates(D, N, reports.shape[0], r.c, fallback, min_ratio=float(self.min_ratio),
                                   clip_to=self.target_bounds_ if self.clip_to_bound else None)
        return values


class PublicPartitionTreeRegressor(_PartitionRegressor):
    """NON-PRIVATE baseline: the LPDT public partition with exact private leaf means.

    The same max-edge partition as :class:`LPDTRegressor` (grown on public
    data), leaf values the mean of the (clipped) private labels in each leaf;
    an empty leaf takes its public mean. Its ledger holds one ``epsilon = inf``
    charge and ``private_`` is False: nothing here is private.
    """

    def __init__(self, max_depth=4, min_samples_leaf=1, target_bounds=None, bounds=None, min_samples_split=2,
                 public_data=None, epsilon=None, random_state=None):
        self.max_depth = max_depth
        self.min_samples_leaf = min_samples_leaf
        self.target_bounds = target_bounds
        self.bounds = bounds
        self.min_samples_split = min_samples_split
        self.public_data = public_data
        self.epsilon = epsilon
        self.random_state = random_state

    def fit(self, X, y, X_public=None, y_public=None):
        X, y, Xp, yp, tb, bounds = self._public_facts(X, y, X_public, y_public)
        self.n_features_in_ = X.shape[1]
        self.target_bounds_, self.bounds_ = tb, bounds
        part = self._grow(Xp, yp, bounds)
        y_c = np.clip(y, *tb)
        leaves = part.apply(X)
        counts = np.bincount(leaves, minlength=part.n_leaves)
        sums = np.bincount(leaves, weights=y_c, minlength=part.n_leaves)
        with np.errstate(divide="ignore", invalid="ignore"):
            self.leaf_values_ = np.where(counts > 0, sums / np.maximum(counts, 1),
                                         np.asarray(part.leaf_public_mean, dtype=float))
        self.private_ = False
        self.privacy_ledger_ = PrivacyLedger("substitute")
        self.privacy_ledger_.charge_not_private("leaves", "exact private leaf means")
        return self
