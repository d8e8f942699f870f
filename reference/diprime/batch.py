"""DiPriMe forests fitted many times at once: the auditor's batched path.

:class:`DiPriMeBatch` is a mechanism over ``data = (X, y)`` whose output is
the discrete ``release(bins, leaf_bins)`` of a freshly fitted
:class:`reference.diprime.DiPriMeForestRegressor` or
:class:`reference.diprime.DiPriMeForestClassifier`: the same value, in the same
format, as the audit target's wrapped reference
(:class:`audit.targets.diprime.ReleaseMechanism`). ``batch(data, n, rng)``
grows the ``n`` forests together, level by level, as NumPy arrays over the
run axis; the reference (:mod:`reference.diprime.grower`) stays the definition,
and ``tests/test_diprime_batch.py`` checks this path against it (equal record
partitions and leaf values when every mechanism is made deterministic by a
huge epsilon, equal release distributions with noise on).

What is vectorised over the runs, trees and nodes of one level:

* the partition of the records over the trees (V000 and V003 Algorithm 2;
  strict: an independent uniform tree per record, spec A13; paper: equal
  parts of a random permutation);
* the candidate attributes, a uniform ``min(K, |A|)``-subset of the node's
  splittable attributes (V003 Algorithm 1, FINDSPLIT), or one uniform
  attribute for base DiPriMe;
* the private medians (:mod:`reference.diprime.batch_medians`): V003's
  exponential mechanism (section 3.1) over the public grid of the node's range
  (:class:`reference.mechanisms.IntervalExponential`, :mod:`reference.mechanisms.grid`),
  permute-and-flip on ``FLIP_GRID`` public thresholds (strict DiPriMeFlip,
  spec A6), the authors' DiPriMeFlip median
  (:class:`reference.diprime.mechanisms.AuthorsFlipMedian`) and V000's index
  median (Algorithm 3, lines 42-47;
  :class:`reference.diprime.mechanisms.IndexMedianV000`);
* the attribute choice ``M_a`` with score ``-SSE`` (V003 section 3.1, spec A4,
  A5): the exponential mechanism by the Gumbel-max trick, permute-and-flip by
  report-noisy-max with exponential noise (Ding et al. 2021; the same law as
  :meth:`reference.mechanisms.PermuteAndFlip.batch`, which the reference uses);
* the leaves (V003 section 3, V000 section 3, spec A7): class counts with exact two-sided geometric noise,
  the strict noisy centred sum over a noisy count, or the paper's count-scaled
  mean with ``Uniform(B_L, B_U)`` for an empty leaf.

Not vectorised: categorical features (spec A9's bipartitions). With any
``categories``, :meth:`DiPriMeBatch.batch` falls back to fitting the
reference estimator once per run (``vectorised`` is then False); its outputs
have the same law and format, at the reference's speed.

Every node's row spans all records, so the work per level grows as nodes x
records: the path is for the auditor's tiny inputs (a few records, many
runs); on large data one reference fit is faster.

The batched path keeps no privacy ledger: it publishes releases only, and the
reference's ledger describes every one of them (the same mechanism calls at
the same epsilons, :func:`reference.diprime.grower.budget`).

References
----------
Consul and Williamson 2021 (V003), Algorithms 1-2,
sections 3 and 3.1; Consul and Williamson 2020 (V000), Algorithms 1-3,
section 3. spec/diprime.md sections 1.3-1.7 and 5.
"""
from __future__ import annotations

import gc
from dataclasses import dataclass

import numpy as np

from reference.mechanisms.base import record_units, span_up
from reference.validation import check_generator, check_int, check_pair, check_X
from reference.validation import shown
from reference.diprime.forest import DiPriMeForestClassifier, DiPriMeForestRegressor
from reference.diprime.batch_medians import (median_authors_flip, median_flip_grid, median_index_v000, median_lebesgue,
                                    noisy_max)
from reference.diprime.grower import budget
from reference.fast_path import register
from reference.mechanisms import Laplace, TwoSidedGeometric

