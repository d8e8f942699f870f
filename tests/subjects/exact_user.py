"""Subjects for the exact check, written as engineers ship them: plain numpy, discrete draws, no project imports.

Each subject states what it releases, its neighbour relation, the epsilon it claims and its exact privacy loss
on the tiny domain (records with one feature in {0.0, 1.0} and a label in {0, 1}; mechanisms' data tuples of at
most 3 records). The numbers are those of the independent oracle ``tests/exact_user_oracle.py`` at
``epsilon = 1``; ``a = exp(-epsilon)`` throughout.

Where the noise comes from varies on purpose: ``np.random.default_rng(self.random_state)`` (a constructor
parameter, ``None`` by default), a fresh ``np.random.default_rng()`` on every fit, the global ``np.random.*``
functions, or the ``rng`` a mechanism is handed.

Estimators (``fit(X, y)``; the release is the fitted attributes, ``predict`` draws nothing):

* :class:`NoisyCountsVectorised`, :class:`NoisyCountsLoop`, :class:`NoisyCountsGlobal`: correct, loss epsilon;
* :class:`NoisyCountsHalfNoise`: violation, loss 2 epsilon;
* :class:`ClampedCount`: correct, loss epsilon;
* :class:`ClampedCountBuggy`: violation, loss ``epsilon - ln(1 - exp(-epsilon))`` (1.4587 at epsilon 1);
* :class:`NoisyMajorityRR`: correct under substitution, loss epsilon;
* :class:`LaplaceCount`: a continuous draw, the exact check must answer "undecided";
* :class:`PoissonNoise`: violation, loss infinite.

Mechanisms (``m(data, rng)``, built as ``m = Mechanism(epsilon=...)``):

* :class:`RandomizedResponse`, :class:`RandomizedResponseChoice`: correct under substitution, loss epsilon;
* :class:`RandomizedResponseWrongP`: violation, loss 2 epsilon;
* :class:`ReportNoisyMax`: correct under add/remove, loss ``epsilon / 2`` (k = 3 or 4);
* :class:`ReportNoisyMaxBuggy`: violation, loss ``4 epsilon`` (k = 3 or 4);
* :class:`PermutedSample`: violation under add/remove, loss infinite.
"""
import numpy as np


class _Estimator:
    """``get_params``/``set_params`` over the constructor's parameters, named in ``_PARAMS``."""

    _PARAMS = ("epsilon", "classes")

    def get_params(self, deep=True):
        return {name: getattr(self, name) for name in self._PARAMS}

    def set_params(self, **kw):
        for k, v in kw.items():
            setattr(self, k, v)
        return self


class _Seeded(_Estimator):
    """An estimator that takes a ``random_state`` (``None``: fresh entropy) and seeds ``default_rng`` with it."""

    _PARAMS = ("epsilon", "classes", "random_state")

    def __init__(self, epsilon=1.0, classes=(0, 1), random_state=None):
        self.epsilon, self.classes, self.random_state = epsilon, classes, random_state


# ----------------------------------------------------------------------------------------------------------------
# Noisy class counts
# ----------------------------------------------------------------------------------------------------------------

class NoisyCountsVectorised(_Seeded):
    """Per-class counts plus two-sided geometric noise, drawn as one vector.

    Releases ``counts_`` (one integer per class); predicts the class of the largest noisy count.

    Neighbours: add/remove one record. Claim: ``epsilon``. Noise ``G1 - G2`` with ``G1, G2 ~ Geometric(p)``,
    ``p = 1 - exp(-epsilon)``, has ``P(z) = (1 - a) / (1 + a) a^|z|``.

    Exact loss: ``epsilon``. One record moves one count by one, and
    ``ln P(r | n) - ln P(r | n + 1) = epsilon (|r - n - 1| - |r - n|)`` reaches ``epsilon`` at every ``r <= n``.
    """

    def fit(self, X, y):
        rng = np.random.default_rng(self.random_state)
        y = np.asarray(y)
        counts = np.array([np.sum(y == c) for c in self.classes], dtype=np.int64)
        p = 1.0 - np.exp(-self.epsilon)
        k = len(self.classes)
        self.counts_ = counts + rng.geometric(p, size=k) - rng.geometric(p, size=k)
        return self

    def predict(self, X):
        return np.full(len(X), self.classes[int(np.argmax(self.counts_))])


