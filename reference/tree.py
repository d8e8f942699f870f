"""The one fitted-tree structure of the reference learners: nodes, routing, prediction and release.

A fitted tree is its root :class:`Node`. An internal node (``feature >= 0``)
sends a row left when the row's value of ``feature`` is below ``threshold``
(numerical) or is one of ``left_categories`` (categorical); a leaf holds its
``value`` (a class index, a mean, a class-probability array, a leaf index).
``key`` is the split as the learner publishes it (a bin id, a category code,
a tuple of codes), which is what :func:`nested` releases.

Each learner grows on its own coordinates and routes with the same code:
PrivaTree and the histogram baselines on bin ids (an integer key sends the
bins ``0..key`` left; a tuple key lists them), DiPriMe and LPDT's partition on
raw feature values (``x < threshold``, or ``x`` in the categories sent left).
The random decision trees of 001_ are complete and drawn by the thousand for
the auditor, so they are fitted and routed as heap arrays
(:func:`route_heap`); :func:`heap_tree` gives any one of them as a
:class:`Node`.

In the spirit of scikit-learn's shared ``Tree``: one structure, one routing,
one release format per family, so an audit of one learner's release reads
the same kind of object as every other's.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Iterator

import numpy as np

__all__ = ["Node", "split", "leaf", "route", "predict_values", "nested", "preorder", "bin_split", "route_heap",
           "heap_tree"]


@dataclass
class Node:
    """A node: internal (``feature >= 0``) or leaf (``value`` set)."""

    feature: int = -1
    threshold: float = math.nan
    left_categories: tuple = ()
    categorical: bool = False
    left: "Node | None" = None
    right: "Node | None" = None
    value: object = None  # float (regression), class index or class-probability array (classification), ...
    #: the split as the learner publishes it (see :func:`nested`); ``None``: the threshold or category set
    key: object = None

    @property
    def is_leaf(self) -> bool:
        return self.feature < 0

    def goes_left(self, column: np.ndarray) -> np.ndarray:
        """Which values of this node's feature go left."""
        if self.categorical:
            return np.isin(column, np.asarray(self.left_categories, dtype=np.asarray(column).dtype))
        return np.asarray(column) < self.threshold


def split(feature: int, left: Node, right: Node, *, threshold: float | None = None, categories=None,
          key=None) -> Node:
    """An internal node: ``x < threshold`` or ``x in categories`` goes left."""
    if (threshold is None) == (categories is None):
        raise ValueError("a split needs exactly one of threshold and categories")
    if categories is not None:
        return Node(int(feature), left_categories=tuple(categories), categorical=True, left=left, right=right, key=key)
    return Node(int(feature), threshold=float(threshold), left=left, right=right, key=key)


def bin_split(feature: int, key, left: Node, right: Node) -> Node:
    """A split on bin ids as PrivaTree and the histogram baselines write it (Algorithm 1 of 004_): an integer
    ``key`` sends bins ``<= key`` left (bins are never negative, except an unseen category's -1, which goes
    right: the bins ``0..key`` are the category set), a tuple ``key`` sends the bins it lists."""
    if isinstance(key, tuple):
        return split(feature, left, right, categories=key, key=key)
    return split(feature, left, right, categories=range(int(key) + 1), key=key)


def leaf(value) -> Node:
    return Node(value=value)


def route(node: Node, X: np.ndarray, out: np.ndarray, idx: np.ndarray | None = None) -> np.ndarray:
    """Write each row's leaf value into ``out`` (shape ``(n,)`` or ``(n, C)``), all rows of a node at once."""
    idx = np.arange(X.shape[0]) if idx is None else idx
    if node.is_leaf:
        out[idx] = node.value
        return out
    left = node.goes_left(X[idx, node.feature])
    route(node.left, X, out, idx[left])
    route(node.right, X, out, idx[~left])
    return out


def predict_values(node: Node, X: np.ndarray, dtype=np.int64) -> np.ndarray:
    """The leaf value of every row of ``X`` (scalar leaves)."""
    X = np.asarray(X)
    return route(node, X, np.empty(X.shape[0], dtype=dtype))


