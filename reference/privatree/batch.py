"""PrivaTree fitted many times at once: the auditor's batched path.

:class:`PrivaTreeBatch` is a mechanism over ``data = (X, y)`` whose output is
``PrivaTreeClassifier(**params).fit(X, y).release(edges)``: the same value, in
the same format (nested tuples of Python ints), as the audit target's wrapped
reference (``ReleaseMechanism(partial(PrivaTreeClassifier, **params),
edges=edges)`` in :mod:`audit.targets.privatree`). ``batch(data, n, rng)``
fits the ``n`` trees together, level by level, as NumPy arrays over the run
axis. The reference (:mod:`reference.privatree`) stays the definition;
``tests/test_privatree_batch.py`` checks this path against it (the same
release when the noise is off, the same release distribution when it is on).

What is vectorised over the runs (and the nodes of one level), following
Algorithm 1 of the paper (Vos et al. 2023):

* the budget split, Eqs. 7-10 or the strict correction (computed once by
  :func:`reference.privatree.budget_split`);
* the bin edges, Algorithm 1 lines 3-5 and section IV-B: JointExp private
  quantiles (Gillenwater et al. 2021) on JointExp's public grid by
  :func:`joint_exp_batch`, which runs the reference's forward pass once per
  call (it depends only on the tiny input; nothing is kept after the call)
  and the backward sampling pass for all runs at once; public uniform edges
  and the non-private quantiles of PrivaTree* are shared by every run. A run
  whose edges coincide keeps fewer bins, as ``np.unique`` in the reference
  does (the missing bins are masked);
* the noisy histograms of every feature at every node (Eq. 4, two-sided
  geometric noise by :meth:`reference.mechanisms.TwoSidedGeometric.batch`,
  clamped at 0), the order of binary categorical features by noisy class-1
  share (section IV-A, spec A5), and the least weighted Gini candidate on the
  noisy counts with the reference's tie rule (first feature, first boundary,
  compared exactly as :mod:`reference.ties` does; Algorithm 1 lines 11-12), candidates filtered on noisy side totals (spec A6);
* the stopping rule: depth only, or Algorithm 1 line 7 (``stopping="paper"``,
  not DP: spec 4.3, G2);
* the leaf labels, section IV-C: monotone permute-and-flip on the exact class
  counts, drawn as report-noisy-max with exponential noise (the same law,
  Ding et al. 2021; as :meth:`reference.mechanisms.PermuteAndFlip.batch`).

Fallback: a subclass of :class:`~reference.privatree.PrivaTreeClassifier`
given as ``estimator`` that overrides any method of the algorithm other than
``_leaf_mechanism_epsilon`` (the audit mutants do) is not vectorised:
:meth:`PrivaTreeBatch.batch` then fits that estimator once per run
(``vectorised`` is False), with the same law and format at the reference's
speed. So is a tree whose heap arrays would not fit one chunk (very deep
trees; see :attr:`PrivaTreeBatch.vectorised`). Records that do not fit one
chunk (100,000 x 20 and more) are visited in row chunks, one run at a time:
each level's counts are summed over the chunks, so the trees are those of
one chunk.

The budget a batched fit spends is the reference's: :meth:`PrivaTreeBatch.ledger`
rebuilds, for one run, the :class:`reference.ledger.PrivacyLedger` the
reference would have written for the same tree (the same charges in the same
order, from the nodes whose histograms were drawn and the leaves).

References
----------
PrivaTree (Vos et al. 2023): Algorithm 1, Eqs. 4 and 7-10, sections
IV-A to IV-D; spec/privatree.md sections 2-4 (A1, A5, A6, G1, G2).
Gillenwater, Joseph, Kulesza (2021), JointExp. McKenna and Sheldon (2020),
permute-and-flip; Ding et al. (2021), its report-noisy-max form.
"""
from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral

import numpy as np

