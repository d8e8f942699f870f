"""Differentially private logistic regression by output perturbation (PrivaTree's "private LR" baseline).

Chaudhuri, Monteleoni and Sarwate (2011), "Differentially private empirical
risk minimization", JMLR 12, Algorithm 1 (output perturbation), cited by
PrivaTree (Vos et al. 2023) as [19] for the poisoning comparison of
section VI-B (Table III, Table VIII, Fig. 3). The paper's text says the
baseline "perturbs the optimal model parameters", which is Algorithm 1; the
authors' code calls diffprivlib, which does objective perturbation
(Algorithm 2) on data whose norm bound is read from the private data
(spec/privatree.md 3.6 and A17). This module implements what the text says,
with every public fact a parameter.

The learner, for labels ``y_i`` in {-1, +1} (``classes[1]`` is +1):

1. map each record into the unit ball with public facts only: feature ``j`` is
   clipped to ``bounds[j] = (lo, hi)`` and mapped affinely onto [-1, 1]; with
   ``fit_intercept`` a constant 1 is appended; the row is then divided by
   ``max(1, ||row||_2)``. The map reads one record at a time, so every mapped
   record has norm at most 1 whatever the data (the condition of Chaudhuri et
   al.'s Corollary 8);
2. ``w* = argmin_w (1/n) sum_i log(1 + exp(-y_i w.x_i)) + (reg_lambda/2) ||w||^2``
   (Eq. 1 of Chaudhuri et al. with the logistic loss, which is 1-Lipschitz
   and 1/4-smooth), solved to machine precision by damped Newton steps (the
   guarantee is for the exact minimiser);
3. release ``w* + b`` where ``b`` has density proportional to
   ``exp(-(n reg_lambda epsilon / 2) ||b||_2)`` (Algorithm 1): its norm is
   Gamma(shape = dim, scale = 2 / (n reg_lambda epsilon)) and its direction
   uniform on the sphere (:class:`GammaNormNoise`).

Privacy: epsilon-DP under **substitution** of one record, with ``n`` public
(the same for both datasets). Changing one record moves ``w*`` by at most
``2 / (n reg_lambda)`` in L2 norm (Chaudhuri et al., Corollary 8 with c = 1
and ||x|| <= 1), and the noise density changes by at most ``exp(epsilon)``
over that distance (Theorem 6). The claim does not cover adding or removing a
record (``n`` would change).

With more than two ``classes``, one binary model per class (one-vs-rest) is
fitted with ``epsilon / K`` each; every record enters all K models, so the K
releases compose sequentially to ``epsilon``.
"""
from __future__ import annotations

import contextlib
import contextvars
import hashlib
import math

import numpy as np
from scipy import stats
from scipy.special import gammaln
from sklearn.base import BaseEstimator, ClassifierMixin

from reference.randomness import PublishSafeMixin, fit_rng
from reference.validation import CLIPPED, warn_outside_bounds
from reference.validation import check_fitted, check_generator, check_positive_finite, check_X, check_y, facts_by_index, shown
from reference.ledger import PrivacyLedger, Scope

__all__ = ["GammaNormNoise", "DPLogisticRegression", "unit_ball_map", "regularised_minimiser", "remembered_minimisers"]


