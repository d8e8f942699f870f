"""An rpart-like CART classifier: the non-private baseline of Bojarski et al.'s Table 1.

Bojarski et al. (arXiv:1410.6973, Section 6) compare with R's ``rpart``
(Therneau and Atkinson) without stating its settings; spec/random_trees.md
section 4.6 item 6 recommends rpart's defaults. R is not available to this
project, so this class approximates them on scikit-learn's CART:

* growth: Gini splits, ``minsplit = 20`` (``min_samples_split``),
  ``minbucket = round(minsplit / 3) = 7`` (``min_samples_leaf``),
  ``maxdepth = 30``;
* pruning: rpart keeps a split only if it lowers the tree's misclassification
  risk by at least ``cp`` (default 0.01) times the root's risk. This is
  minimal cost-complexity pruning with the misclassification count as the
  risk and ``alpha = cp * R(root)``: the smallest subtree minimising
  ``R(T) + alpha * |leaves(T)|``, which is where weakest-link pruning stops
  (Breiman et al. 1984, Section 3.3).

Differences from rpart that remain: nominal features are split as ordered
codes (rpart searches subsets of levels), no surrogate splits (the data here
have no missing values), and ties between equally good splits may be broken
differently. Not differentially private.
"""
from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.tree import DecisionTreeClassifier
from sklearn.utils.multiclass import check_classification_targets

from reference.validation import check_X, check_y
from reference.validation import shown

__all__ = ["RpartLikeClassifier"]


class RpartLikeClassifier(ClassifierMixin, BaseEstimator):
    """CART grown and pruned with rpart's default controls (see the module docstring).

    Parameters
    ----------
    cp : float, default 0.01
        Complexity parameter: minimum relative decrease of the misclassification risk per split.
    min_split : int, default 20
        rpart's ``minsplit``.
    min_bucket : int or None, default None
        rpart's ``minbucket``; ``None`` means ``round(min_split / 3)``.
    max_depth : int, default 30
    random_state : None or int
        Passed to scikit-learn (it permutes features when breaking ties).

    Attributes
    ----------
    tree_ : sklearn.tree.DecisionTreeClassifier
        The unpruned tree.
    terminal_ : bool ndarray
        Nodes of ``tree_`` that are leaves of the pruned tree or lie below one.
    n_leaves_ : int
        Leaves of the pruned tree.
    node_class_ : int ndarray
        Majority class index of every node (ties to the first class).
    classes_ : ndarray
    """

    def __init__(self, cp=0.01, min_split=20, min_bucket=None, max_depth=30, random_state=None):
        self.cp = cp
        self.min_split = min_split
        self.min_bucket = min_bucket
        self.max_depth = max_depth
        self.random_state = random_state

    def _check_params(self):
        if isinstance(self.cp, bool) or not isinstance(self.cp, Real) or not 0 <= self.cp < 1:
            raise ValueError(f"cp must be a number in [0, 1), got {shown(self.cp)}")
        for name in ("min_split", "max_depth"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, Integral) or v < 1:
                raise ValueError(f"{name} must be a positive integer, got {shown(v)}")
        bucket = round(self.min_split / 3) if self.min_bucket is None else self.min_bucket
        if isinstance(bucket, bool) or not isinstance(bucket, Integral) or bucket < 1:
            raise ValueError(f"min_bucket must be a positive integer or None, got {shown(self.min_bucket)}")
        return int(bucket)

    def fit(self, X, y):
        """Grow the Gini tree, then prune it at ``alpha = cp * R(root)``.

        Returns
        -------
        self
        """
        bucket = self._check_params()
        X = check_X(self, X, reset=True)  # names, counts, 2-D, finite
        y = check_y(self, y, X.shape[0])
        check_classification_targets(y)  # rpart reads its classes from y: a continuous y is refused
        if X.shape[0] != y.shape[0] or X.shape[0] == 0:
            raise ValueError(f"X must be a non-empty 2-D array with one row per label, got shapes {X.shape} and "
                             f"{y.shape}")
        self.classes_, y_idx = np.unique(y, return_inverse=True)
        tree = DecisionTreeClassifier(criterion="gini", min_samples_split=max(self.min_split, 2),
                                      min_samples_leaf=bucket, max_depth=self.max_depth,
                                      random_state=self.random_state).fit(X, y_idx)
        t = tree.tree_
        # class counts per node from the training records' paths (independent of how sklearn stores value)
        paths = tree.decision_path(X).tocsc()
        onehot = np.eye(self.classes_.size)[y_idx]
        counts = np.asarray(paths.T @ onehot)
        self.node_class_ = np.argmax(counts, axis=1)
        risk = counts.sum(axis=1) - counts.max(axis=1)  # misclassified records if the node were a leaf
        alpha = float(self.cp) * risk[0]
        left, right = t.children_left, t.children_right
        # the smallest subtree minimising R(T) + alpha |leaves(T)|, bottom-up (children have larger ids); it is
        # the tree weakest-link pruning reaches at alpha (Breiman et al. 1984, Theorem 3.10)
        pruned = np.zeros(t.node_count, dtype=bool)
        cost = risk.astype(float) + alpha
        for v in range(t.node_count - 1, -1, -1):
            if left[v] >= 0:
                below = cost[left[v]] + cost[right[v]]
                if cost[v] <= below + 1e-12:
                    pruned[v] = True
                else:
                    cost[v] = below
        self.tree_ = tree
        self.terminal_ = pruned | (left < 0)
        stack, self.n_leaves_ = [0], 0
        while stack:  # leaves of the pruned tree: terminal nodes reached from the root
            v = stack.pop()
            if self.terminal_[v]:
                self.n_leaves_ += 1
            else:
                stack += [left[v], right[v]]
        return self

    def predict(self, X) -> np.ndarray:
        """The majority class of each record's leaf in the pruned tree."""
        X = check_X(self, X, reset=False)  # NotFittedError; names, counts, 2-D, finite
        t = self.tree_.tree_
        node = np.zeros(X.shape[0], dtype=np.intp)
        rows = np.arange(X.shape[0])
        while True:
            go = ~self.terminal_[node]
            if not go.any():
                break
            v = node[go]
            right = X[rows[go], t.feature[v]] > t.threshold[v]
            node[go] = np.where(right, t.children_right[v], t.children_left[v])
        return self.classes_[self.node_class_[node]]
