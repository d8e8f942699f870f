"""Deep Partition Aggregation (DPA) with decision trees: PrivaTree's certified-robustness comparison.

Levine and Feizi (2021), "Deep partition aggregation: provable defenses
against general poisoning attacks", ICLR, cited by PrivaTree
(Vos et al. 2023) as [44]; used in section VI-B and Fig. 3 with 1000
depth-4 trees. DPA is **not** differentially private and makes no privacy
claim: its ledger has one charge of ``epsilon = inf``. It certifies
individual predictions against poisoning instead.

The learner:

1. **partition** (the rule DPA's certificate needs: a record's partition
   depends on the record alone, never on the other records or their order):
   record ``(x, y)`` goes to partition ``SHA-256(bytes) mod P``, where the
   bytes are the record's feature values as little-endian float64 (``-0.0``
   written as ``0.0``) followed by the index of its label in the public
   ``classes`` as a little-endian int64. Equal records share a partition.
   The authors' code instead shuffles and splits into contiguous blocks, which
   is not stable under insertions and so does not support the certificate
   (spec/privatree.md A14);
2. **base trees**: partition ``i`` trains scikit-learn's
   ``DecisionTreeClassifier(max_depth, random_state=i)`` on its records sorted
   into a canonical order (lexicographic in label index, then features), so
   the tree is a function of the partition's multiset of records alone. An
   empty partition casts no vote;
3. **vote**: ``n_c(x)`` = number of trees predicting class ``c``; the
   prediction is the class with the most votes, ties to the lowest class index
   (the order of ``classes``);
4. **certificate** (Levine and Feizi 2021, Theorem 1): with ``c`` the
   prediction,
   ``r(x) = floor((n_c - max_{c' != c} (n_{c'} + 1[c' < c])) / 2)``.
   Any training set within symmetric difference ``r(x)`` of the clean one (each
   inserted or deleted record counts 1; a modified record counts 2) gives the
   same prediction at ``x``: one insertion or deletion changes one partition,
   hence at most one vote, which closes the gap of the next-best class by at
   most 2. The authors' code reverses the tie term (1[c' > c]) relative to its
   own argmax tie rule (spec A14); this is the paper's formula.

Certified accuracy at ``x`` poisoned records (spec 3.7):
``mean_t 1[prediction_t correct and r_t >= x]`` (:func:`certified_accuracy`).
"""
from __future__ import annotations

import hashlib

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.tree import DecisionTreeClassifier

from reference.validation import check_fitted, check_max_depth, check_X, check_y, shown
from reference.ledger import PrivacyLedger, Scope

__all__ = ["DeepPartitionAggregation", "partition_of", "certified_radius_from_votes", "certified_accuracy"]


def partition_of(X, y_index, n_partitions: int) -> np.ndarray:
    """The DPA partition of every record: ``SHA-256(record bytes) mod n_partitions`` (see the module docstring).

    Parameters
    ----------
    X : array (n, m) of floats
    y_index : array (n,) of label indices in the public ``classes``
    n_partitions : int

    Returns
    -------
    array (n,) of ints in ``[0, n_partitions)``; row ``i``'s value depends on ``(X[i], y_index[i])`` only.
    """
    X = np.asarray(X, dtype="<f8") + 0.0  # -0.0 + 0.0 == +0.0: one byte string per value
    yi = np.asarray(y_index, dtype="<i8")
    out = np.empty(len(yi), dtype=np.int64)
    for i in range(len(yi)):
        digest = hashlib.sha256(X[i].tobytes() + yi[i].tobytes()).digest()
        out[i] = int.from_bytes(digest[:16], "little") % n_partitions
    return out


def certified_radius_from_votes(votes) -> tuple[np.ndarray, np.ndarray]:
    """Prediction and DPA certificate from vote counts (Levine and Feizi 2021, Theorem 1).

    Parameters
    ----------
    votes : int array (n_points, K), votes per class in the order of ``classes``

    Returns
    -------
    (pred, radius) : class indices (ties to the lowest) and
        ``floor((n_c - max_{c' != c}(n_{c'} + 1[c' < c])) / 2)``, which is ``>= 0`` for the plurality class.
    """
    V = np.asarray(votes, dtype=np.int64)
    if V.ndim != 2 or V.shape[1] < 2:
        raise ValueError(f"votes must have shape (n_points, K >= 2), got {V.shape}")
    pred = np.argmax(V, axis=1)  # the first maximum: ties to the lowest class index
    K = V.shape[1]
    rival = V + (np.arange(K)[None, :] < pred[:, None])  # n_{c'} + 1[c' < c]
    rival[np.arange(len(V)), pred] = np.iinfo(np.int64).min
    top = V[np.arange(len(V)), pred]
    return pred, (top - rival.max(axis=1)) // 2


def certified_accuracy(correct, radius, xs) -> np.ndarray:
    """``mean_t 1[correct_t and radius_t >= x]`` for every ``x`` in ``xs`` (spec/privatree.md 3.7)."""
    correct = np.asarray(correct, dtype=bool)
    radius = np.asarray(radius)
    return np.array([float(np.mean(correct & (radius >= x))) for x in np.atleast_1d(xs)])