class NoisyCountsLoop(_Estimator):
    """:class:`NoisyCountsVectorised` written with a loop over the classes and scalar draws from a fresh
    ``np.random.default_rng()`` on every fit.

    Releases ``counts_``. Neighbours: add/remove. Claim: ``epsilon``.

    Exact loss: ``epsilon`` (the same law as :class:`NoisyCountsVectorised`).
    """

    def __init__(self, epsilon=1.0, classes=(0, 1)):
        self.epsilon, self.classes = epsilon, classes

    def fit(self, X, y):
        rng = np.random.default_rng()
        p = 1.0 - np.exp(-self.epsilon)
        counts = []
        for c in self.classes:
            exact = sum(1 for label in y if label == c)
            counts.append(exact + int(rng.geometric(p)) - int(rng.geometric(p)))
        self.counts_ = np.array(counts, dtype=np.int64)
        return self

    def predict(self, X):
        return np.full(len(X), self.classes[int(np.argmax(self.counts_))])


class NoisyCountsHalfNoise(NoisyCountsVectorised):
    """:class:`NoisyCountsVectorised` with the noise rate doubled: ``p = 1 - exp(-2 epsilon)`` (half the noise).

    Releases ``counts_``. Neighbours: add/remove. Claim: ``epsilon``.

    Exact loss: ``2 epsilon`` (VIOLATION): the noise law is ``P(z) ∝ exp(-2 epsilon |z|)``, and one count moving by
    one changes ``ln P`` by ``2 epsilon`` at every ``r <= n``.
    """

    def fit(self, X, y):
        rng = np.random.default_rng(self.random_state)
        y = np.asarray(y)
        counts = np.array([np.sum(y == c) for c in self.classes], dtype=np.int64)
        p = 1.0 - np.exp(-2.0 * self.epsilon)
        k = len(self.classes)
        self.counts_ = counts + rng.geometric(p, size=k) - rng.geometric(p, size=k)
        return self


class NoisyCountsGlobal(_Estimator):
    """:class:`NoisyCountsVectorised` drawing from numpy's global generator (``np.random.geometric``).

    Releases ``counts_``. Neighbours: add/remove. Claim: ``epsilon``.

    Exact loss: ``epsilon`` (the same law as :class:`NoisyCountsVectorised`).
    """

    def __init__(self, epsilon=1.0, classes=(0, 1)):
        self.epsilon, self.classes = epsilon, classes

    def fit(self, X, y):
        y = np.asarray(y)
        counts = np.array([np.sum(y == c) for c in self.classes], dtype=np.int64)
        p = 1.0 - np.exp(-self.epsilon)
        k = len(self.classes)
        self.counts_ = counts + np.random.geometric(p, size=k) - np.random.geometric(p, size=k)
        return self

    def predict(self, X):
        return np.full(len(X), self.classes[int(np.argmax(self.counts_))])


# ----------------------------------------------------------------------------------------------------------------
# One clamped count
# ----------------------------------------------------------------------------------------------------------------

class ClampedCount(_Estimator):
    """The number of positives (label ``classes[-1]``) plus two-sided geometric noise, clamped at zero.

    Releases ``count_ = max(n + Z, 0)`` (an int); predicts the positive class when ``count_ > 0``. Noise from the
    global ``np.random.geometric``.

    Neighbours: add/remove. Claim: ``epsilon``.

    Exact loss: ``epsilon``. Clamping is post-processing; on release 0 the ratio is
    ``P(Z <= -n) / P(Z <= -n - 1) = a^n / a^(n + 1) = e^epsilon``, elsewhere it is that of the unclamped count.
    """

    def __init__(self, epsilon=1.0, classes=(0, 1)):
        self.epsilon, self.classes = epsilon, classes

    def fit(self, X, y):
        positives = int(np.sum(np.asarray(y) == self.classes[-1]))
        p = 1.0 - np.exp(-self.epsilon)
        noisy = positives + np.random.geometric(p) - np.random.geometric(p)
        self.count_ = int(max(noisy, 0))
        return self

    def predict(self, X):
        return np.full(len(X), self.classes[-1] if self.count_ > 0 else self.classes[0])


