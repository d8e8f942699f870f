"""Many fitted PrivaTrees as heap-ordered arrays, and their releases as nested tuples.

:class:`Trees` is what :meth:`reference.privatree.batch.PrivaTreeBatch.fit_trees` returns: one row per run,
one column per heap slot of a depth-``d`` tree. :func:`tree_tuples` turns them into the release format of
:meth:`reference.privatree.PrivaTreeClassifier.release` (``("node", feature, key, left, right)`` /
``("leaf", class_index)``), building each distinct subtree once; :func:`row_ids` finds equal rows of an
integer array (equal subtrees, equal edge cells).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Trees", "row_ids", "tree_tuples", "NONE", "SPLIT", "LEAF"]

#: node kinds in :class:`Trees`
NONE, SPLIT, LEAF = 0, 1, 2


def row_ids(codes: np.ndarray):
    """``(id of every row, first row of every id)``: equal integer rows get equal ids (the rows are
    compared as raw bytes, much faster than ``np.unique(axis=0)``)."""
    codes = np.ascontiguousarray(codes, dtype=np.int64)
    rows = codes.view(np.dtype((np.void, 8 * codes.shape[1]))).ravel()
    _, first, ids = np.unique(rows, return_index=True, return_inverse=True)
    return ids.ravel(), first


@dataclass
class Trees:
    """``n`` fitted PrivaTrees as heap-ordered arrays (node ``h`` has children ``2h + 1`` and
    ``2h + 2``; ``H = 2^(d + 1) - 1`` slots per tree).

    Attributes
    ----------
    kind : int8 array (n, H)
        0 no node, 1 a split, 2 a leaf.
    feature : int array (n, H)
        The split feature (-1 elsewhere).
    cut : int array (n, H)
        The split boundary ``s`` (bins ``0..s`` of the candidate order go left).
    left : bool array (n, H, B)
        Bins that go left at a split (``B`` the largest bin count).
    label : int array (n, H)
        The leaf's class index.
    measured : bool array (n, H)
        Nodes whose noisy histograms were drawn (the nodes :meth:`PrivaTreeBatch.ledger` charges).
    edges : dict
        Numerical feature -> float array (n, B_j) of bin edges, ``+inf`` after the ``n_bins`` used.
    n_bins : int array (n, m)
        Bins of every feature in every run.
    """

    kind: np.ndarray
    feature: np.ndarray
    cut: np.ndarray
    left: np.ndarray
    label: np.ndarray
    measured: np.ndarray
    edges: dict
    n_bins: np.ndarray

    def __len__(self) -> int:
        return self.kind.shape[0]


def tree_tuples(trees: Trees, binary):
    """``(id of every run's tree, the distinct trees as nested tuples)``, built bottom-up: at each
    depth the distinct subtrees (node code, left categories, children's ids) are found with
    :func:`row_ids` and each is built once from its children's tuples. ``binary[j]``: feature ``j`` is
    categorical with two classes (its split key is the tuple of left categories, else the boundary)."""
    n, H = trees.kind.shape
    m = trees.n_bins.shape[1]
    split, leaf = trees.kind == SPLIT, trees.kind == LEAF
    code = np.where(split, 1 + 2 * ((trees.feature + 1) + (m + 1) * trees.cut), 0)
    code = np.where(leaf, 2 + 2 * trees.label, code)
    binary = np.array([bool(b) for b in binary] + [False])
    bits = (split & binary[trees.feature])[:, :, None] & trees.left  # left categories of binary splits
    d = int(np.log2(H + 1)) - 1
    child_ids = None
    below: list = []
    for depth in range(d, -1, -1):
        lo, hi = 2 ** depth - 1, 2 ** (depth + 1) - 1
        P = hi - lo
        parts = [code[:, lo:hi, None]]
        if binary.any():
            parts.append(bits[:, lo:hi])
        if child_ids is not None:
            parts.append(child_ids.reshape(n, P, 2))
        rows = np.concatenate(parts, axis=2).reshape(n * P, -1)
        ids, first = row_ids(rows)
        built = []
        for f in first.tolist():
            r, h = divmod(f, P)
            h += lo
            if leaf[r, h]:
                built.append(("leaf", int(trees.label[r, h])))
            elif split[r, h]:
                j = int(trees.feature[r, h])
                key = tuple(int(b) for b in np.flatnonzero(trees.left[r, h])) if binary[j] \
                    else int(trees.cut[r, h])
                children = child_ids[r, 2 * (h - lo): 2 * (h - lo) + 2]
                built.append(("node", j, key, below[children[0]], below[children[1]]))
            else:
                built.append(None)
        child_ids, below = ids.reshape(n, P), built
    return child_ids[:, 0], below
