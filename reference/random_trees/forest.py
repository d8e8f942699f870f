"""Random decision trees with majority voting, threshold averaging and probabilistic averaging.

Bojarski, Choromanska, Choromanski and LeCun, "Differentially- and
non-differentially-private random decision trees" (arXiv:1410.6973, seed
Bojarski et al. 2014), as recovered in ``spec/random_trees.md``.

* The forest's structure (Section 2.1 of the spec; "Random forest
  construction" of Algorithms 1 and 2) is drawn without looking at the data:
  every inner node of a complete binary tree of height ``h`` gets an attribute
  drawn uniformly (with replacement) and a threshold drawn uniformly from that
  attribute's *public* range. A record goes right iff ``x_a > threshold``.
* Training (Algorithm 1) counts the records of each class in every leaf; the
  private version (Algorithm 2) adds ``Lap(k / epsilon)`` to every count of
  every leaf, empty leaves included, and turns the noisy counts into leaf
  values ``theta``; a leaf whose noisy counts are invalid (one negative, or
  all zero) gets ``theta`` drawn uniformly (Algorithm 2's test, spec 2.4).
* Prediction (Algorithms 1 and 2, "Testing"): majority voting (each tree
  votes for its leaf's larger class, the forest takes the majority),
  threshold averaging (the forest averages the leaves' ``theta`` and takes
  the larger class) and probabilistic averaging (the class is drawn with the
  averaged probabilities, with fresh coins on every call).

Labels are binary in the paper. With more classes, ``theta`` is the vector of
class fractions, an invalid or empty leaf gets a uniform point of the simplex
(``Dirichlet(1, ..., 1)``, which is ``U[0, 1]`` for two classes) and votes go to
the largest entry, ties to the first class. This extension is ours; with two
classes it is exactly the paper's rule (``+`` iff ``theta > 1/2``).

Privacy (spec 2.5): the leaves of one tree partition the records, so one
tree's count vector has L1 sensitivity 1 under add/remove and 2 under
substitution (a replaced record leaves one count and enters another); the
``k`` trees read the same records and compose sequentially. The paper's
``Lap(k / epsilon)`` (Section 5.2) is therefore epsilon-DP under add/remove
only; under substitution it is ``2 epsilon``-DP (spec error E1).
``accounting="strict"`` uses ``2k / epsilon`` there, ``accounting="paper"``
keeps ``k / epsilon`` and its ledger shows the resulting ``2 epsilon``.
"""
from __future__ import annotations


import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, clone

from reference.randomness import PublishSafeMixin, fit_seed_sequence, predict_rng
from reference.validation import warn_outside_bounds
from reference.validation import (check_choice, check_fitted, check_int, check_neighbouring, check_positive_finite,
                                  check_X, check_y, facts_by_index)
from reference.validation import shown
from reference.ledger import PrivacyLedger, Scope
from reference.tree import heap_tree
from reference.random_trees.core import (
    ACCOUNTINGS,
    INVALID_RULES,
    VOTING_RULES,
    Forests,
    logarithmic_n_estimators,
    noise_scale,
)

__all__ = ["RandomDecisionForestClassifier"]

# --------------------------------------------------------------------------- validation helpers
def _check_bounds(bounds, m=None) -> np.ndarray:
    if bounds is None:
        raise ValueError("bounds is required: the public (low, high) range of every feature "
                         "(random thresholds are drawn from it, never from the data)")
    try:
        arr = np.asarray(bounds, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"bounds must be a sequence of (low, high) pairs, got {shown(bounds)}") from None
    if arr.ndim != 2 or arr.shape[1] != 2 or arr.shape[0] == 0:
        raise ValueError(f"bounds must be a sequence of (low, high) pairs, got {shown(bounds)}")
    if not np.all(np.isfinite(arr)) or np.any(arr[:, 1] < arr[:, 0]):
        bad = int(np.flatnonzero(~np.isfinite(arr).all(axis=1) | (arr[:, 1] < arr[:, 0]))[0])
        raise ValueError(f"bounds[{bad}] must be finite with low <= high, got {shown(tuple(arr[bad]))}")
    if m is not None and arr.shape[0] != m:
        raise ValueError(f"bounds has {arr.shape[0]} ranges but X has {m} features")
    return arr


