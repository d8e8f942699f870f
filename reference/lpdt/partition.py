"""Partitions for LPDT: the max-edge tree grown on public data, and the regular grid.

Ma, Zhang, Cai and Yang, "Decision Tree for Locally Private Estimation with
Public Data" (NeurIPS 2023; Ma et al. 2023, slide
"Max-edge Partition Rule"; ``spec/lpdt.md`` sections 3.1 and 3.2).

The max-edge rule splits a cell at the midpoint of one of its longest edges,
choosing among the longest edges the one whose split most reduces the sum of
squared errors of the *public* labels. Edge lengths are measured relative to
the public ``bounds`` (i.e. after scaling every feature to ``[0, 1]``, the
spec's recommendation A11), so midpoint halving keeps them exact powers of two
and "longest" is an exact comparison.

A node becomes a leaf when (spec 3.2, the authors' code semantics):

* its depth is ``max_depth`` (root depth 0), or
* it holds fewer than ``min_samples_split`` public points, or
* no longest edge gives two children with at least ``min_samples_leaf``
  public points each.

Nothing here reads private data: the partition is public (Theorem 3.1's
hypothesis "any partition").

Routing is by thresholds only (``x[feature] < threshold`` goes left), so a
point outside the box reaches the boundary leaf it is nearest to (spec 3.6:
we do not predict 0 outside the box as the authors' code does).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from reference.tree import Node, leaf, predict_values, split

__all__ = ["TreePartition", "GridPartition", "grow_max_edge", "regular_partition"]


@dataclass
class TreePartition:
    """A binary tree of axis-aligned midpoint splits: a :class:`reference.tree.Node` whose leaves hold
    their leaf index ``0 .. n_leaves - 1`` (in preorder), plus what the public data says of each leaf.

    ``feature``, ``threshold``, ``left``, ``right``, ``leaf`` and ``depth`` are the same tree as
    arrays over the nodes in preorder: node ``v`` is internal when ``feature[v] >= 0``, its children
    are ``left[v]`` (``x[feature] < threshold``) and ``right[v]``; a leaf has ``leaf[v] >= 0``.
    """

    root: Node = field(default_factory=lambda: leaf(0))
    #: per leaf: public mean label and public count (used by the denominator guard)
    leaf_public_mean: list = field(default_factory=list)
    leaf_public_count: list = field(default_factory=list)
    #: per leaf: True when it stopped before ``max_depth`` for lack of public data
    leaf_stopped_early: list = field(default_factory=list)

    @cached_property
    def _arrays(self) -> dict:
        cols = {k: [] for k in ("feature", "threshold", "left", "right", "leaf", "depth")}

        def walk(node, depth):
            v = len(cols["feature"])
            for k, val in (("feature", node.feature), ("threshold", 0.0 if node.is_leaf else node.threshold),
                           ("left", -1), ("right", -1), ("leaf", node.value if node.is_leaf else -1),
                           ("depth", depth)):
                cols[k].append(val)
            if not node.is_leaf:
                cols["left"][v] = walk(node.left, depth + 1)
                cols["right"][v] = walk(node.right, depth + 1)
            return v

        walk(self.root, 0)
        return cols

    feature = property(lambda self: self._arrays["feature"])
    threshold = property(lambda self: self._arrays["threshold"])
    left = property(lambda self: self._arrays["left"])
    right = property(lambda self: self._arrays["right"])
    leaf = property(lambda self: self._arrays["leaf"])
    depth = property(lambda self: self._arrays["depth"])

    @property
    def n_leaves(self) -> int:
        return len(self.leaf_public_mean)

    @property
    def max_leaf_depth(self) -> int:
        return max(d for d, lf in zip(self.depth, self.leaf) if lf >= 0)

    def apply(self, X) -> np.ndarray:
        """Leaf index of every row of ``X`` (shape (n, d)), routed by thresholds."""
        X = np.asarray(X, dtype=float)
        if X.ndim == 1:
            X = X[None, :]
        return predict_values(self.root, X)

    def structure(self) -> tuple:
        """The public structure, canonical and hashable: ``(feature, threshold)`` per node in preorder."""
        return tuple((int(f), round(float(t), 9) if f >= 0 else 0.0) for f, t in zip(self.feature, self.threshold))


@dataclass
class GridPartition:
    """A regular grid of ``n_bins`` equal bins per feature over the public ``bounds`` (PHIST's partition)."""

    bounds: np.ndarray
    n_bins: int

    @property
    def n_leaves(self) -> int:
        return int(self.n_bins ** self.bounds.shape[0])

    def apply(self, X) -> np.ndarray:
        X = np.asarray(X, dtype=float)
        if X.ndim == 1:
            X = X[None, :]
        low, high = self.bounds[:, 0], self.bounds[:, 1]
        b = np.floor((X - low) / (high - low) * self.n_bins).astype(np.int64)
        b = np.clip(b, 0, self.n_bins - 1)  # outside the box: the nearest boundary cell
        return b @ (self.n_bins ** np.arange(X.shape[1], dtype=np.int64))

    def structure(self) -> tuple:
        return (("grid", int(self.n_bins)),) + tuple((float(lo), float(hi)) for lo, hi in self.bounds)


def _sse(y: np.ndarray) -> float:
    return float(((y - y.mean()) ** 2).sum()) if y.size else 0.0


def grow_max_edge(X_pub: np.ndarray, y_pub: np.ndarray, bounds: np.ndarray, max_depth: int,
                  min_samples_leaf: int = 1, min_samples_split: int = 2) -> TreePartition:
    """Grow the max-edge partition on public data (spec 3.1 "LPDT-M", 3.2).

    Parameters
    ----------
    X_pub : ndarray of shape (n_q, d)
        Public features.
    y_pub : ndarray of shape (n_q,)
        Public labels (already clipped to the public label range).
    bounds : ndarray of shape (d, 2)
        The public domain box; edge lengths are relative to it.
    max_depth : int
        Depth ``p`` of Theorem 3.4.
    min_samples_leaf : int
        ``n_l`` of Theorem 3.4: the fewest public points each child must hold.
    min_samples_split : int
        A node with fewer public points is not split.

    Returns
    -------
    TreePartition
    """
    part = TreePartition()
    width = bounds[:, 1] - bounds[:, 0]

    def grow(idx: np.ndarray, lo: np.ndarray, hi: np.ndarray, depth: int) -> Node:
        best = None
        if depth < max_depth and idx.size >= min_samples_split:
            rel = (hi - lo) / width
            longest = np.flatnonzero(rel == rel.max())
            y_node = y_pub[idx]
            total = _sse(y_node)
            for k in longest:  # ties in the reduction go to the lowest feature index
                mid = (lo[k] + hi[k]) / 2.0
                go_left = X_pub[idx, k] < mid
                n_left = int(go_left.sum())
                if n_left < min_samples_leaf or idx.size - n_left < min_samples_leaf:
                    continue
                gain = (total - _sse(y_node[go_left]) - _sse(y_node[~go_left])) / idx.size
                if best is None or gain > best[0]:
                    best = (gain, k, mid, go_left)
        if best is None:
            node = leaf(part.n_leaves)
            part.leaf_public_mean.append(float(y_pub[idx].mean()) if idx.size else float("nan"))
            part.leaf_public_count.append(int(idx.size))
            part.leaf_stopped_early.append(depth < max_depth)
            return node
        _, k, mid, go_left = best
        hi_left, lo_right = hi.copy(), lo.copy()
        hi_left[k] = mid
        lo_right[k] = mid
        left = grow(idx[go_left], lo, hi_left, depth + 1)
        return split(int(k), left, grow(idx[~go_left], lo_right, hi, depth + 1), threshold=float(mid))

    part.root = grow(np.arange(X_pub.shape[0]), bounds[:, 0].astype(float), bounds[:, 1].astype(float), 0)
    return part


def regular_partition(bounds: np.ndarray, depth: int) -> TreePartition:
    """The data-independent max-edge partition of ``depth`` levels: a regular dyadic grid
    (every longest edge halved in turn, lowest feature first). LPDT "without public data"."""
    part = TreePartition()
    width = bounds[:, 1] - bounds[:, 0]

    def grow(lo, hi, dep) -> Node:
        if dep >= depth:
            node = leaf(part.n_leaves)
            part.leaf_public_mean.append(float("nan"))
            part.leaf_public_count.append(0)
            part.leaf_stopped_early.append(False)
            return node
        rel = (hi - lo) / width
        k = int(np.flatnonzero(rel == rel.max())[0])
        mid = (lo[k] + hi[k]) / 2.0
        hl, lr = hi.copy(), lo.copy()
        hl[k] = mid
        lr[k] = mid
        left = grow(lo, hl, dep + 1)
        return split(k, left, grow(lr, hi, dep + 1), threshold=float(mid))

    part.root = grow(bounds[:, 0].astype(float), bounds[:, 1].astype(float), 0)
    return part