__all__ = ["DiPriMeBatch", "Forests", "TASKS"]

TASKS = ("regression", "classification")
#: cap on the elements of the largest temporary array of one chunk of runs
_CHUNK_ELEMENTS = 1 << 20
#: node kinds in :class:`Forests`
_NONE, _SPLIT, _LEAF = 0, 1, 2


@dataclass
class Forests:
    """``n`` fitted forests of ``T`` trees as heap-ordered arrays (node ``h`` has
    children ``2h + 1``, ``2h + 2``; ``H = 2^(d_max + 1) - 1`` slots per tree).

    Attributes
    ----------
    kind : int8 array (n, T, H)
        0 below a leaf (no node), 1 a split, 2 a leaf.
    feature : int array (n, T, H), the split feature (-1 elsewhere)
    threshold : float array (n, T, H), the split threshold ``r``: ``x < r`` goes left
    value : float array (n, T, H) (regression) or (n, T, H, C) (class probabilities)
    """

    kind: np.ndarray
    feature: np.ndarray
    threshold: np.ndarray
    value: np.ndarray


@register(DiPriMeForestRegressor, DiPriMeForestClassifier)
class DiPriMeBatch:
    """The discrete release of a DiPriMe forest fitted on ``data = (X, y)``, many at once.

    Parameters
    ----------
    task : {"regression", "classification"}
        :class:`reference.diprime.DiPriMeForestRegressor` or
        :class:`reference.diprime.DiPriMeForestClassifier`.
    bins, leaf_bins : int or None
        As in the estimators' ``release(bins, leaf_bins)``.
    post : callable or None
        Public post-processing applied to each release (as the audit target's
        ``ReleaseMechanism`` does); a result that is not a tuple is wrapped in
        a 1-tuple, as that mechanism wraps it.
    **params
        The estimator's parameters (``epsilon``, ``n_estimators``,
        ``max_depth``, ``max_features``, ``rho``, ``variant``, ``version``,
        ``accounting``, ``partition``, ``bounds``, ``categories``, and
        ``target_bounds`` or ``classes``), validated by the estimator itself;
        ``random_state`` is not one: every run draws from the ``rng`` given.

    Attributes
    ----------
    vectorised : bool
        False when :meth:`batch` falls back to fitting the reference once per
        run (categorical features).

    Notes
    -----
    ``m(data, rng)`` returns one release and ``m.batch(data, n, rng)`` a list
    of ``n``: the auditor's mechanism contract. The law of each release is the
    reference's (V003 Algorithms 1-2; V000 Algorithms 1-3), not its random
    stream: the same seed gives other forests than the reference.
    """

    def __init__(self, task, *, bins=None, leaf_bins=None, post=None, **params):
        if task not in TASKS:
            raise ValueError(f"task must be one of {TASKS}, got {shown(task)}")
        if "random_state" in params:
            raise ValueError("random_state is not a parameter of DiPriMeBatch: every run draws from the rng "
                             f"it is given (got random_state={shown(params['random_state'])})")
        cls = DiPriMeForestRegressor if task == "regression" else DiPriMeForestClassifier
        accepted = cls().get_params(deep=False)
        unknown = sorted(k for k in params if k not in accepted)
        if unknown:
            raise ValueError(f"{cls.__name__} takes no parameter(s) {unknown}; it accepts {sorted(accepted)}")
        if bins is not None:
            check_int("bins", bins, 1)
        if leaf_bins is not None:
            check_int("leaf_bins", leaf_bins, 1)
        if post is not None and not callable(post):
            raise ValueError(f"post must be callable or None, got {shown(post)}")
        self.task, self.bins, self.post = task, bins, post
        self.leaf_bins = bins if leaf_bins is None else leaf_bins
        self.params = dict(params)
        self._cls = cls
        est = self._estimator()
        self._eps = est._validate_params()  # every parameter error is raised here, as fit would
        self.vectorised = not est.categories

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self.params.items())
        return f"DiPriMeBatch({self.task!r}, bins={self.bins!r}, leaf_bins={self.leaf_bins!r}, {args})"

    def _estimator(self):
        return self._cls(**self.params)

    # ------------------------------------------------------------------ the mechanism contract
    def __call__(self, data, rng):
        return self.batch(data, 1, rng)[0]

    def batch(self, data, n, rng) -> list:
        """``n`` independent releases of forests fitted on ``data = (X, y)``."""
        check_generator(rng)
        n = check_int("n", n, 1)
        if not self.vectorised:
            return [self._reference_release(data, rng) for _ in range(n)]
        prepared = self._prepare(data)
        return self.releases(self.fit_forests(data, n, rng, prepared=prepared), prepared=prepared)

    def _reference_release(self, data, rng):
        """The fallback: one reference fit, seeded from ``rng`` as the audit target seeds it."""
        est = self._estimator()
        est.random_state = rng.spawn(1)[0]  # a child of the run's SeedSequence (issue 26 finding 6)
        rel = est.fit(*data).release(bins=self.bins, leaf_bins=self.leaf_bins)
        return rel if self.post is None else self._post(rel)

    def _post(self, release):
        """``post(release)``, a value that is not a tuple wrapped in a 1-tuple: the discrete output of
        :class:`audit.learner.LearnerMechanism`, which the audit target's ``ReleaseMechanism`` is."""
        out = self.post(release)
        return out if isinstance(out, tuple) else (out,)

    # ------------------------------------------------------------------ validation
    def _prepare(self, data):
        """Validated ``X`` (clipped to ``bounds``), encoded ``y`` and the public facts, through the
        estimator's own checks."""
        try:
            X, y = data
        except (TypeError, ValueError):
            raise ValueError(f"data must be a pair (X, y), got {type(data).__name__}") from None
        est = self._estimator()
        X = check_X(est, X, reset=True)  # fit's checks: 2-D, >= 1 feature, finite
        m = X.shape[1]
        bounds, categories = est._public_facts(m)
        X, _ = est._validate_X(X, bounds, categories)
        if self.task == "regression":
            if est.target_bounds is None:
                raise ValueError("target_bounds is required: the public (low, high) range of the target")
            tb = check_pair("target_bounds", est.target_bounds)
            y = np.asarray(y, dtype=float)
            if y.ndim != 1 or not np.all(np.isfinite(y)):
                raise ValueError(f"y must be a 1-D array of finite numbers, got shape {y.shape}")
            y, n_classes = np.clip(y, *tb), 0
        else:
            if est.classes is None:
                raise ValueError("classes is required: the public list of class labels")
            classes = np.asarray(list(est.classes))
            if classes.ndim != 1 or classes.size < 2 or np.unique(classes).size != classes.size:
                raise ValueError(f"classes must list at least two distinct labels, got {shown(est.classes)}")
            y = np.asarray(y)
            if y.ndim != 1 or not np.all(np.isin(y, classes)):
                raise ValueError(f"y must be 1-D with labels in classes {shown(classes.tolist())}")
            index = {c: i for i, c in enumerate(classes.tolist())}
            y = np.fromiter((index[v] for v in y.tolist()), dtype=np.int64, count=y.size)
            tb, n_classes = (0.0, 1.0), classes.size
        if y.shape != (X.shape[0],):
            raise ValueError(f"y must have shape ({X.shape[0]},), got {y.shape}")
        t = int(est.n_estimators)
        k_eff = min(int(est.max_features), m)
        eps_tree = self._eps if est.partition else self._eps / t
        bud = budget(eps_tree, float(est.rho), int(est.max_depth), est.variant, est.version, est.accounting, k_eff)
        return dict(X=X, y=y, bounds=np.array([bounds[j] for j in range(m)], dtype=float), target_bounds=tb,
                    n_classes=n_classes, budget=bud, k_eff=k_eff, est=est)

    # ------------------------------------------------------------------ the algorithm, vectorised
    def fit_forests(self, data, n, rng, *, prepared=None) -> Forests:
        """Fit ``n`` forests on ``data`` (the arrays behind :meth:`batch`'s releases).

        Runs are processed in chunks so that no temporary array exceeds about
        a million elements.
        """
        if not self.vectorised:
            raise ValueError("fit_forests vectorises numerical features only; with categories, use batch "
                             "(the reference fallback)")
        check_generator(rng)
        n = check_int("n", n, 1)
        p = self._prepare(data) if prepared is None else prepared
        est = p["est"]
        N, d, t = p["X"].shape[0], int(est.max_depth), int(est.n_estimators)
        per_run = t * 2 ** d * (N + 2 + p["n_classes"])  # the deepest level's (nodes, records + gaps) arrays
        chunk = max(1, _CHUNK_ELEMENTS // per_run)
        parts = [self._grow(p, min(chunk, n - s), rng) for s in range(0, n, chunk)]
        return Forests(*(np.concatenate([getattr(f, a) for f in parts]) for a in
                         ("kind", "feature", "threshold", "value")))

    def _tree_membership(self, est, n_runs, N, rng) -> np.ndarray:
        """(runs * T, N) bool: which records each tree sees (V003 / V000 Algorithm 2; spec A13)."""
        t = int(est.n_estimators)
        if not est.partition:
            return np.ones((n_runs * t, N), dtype=bool)
        if est.accounting == "strict":
            owner = rng.integers(0, t, size=(n_runs, N))  # an independent uniform tree per record
        else:  # equal parts of a random permutation (np.array_split's sizes)
            perm = np.argsort(rng.random((n_runs, N)), axis=1)
            sizes = [len(a) for a in np.array_split(np.arange(N), t)]
            owner = np.empty((n_runs, N), dtype=np.intp)
            np.put_along_axis(owner, perm, np.repeat(np.arange(t), sizes)[None, :].repeat(n_runs, 0), axis=1)
        return (owner[:, None, :] == np.arange(t)[None, :, None]).reshape(n_runs * t, N)

    def _median(self, est):
        if est.version == "v000":
            return median_index_v000
        if est.variant == "flip":
            return median_authors_flip if est.accounting == "paper" else median_flip_grid
        return median_lebesgue

    def _grow(self, p, n_runs, rng) -> Forests:
        est, X, y, bud = p["est"], p["X"], p["y"], p["budget"]
        N, m = X.shape
        d, t, C = int(est.max_depth), int(est.n_estimators), p["n_classes"]
        L, H = n_runs * t, 2 ** (d + 1) - 1
        kind = np.zeros((L, H), dtype=np.int8)
        feature = np.full((L, H), -1, dtype=np.intp)
        threshold = np.zeros((L, H))
        value = np.zeros((L, H, C) if C else (L, H))
        node = np.where(self._tree_membership(est, n_runs, N, rng), 0, -1)  # (L, N) node of each record, level-local
        lo = np.broadcast_to(p["bounds"][:, 0], (L, 1, m)).copy()
        hi = np.broadcast_to(p["bounds"][:, 1], (L, 1, m)).copy()
        alive = np.ones((L, 1), dtype=bool)
        median = self._median(est)
        lane = np.arange(L)[:, None]
        for k in range(d + 1):
            width, base = 2 ** k, 2 ** k - 1
            U = L * width
            member = (node[:, None, :] == np.arange(width)[None, :, None]).reshape(U, N)
            lo_u, hi_u, alive_u = lo.reshape(U, m), hi.reshape(U, m), alive.reshape(U)
            active = hi_u > lo_u
            splits = alive_u & active.any(axis=1) if k < d else np.zeros(U, dtype=bool)
            leaves = np.flatnonzero(alive_u & ~splits)
            if leaves.size:  # every node at d_max, or one with no splittable attribute (spec A10, A13)
                li, lv = np.divmod(leaves, width)
                kind[li, base + lv] = _LEAF
                value[li, base + lv] = self._leaves(member[leaves], y, p, rng)
            sel = np.flatnonzero(splits)
            j_full = np.zeros(U, dtype=np.intp)
            r_full = np.zeros(U)
            if sel.size:
                j, r = self._find_split(member[sel], lo_u[sel], hi_u[sel], active[sel], X, y, p, median, rng)
                j_full[sel], r_full[sel] = j, r
                si, sv = np.divmod(sel, width)
                kind[si, base + sv] = _SPLIT
                feature[si, base + sv] = j
                threshold[si, base + sv] = r
            if k == d:
                break
            # SPLITRANGE: records x < r go left, children's ranges [lo, r) and [r, hi] (V003 Algorithm 1)
            unit = lane * width + np.maximum(node, 0)
            inside = (node >= 0) & splits[unit]
            x = X[np.arange(N)[None, :], j_full[unit]]
            node = np.where(inside, 2 * node + (x >= r_full[unit]), -1)
            lo2 = np.repeat(lo_u, 2, axis=0)
            hi2 = np.repeat(hi_u, 2, axis=0)
            rows = np.arange(U)
            hi2[2 * rows, j_full] = np.where(splits, r_full, hi2[2 * rows, j_full])
            lo2[2 * rows + 1, j_full] = np.where(splits, r_full, lo2[2 * rows + 1, j_full])
            lo, hi = lo2.reshape(L, 2 * width, m), hi2.reshape(L, 2 * width, m)
            alive = np.repeat(splits, 2).reshape(L, 2 * width)
        shape = (n_runs, t, H)
        return Forests(kind.reshape(shape), feature.reshape(shape), threshold.reshape(shape),
                       value.reshape(shape + value.shape[2:]))

    def _find_split(self, member, lo, hi, active, X, y, p, median, rng):
        """V003 Algorithm 1, FINDSPLIT, for every node of the level at once: ``(feature, threshold)``."""
        est, bud = p["est"], p["budget"]
        U, m = active.shape
        keys = np.where(active, rng.random((U, m)), np.inf)
        if est.variant == "base":  # one uniform attribute, then its median only
            j = np.argmin(keys, axis=1)
            rows = np.arange(U)
            r = median(X[:, j].T, member, lo[rows, j], hi[rows, j], bud.eps_s, rng)
            return j, r
        # a uniform min(K, |A|)-subset of the splittable attributes; candidate medians of every
        # splittable attribute (independent, so drawing the unused ones changes no law)
        rank = np.argsort(np.argsort(keys, axis=1), axis=1)
        cand = active & (rank < p["k_eff"])
        r = np.zeros((U, m))
        score = np.full((U, m), -np.inf)
        factor, delta = self._score_sensitivity(p)
        rate = bud.eps_a / (2.0 * delta)
        for a in range(m):
            rows = np.flatnonzero(cand[:, a])
            if not rows.size:
                continue
            xa = np.broadcast_to(X[:, a], (rows.size, X.shape[0]))
            r[rows, a] = median(xa, member[rows], lo[rows, a], hi[rows, a], bud.eps_s, rng)
            go_left = xa < r[rows, a][:, None]
            sse = self._sse(member[rows] & go_left, y, p) + self._sse(member[rows] & ~go_left, y, p)
            score[rows, a] = -rate * factor * sse
        j = noisy_max(score, rng, "exponential" if est.variant == "flip" else "gumbel")
        return j, r[np.arange(U), j]

    @staticmethod
    def _score_sensitivity(p):
        """:meth:`reference.diprime.grower.TreeGrower.score_sensitivity` (spec A4, A5)."""
        if p["n_classes"] == 0:
            b = max(abs(p["target_bounds"][0]), abs(p["target_bounds"][1]))
            return 1.0, 4.0 * b * b
        if p["n_classes"] == 2 and p["est"].accounting == "paper":
            return 0.5, 4.0
        return 1.0, 2.0

    @staticmethod
    def _sse(mask, y, p):
        """Within-node SSE of each row's records: of the targets, or of the one-hot labels (``N * Gini``)."""
        count = mask.sum(axis=1)
        safe = np.maximum(count, 1)
        if p["n_classes"] == 0:
            mean = (mask @ y) / safe
            return np.sum(np.where(mask, (y[None, :] - mean[:, None]) ** 2, 0.0), axis=1)
        counts = mask.astype(float) @ np.eye(p["n_classes"])[y]
        return np.where(count > 0, count - np.sum(counts ** 2, axis=1) / safe, 0.0)

    def _leaves(self, member, y, p, rng):
        """Leaf statistics with ``eps_l`` (V003 section 3; V000 section 3; spec A7) for every row."""
        est, eps = p["est"], p["budget"].eps_l
        count = member.sum(axis=1)
        if p["n_classes"]:
            counts = member.astype(np.int64) @ np.eye(p["n_classes"], dtype=np.int64)[y]
            noisy = np.maximum(TwoSidedGeometric(eps, 1.0).sample(counts, rng), 0).astype(float)
            total = noisy.sum(axis=1, keepdims=True)
            return np.where(total > 0, noisy / np.where(total > 0, total, 1.0), 1.0 / p["n_classes"])
        lo, hi = p["target_bounds"]
        if est.accounting == "paper":
            s = (hi - lo) if est.version == "v000" else 2.0 * max(abs(lo), abs(hi))
            safe = np.maximum(count, 1)
            noisy = (member @ y) / safe + rng.laplace(0.0, 1.0, size=count.shape) * (s / safe / eps)
            return np.where(count > 0, np.clip(noisy, lo, hi), rng.uniform(lo, hi, size=count.shape))
        centre, half = (lo + hi) / 2.0, span_up(lo, hi) / 2.0
        mech = Laplace(eps / 2.0, half)
        units = member.astype(np.int64) @ record_units(y - centre, mech.grid, mech.grid_sensitivity)  # exact integers
        noisy_sum = mech.sample_each(units.astype(float) * mech.grid, rng)  # the reference's lattice law
        noisy_n = TwoSidedGeometric(eps / 2.0, 1.0).sample(count.astype(np.int64), rng)
        return np.clip(centre + noisy_sum / np.maximum(noisy_n, 1.0), lo, hi)

    # ------------------------------------------------------------------ releases
    def releases(self, forests: Forests, *, prepared) -> list:
        """The estimators' ``release(bins, leaf_bins)`` of every forest (then ``post``), as a list.

        :meth:`reference.diprime.forest._DiPriMeForest.release` is the format: per tree, its nodes in
        preorder, ``("split", feature, where)`` and ``("leaf", value)``. Every node is given an
        integer code (arithmetically on the grids when ``bins`` and ``leaf_bins`` are set, by
        ``np.unique`` otherwise), each code's tuple is made once, and so is each distinct forest.
        """
        p = prepared
        n, t, H = forests.kind.shape
        codes, objects = self._node_codes(forests, p)
        order = _preorder(H)
        flat = codes.reshape(n, t * H)
        base = len(objects)
        if t * H * np.log2(max(base, 2)) < 62:  # one int64 key per forest: a fast 1-D unique
            keys = flat @ (base ** np.arange(t * H, dtype=np.int64))
            _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
            uniq = flat[first]
        else:
            uniq, inverse = np.unique(flat, axis=0, return_inverse=True)
        get = objects.__getitem__
        paused = gc.isenabled()
        gc.disable()  # the many new tuples (no cycles among them) would trigger full collections
        try:
            made = [tuple(tuple(map(get, filter(None, tree))) for tree in row)
                    for row in uniq.reshape(-1, t, H)[:, :, order].tolist()]
            if self.post is not None:
                made = [self._post(r) for r in made]
            return [made[i] for i in np.asarray(inverse).ravel().tolist()]
        finally:
            if paused:
                gc.enable()

    def _node_codes(self, forests: Forests, p):
        """``(codes, objects)``: an int code per heap slot (0 for no node) and the released tuple of
        every code (``objects[code]``)."""
        kind, feat = forests.kind, forests.feature
        m = p["bounds"].shape[0]
        split, leaf = kind == _SPLIT, kind == _LEAF
        C = p["n_classes"]
        bins, leaf_bins = self.bins, self.leaf_bins
        regression = C == 0
        n_leaf_codes = (leaf_bins + 2 if regression else leaf_bins ** C) if leaf_bins is not None else 0
        if bins is None or leaf_bins is None or n_leaf_codes > 1 << 16:
            return self._node_codes_by_value(forests, p)
        lo_f = p["bounds"][np.maximum(feat, 0), 0]
        hi_f = p["bounds"][np.maximum(feat, 0), 1]
        where = np.minimum(bins - 1, np.floor((forests.threshold - lo_f) / (hi_f - lo_f) * bins)).astype(np.int64)
        value = forests.value
        if regression:
            lo, hi = p["target_bounds"]
            inner = np.minimum(leaf_bins - 1, np.floor((value - lo) / (hi - lo) * leaf_bins))
            lcode = np.where(value <= lo, 0, np.where(value >= hi, 1, 2 + inner)).astype(np.int64)
            leaf_obj = ["low", "high"] + list(range(leaf_bins))
        else:
            per = np.minimum(leaf_bins - 1, np.floor(value * leaf_bins)).astype(np.int64)
            lcode = per @ (leaf_bins ** np.arange(C, dtype=np.int64))
            leaf_obj = [tuple(int(d) for d in np.unravel_index(c, (leaf_bins,) * C, order="F"))
                        for c in range(n_leaf_codes)]
        n_split = m * bins
        codes = np.where(split, 1 + feat * bins + where, np.where(leaf, 1 + n_split + lcode, 0))
        objects = [None] + [("split", f, b) for f in range(m) for b in range(bins)] + [("leaf", v) for v in leaf_obj]
        return codes, objects

    def _node_codes_by_value(self, forests: Forests, p):
        kind = forests.kind
        where = forests.threshold
        if self.bins is not None:
            feat = np.maximum(forests.feature, 0)
            lo_f, hi_f = p["bounds"][feat, 0], p["bounds"][feat, 1]
            where = np.minimum(self.bins - 1, np.floor((where - lo_f) / (hi_f - lo_f) * self.bins))
        value = forests.value if p["n_classes"] else forests.value[..., None]
        rows = np.concatenate((kind[..., None].astype(float), forests.feature[..., None].astype(float),
                               np.where(kind == _SPLIT, where, 0.0)[..., None],
                               np.where((kind == _LEAF)[..., None], value, 0.0)), axis=-1)
        uniq, inverse = np.unique(rows.reshape(-1, rows.shape[-1]), axis=0, return_inverse=True)
        objects = [self._node_object(u, p) for u in uniq]
        if uniq[0, 0] != _NONE:  # code 0 means "no node"
            objects.insert(0, None)
            inverse = np.asarray(inverse).ravel() + 1
        return np.asarray(inverse).reshape(kind.shape), objects

    def _node_object(self, u, p):
        if u[0] == _NONE:
            return None
        if u[0] == _SPLIT:
            return ("split", int(u[1]), round(float(u[2]), 6) if self.bins is None else int(u[2]))
        lb, v = self.leaf_bins, u[3:]
        if p["n_classes"]:
            return ("leaf", tuple(round(float(c), 6) for c in v) if lb is None
                    else tuple(min(lb - 1, int(c * lb)) for c in v))
        lo, hi = p["target_bounds"]
        x = float(v[0])
        if lb is None:
            return ("leaf", round(x, 6))
        return ("leaf", "low" if x <= lo else "high" if x >= hi else min(lb - 1, int((x - lo) / (hi - lo) * lb)))


def _preorder(H: int) -> list:
    """Heap slots ``0..H-1`` of a complete binary tree in preorder (node, left subtree, right subtree)."""
    out, stack = [], [0]
    while stack:
        h = stack.pop()
        if h < H:
            out.append(h)
            stack.extend((2 * h + 2, 2 * h + 1))
    return out