from reference.fast_path import register
from reference.validation import check_generator, check_X, shown
from reference.mechanisms.jointexp import JointExp, joint_exp_batch
from reference.ledger import PrivacyLedger, Scope
from reference.mechanisms import PermuteAndFlip, TwoSidedGeometric
from reference.ties import EXACT_COUNT, TIE_WINDOW, exact_shares_safe, resolve_rows, share_order, weighted_gini
from reference.privatree.learner import PrivaTreeClassifier, budget_split, charge_exact_quantiles, charge_stopping, \
    edge_cells
from reference.privatree.codes import code_dtype
from reference.privatree.trees import LEAF, SPLIT, Trees, row_ids, tree_tuples

__all__ = ["PrivaTreeBatch", "Trees", "joint_exp_batch"]

#: cap on the elements of the largest per-chunk array (runs x records x features or bins)
_CHUNK_ELEMENTS = 1 << 21
#: methods (and the quantile mechanism) of the reference whose override by a subclass makes
#: :meth:`PrivaTreeBatch.batch` fall back
_ALGORITHM = ("fit", "_check_params", "_check_schema", "_encode", "_edges", "_grow", "_best_split",
              "_bounds_for_fit", "_bin_codes", "_category_order", "_candidates_ok", "release", "_quantile_mechanism")


@dataclass
class _Prepared:
    """The validated input and public facts of one fit (as ``PrivaTreeClassifier.fit`` computes them)."""

    Z: np.ndarray
    y: np.ndarray
    K: int
    cats: dict
    bounds: dict
    num: list
    budget: dict
    d: int
    stopping: str
    private_q: bool
    leaf_epsilon: float