class ClampedCountBuggy(_Estimator):
    """:class:`ClampedCount` that falls back to the TRUE count when the noisy count is negative.

    Releases ``count_ = n + Z if n + Z >= 0 else n`` (an int). Noise from a fresh ``np.random.default_rng()``.

    Neighbours: add/remove. Claim: ``epsilon``.

    Exact loss: ``epsilon - ln(1 - e^-epsilon)`` (1.4587 at epsilon 1; VIOLATION, and above epsilon at every
    epsilon). It is finite, not infinite: the noisy branch alone already reaches every value ``>= 0`` on every
    input (the noise is unbounded both ways), so no release is possible on one input only. The fallback piles
    ``P(Z < -n) = a^(n + 1) / (1 + a)`` onto the release ``n``; with ``n = 0`` against ``n' = 1``, release 0 has
    ``P(Z <= 0) = 1 / (1 + a)`` against ``P(Z = -1) = (1 - a) a / (1 + a)``: ratio ``1 / (a (1 - a))``.
    """

    def __init__(self, epsilon=1.0, classes=(0, 1)):
        self.epsilon, self.classes = epsilon, classes

    def fit(self, X, y):
        rng = np.random.default_rng()
        true_count = int(np.sum(np.asarray(y) == self.classes[-1]))
        p = 1.0 - np.exp(-self.epsilon)
        noisy = true_count + int(rng.geometric(p)) - int(rng.geometric(p))
        self.count_ = noisy if noisy >= 0 else true_count
        return self

    def predict(self, X):
        return np.full(len(X), self.classes[-1] if self.count_ > 0 else self.classes[0])


# ----------------------------------------------------------------------------------------------------------------
# Majority label by randomized response
# ----------------------------------------------------------------------------------------------------------------

class NoisyMajorityRR(_Seeded):
    """The majority label, kept with probability ``e^epsilon / (1 + e^epsilon)`` and flipped otherwise.

    Releases ``label_`` (one of ``classes``). The majority is ``classes[1]`` when strictly more than half of the
    labels are ``classes[1]``, else ``classes[0]`` (ties and the empty dataset give ``classes[0]``). Drawn from
    ``np.random.default_rng(self.random_state)`` as ``rng.random() < p_keep``.

    Neighbours: substitution (one record replaced). Claim: ``epsilon``.

    Exact loss: ``epsilon`` on a pair whose majority differs (e.g. labels ``[0, 1]``, a tie, against ``[1, 1]``):
    ``ln(p_keep / (1 - p_keep)) = epsilon``; 0 on a pair with the same majority.
    """

    def fit(self, X, y):
        rng = np.random.default_rng(self.random_state)
        y = np.asarray(y)
        majority = 1 if 2 * int(np.sum(y == self.classes[1])) > len(y) else 0
        p_keep = np.exp(self.epsilon) / (1.0 + np.exp(self.epsilon))
        released = majority if rng.random() < p_keep else 1 - majority
        self.label_ = self.classes[released]
        return self

    def predict(self, X):
        return np.full(len(X), self.label_)


# ----------------------------------------------------------------------------------------------------------------
# Undecided and unbounded
# ----------------------------------------------------------------------------------------------------------------

class LaplaceCount(_Seeded):
    """The number of positives plus Laplace noise of scale ``1 / epsilon``, kept as a float ``count_``.

    Neighbours: add/remove. Claim: ``epsilon``. Correct (the density ratio is at most ``e^epsilon``), but the
    draw is continuous: the exact check must answer "undecided", not a number.
    """

    def fit(self, X, y):
        rng = np.random.default_rng(self.random_state)
        positives = int(np.sum(np.asarray(y) == self.classes[-1]))
        self.count_ = float(positives + rng.laplace(0.0, 1.0 / self.epsilon))
        return self

    def predict(self, X):
        return np.full(len(X), self.classes[-1] if self.count_ > 0.5 else self.classes[0])


class PoissonNoise(_Seeded):
    """The number of positives plus Poisson noise of mean ``3 / epsilon`` (3 at epsilon 1), kept as ``count_``.

    Neighbours: add/remove. Claim: ``epsilon``.

    Exact loss: infinite (VIOLATION). The noise is never negative, so the release ``n`` (noise 0, probability
    ``e^(-3 / epsilon)``) is impossible on a neighbour with ``n + 1`` positives.
    """

    def fit(self, X, y):
        rng = np.random.default_rng(self.random_state)
        positives = int(np.sum(np.asarray(y) == self.classes[-1]))
        self.count_ = positives + int(rng.poisson(3.0 / self.epsilon))
        return self

    def predict(self, X):
        return np.full(len(X), self.classes[-1] if self.count_ > 3.0 / self.epsilon else self.classes[0])