def _check_classes(classes) -> np.ndarray:
    if classes is None:
        raise ValueError("classes is required: the public list of class labels")
    arr = np.asarray(classes)
    if arr.ndim != 1 or arr.size < 2:
        raise ValueError(f"classes must list at least two labels, got {shown(classes)}")
    if len(set(arr.tolist())) != arr.size:
        raise ValueError(f"classes must not repeat a label, got {shown(classes)}")
    return arr






# --------------------------------------------------------------------------- the estimator
class RandomDecisionForestClassifier(PublishSafeMixin, ClassifierMixin, BaseEstimator):
    """Random decision trees, non-private (Algorithm 1) and epsilon-DP (Algorithm 2).

    Parameters
    ----------
    n_estimators : int or "log", default 11
        Number of trees ``k``. ``"log"`` applies the paper's logarithmic rule
        (Theorems 5.6/5.7 commentary) through :func:`logarithmic_n_estimators`
        to the public record count ``n_records``; it never reads ``len(X)``.
    max_depth : int, default 6
        Tree height ``h >= 0`` (``h = 0``: one leaf per tree).
    voting : {"majority", "threshold", "probabilistic"}
        Prediction rule of Algorithm 1/2 "Testing".
    private : bool, default True
        Algorithm 2 (noisy leaf counts) when true, Algorithm 1 otherwise.
    epsilon : float, default 1.0
        Total privacy budget of the forest (only when ``private``).
    neighbouring : {"add-remove", "substitute"}
        The relation the epsilon is claimed under.
    accounting : {"strict", "paper"}
        ``"paper"``: ``Lap(k / epsilon)`` whatever the relation (Section 5.2);
        ``"strict"``: ``Lap(2k / epsilon)`` under substitution (a substitution changes two counts).
    invalid_rule : {"paper", "clamp"}
        Algorithm 2's handling of invalid noisy counts (see :func:`leaf_values`).
    bounds : sequence of (low, high)
        Public range of every feature. Records outside are clipped into it
        (how many is private and not kept).
    classes : sequence
        Public class labels; the first is the paper's ``-`` for two classes.
    n_records : int, optional
        Public number of records, used only by ``n_estimators="log"``.
    random_state : None, int or numpy.random.Generator
        Privacy first: the fit's two streams (structure, noise) come from fresh OS entropy, whatever this holds,
        unless seeded fits are on (``reference.randomness.seeded_fits``, used by the auditor and reproductions):
        then this seeds them and is a secret key. The streams are discarded after fit. Probabilistic voting
        draws its coins at each ``predict`` from a separate entropy pool (``reference.randomness.predict_rng``:
        new coins per call with ``None``, the same for an integer seed). A fitted model's pickle drops
        ``random_state``.

    Attributes
    ----------
    forest_ : Forests
        Structure, noisy counts and leaf values (one forest). A private
        forest drops its exact leaf counts after fit (``forest_.counts`` is
        None); Algorithm 1 (not private) keeps them.
    n_estimators_, noise_scale_ : the k and Laplace scale used
    privacy_ledger_ : reference.ledger.PrivacyLedger
        One Laplace charge per (tree, leaf, class) count, scoped to that cell
        of the tree's partition; the trees compose sequentially. Without
        ``private`` (Algorithm 1, exact counts) one ``epsilon = inf`` charge.
    classes_ : ndarray

    References
    ----------
    Bojarski et al., arXiv:1410.6973: Algorithms 1 and 2, Section 5.2,
    Theorems 3.1 and 3.2.
    """

    def __init__(self, n_estimators=11, max_depth=6, voting="majority", private=True, epsilon=1.0,
                 neighbouring="add-remove", accounting="strict", invalid_rule="paper", bounds=None,
                 classes=None, n_records=None, random_state=None):
        self.n_estimators = n_estimators
        self.max_depth = max_depth
        self.voting = voting
        self.private = private
        self.epsilon = epsilon
        self.neighbouring = neighbouring
        self.accounting = accounting
        self.invalid_rule = invalid_rule
        self.bounds = bounds
        self.classes = classes
        self.n_records = n_records
        self.random_state = random_state

    # ------------------------------------------------------------------ parameters
    def _resolve_n_estimators(self) -> int:
        if isinstance(self.n_estimators, str):
            if self.n_estimators != "log":
                raise ValueError(f"n_estimators must be an integer >= 1 or 'log', got {shown(self.n_estimators)}")
            if self.n_records is None:
                raise ValueError("n_records is required with n_estimators='log': the public number of records "
                                 "(the rule never reads the private data's size)")
            return logarithmic_n_estimators(self.n_records)
        return check_int("n_estimators", self.n_estimators, 1)

    def _validate_params(self):
        k = self._resolve_n_estimators()
        h = check_int("max_depth", self.max_depth, 0)
        if h > 24:
            raise ValueError(f"max_depth must be at most 24 (2**h leaves per tree), got {shown(h)}")
        check_choice("voting", self.voting, VOTING_RULES)
        check_choice("accounting", self.accounting, ACCOUNTINGS)
        check_choice("invalid_rule", self.invalid_rule, INVALID_RULES)
        check_neighbouring(self.neighbouring)
        if not isinstance(self.private, (bool, np.bool_)):
            raise ValueError(f"private must be True or False, got {shown(self.private)}")
        if self.private:
            check_positive_finite("epsilon", self.epsilon)
        return k, h

    def _validate_X(self, X, bounds) -> tuple[np.ndarray, int]:
        X = np.asarray(X, dtype=float)
        if X.ndim != 2:  # no records is a valid input: the leaves are then noise alone
            raise ValueError(f"X must be a 2-D array, got shape {X.shape}")
        if not np.all(np.isfinite(X)):
            i, j = np.argwhere(~np.isfinite(X))[0]
            raise ValueError(f"X must be finite, found X[{i}, {j}] = {shown(float(X[i, j]))}")
        if X.shape[1] != bounds.shape[0]:
            raise ValueError(f"X has {X.shape[1]} features but bounds has {bounds.shape[0]} ranges")
        clipped = np.clip(X, bounds[:, 0], bounds[:, 1])
        return clipped, int(np.count_nonzero(clipped != X))

    # ------------------------------------------------------------------ fit
    def fit(self, X, y):
        """Draw the structure, count, add noise (when private) and set the leaf values.

        Parameters
        ----------
        X : array of shape (n, m), finite
        y : array of shape (n,), labels among ``classes``

        Returns
        -------
        self
        """
        k, h, bounds, classes, X, y_index, _ = self._validate_fit(X, y)  # the clipped count is private
        # structure and noise streams from one fit-local SeedSequence, discarded with the fit; predict-time coins
        # come from reference.randomness.predict_rng, a separate entropy pool (issue 26 finding 2: a kept sibling
        # of the noise seed let anyone rebuild the noise)
        structure_ss, noise_ss = fit_seed_sequence(self.random_state, self).spawn(2)
        self.forest_ = self._draw_forests(X, y_index, 1, np.random.default_rng(structure_ss),
                                          np.random.default_rng(noise_ss), validated=(k, h, bounds, classes))
        scale = self._noise_scale(k)
        self.classes_ = classes
        self.bounds_ = bounds
        self.n_estimators_ = k
        self.noise_scale_ = scale
        self.n_features_in_ = X.shape[1]
        if self.private:  # exact private leaf counts: not kept after fit (issue 17, finding 7)
            self.forest_.counts = None
        self._ledger_args = (k, h, classes.size, scale)
        self._ledger_cache = None
        return self

    @property
    def privacy_ledger_(self) -> PrivacyLedger:
        """The fit's :class:`~reference.ledger.PrivacyLedger`: one Laplace charge per count.

        Built on first access from the fit's (k, h, classes, scale), which fix
        every charge; a 100-tree height-10 forest makes 204,800 charges, and
        building them eagerly would double the fit time.
        """
        if "_ledger_args" not in self.__dict__:
            raise AttributeError("privacy_ledger_ exists after fit")
        if self._ledger_cache is None:
            self._ledger_cache = self._ledger(*self._ledger_args)
        return self._ledger_cache

    def _validate_fit(self, X, y):
        """Parameters, public facts and data, checked; ``X`` clipped, ``y`` as class indices."""
        k, h = self._validate_params()
        X = check_X(self, X, reset=True)  # names, counts, 2-D, finite
        bounds = _check_bounds(facts_by_index(self, "bounds", self.bounds, X.shape[1], sequence=True))
        classes = _check_classes(self.classes)
        if X.shape[1] == bounds.shape[0]:
            warn_outside_bounds(self, X, bounds, stacklevel=4)  # to the caller only: the count is private
        X, n_clipped = self._validate_X(X, bounds)
        y = check_y(self, y)
        if y.shape != (X.shape[0],):
            raise ValueError(f"y must have shape ({X.shape[0]},), got {y.shape}")
        order = np.argsort(classes, kind="stable")
        pos = np.minimum(np.searchsorted(classes[order], y), classes.size - 1)
        y_index = order[pos]
        unknown = classes[y_index] != y
        if np.any(unknown):
            raise ValueError(f"y contains a label not in classes {shown(classes.tolist())}: {shown(y[unknown][0])}")
        return k, h, bounds, classes, X, y_index, n_clipped

    def _noise_scale(self, k: int):
        """Laplace scale per count (:func:`noise_scale`), ``None`` when not private."""
        if not self.private:
            return None
        return noise_scale(float(self.epsilon), k, self.neighbouring, self.accounting)

    def _draw_forests(self, X, y_index, n_forests, structure_rng, noise_rng, *, validated=None) -> Forests:
        """``n_forests`` independent forests on validated data: ``fit`` draws one, the auditor many.

        ``X`` must already be clipped and ``y_index`` hold class indices (see ``_validate_fit``).
        """
        if validated is None:
            k, h = self._validate_params()
            bounds, classes = _check_bounds(self.bounds), _check_classes(self.classes)
        else:
            k, h, bounds, classes = validated
        return Forests(X, y_index, n_forests=n_forests, n_estimators=k, max_depth=h, n_classes=classes.size,
                       bounds=bounds, scale=self._noise_scale(k), invalid_rule=self.invalid_rule,
                       structure_rng=structure_rng, noise_rng=noise_rng)

    def _ledger(self, k, h, n_classes, scale) -> PrivacyLedger:
        ledger = PrivacyLedger(self.neighbouring)
        if scale is None:  # Algorithm 1: exact leaf fractions, not DP
            ledger.charge_not_private("leaves", "exact leaf counts (Algorithm 1)")
            return ledger
        root = Scope.root()
        per_count = 1.0 / scale  # one count, sensitivity 1, two-sided geometric of scale `scale`
        note = f"two-sided geometric of scale {scale:g} on one count; accounting={self.accounting}"
        for t in range(k):
            for leaf in range(2 ** h):
                for c in range(n_classes):
                    ledger.charge(f"tree{t}/leaf{leaf}/class{c}", "TwoSidedGeometric", per_count,
                                  scope=root.child(f"tree{t}", f"leaf{leaf}/class{c}"), sensitivity=1.0,
                                  note=note)
        return ledger

    # ------------------------------------------------------------------ predict
    def _check_fitted(self):
        check_fitted(self)  # sklearn's NotFittedError (a ValueError)

    def _validate_predict_X(self, X) -> np.ndarray:
        X = check_X(self, X, reset=False)  # NotFittedError; names, counts, 2-D, finite
        return np.clip(X, self.bounds_[:, 0], self.bounds_[:, 1])

    def predict_proba(self, X) -> np.ndarray:
        """``p_x``: the mean of the leaf values over the trees (threshold and
        probabilistic averaging), shape (n, C)."""
        X = self._validate_predict_X(X)
        return self.forest_.theta_at(X)[0].mean(axis=0)

    def vote_fraction(self, X) -> np.ndarray:
        """Fraction of trees voting for each class (``k_x / k`` for ``+``), shape (n, C)."""
        X = self._validate_predict_X(X)
        votes = np.argmax(self.forest_.theta_at(X)[0], axis=-1)
        return np.stack([(votes == c).mean(axis=0) for c in range(self.classes_.size)], axis=-1)

    def predict(self, X) -> np.ndarray:
        """Labels by the chosen ``voting`` rule (probabilistic: coins from ``reference.randomness.predict_rng``,
        new on every call with ``random_state=None``, the same for an integer seed)."""
        X = self._validate_predict_X(X)
        idx = self.forest_.predict_index(X, self.voting, predict_rng(self.random_state))[0]
        return self.classes_[idx]

    # ------------------------------------------------------------------ release
    def release(self) -> tuple:
        """Everything the model publishes, canonical and hashable.

        ``(("structure", ((attribute, threshold), ...) per tree),
        ("leaves", (theta per leaf) per tree))`` with floats rounded to 6
        decimals. Leaf values are continuous when private: for a counted
        (discrete) release, publish predictions on a public probe set, which
        is post-processing.
        """
        self._check_fitted()
        return _forest_release(self.forest_, 0, self.n_estimators_)

    def trees(self) -> list:
        """The fitted trees as :class:`reference.tree.Node` (leaf values: the class fractions ``theta``),
        built from the heap arrays the forest is fitted and routed in (:func:`reference.tree.route_heap`)."""
        self._check_fitted()
        f = self.forest_
        return [heap_tree(f.attributes[0, i], f.thresholds[0, i], f.theta[0, i]) for i in range(self.n_estimators_)]

    def batched_release_sampler(self):
        """The fast path (:mod:`reference.fast_path`): many forests drawn at once through ``_draw_forests``
        (the code path of ``fit``), each released as :meth:`release`; ``None`` for a subclass that defines
        a method of its own."""
        from reference.fast_path import overrides_nothing

        if not overrides_nothing(type(self), RandomDecisionForestClassifier):
            return None
        return _ForestBatch(clone(self))


def _forest_release(f, r: int, k: int) -> tuple:
    """:meth:`RandomDecisionForestClassifier.release` of forest ``r`` of ``f`` (``k`` trees)."""
    structure = tuple(
        tuple((int(a), round(float(t), 6)) for a, t in zip(f.attributes[r, i], f.thresholds[r, i]))
        for i in range(k))
    leaves = tuple(tuple(tuple(round(float(v), 6) for v in leaf) for leaf in f.theta[r, i]) for i in range(k))
    return (("structure", structure), ("leaves", leaves))


class _ForestBatch:
    """``batch(data, n, rng)``: ``n`` independent releases of ``estimator`` fitted on ``data = (X, y)``."""

    def __init__(self, estimator):
        self.estimator = estimator

    def __call__(self, data, rng):
        return self.batch(data, 1, rng)[0]

    def batch(self, data, n, rng) -> list:
        X, y = data
        k, h, bounds, classes, Xc, y_index, _ = self.estimator._validate_fit(X, y)
        f = self.estimator._draw_forests(Xc, y_index, n, rng, rng, validated=(k, h, bounds, classes))
        return [_forest_release(f, r, k) for r in range(n)]