class _Records:
    """The records of ``n`` runs in row chunks (``spans``): each record's node (heap index) in every run,
    and its bins. When all the records of the ``n`` runs fit one chunk, the bins are computed as they were
    before row chunks existed (so such an input is fitted exactly as before); otherwise they are computed
    once, run by run, in the smallest integer dtype, and each level visits the records chunk by chunk
    (the counts summed over the chunks are the same)."""

    def __init__(self, p: _Prepared, edges: dict, n: int):
        N, m = p.Z.shape
        rows = max(1, N if n * N * (m + 4) <= _CHUNK_ELEMENTS else _CHUNK_ELEMENTS // (n * (m + 4)))
        self.spans = [(r, min(r + rows, N)) for r in range(0, N, rows)] or [(0, 0)]
        self.p, self.n = p, n
        self.node = np.zeros((n, N), dtype=np.int64)
        if len(self.spans) == 1:
            self._all = np.empty((n, N, m), dtype=np.int64)
            for j in range(m):
                self._all[:, :, j] = p.Z[:, j].astype(np.int64)[None, :] if j in p.cats else \
                    np.count_nonzero(edges[j][:, None, :] < p.Z[None, :, j, None], axis=2)  # E[b-1] < x <= E[b]
            return
        B = max([1] + [len(v) for v in p.cats.values()] + [e.shape[1] for e in edges.values()])
        self._all = np.empty((n, N, m), dtype=code_dtype(B))
        for j in range(m):
            if j in p.cats:
                self._all[:, :, j] = p.Z[None, :, j]
            elif n <= 16:  # a run's edges are sorted (+inf after its last): the edges below x, as above
                for r in range(n):
                    self._all[r, :, j] = np.searchsorted(edges[j][r], p.Z[:, j])
            else:
                for r0, r1 in self.spans:
                    self._all[:, r0:r1, j] = np.count_nonzero(edges[j][:, None, :] < p.Z[None, r0:r1, j, None], axis=2)

    def bins(self, r0, r1, j=None) -> np.ndarray:
        """Bin ids of records ``r0 .. r1 - 1`` in every run, ``(n, r1 - r0, m)``, or of feature ``j`` only."""
        return self._all[:, r0:r1] if j is None else self._all[:, r0:r1, j]

    def at(self, base, P, r0, r1):
        """``(here, slot)`` of records ``r0 .. r1 - 1``: whether each is at a node of the level whose slots
        start at heap index ``base`` (``P`` of them), and its slot there (0 elsewhere)."""
        slot = self.node[:, r0:r1] - base
        here = (slot >= 0) & (slot < P)
        return here, np.where(here, slot, 0)

    def histogram(self, base, P):
        """``histogram(j, Bj)``: the exact class counts of feature ``j`` (``Bj`` bins) at every node of the
        level, class-major ``(K, n, P, Bj)``."""
        n, K, y = self.n, self.p.K, self.p.y
        runs = np.arange(n)[:, None]
        cells = []  # per chunk: where the records of the level are, and their (class, run, slot) cell
        for r0, r1 in self.spans:
            here, slot = self.at(base, P, r0, r1)
            cells.append((here, (y[None, r0:r1] * (n * P) + runs * P + slot)[here]))

        def counts(j, Bj):
            out = np.zeros(K * n * P * Bj, dtype=np.int64)
            for (r0, r1), (here, cell) in zip(self.spans, cells):
                out += np.bincount(cell * Bj + self.bins(r0, r1, j)[here], minlength=K * n * P * Bj)
            return out.reshape(K, n, P, Bj)
        return counts


@register(PrivaTreeClassifier)
class PrivaTreeBatch:
    """The release of a PrivaTree fitted on ``data = (X, y)``, many at once.

    Parameters
    ----------
    edges : None, "exact" or int
        As in :meth:`reference.privatree.PrivaTreeClassifier.release`: ``None``
        the tree over bin ids; an integer ``G`` adds, per numerical bin edge,
        which of ``G`` equal cells of its public range it lies in; ``"exact"``
        the edges rounded to 6 decimals.
    estimator : class, default PrivaTreeClassifier
        The learner whose release is sampled: ``PrivaTreeClassifier`` or a
        subclass. One that overrides a method of the algorithm other than
        ``_leaf_mechanism_epsilon`` is fitted once per run (``vectorised`` False).
    **params
        The estimator's parameters (``epsilon``, ``max_depth``, ``bounds``,
        ``categories``, ``classes``, ``n_public``, ``max_bins``, ``E_max``,
        ``max_leaf_share``, ``epsilon_shares``, ``use_private_quantiles``,
        ``binning``, ``accounting``, ``stopping``, ``min_samples_leaf``),
        validated by the estimator itself. ``random_state`` is not one: every
        run draws from the ``rng`` given.

    Attributes
    ----------
    vectorised : bool
        False when :meth:`batch` falls back to the reference loop (``estimator``
        overrides the algorithm). :meth:`batch` also falls back, for that input,
        when one run's heap arrays would exceed ``_CHUNK_ELEMENTS`` (trees of
        depth about 15 and more, where the heap of ``2^(d+1) - 1`` slots is
        mostly empty and the reference grows only the nodes that exist).

    Notes
    -----
    ``m(data, rng)`` returns one release and ``m.batch(data, n, rng)`` a list of
    ``n``: the auditor's mechanism contract. Each release has the reference's
    law (Algorithm 1), not its random stream: a seed gives other trees than the
    reference's.
    """

    def __init__(self, *, edges=None, estimator=PrivaTreeClassifier, **params):
        if not (isinstance(estimator, type) and issubclass(estimator, PrivaTreeClassifier)):
            raise ValueError(f"estimator must be PrivaTreeClassifier or a subclass of it, got {shown(estimator)}")
        if "random_state" in params:
            raise ValueError("random_state is not a parameter of PrivaTreeBatch: every run draws from the rng "
                             f"it is given (got random_state={shown(params['random_state'])})")
        accepted = estimator().get_params(deep=False)
        unknown = sorted(k for k in params if k not in accepted)
        if unknown:
            raise ValueError(f"{estimator.__name__} takes no parameter(s) {unknown}; it accepts {sorted(accepted)}")
        if not (edges is None or edges == "exact"
                or (isinstance(edges, Integral) and not isinstance(edges, bool) and edges >= 1)):
            raise ValueError(f"edges must be None, 'exact' or a positive integer, got {shown(edges)}")
        self.edges = edges if edges is None or edges == "exact" else int(edges)
        self.estimator = estimator
        self.params = dict(params)
        self._estimator()._check_params()  # every parameter error is raised here, as fit would raise it
        self.vectorised = all(getattr(estimator, name) is getattr(PrivaTreeClassifier, name) for name in _ALGORITHM)

    def __repr__(self):
        args = "".join(f", {k}={v!r}" for k, v in self.params.items())
        est = "" if self.estimator is PrivaTreeClassifier else f", estimator={self.estimator.__name__}"
        return f"PrivaTreeBatch(edges={self.edges!r}{est}{args})"

    def _estimator(self):
        return self.estimator(**self.params)

    # ------------------------------------------------------------------ the mechanism contract
    def __call__(self, data, rng):
        return self.batch(data, 1, rng)[0]

    def batch(self, data, n, rng) -> list:
        """``n`` independent releases of trees fitted on ``data = (X, y)``."""
        check_generator(rng)
        if isinstance(n, bool) or not isinstance(n, Integral) or n < 1:
            raise ValueError(f"n must be a positive integer, got {shown(n)}")
        n = int(n)
        if not self.vectorised:
            return [self._reference_release(data, rng) for _ in range(n)]
        p = self._prepare(data)
        if self._heap_elements(p) > _CHUNK_ELEMENTS:  # a very deep tree: the reference grows only its nodes
            return [self._reference_release(data, rng) for _ in range(n)]
        out = []
        for size in self._chunks(p, n):
            out.extend(self.releases(self.fit_trees(data, size, rng, prepared=p), prepared=p))
        return out

    def _reference_release(self, data, rng):
        """The fallback: one reference fit, seeded from ``rng`` as the audit target's
        ``ReleaseMechanism`` seeds it."""
        est = self._estimator()
        est.random_state = rng.spawn(1)[0]  # a child of the run's SeedSequence (issue 26 finding 6)
        X, y = data
        est.fit(X, y)
        return est.release() if self.edges is None else est.release(self.edges)

    def _per_run_elements(self, p: _Prepared) -> int:
        """A bound on the array elements one run takes: its records' bins and nodes (``N (m + 4)``), and
        :meth:`_heap_elements`. Above ``_CHUNK_ELEMENTS``, runs are fitted one at a time in row chunks."""
        N, m = p.Z.shape
        return N * (m + 4) + self._heap_elements(p)

    def _heap_elements(self, p: _Prepared) -> int:
        """The heap arrays and histograms of one depth-``d`` tree (``2^(d+1) - 1`` slots, up to ``B`` bins,
        ``K`` classes): the part of a run that row chunks do not divide."""
        B = max([self._estimator().max_bins] + [len(v) for v in p.cats.values()])
        return (2 ** (p.d + 1)) * (B * p.K + 8)

    def _chunks(self, p: _Prepared, n: int):
        size = max(1, _CHUNK_ELEMENTS // self._per_run_elements(p))
        while n > 0:
            yield min(size, n)
            n -= size

    # ------------------------------------------------------------------ validation (as PrivaTreeClassifier.fit)
    def _prepare(self, data) -> _Prepared:
        """The input checks and public facts of ``PrivaTreeClassifier.fit``, through the estimator's own
        helpers: the same errors for bad input, the same clipping, encoding and budget split."""
        try:
            X, y = data
        except (TypeError, ValueError):
            raise ValueError(f"data must be a pair (X, y), got {type(data).__name__}") from None
        est = self._estimator()
        eps, d = est._check_params()
        y = np.asarray(y)
        X = check_X(est, X, reset=True, numeric=not est.categories)  # fit's checks: 2-D, >= 1 feature, finite
        Xa = np.asarray(X, dtype=object)
        if y.shape != (Xa.shape[0],):
            raise ValueError(f"y must be 1-D with one label per row of X, got shape {y.shape}")
        m = Xa.shape[1]
        classes, cats, bounds = est._check_schema(m)
        index = {c: k for k, c in enumerate(classes.tolist())}
        try:
            yk = np.array([index[v] for v in y.tolist()], dtype=np.int64)
        except KeyError as e:
            raise ValueError(f"y holds the label {shown(e.args[0])}, not among classes {classes.tolist()}") from None
        Z, _ = est._encode(X, cats, bounds, fitting=True)
        bounds = est._bounds_for_fit(bounds, Z)
        num = [j for j in range(m) if j not in cats]
        private_q = est.binning == "quantile" and est.use_private_quantiles
        budget = budget_split(eps, d, classes.size, m_num=len(num), m_cat=len(cats), n_public=est.n_public,
                              E_max=est.E_max, max_leaf_share=est.max_leaf_share,
                              epsilon_shares=est.epsilon_shares, private_quantiles=private_q,
                              accounting=est.accounting)
        stopping = est.stopping or ("paper" if est.accounting == "paper" else "depth")
        return _Prepared(Z=Z, y=yk, K=int(classes.size), cats=cats, bounds=bounds, num=num, budget=budget, d=d,
                         stopping=stopping, private_q=private_q,
                         leaf_epsilon=float(est._leaf_mechanism_epsilon(budget["leaf"])))

    # ------------------------------------------------------------------ bin edges (Algorithm 1 lines 3-5)
    def _edges(self, p: _Prepared, n: int, rng) -> dict:
        """Numerical feature -> (n, B) bin edges per run, ``+inf`` after the run's last edge
        (the upper bound ``hi``): the reference's ``np.unique(inner + [hi])``."""
        est = self._estimator()
        B = est.max_bins
        levels = np.linspace(0.0, 1.0, B + 1)[1:-1]
        out = {}
        for j in p.num:
            lo, hi = p.bounds[j]
            col = p.Z[:, j]
            shared = True
            if p.d == 0:
                inner = np.array([])
            elif est.binning == "uniform":
                inner = np.linspace(lo, hi, B + 1)[1:-1]
            elif not est.use_private_quantiles:
                inner = np.quantile(col, levels) if col.size else np.array([])
            elif lo == hi:
                inner = np.array([])
            else:
                inner = joint_exp_batch(JointExp(p.budget["quantile"], levels, (lo, hi)), col, n, rng)
                shared = False
            if shared:
                e = np.unique(np.concatenate((inner, [hi])))
                out[j] = np.broadcast_to(e, (n, e.size))
                continue
            e = np.concatenate((inner, np.full((n, 1), hi)), axis=1)  # rows sorted: JointExp sorts, inner <= hi
            dup = np.zeros(e.shape, dtype=bool)
            dup[:, 1:] = e[:, 1:] == e[:, :-1]
            if dup.any():  # equal edges (probability ~0): keep each value once, as np.unique does
                e = np.sort(np.where(dup, np.inf, e), axis=1)
            out[j] = e
        return out

    # ------------------------------------------------------------------ the algorithm, vectorised
    def fit_trees(self, data, n: int, rng, *, prepared: _Prepared | None = None) -> Trees:
        """Fit ``n`` trees on ``data`` (Algorithm 1), as :class:`Trees`."""
        if not self.vectorised:
            raise ValueError(f"{self.estimator.__name__} overrides the algorithm: PrivaTreeBatch.batch fits it "
                             "once per run (the reference fallback), fit_trees cannot")
        check_generator(rng)
        p = self._prepare(data) if prepared is None else prepared
        N, m = p.Z.shape
        K, d = p.K, p.d
        edges = self._edges(p, n, rng)
        n_bins = np.empty((n, m), dtype=np.int64)
        for j in range(m):
            n_bins[:, j] = len(p.cats[j]) if j in p.cats else np.count_nonzero(np.isfinite(edges[j]), axis=1)
        rec = _Records(p, edges, n)
        B_max = int(n_bins.max()) if m else 1
        B_feat = n_bins.max(axis=0) if m else np.zeros(0, dtype=np.int64)
        H = 2 ** (d + 1) - 1
        kind = np.zeros((n, H), dtype=np.int8)
        feature = np.full((n, H), -1, dtype=np.int64)
        cut = np.zeros((n, H), dtype=np.int64)
        left = np.zeros((n, H, B_max), dtype=bool)
        label = np.zeros((n, H), dtype=np.int64)
        measured = np.zeros((n, H), dtype=bool)
        alive = np.zeros((n, H), dtype=bool)
        alive[:, 0] = True
        runs = np.arange(n)[:, None]
        rate = PermuteAndFlip(p.leaf_epsilon, 1.0, monotonic=True).rate  # section IV-C
        floor = max(self._estimator().min_samples_leaf, 1e-12)  # spec A6: on noisy side totals
        for depth in range(d + 1):
            P, base = 2 ** depth, 2 ** depth - 1
            counts = np.zeros(n * P * K, dtype=np.int64)
            for r0, r1 in rec.spans:
                here, slot = rec.at(base, P, r0, r1)
                counts += np.bincount(((runs * P + slot) * K + p.y[None, r0:r1])[here], minlength=n * P * K)
            counts = counts.reshape(n, P, K)
            live = alive[:, base:base + P]
            stop = np.full((n, P), depth == d)
            if p.stopping == "paper":  # Algorithm 1 line 7: data-dependent, not DP (spec 4.3, G2)
                stop |= (counts.sum(axis=2) <= 1) | (np.count_nonzero(counts, axis=2) == 1)
            gr, gs = np.nonzero(live & ~stop)
            split = np.zeros(gr.size, dtype=bool)
            if gr.size:
                best_j, best_s, best_left = self._best_splits(p, rec.histogram(base, P), n_bins, B_feat, B_max,
                                                              gr, gs, floor, rng)
                split = best_j >= 0
                h = base + gs
                measured[gr, h] = True
                sr, sh = gr[split], h[split]
                kind[sr, sh] = SPLIT
                feature[sr, sh] = best_j[split]
                cut[sr, sh] = best_s[split]
                left[sr, sh] = best_left[split]
                alive[sr, 2 * sh + 1] = True
                alive[sr, 2 * sh + 2] = True
            # leaves: stopped nodes and nodes without a valid candidate (Algorithm 1 line 7; section IV-C)
            leaf = live.copy()
            leaf[gr[split], gs[split]] = False
            lr, ls = np.nonzero(leaf)
            if lr.size:
                noisy = rate * counts[lr, ls].astype(float) + rng.exponential(1.0, size=(lr.size, K))
                kind[lr, base + ls] = LEAF
                label[lr, base + ls] = np.argmax(noisy, axis=1)
            for r0, r1 in rec.spans if depth < d and m else ():  # records of split nodes move to a child
                h = rec.node[:, r0:r1]
                moving = rec.at(base, P, r0, r1)[0] & (kind[runs, h] == SPLIT)
                j = np.maximum(feature[runs, h], 0)
                b = np.take_along_axis(rec.bins(r0, r1), j[:, :, None], axis=2)[:, :, 0]
                go_left = left[runs, h, b]
                rec.node[:, r0:r1] = np.where(moving, 2 * h + 1 + ~go_left, h)
        return Trees(kind=kind, feature=feature, cut=cut, left=left, label=label, measured=measured,
                     edges=edges, n_bins=n_bins)

    def _best_splits(self, p, histogram, n_bins, B_feat, B_max, gr, gs, floor, rng):
        """Noisy histograms of every feature at the growing nodes ``(gr, gs)`` and their least-Gini
        candidate (Algorithm 1 lines 11-12; Eq. 4; section IV-A): ``(feature, boundary, left bins)``
        per node, feature -1 when no candidate passes the noisy-side-total filter. ``histogram(j, Bj)``:
        the exact class counts of feature ``j`` at every node of the level, class-major ``(K, n, P, Bj)``."""
        K = p.K
        G = gr.size
        best_g = np.full(G, np.inf)
        best_j = np.full(G, -1, dtype=np.int64)
        best_s = np.zeros(G, dtype=np.int64)
        best_left = np.zeros((G, B_max), dtype=bool)
        best_sides = np.zeros((2, K, G))  # the best candidate's (left, right) class counts, for exact ties
        for j in range(n_bins.shape[1]):
            Bj = int(B_feat[j])
            cat = j in p.cats
            eps_j = p.budget["node_cat" if cat else "node_num"]
            exact = histogram(j, Bj)[:, gr, gs]  # exact class counts, class-major: (K, G, Bj)
            noisy = TwoSidedGeometric(eps_j, 1.0).batch(exact, 1, rng)[0]  # Eq. 4
            nb = n_bins[gr, j]
            valid = np.arange(Bj)[None, :] < nb[:, None]  # bins a run does not have are never drawn
            Hn = np.where(valid[None], np.maximum(noisy, 0), 0).astype(float)
            if Bj < 2:
                continue
            if cat and K == 2:  # section IV-A, spec A5: by noisy class-1 share, 0.5 when empty, ties by code
                tot = Hn[0] + Hn[1]
                share = np.divide(Hn[1], tot, out=np.full(tot.shape, 0.5), where=tot != 0)
                order = np.argsort(share, axis=1, kind="stable")
                if not exact_shares_safe(tot):  # float shares could round two different shares together
                    order = np.stack([share_order(Hn[:, r].T) for r in range(G)])
                L = np.cumsum(np.take_along_axis(Hn, order[None], axis=2), axis=2)[:, :, :-1]
            else:
                L = np.cumsum(Hn, axis=2)[:, :, :-1]
            R = Hn.sum(axis=2)[:, :, None] - L
            # side totals and sums of squares over the classes (integer-valued: any summation order is exact)
            nL, nR, sqL, sqR = L[0].copy(), R[0].copy(), L[0] ** 2, R[0] ** 2
            for k in range(1, K):
                nL += L[k]
                nR += R[k]
                sqL += L[k] ** 2
                sqR += R[k] ** 2
            ok = (nL >= floor) & (nR >= floor) & (np.arange(Bj - 1)[None, :] < (nb - 1)[:, None])
            with np.errstate(divide="ignore", invalid="ignore"):
                gini = (nL - sqL / nL + nR - sqR / nR) / (nL + nR)  # weighted Gini, as the reference writes it
            gini = np.where(ok, gini, np.inf)
            big = bool(Hn.size) and Hn.max() >= EXACT_COUNT  # float squares no longer exact: all compared exactly
            exact = lambda r, i: weighted_gini(L[:, r, i], R[:, r, i])  # noqa: E731 (ties: reference.ties)
            s = resolve_rows(np.where(ok, 0.0, np.inf) if big else gini, exact)  # the first exact minimum
            g = gini[np.arange(G), s]
            better = g < best_g - TIE_WINDOW
            with np.errstate(invalid="ignore"):
                close = np.isfinite(g) & np.isfinite(best_g) & (big | (np.abs(g - best_g) <= TIE_WINDOW))
            for r in np.flatnonzero(close).tolist():  # strict: the first feature keeps an exact tie
                better[r] = exact(r, s[r]) < weighted_gini(best_sides[0, :, r], best_sides[1, :, r])
            if not better.any():
                continue
            rows = np.arange(G)
            best_sides[0] = np.where(better[None], L[:, rows, s], best_sides[0])
            best_sides[1] = np.where(better[None], R[:, rows, s], best_sides[1])
            lb = np.zeros((G, B_max), dtype=bool)
            if cat and K == 2:  # the bins before and at the boundary in the noisy order
                np.put_along_axis(lb, order, np.arange(Bj)[None, :] <= s[:, None], axis=1)
            else:
                lb[:, :Bj] = (np.arange(Bj)[None, :] <= s[:, None]) & valid
            best_g = np.where(better, g, best_g)
            best_j = np.where(better, j, best_j)
            best_s = np.where(better, s, best_s)
            best_left = np.where(better[:, None], lb, best_left)
        return best_j, best_s, best_left

    # ------------------------------------------------------------------ releases
    def releases(self, trees: Trees, *, prepared: _Prepared) -> list:
        """The ``release(edges)`` of every fitted tree, as the reference formats it: nested tuples
        ``("node", feature, key, left, right)`` / ``("leaf", class_index)``, with the numerical edges'
        cells (or exact values) first when ``edges`` is given. Equal subtrees and equal edge cells are
        built once."""
        p = prepared
        n = len(trees)
        binary = [j in p.cats and p.K == 2 for j in range(trees.n_bins.shape[1])]
        tree_id, built_trees = tree_tuples(trees, binary)
        if self.edges is None:
            return [built_trees[k] for k in tree_id]
        if self.edges == "exact":
            return [(tuple((j, tuple(round(float(v), 6) for v in trees.edges[j][r, : trees.n_bins[r, j]]))
                           for j in p.num), built_trees[tree_id[r]]) for r in range(n)]
        cells = {j: self._edge_cells(trees.edges[j], p.bounds[j]) for j in p.num}
        if p.num:
            edge_id, edge_first = row_ids(np.concatenate([cells[j] for j in p.num], axis=1))
        else:
            edge_id, edge_first = np.zeros(n, dtype=np.int64), np.zeros(1, dtype=np.int64)
        built_edges = [tuple((j, tuple(int(v) for v in cells[j][r, : trees.n_bins[r, j]])) for j in p.num)
                       for r in edge_first]
        _, pair_first, pair_id = np.unique(edge_id * len(built_trees) + tree_id, return_index=True,
                                           return_inverse=True)
        built = [(built_edges[edge_id[r]], built_trees[tree_id[r]]) for r in pair_first]
        return [built[k] for k in pair_id.ravel()]

    def _edge_cells(self, e, bound):
        """Which of ``G`` equal cells of ``[lo, hi]`` every edge lies in (``-1`` after the run's edges),
        the expression of ``PrivaTreeClassifier.release``."""
        finite = np.isfinite(e)
        return np.where(finite, edge_cells(np.where(finite, e, bound[0]), bound, self.edges), -1)

    # ------------------------------------------------------------------ the budget spent
    def ledger(self, trees: Trees, r: int, *, prepared: _Prepared) -> PrivacyLedger:
        """The :class:`reference.ledger.PrivacyLedger` of run ``r``: the charges
        ``PrivaTreeClassifier.fit`` makes for the same tree, in the same order (quantiles, then the
        nodes in preorder: each measured node's histograms, each leaf's permute-and-flip)."""
        p = prepared
        ledger = PrivacyLedger("add-remove")
        est = self._estimator()
        if p.d > 0 and p.private_q:
            B = self._estimator().max_bins
            for j in p.num:
                if p.bounds[j][0] != p.bounds[j][1]:
                    mech = JointExp(p.budget["quantile"], np.linspace(0.0, 1.0, B + 1)[1:-1], p.bounds[j])
                    ledger.charge(f"quantiles[{j}]", "JointExp", p.budget["quantile"], scope=Scope.root(),
                                  sensitivity=2.0, delta=mech.residual_delta,
                                  note="Algorithm 1 lines 3-5; every record is in every feature's quantiles")
        elif p.d > 0 and est.binning == "quantile":  # PrivaTree*: exact quantiles, not DP
            for j in p.num:
                charge_exact_quantiles(ledger, j)
        if p.d > 0 and p.stopping == "paper":
            charge_stopping(ledger)

        def walk(h, scope, path):
            if trees.measured[r, h]:
                for j in range(trees.n_bins.shape[1]):
                    ledger.charge(f"histogram[{j}]{path or '^'}", "TwoSidedGeometric",
                                  p.budget["node_cat" if j in p.cats else "node_num"], scope=scope,
                                  note="Eq. 4; one record changes one count of each feature's histogram")
            if trees.kind[r, h] == SPLIT:
                part = f"split{path or '^'}"
                walk(2 * h + 1, scope.child(part, "L"), path + "L")
                walk(2 * h + 2, scope.child(part, "R"), path + "R")
            else:
                ledger.charge(f"leaf{path or '^'}", "PermuteAndFlip(monotonic)", p.budget["leaf"], scope=scope,
                              delta=PermuteAndFlip(p.budget["leaf"], 1.0, monotonic=True).residual_delta(p.K),
                              note="section IV-C; leaves partition the records; float flip probabilities")

        walk(0, Scope.root(), "")
        return ledger

    def prepare(self, data) -> _Prepared:
        """The validated input and public facts of a fit on ``data`` (for :meth:`fit_trees`,
        :meth:`releases` and :meth:`ledger`)."""
        return self._prepare(data)