# ----------------------------------------------------------------------------------------------------------------
# Mechanisms: m = Mechanism(epsilon); m(data, rng)
# ----------------------------------------------------------------------------------------------------------------

class RandomizedResponse:
    """Binary randomized response: each bit of ``data`` kept with probability ``e^epsilon / (1 + e^epsilon)``.

    Releases a tuple of bits, one per record, each drawn as ``rng.random() < p_keep``.

    Neighbours: substitution (one bit changed). Claim: ``epsilon``.

    Exact loss: ``epsilon``. The records are independent; the changed one contributes
    ``ln(p_keep / (1 - p_keep)) = epsilon`` to every release.
    """

    def __init__(self, epsilon=1.0):
        self.epsilon = epsilon
        self.p_keep = np.exp(epsilon) / (1.0 + np.exp(epsilon))

    def __call__(self, data, rng):
        return tuple(int(bit) if rng.random() < self.p_keep else 1 - int(bit) for bit in data)


class RandomizedResponseWrongP(RandomizedResponse):
    """:class:`RandomizedResponse` with ``p_keep = e^(2 epsilon) / (1 + e^(2 epsilon))``.

    Neighbours: substitution. Claim: ``epsilon``.

    Exact loss: ``2 epsilon`` (VIOLATION): ``ln(p_keep / (1 - p_keep)) = 2 epsilon``.
    """

    def __init__(self, epsilon=1.0):
        super().__init__(epsilon)
        self.p_keep = np.exp(2.0 * epsilon) / (1.0 + np.exp(2.0 * epsilon))


class RandomizedResponseChoice:
    """:class:`RandomizedResponse` written with ``rng.choice([bit, 1 - bit], p=[p_keep, 1 - p_keep])``.

    Neighbours: substitution. Claim: ``epsilon``. Exact loss: ``epsilon``.
    """

    def __init__(self, epsilon=1.0):
        self.epsilon = epsilon

    def __call__(self, data, rng):
        p_keep = np.exp(self.epsilon) / (1.0 + np.exp(self.epsilon))
        out = []
        for bit in data:
            out.append(int(rng.choice([bit, 1 - bit], p=[p_keep, 1.0 - p_keep])))
        return tuple(out)


class ReportNoisyMax:
    """Report noisy max over ``k`` candidates with one-sided geometric noise.

    ``data`` holds one candidate index in ``{0, ..., k - 1}`` per record. Releases
    ``argmax_i (c_i + G_i)`` (an int; ties to the lowest index, as ``np.argmax``), ``c_i`` the number of records
    voting ``i`` and ``G_i ~ Geometric(p)`` on ``{1, 2, ...}`` independent, ``p = 1 - exp(-epsilon / 2)``
    (``P(G >= t) = b^(t - 1)``, ``b = exp(-epsilon / 2)``).

    Neighbours: add/remove. Claim: ``epsilon``.

    Why it is epsilon-DP: fix the other candidates' noise; candidate ``i`` wins iff ``G_i >= t`` for a threshold
    ``t``. If every count moves by at most one, ``t`` moves by at most two, and the geometric tail gives
    ``P(G_i >= t + 2) >= b^2 P(G_i >= t) = e^-epsilon P(G_i >= t)``; integrate over the other noises. (This holds
    for any count vectors at l-infinity distance 1; under add/remove the counts only move one way, ``t`` moves by
    at most one, and the loss is even at most ``epsilon / 2``.)

    Exact loss on the tiny domain: ``epsilon / 2`` (0.5 at epsilon 1, ``k = 3`` or 4), e.g. ``()`` against
    ``(1,)``, release 1: candidate 1's winning threshold drops by exactly one and stays >= 1, and the geometric
    tail is memoryless, so the ratio is exactly ``b^-1``. A vote for a candidate already ahead costs less
    (``(0, 0)`` against ``(0, 0, 0)``: 0.4715 at ``k = 3``).
    """

    def __init__(self, epsilon=1.0, k=3):
        self.epsilon, self.k = epsilon, k

    def _p(self):
        return 1.0 - np.exp(-self.epsilon / 2.0)

    def __call__(self, data, rng):
        counts = np.zeros(self.k, dtype=np.int64)
        for vote in data:
            counts[vote] += 1
        noisy = counts + rng.geometric(self._p(), size=self.k)
        return int(np.argmax(noisy))