class GammaNormNoise:
    """The noise of Algorithm 1: density ``p(b) proportional to exp(-beta ||b||_2)`` on R^dim.

    Parameters
    ----------
    beta : float
        The rate ``n * reg_lambda * epsilon / 2``.
    dim : int
        The dimension of ``b``.

    Notes
    -----
    In polar coordinates the density factorises into a uniform direction and a
    norm with density proportional to ``r^(dim-1) exp(-beta r)``, i.e.
    Gamma(shape = dim, scale = 1 / beta) (Chaudhuri et al. 2011, section 4).
    """

    def __init__(self, beta: float, dim: int):
        self.beta = check_positive_finite("beta", beta)
        if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)) or dim < 1:
            raise ValueError(f"dim must be a positive integer, got {shown(dim)}")
        self.dim = int(dim)

    def norm_law(self):
        """The law of ``||b||_2``: a frozen ``scipy.stats.gamma``."""
        return stats.gamma(a=self.dim, scale=1.0 / self.beta)

    def batch(self, n: int, rng) -> np.ndarray:
        """``n`` independent noise vectors, shape ``(n, dim)``."""
        check_generator(rng)
        u = rng.standard_normal((int(n), self.dim))
        u /= np.linalg.norm(u, axis=1, keepdims=True)
        return u * rng.gamma(self.dim, 1.0 / self.beta, size=(int(n), 1))

    def sample(self, rng) -> np.ndarray:
        """One noise vector."""
        return self.batch(1, rng)[0]

    def logpdf(self, b) -> np.ndarray | float:
        """``log p(b)`` for one vector or a stack of them (last axis is the dimension).

        ``p(b) = beta^dim Gamma(dim/2) / (2 pi^(dim/2) Gamma(dim)) exp(-beta ||b||)``: the Gamma norm density
        divided by the area ``2 pi^(dim/2) r^(dim-1) / Gamma(dim/2)`` of the sphere of radius r.
        """
        b = np.asarray(b, dtype=float)
        if b.shape[-1] != self.dim:
            raise ValueError(f"b must have last dimension {self.dim}, got shape {b.shape}")
        d = self.dim
        log_norm = d * math.log(self.beta) + gammaln(d / 2) - math.log(2.0) - (d / 2) * math.log(math.pi) - gammaln(d)
        out = log_norm - self.beta * np.linalg.norm(b, axis=-1)
        return float(out) if out.ndim == 0 else out


def _check_bounds(bounds, m: int) -> np.ndarray:
    if bounds is None:
        raise ValueError("bounds is required: the public (low, high) of every feature")
    try:
        b = np.asarray(bounds, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"bounds must be a sequence of (low, high) pairs of numbers, got {shown(bounds)}") from None
    if b.shape != (m, 2):
        raise ValueError(f"bounds must have shape ({m}, 2), one (low, high) per feature, got shape {b.shape}")
    if not np.all(np.isfinite(b)):
        raise ValueError(f"bounds must be finite, got {shown(bounds)}")
    bad = np.flatnonzero(b[:, 1] <= b[:, 0])
    if bad.size:
        j = int(bad[0])
        raise ValueError(f"bounds[{j}] must have low < high, got {shown(tuple(b[j].tolist()))}")
    return b


def unit_ball_map(X, bounds, fit_intercept: bool = True) -> np.ndarray:
    """Map records into the unit L2 ball using public ``bounds`` only (step 1 of the module docstring).

    Parameters
    ----------
    X : array of shape (n, m), finite
    bounds : array of shape (m, 2), public (low, high) per feature, low < high
    fit_intercept : bool
        Append a constant 1 before the norm is bounded.

    Returns
    -------
    Z : array of shape (n, m + fit_intercept), every row of L2 norm at most 1.
    """
    X = np.asarray(X, dtype=float)
    b = _check_bounds(bounds, X.shape[1])
    lo, hi = b[:, 0], b[:, 1]
    Z = 2.0 * (np.clip(X, lo, hi) - lo) / (hi - lo) - 1.0
    if fit_intercept:
        Z = np.column_stack((Z, np.ones(len(Z))))
    return Z / np.maximum(1.0, np.linalg.norm(Z, axis=1, keepdims=True))


_REMEMBERED: contextvars.ContextVar[dict | None] = contextvars.ContextVar("dp_lr_minimisers", default=None)


@contextlib.contextmanager
def remembered_minimisers():
    """Inside this block, :func:`regularised_minimiser` computes each distinct input once (an auditor fitting the
    same data thousands of times with fresh noise); the results are forgotten on leaving the block and never
    enter a model. The minimiser is a pure function of its inputs, so every fit is the fit without the block."""
    token = _REMEMBERED.set({})
    try:
        yield
    finally:
        _REMEMBERED.reset(token)


