"""Two bugs of real implementations that only some inputs reach, as oracle validation candidates.

* :class:`EdgeOffByOne`: bins assigned by ``np.digitize(x, edges, right=False)`` (``E[b-1] <= x < E[b]``, the
  upper bound clipped into the last bin) instead of PrivaTree's ``E[b-1] < x <= E[b]``. Only a record lying on an
  edge moves, so only the built-in input "8 records on bin edges and bounds" of
  :data:`audit.results.learner_references.CLASSIFICATION_INPUTS` can reveal it.
* :class:`LabelsAsIndices`: the classes read from the data (``np.unique(y)``) and the labels used as histogram
  indices, as if they were ``0..K-1``. With labels ``{1, 2}`` the class-2 records are counted as class 0 of the
  next bin (and the last bin's dropped); the built-in input "8 records, labels {1, 2}" reveals it.

Both are compared with the ``privatree`` learner reference (``python -m audit compare
audit.oracle.reach_cases:EdgeOffByOne --reference privatree``); ``tests/test_compare_reach.py`` checks that each
reads "different" and that the reference against itself reads "same".
"""
from __future__ import annotations

import math

import numpy as np

from reference.mechanisms import TwoSidedGeometric
from reference.privatree import PrivaTreeClassifier
from reference.ties import first_minimum, weighted_gini

__all__ = ["EdgeOffByOne", "LabelsAsIndices"]


class EdgeOffByOne(PrivaTreeClassifier):
    """Wrong on purpose: a record on a bin edge goes to the bin above (``np.digitize(..., right=False)``)."""

    def _bin_codes(self, col, edges, labels, K, n_bins):
        if edges is None:
            return super()._bin_codes(col, edges, labels, K, n_bins)
        bins = np.minimum(np.searchsorted(edges, col, side="right"), np.size(edges) - 1)  # edges <= x
        return bins * K + labels

    def batched_release_sampler(self, edges=None):
        return None  # fitted one draw at a time (the batch would not run the patched binning)


class LabelsAsIndices(PrivaTreeClassifier):
    """Wrong on purpose: classes from ``np.unique(y)``, labels used as histogram indices (``0..K-1`` assumed);
    the leaves' labels are then published as indices of the public classes again."""

    def fit(self, X, y):
        y = np.asarray(y)
        public = list(self.classes)
        seen = np.unique(y).tolist()
        self._raw = y.astype(np.int64)
        saved = self.classes
        self.classes = seen if len(seen) >= 2 else public
        try:
            super().fit(X, y)
        finally:
            self.classes = saved
            del self._raw
        remap = {k: public.index(c) for k, c in enumerate(self.classes_.tolist())}
        self.tree_ = _relabel(self.tree_, remap)
        self.classes_ = np.asarray(public)
        return self

    def _best_split(self, idx, y, scope, path):
        c = self._ctx
        K, rng = c["K"], c["rng"]
        raw = self._raw[idx]
        best, best_gini = None, math.inf
        for j, B in enumerate(c["n_bins"]):
            eps_j = c["budget"]["node_cat" if j in c["cats"] else "node_num"]
            flat = self._node_bins(idx, j) * K + raw  # the bug: a label is not its index
            exact = np.bincount(flat, minlength=B * K)[: B * K]
            H = np.maximum(TwoSidedGeometric(eps_j, 1.0).sample(exact, rng), 0).reshape(B, K).astype(float)
            L = np.cumsum(H, axis=0)[:-1]
            R = H.sum(axis=0)[None, :] - L
            nL, nR = L.sum(axis=1), R.sum(axis=1)
            ok = (nL >= 1) & (nR >= 1)
            if not np.any(ok):
                continue
            with np.errstate(divide="ignore", invalid="ignore"):
                gini = (nL - (L ** 2).sum(axis=1) / nL + nR - (R ** 2).sum(axis=1) / nR) / (nL + nR)
            gini = np.where(ok, gini, math.inf)
            s = first_minimum(gini, lambda i: weighted_gini(L[i], R[i]))  # the reference's exact ties
            g = weighted_gini(L[s], R[s])
            if best is None or g < best_gini:
                best_gini, best = g, (j, s, np.arange(s + 1))
        return best

    def batched_release_sampler(self, edges=None):
        return None


def _relabel(node, remap):
    if node.is_leaf:
        node.value = remap[int(node.value)]
        return node
    _relabel(node.left, remap)
    _relabel(node.right, remap)
    return node