class ReportNoisyMaxBuggy(ReportNoisyMax):
    """:class:`ReportNoisyMax` with noise of scale ``1 / (4 epsilon)``: ``p = 1 - exp(-4 epsilon)``.

    Neighbours: add/remove. Claim: ``epsilon``.

    Exact loss on the tiny domain: ``4 epsilon`` (VIOLATION; 4 at epsilon 1, ``k = 3`` or 4), e.g. ``()`` against
    ``(1,)``, release 1, by the argument of :class:`ReportNoisyMax` at rate ``4 epsilon``.
    """

    def _p(self):
        return 1.0 - np.exp(-4.0 * self.epsilon)


class LocalReport:
    """Each user's local report of a record ``(x, y)`` (``x`` a bit, ``y`` a label in {0, 1}): the label plus
    two-sided geometric noise at rate ``epsilon / 2``, and the bit through randomized response at ``epsilon / 2``,
    drawn as ``rng.random() < p_keep`` (the shape of LPDT's local randomiser, Ma, Zhang, Cai and Yang 2023,
    mechanisms (3) and (4)).

    Neighbours: substitution of the user's record. Claim: ``epsilon``.

    Exact loss: ``epsilon / 2 |y - y'| + epsilon / 2 [x != x']``, at most ``epsilon``. The same release comes from
    keeping the bit on one input and flipping it on the other, so its paths pair by release, not by decision.
    """

    def __init__(self, epsilon=1.0):
        self.epsilon = epsilon
        self.p_keep = np.exp(epsilon / 2) / (1.0 + np.exp(epsilon / 2))

    def __call__(self, data, rng):
        p = 1.0 - np.exp(-self.epsilon / 2)
        return tuple((y + rng.geometric(p) - rng.geometric(p), x if rng.random() < self.p_keep else 1 - x)
                     for x, y in data)


class PermutedSample:
    """Releases one record of ``data`` picked by a random permutation: ``rng.permutation(data)[0]``.

    The empty dataset releases -1. Neighbours: add/remove. Claim: ``epsilon`` (the parameter is unused).

    Exact loss: infinite (VIOLATION). A value present in one dataset and absent from its neighbour is released
    with probability (its share of the records) > 0 on one and 0 on the other, e.g. ``(0,)`` against
    ``(0, 1)``, release 1.
    """

    def __init__(self, epsilon=1.0):
        self.epsilon = epsilon

    def __call__(self, data, rng):
        if len(data) == 0:
            return -1
        return int(rng.permutation(np.asarray(data))[0])


# ----------------------------------------------------------------------------------------------------------------
# Noise from the project's own mechanisms (reference.mechanisms), whose exact sampler runs rejection loops
# ----------------------------------------------------------------------------------------------------------------

class ProjectGeometricCounts(_Seeded):
    """Per-class counts released through :class:`reference.mechanisms.TwoSidedGeometric` (sensitivity 1), which
    samples exact integer noise by rejection over uniforms of up to 2^56 values.

    Exact loss: ``epsilon`` (as :class:`NoisyCountsVectorised`: the law is ``DLap(1 / epsilon)``). With
    ``noise_epsilon`` twice the claim, ``2 epsilon``.
    """

    _PARAMS = ("epsilon", "classes", "random_state", "noise_epsilon")

    def __init__(self, epsilon=1.0, classes=(0, 1), random_state=None, noise_epsilon=None):
        super().__init__(epsilon, classes, random_state)
        self.noise_epsilon = noise_epsilon

    def fit(self, X, y):
        from reference.mechanisms import TwoSidedGeometric

        y = np.asarray(y)
        counts = np.array([np.sum(y == c) for c in self.classes], dtype=np.int64)
        mech = TwoSidedGeometric(self.noise_epsilon or self.epsilon, 1.0)
        self.counts_ = mech.sample(counts, np.random.default_rng(self.random_state))
        return self

    def predict(self, X):
        return np.full(len(X), self.classes[int(np.argmax(self.counts_))])