def regularised_minimiser(Z, s, lam, tol=1e-12, max_iter=100) -> np.ndarray:
    """``argmin_w mean(log(1 + exp(-s * Z w))) + lam/2 ||w||^2`` (step 2), by Newton steps with backtracking.

    Parameters
    ----------
    Z : array (n, dim), mapped records (:func:`unit_ball_map`)
    s : array (n,), labels in {-1, +1}
    lam : float, the regularisation (> 0, so the minimiser is unique)
    tol : float, stop when the gradient's L2 norm is below it

    Returns
    -------
    w : array (dim,), the noise-free minimiser ``w*`` of Algorithm 1 (inside :func:`remembered_minimisers`, a
    copy of the one computed first for the same inputs).
    """
    memo = _REMEMBERED.get()
    if memo is None:
        return _newton_minimiser(Z, s, lam, tol, max_iter)
    Z, s = np.ascontiguousarray(Z, dtype=float), np.ascontiguousarray(s, dtype=float)
    key = hashlib.sha256(repr((Z.shape, float(lam), float(tol), int(max_iter))).encode() + Z.tobytes()
                         + s.tobytes()).hexdigest()
    if key not in memo:
        memo[key] = _newton_minimiser(Z, s, lam, tol, max_iter)
    return memo[key].copy()


def _newton_minimiser(Z, s, lam, tol, max_iter) -> np.ndarray:
    """:func:`regularised_minimiser`, computed."""
    n, d = Z.shape

    def objective(w):
        return float(np.mean(np.logaddexp(0.0, -s * (Z @ w))) + 0.5 * lam * w @ w)

    w = np.zeros(d)
    f = objective(w)
    for _ in range(max_iter):
        margin = s * (Z @ w)
        p = np.exp(-np.logaddexp(0.0, margin))  # sigma(-margin)
        grad = -(Z.T @ (s * p)) / n + lam * w
        if np.linalg.norm(grad) <= tol:
            break
        H = (Z.T * (p * (1.0 - p))) @ Z / n + lam * np.eye(d)
        step = np.linalg.solve(H, grad)
        t = 1.0
        while True:
            w_new = w - t * step
            f_new = objective(w_new)
            if f_new <= f - 1e-4 * t * (grad @ step) or t < 1e-10:
                break
            t *= 0.5
        w, f = w_new, f_new
    return w