def preorder(node: Node) -> Iterator[Node]:
    """The nodes, parent before children, left before right."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        if not n.is_leaf:
            stack += [n.right, n.left]


def nested(node: Node, leaf_value: Callable = lambda v: v, key: Callable | None = None) -> tuple:
    """The tree as nested tuples, hashable and canonical: ``("node", feature, key, left, right)`` and
    ``("leaf", leaf_value(value))`` (PrivaTree's release format and its baselines'). ``key(node)``
    overrides the published split (default: the node's ``key``)."""
    if node.is_leaf:
        return ("leaf", leaf_value(node.value))
    k = node.key if key is None else key(node)
    return ("node", node.feature, k, nested(node.left, leaf_value, key), nested(node.right, leaf_value, key))


# --------------------------------------------------------------------------- complete trees as heap arrays
def route_heap(X: np.ndarray, attributes: np.ndarray, thresholds: np.ndarray, max_depth: int) -> np.ndarray:
    """Leaf index (``0 .. 2**h - 1``) of every record in every complete tree stored as heap arrays.

    The array form of the structure for many complete trees at once (the random decision trees of
    001_, drawn by the thousand for the auditor): inner node ``v`` has children ``2v + 1`` and
    ``2v + 2``; ``x[attribute] <= threshold`` goes left. :func:`heap_tree` gives one such tree as a
    :class:`Node` (the same routing, checked in ``tests/test_tree.py``).

    Parameters
    ----------
    X : ndarray of shape (n, m)
    attributes, thresholds : arrays of shape ``(T, 2**h - 1)`` (any leading shape is flattened)
    max_depth : int

    Returns
    -------
    int ndarray of shape ``leading + (n,)``
    """
    lead = attributes.shape[:-1]
    n_inner = attributes.shape[-1]
    n_trees = int(np.prod(lead, dtype=np.int64))
    a = attributes.reshape(n_trees, n_inner)
    t = thresholds.reshape(n_trees, n_inner)
    n = X.shape[0]
    if max_depth == 0:
        return np.zeros(lead + (n,), dtype=np.intp)
    XT = np.ascontiguousarray(X.T).ravel()  # XT[attr * n + i] == X[i, attr]
    rows = np.arange(n, dtype=np.intp)
    node = np.empty((a.shape[0], n), dtype=np.intp)
    if n < 1024:  # many trees, few records (the auditor's batches): all trees at once
        flat_offsets = a.astype(np.intp).ravel() * n
        flat_thr = t.ravel()
        base = (np.arange(a.shape[0], dtype=np.intp) * n_inner)[:, None]
        v = np.zeros((a.shape[0], n), dtype=np.intp)
        for _ in range(max_depth):
            idx = base + v
            right = XT.take(flat_offsets.take(idx) + rows) > flat_thr.take(idx)
            v = 2 * v + 1 + right
        return (v - n_inner).reshape(lead + (n,))
    for tree in range(a.shape[0]):  # one tree at a time keeps the working set in cache
        offsets, thr = a[tree].astype(np.intp) * n, t[tree]
        v = np.zeros(n, dtype=np.intp)
        for _ in range(max_depth):
            right = XT.take(offsets.take(v) + rows) > thr.take(v)
            v = 2 * v + 1 + right
        node[tree] = v
    return (node - n_inner).reshape(lead + (n,))


def heap_tree(attributes, thresholds, leaf_values) -> Node:
    """One complete tree of heap arrays (see :func:`route_heap`) as a :class:`Node`: inner node ``v``
    splits on ``attributes[v]`` (``x <= thresholds[v]`` goes left, i.e. ``x`` below the next double),
    leaf ``i`` (left to right) holds ``leaf_values[i]``."""
    attributes, thresholds = np.asarray(attributes), np.asarray(thresholds, dtype=float)
    n_inner = attributes.size

    def build(v):
        if v >= n_inner:
            return leaf(leaf_values[v - n_inner])
        return split(int(attributes[v]), build(2 * v + 1), build(2 * v + 2),
                     threshold=float(np.nextafter(thresholds[v], np.inf)), key=float(thresholds[v]))
    return build(0)