class DeepPartitionAggregation(ClassifierMixin, BaseEstimator):
    """DPA ensemble of ``n_partitions`` non-private decision trees on hash partitions (not DP).

    Parameters
    ----------
    n_partitions : int
        Number of partitions P (one tree each). P = 1 is the base tree on all the data.
    max_depth : int
        Depth of each base tree (scikit-learn ``DecisionTreeClassifier``).
    classes : sequence of labels
        Public class labels; their order is the tie rule (lowest index wins).

    Attributes
    ----------
    trees_ : list of fitted trees or None (empty partition), one per partition
    partition_counts_ : array (P,), records per partition
    privacy_ledger_ : PrivacyLedger, one charge of epsilon = inf (DPA is not private)

    References
    ----------
    Levine and Feizi (2021), ICLR, section 3 and Theorem 1; PrivaTree (Vos et al. 2023) section VI-B,
    Fig. 3; spec/privatree.md 3.7 and A14.
    """

    def __init__(self, n_partitions=1000, max_depth=4, *, classes=None):
        self.n_partitions = n_partitions
        self.max_depth = max_depth
        self.classes = classes

    def fit(self, X, y):
        P = self.n_partitions
        if isinstance(P, (bool, np.bool_)) or not isinstance(P, (int, np.integer)) or P < 1:
            raise ValueError(f"n_partitions must be a positive integer, got {shown(P)}")
        d = check_max_depth(self.max_depth)
        if d < 1:
            raise ValueError(f"max_depth must be at least 1 for DPA's base trees, got {shown(self.max_depth)}")
        if self.classes is None or len(set(self.classes)) < 2:
            raise ValueError(f"classes must list at least two distinct labels, got {shown(self.classes)}")
        X = check_X(self, X, reset=True)  # names, counts, 2-D, finite
        if X.shape[0] == 0:
            raise ValueError(f"X must be a non-empty 2-D array, got shape {X.shape}")
        classes = np.asarray(list(self.classes))
        pos = {c: k for k, c in enumerate(classes.tolist())}
        try:
            yk = np.array([pos[v] for v in check_y(self, y, X.shape[0]).tolist()], dtype=np.int64)
        except KeyError as e:
            raise ValueError(f"y holds the label {shown(e.args[0])}, not among classes") from None
        if yk.shape[0] != X.shape[0]:
            raise ValueError(f"X and y must have the same number of rows, got {X.shape[0]} and {yk.shape[0]}")
        part = partition_of(X, yk, int(P))
        trees = []
        for i in range(int(P)):
            idx = np.flatnonzero(part == i)
            if idx.size == 0:
                trees.append(None)
                continue
            # canonical order: the tree depends on the partition's multiset of records, not on the input order
            # (np.lexsort's last key is the primary one: label index, then feature 0, 1, ...)
            idx = idx[np.lexsort(tuple(X[idx, j] for j in reversed(range(X.shape[1]))) + (yk[idx],))]
            trees.append(DecisionTreeClassifier(max_depth=d, random_state=i).fit(X[idx], yk[idx]))
        ledger = PrivacyLedger("add-remove")
        ledger.charge("ensemble", "non-private CART on hash partitions (DPA)", float("inf"), scope=Scope.root(),
                      note="not differentially private: certifies predictions against poisoning instead")
        self.trees_ = trees
        self.partition_counts_ = np.bincount(part, minlength=int(P))
        self.classes_ = classes
        self.n_features_in_ = X.shape[1]
        self.privacy_ledger_ = ledger
        return self

    def vote_counts(self, X) -> np.ndarray:
        """Votes per class (columns in the order of ``classes``), shape ``(n_points, K)``."""
        X = check_X(self, X, reset=False)  # NotFittedError; names, counts, 2-D, finite
        K = self.classes_.size
        V = np.zeros((len(X), K), dtype=np.int64)
        rows = np.arange(len(X))
        for tree in self.trees_:
            if tree is not None:
                # the trees are fitted on class indices, so their predictions are the columns of V
                V[rows, tree.predict(X).astype(np.int64)] += 1
        return V

    def predict(self, X):
        check_fitted(self)
        return self.classes_[certified_radius_from_votes(self.vote_counts(X))[0]]

    def certified_radius(self, X) -> np.ndarray:
        """Per point, how many inserted or deleted training records provably leave its prediction unchanged."""
        return certified_radius_from_votes(self.vote_counts(X))[1]

    def release(self) -> tuple:
        """Every base tree as (features, thresholds, leaf class indices); None for an empty partition."""
        check_fitted(self)
        out = []
        for tree in self.trees_:
            if tree is None:
                out.append(None)
                continue
            t = tree.tree_
            leaf = tuple(int(tree.classes_[np.argmax(v)]) if f < 0 else -1 for f, v in zip(t.feature, t.value[:, 0]))
            out.append((tuple(int(f) for f in t.feature), tuple(round(float(v), 12) for v in t.threshold), leaf))
        return tuple(out)