class DPLogisticRegression(PublishSafeMixin, ClassifierMixin, BaseEstimator):
    """L2-regularised logistic regression released by output perturbation (Chaudhuri et al. 2011, Algorithm 1).

    Parameters
    ----------
    epsilon : float
        Privacy budget (substitution of one record, ``n`` public).
    reg_lambda : float
        The L2 regularisation ``lambda`` of Eq. 1 in Chaudhuri et al. (the objective's strong convexity).
    bounds : sequence of (low, high), one per feature
        Public feature ranges; records are clipped to them and mapped into the unit ball (:func:`unit_ball_map`).
    classes : sequence of labels
        Public class labels, at least two; with two, ``classes[1]`` is the positive class.
    fit_intercept : bool
        Append a constant feature (regularised like the others).
    random_state : int, Generator or None
        Privacy first: the fit's noise comes from fresh OS entropy, whatever this holds, unless seeded fits are
        on (``reference.randomness.seeded_fits``, used by the auditor and reproductions): then an integer seeds
        the fit's stream and a Generator spawns its child (never drawn from or kept), and the seed is a secret key.
        The stream is discarded after fit; a fitted model's pickle drops ``random_state``.

    Attributes
    ----------
    coef_ : array (K', dim)
        The released weights, one row per binary model (K' = 1 for two classes, K otherwise), on the mapped
        features of :func:`unit_ball_map`.
    noise_ : GammaNormNoise
        The law of the noise added to each model.
    privacy_ledger_ : PrivacyLedger

    References
    ----------
    Chaudhuri, Monteleoni, Sarwate (2011), JMLR 12, Algorithm 1, Corollary 8 and Theorem 6;
    PrivaTree (Vos et al. 2023) section VI-B and spec/privatree.md 3.6 and A17.
    """

    def __init__(self, epsilon=1.0, reg_lambda=0.1, *, bounds=None, classes=None, fit_intercept=True,
                 random_state=None):
        self.epsilon = epsilon
        self.reg_lambda = reg_lambda
        self.bounds = bounds
        self.classes = classes
        self.fit_intercept = fit_intercept
        self.random_state = random_state

    def _map(self, X):
        X = check_X(self, X, reset=False)  # NotFittedError; names, counts, 2-D, finite
        return unit_ball_map(X, self.bounds_, self.fit_intercept_)

    def fit(self, X, y):
        """Fit the exact minimiser on the mapped data and add the Algorithm 1 noise."""
        eps = check_positive_finite("epsilon", self.epsilon)
        lam = check_positive_finite("reg_lambda", self.reg_lambda)
        if self.classes is None or len(set(self.classes)) < 2:
            raise ValueError(f"classes must list at least two distinct labels, got {shown(self.classes)}")
        X = check_X(self, X, reset=True)  # names, counts, 2-D, finite
        if X.shape[0] == 0:
            raise ValueError(f"X must be a non-empty 2-D array, got shape {X.shape}")
        bounds = facts_by_index(self, "bounds", self.bounds, X.shape[1], sequence=True)
        classes = np.asarray(list(self.classes))
        pos = {c: k for k, c in enumerate(classes.tolist())}
        try:
            yk = np.array([pos[v] for v in check_y(self, y, X.shape[0]).tolist()], dtype=np.int64)
        except KeyError as e:
            raise ValueError(f"y holds the label {shown(e.args[0])}, not among classes") from None
        if yk.shape[0] != X.shape[0]:
            raise ValueError(f"X and y must have the same number of rows, got {X.shape[0]} and {yk.shape[0]}")
        warn_outside_bounds(self, X, _check_bounds(bounds, X.shape[1]),  # to the caller only: the count is private
                            CLIPPED + " (before the map into the unit ball)")
        Z = unit_ball_map(X, bounds, bool(self.fit_intercept))
        rng = fit_rng(self.random_state, self)  # a fresh child stream, discarded with the fit (reference.randomness)
        n, dim = Z.shape
        K = classes.size
        targets = [1] if K == 2 else list(range(K))
        eps_model = eps / len(targets)
        noise = GammaNormNoise(n * lam * eps_model / 2.0, dim)
        ledger = PrivacyLedger("substitute")
        coef = []
        for k in targets:
            s = np.where(yk == k, 1.0, -1.0)
            w = regularised_minimiser(Z, s, lam)
            coef.append(w + noise.sample(rng))
            ledger.charge(f"model[{classes[k]!r}]", "output perturbation, Gamma-norm noise (CMS 2011 Alg. 1)",
                          eps_model, scope=Scope.root(), sensitivity=2.0 / (n * lam),
                          note="L2 sensitivity 2/(n lambda) of the regularised minimiser; n public")
        self.coef_ = np.asarray(coef)
        self.noise_ = noise
        self.classes_ = classes
        self.n_features_in_ = X.shape[1]
        self.bounds_, self.fit_intercept_ = _check_bounds(bounds, X.shape[1]), bool(self.fit_intercept)
        self.privacy_ledger_ = ledger
        return self

    def decision_function(self, X):
        """Scores ``Z w``: one column per model (1-D for two classes)."""
        S = self._map(X) @ self.coef_.T
        return S[:, 0] if self.classes_.size == 2 else S

    def predict_proba(self, X):
        S = self.decision_function(X)
        if self.classes_.size == 2:
            p1 = np.exp(-np.logaddexp(0.0, -S))
            return np.column_stack((1.0 - p1, p1))
        e = np.exp(S - S.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    def predict(self, X):
        S = self.decision_function(X)
        if self.classes_.size == 2:
            return self.classes_[(S > 0).astype(int)]
        return self.classes_[np.argmax(S, axis=1)]

    def release(self) -> np.ndarray:
        """The published weights, flattened (1-D float array): everything the model reveals."""
        check_fitted(self)
        return self.coef_.ravel().copy()
