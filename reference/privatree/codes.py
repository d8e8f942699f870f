"""The records of a PrivaTree fit as small integer codes: one ``bin * K + class`` per record and feature.

:class:`reference.privatree.PrivaTreeClassifier` bins every feature once (Vos et al. 2023, Algorithm 1
lines 3-5 and section IV-A) and then counts, at every node, the records of each (bin, class) cell of every
feature (Eq. 4's exact histograms). With the class folded into the code, a node's histogram of feature ``j``
is ``np.bincount(codes[j][idx], minlength=B * K)`` over its row indices ``idx``, and with at most 256 cells
a code takes one byte: on 1,000,000 records of 10 features the codes take 10 MB, an eighth of the float
data, where a matrix of ``int64`` bins took as much as the data.
"""
from __future__ import annotations

import numpy as np

from reference.validation import shown

__all__ = ["bin_codes", "class_indices", "code_dtype", "node_rows"]

#: above this many edges one ``np.searchsorted`` is faster than one comparison pass per edge
_COMPARE_EDGES = 32


def code_dtype(cells: int) -> np.dtype:
    """The smallest unsigned dtype holding codes ``0 .. cells - 1`` (``intp`` beyond 16 bits)."""
    if cells <= 1 << 8:
        return np.dtype(np.uint8)
    if cells <= 1 << 16:
        return np.dtype(np.uint16)
    return np.dtype(np.intp)


def bin_codes(col, edges, labels, K: int, n_bins: int) -> np.ndarray:
    """``bin * K + label`` of every record, in :func:`code_dtype` of ``n_bins * K``.

    Parameters
    ----------
    col : float array (n,)
        A numerical feature's clipped values, or a categorical feature's codes ``0 .. n_bins - 1``
        (then ``edges`` is None).
    edges : sorted float array or None
        The bin edges; a value's bin is the number of edges below it, ``E[b-1] < x <= E[b]`` (what
        ``np.searchsorted(edges, x, side="left")`` gives, counted here one edge at a time when there are few).
    labels : int array (n,)
        Class indices ``0 .. K - 1``.
    K : int
        Number of classes.
    n_bins : int
        Bins of the feature (every bin id is below it).
    """
    dtype = code_dtype(n_bins * K)
    col = np.asarray(col)
    if edges is None:
        codes = col.astype(dtype)
    elif len(edges) > _COMPARE_EDGES:
        codes = np.searchsorted(edges, col, side="left").astype(dtype)
    else:
        codes = np.zeros(col.shape, dtype=dtype)
        for e in np.asarray(edges, dtype=float).tolist():
            np.add(codes, col > e, out=codes, casting="unsafe")  # a bool adds 0 or 1
    codes *= dtype.type(K)
    codes += labels.astype(dtype, copy=False)
    return codes


def node_rows(a, idx) -> np.ndarray:
    """``a[idx]`` for a node's row indices ``idx``: increasing, so as many as ``a`` has means all of them
    (the root, or a side that kept every record), and ``a`` itself is returned without a copy."""
    return a if idx.size == a.size else a[idx]


def class_indices(y, classes) -> np.ndarray:
    """The index in ``classes`` of every label of ``y`` (int64), or a ``ValueError`` naming the first label
    of ``y`` that is not a class. Integer labels and classes are looked up in one table when their range is
    small; other labels one by one, as Python values (so ``1.0`` finds the class ``1``)."""
    y = np.asarray(y)
    classes = np.asarray(classes)
    if y.size and y.dtype.kind in "iu" and classes.dtype.kind in "iu" and np.can_cast(y.dtype, np.int64) \
            and np.can_cast(classes.dtype, np.int64):
        lo = min(int(y.min()), int(classes.min()))
        hi = max(int(y.max()), int(classes.max()))
        if hi - lo < 1 << 20:
            table = np.full(hi - lo + 1, -1, dtype=np.int64)
            table[classes.astype(np.int64) - lo] = np.arange(classes.size)
            out = table[y.astype(np.int64) - lo]
            bad = np.flatnonzero(out < 0)
            if bad.size:
                _unknown(y.flat[int(bad[0])].item(), classes)
            return out
    index = {c: k for k, c in enumerate(classes.tolist())}
    try:
        return np.array([index[v] for v in y.tolist()], dtype=np.int64)
    except KeyError as e:
        _unknown(e.args[0], classes)


def _unknown(label, classes):
    raise ValueError(f"y holds the label {shown(label)}, not among classes {classes.tolist()}") from None
