"""Independent brute-force oracle for the subjects of ``tests/subjects/exact_user.py``.

Each subject's release law is written down here from its closed form (no tracing, no import from ``audit`` or
from the subjects), and the exact privacy loss of a pair ``(D, D')`` is
``max over releases r of |ln P(r | D) - ln P(r | D')|``, ``math.inf`` when one law gives ``r`` a positive
probability and the other zero. ``a = exp(-epsilon)``; the two-sided geometric law (``G1 - G2``, both
``Geometric(1 - a)`` on ``{1, 2, ...}``) is ``P(z) = (1 - a) / (1 + a) a^|z|``.

* ``ORACLE[name](D, D_prime, epsilon=1.0, **params)``: the exact loss of one pair (``params`` are the subject's
  constructor parameters besides ``epsilon``: ``classes``, ``k``);
* ``LAWS[name](D, epsilon=1.0, **params)``: the release law of one dataset as ``{release: probability}`` (for
  an infinite support, a window whose omitted mass is below ``1e-15``), for Monte Carlo checks;
* ``PAIRS[name]``: tiny neighbouring pairs, the worst case among them; an estimator's dataset is ``(X, y)``
  (``X`` a list of lists with one feature in {0.0, 1.0}, ``y`` labels in {0, 1}), a mechanism's a tuple;
* ``RELATION[name]``: ``"add/remove"`` or ``"substitution"``; ``UNDECIDED``: the subjects the exact check must
  answer "undecided" on (their oracle gives the true loss of the continuous law, for reference).

Exact losses at ``epsilon = 1``, per pair in the order of ``PAIRS`` (the pair sets are listed below):

==========================  ==============  ===========  ======================================================
subject                     relation        pair set     loss per pair, in the order of ``PAIRS``
==========================  ==============  ===========  ======================================================
NoisyCountsVectorised       add/remove      COUNT        1, 1, 1, 1, 1 (worst 1 = epsilon)
NoisyCountsLoop             add/remove      COUNT        same (worst 1)
NoisyCountsGlobal           add/remove      COUNT        same (worst 1)
NoisyCountsHalfNoise        add/remove      COUNT        2, 2, 2, 2, 2 (worst 2 = 2 epsilon)
ClampedCount                add/remove      COUNT        1, 1, 0, 1, 1 (worst 1)
ClampedCountBuggy           add/remove      COUNT        1.4587, 1.4587, 0, 1.1940, 1.0758 (worst 1.4587)
LaplaceCount                add/remove      COUNT        1, 1, 0, 1, 1 (undecided in the exact check)
PoissonNoise                add/remove      COUNT        inf, inf, 0, inf, inf (worst inf)
NoisyMajorityRR             substitution    MAJORITY     1, 1, 1, 0, 0 (worst 1)
RandomizedResponse          substitution    RR           1, 1, 1 (worst 1)
RandomizedResponseChoice    substitution    RR           same (worst 1)
RandomizedResponseWrongP    substitution    RR           2, 2, 2 (worst 2)
ReportNoisyMax              add/remove      RNM          0.5 (five pairs), 0.4715 (worst 0.5 = epsilon/2)
ReportNoisyMaxBuggy         add/remove      RNM          4 (five pairs), 3.9999999 (worst 4 = 4 epsilon)
PermutedSample              add/remove      SAMPLE       inf, inf, 0, 0.4055, inf (worst inf)
LocalReport                 substitution    REPORT       1, 0.5, 0.5 (worst 1 = epsilon)
==========================  ==============  ===========  ======================================================

COUNT pairs: ``([], [])`` vs ``([[1.0]], [1])``; ``([[0.0]], [0])`` vs ``([[0.0], [1.0]], [0, 1])``;
``([[1.0]], [1])`` vs ``([[1.0], [0.0]], [1, 0])``; ``([[0.0], [1.0]], [0, 1])`` vs
``([[0.0], [1.0], [1.0]], [0, 1, 1])``; ``([[1.0], [1.0]], [1, 1])`` vs ``([[1.0], [1.0], [1.0]], [1, 1, 1])``.
(For the per-class counts every pair moves one count: loss epsilon. The single-count subjects count label 1, so
adding a label-0 record, the third pair, costs nothing.)

MAJORITY pairs (substitution; only the labels matter), by their labels: ``[0]`` vs ``[1]``; ``[0, 1]`` (a tie:
0) vs ``[1, 1]``; ``[0, 0, 1]`` vs ``[0, 1, 1]``; ``[0, 0, 0]`` vs ``[0, 0, 1]`` (majority 0 on both);
``[1, 0]`` on both sides with the first record's feature changed.

RR pairs: ``(0,)`` vs ``(1,)``; ``(0, 1)`` vs ``(1, 1)``; ``(0, 1, 1)`` vs ``(0, 0, 1)``.

RNM pairs (``k = 3``, the same numbers at ``k = 4`` but the last): ``()`` vs ``(1,)``; ``(0,)`` vs ``(0, 1)``;
``(0, 0)`` vs ``(0, 0, 1)``; ``(0, 1)`` vs ``(0, 1, 2)``; ``(1, 2)`` vs ``(0, 1, 2)``; ``(0, 0)`` vs
``(0, 0, 0)``. ReportNoisyMax: 0.5 on the first five (``epsilon / 2``, at the release of the candidate that gains
the vote: its winning threshold drops by exactly one and stays >= 1, and the geometric tail is memoryless),
0.4715 on the last (0.4445 at ``k = 4``: the vote goes to a candidate already ahead); ReportNoisyMaxBuggy: 4 on
the first five (``4 epsilon``, the same argument at rate ``4 epsilon``), 3.9999999 on the last. Over every
add/remove pair of data tuples of at most 3 records the worst is 0.5 and 4, at ``k = 3`` and ``k = 4``.

SAMPLE pairs: ``()`` (release -1) vs ``(0,)``; ``(0,)`` vs ``(0, 1)``; ``(0,)`` vs ``(0, 0)``; ``(0, 1)`` vs
``(0, 1, 1)`` (release 0: 1/2 against 1/3); ``(1, 1)`` vs ``(1, 1, 0)``.

Truncation: the count laws need none (the log ratio of two shifted two-sided geometric laws is constant outside
``[min(n, n') - 1, max(n, n') + 1]``, so the maximum over all integers is attained in that window); report noisy
max sums its noise up to ``g_max`` with ``P(G > g_max) = b^g_max <= 1e-17`` (each candidate's probability is
bracketed between the sum and the sum plus that bound, and the loss is checked to move by less than 1e-9 across
the brackets); Poisson needs none (the supports differ or the laws are equal).
"""
from __future__ import annotations

import itertools
import math

# ----------------------------------------------------------------------------------------------------------------
# Closed-form laws
# ----------------------------------------------------------------------------------------------------------------


def _tsg_logpmf(z, rate):
    """ln P(Z = z) of the two-sided geometric law ``P(z) = (1 - a) / (1 + a) a^|z|``, ``a = exp(-rate)``."""
    a = math.exp(-rate)
    return math.log1p(-a) - math.log1p(a) - rate * abs(z)


def _tsg_log_cdf_le(t, rate):
    """ln P(Z <= t): ``a^(-t) / (1 + a)`` for ``t <= 0``, ``1 - a^(t + 1) / (1 + a)`` for ``t >= 0``."""
    a = math.exp(-rate)
    if t <= 0:
        return rate * t - math.log1p(a)
    return math.log1p(-math.exp(-rate * (t + 1)) / (1.0 + a))


def _tsg_window(rate):
    """Half-width ``w`` with ``P(|Z| > w) = 2 a^(w + 1) / (1 + a) < 1e-16`` (per coordinate)."""
    return int(math.ceil(38.0 / rate))


def _labels(d):
    return list(d[1])


def _class_counts(d, classes):
    y = _labels(d)
    return tuple(sum(1 for v in y if v == c) for c in classes)


def _positives(d, classes):
    return sum(1 for v in _labels(d) if v == classes[-1])


def _max_log_ratio(logp, logq, releases):
    """``max |logp(r) - logq(r)|`` over ``releases``; ``logp``/``logq`` return ``-inf`` off the support."""
    worst = 0.0
    for r in releases:
        lp, lq = logp(r), logq(r)
        if lp == -math.inf and lq == -math.inf:
            continue
        if lp == -math.inf or lq == -math.inf:
            return math.inf
        worst = max(worst, abs(lp - lq))
    return worst


# Per-class noisy counts ---------------------------------------------------------------------------------------

def _counts_logpmf(counts, rate):
    return lambda r: sum(_tsg_logpmf(ri - ci, rate) for ri, ci in zip(r, counts))


def _counts_loss(d, d_prime, epsilon, classes, factor):
    rate = factor * epsilon
    n, m = _class_counts(d, classes), _class_counts(d_prime, classes)
    # per coordinate, |r - n| - |r - m| is constant for r <= min(n, m) and for r >= max(n, m)
    window = [range(min(a, b) - 1, max(a, b) + 2) for a, b in zip(n, m)]
    return _max_log_ratio(_counts_logpmf(n, rate), _counts_logpmf(m, rate), itertools.product(*window))


def _counts_law(d, epsilon, classes, factor):
    rate = factor * epsilon
    n = _class_counts(d, classes)
    w = _tsg_window(rate)
    logp = _counts_logpmf(n, rate)
    return {r: math.exp(logp(r)) for r in itertools.product(*[range(c - w, c + w + 1) for c in n])}


def noisy_counts_loss(d, d_prime, epsilon=1.0, classes=(0, 1)):
    """Per-class counts plus two-sided geometric noise at rate ``epsilon`` (the three correct count subjects)."""
    return _counts_loss(d, d_prime, epsilon, classes, 1.0)


def noisy_counts_half_noise_loss(d, d_prime, epsilon=1.0, classes=(0, 1)):
    """Per-class counts plus two-sided geometric noise at rate ``2 epsilon``."""
    return _counts_loss(d, d_prime, epsilon, classes, 2.0)


def noisy_counts_law(d, epsilon=1.0, classes=(0, 1)):
    return _counts_law(d, epsilon, classes, 1.0)


def noisy_counts_half_noise_law(d, epsilon=1.0, classes=(0, 1)):
    return _counts_law(d, epsilon, classes, 2.0)


# One clamped count --------------------------------------------------------------------------------------------

def _clamped_logpmf(n, rate):
    """``max(n + Z, 0)``: ``P(0) = P(Z <= -n)``, ``P(r) = P(Z = r - n)`` for ``r >= 1``."""
    def logp(r):
        if r < 0:
            return -math.inf
        if r == 0:
            return _tsg_log_cdf_le(-n, rate)
        return _tsg_logpmf(r - n, rate)
    return logp


def _clamped_buggy_logpmf(n, rate):
    """``n + Z if n + Z >= 0 else n``: ``P(r) = P(Z = r - n)`` for ``r >= 0``, plus ``P(Z <= -n - 1)`` at ``n``."""
    def logp(r):
        if r < 0:
            return -math.inf
        base = _tsg_logpmf(r - n, rate)
        if r != n:
            return base
        return math.log(math.exp(base) + math.exp(_tsg_log_cdf_le(-n - 1, rate)))
    return logp


def _count_window(n, m):
    # beyond max(n, m) + 1 both laws are the unclamped count's, whose ratio is constant there
    return range(-1, max(n, m) + 3)


def clamped_count_loss(d, d_prime, epsilon=1.0, classes=(0, 1)):
    n, m = _positives(d, classes), _positives(d_prime, classes)
    return _max_log_ratio(_clamped_logpmf(n, epsilon), _clamped_logpmf(m, epsilon), _count_window(n, m))


def clamped_count_buggy_loss(d, d_prime, epsilon=1.0, classes=(0, 1)):
    n, m = _positives(d, classes), _positives(d_prime, classes)
    return _max_log_ratio(_clamped_buggy_logpmf(n, epsilon), _clamped_buggy_logpmf(m, epsilon), _count_window(n, m))


def clamped_count_law(d, epsilon=1.0, classes=(0, 1)):
    n = _positives(d, classes)
    logp = _clamped_logpmf(n, epsilon)
    return {r: math.exp(logp(r)) for r in range(0, n + _tsg_window(epsilon) + 1)}


def clamped_count_buggy_law(d, epsilon=1.0, classes=(0, 1)):
    n = _positives(d, classes)
    logp = _clamped_buggy_logpmf(n, epsilon)
    return {r: math.exp(logp(r)) for r in range(0, n + _tsg_window(epsilon) + 1)}


# Laplace and Poisson counts -----------------------------------------------------------------------------------

def laplace_count_loss(d, d_prime, epsilon=1.0, classes=(0, 1)):
    """The max divergence of ``n + Laplace(1 / epsilon)``: ``epsilon |n - n'|`` (continuous: the exact check must
    answer "undecided"; this number is for reference)."""
    return epsilon * abs(_positives(d, classes) - _positives(d_prime, classes))


def _poisson_logpmf(n, lam):
    def logp(r):
        if r < n:
            return -math.inf
        k = r - n
        return -lam + k * math.log(lam) - math.lgamma(k + 1)
    return logp


def poisson_noise_loss(d, d_prime, epsilon=1.0, classes=(0, 1)):
    """``n + Poisson(3 / epsilon)``: infinite when the counts differ (release ``min(n, n')``), 0 when equal."""
    n, m = _positives(d, classes), _positives(d_prime, classes)
    lam = 3.0 / epsilon
    return _max_log_ratio(_poisson_logpmf(n, lam), _poisson_logpmf(m, lam), range(min(n, m), max(n, m) + 1))


def poisson_noise_law(d, epsilon=1.0, classes=(0, 1)):
    n, lam = _positives(d, classes), 3.0 / epsilon
    logp = _poisson_logpmf(n, lam)
    return {r: math.exp(logp(r)) for r in range(n, n + 60)}  # P(Poisson(3) >= 60) < 1e-40


# Majority by randomized response ------------------------------------------------------------------------------

def _majority(d, classes):
    y = _labels(d)
    return classes[1] if 2 * sum(1 for v in y if v == classes[1]) > len(y) else classes[0]


def noisy_majority_rr_law(d, epsilon=1.0, classes=(0, 1)):
    keep = 1.0 / (1.0 + math.exp(-epsilon))
    truth = _majority(d, classes)
    other = classes[0] if truth == classes[1] else classes[1]
    return {truth: keep, other: 1.0 - keep}


def noisy_majority_rr_loss(d, d_prime, epsilon=1.0, classes=(0, 1)):
    p, q = noisy_majority_rr_law(d, epsilon, classes), noisy_majority_rr_law(d_prime, epsilon, classes)
    return _law_loss(p, q)


# Randomized response ------------------------------------------------------------------------------------------

def _rr_law(bits, log_odds):
    keep = 1.0 / (1.0 + math.exp(-log_odds))
    law = {}
    for out in itertools.product((0, 1), repeat=len(bits)):
        law[out] = math.prod(keep if o == b else 1.0 - keep for o, b in zip(out, bits))
    return law


def randomized_response_law(d, epsilon=1.0):
    return _rr_law(tuple(d), epsilon)


def randomized_response_wrong_p_law(d, epsilon=1.0):
    return _rr_law(tuple(d), 2.0 * epsilon)


def randomized_response_loss(d, d_prime, epsilon=1.0):
    return _law_loss(randomized_response_law(d, epsilon), randomized_response_law(d_prime, epsilon))


def randomized_response_wrong_p_loss(d, d_prime, epsilon=1.0):
    return _law_loss(randomized_response_wrong_p_law(d, epsilon), randomized_response_wrong_p_law(d_prime, epsilon))


# Report noisy max ---------------------------------------------------------------------------------------------

def _rnm_law_bracket(d, rate, k):
    """Lower and upper bounds on ``P(argmax_i (c_i + G_i) = i)``, ``G_i`` geometric on ``{1, 2, ...}`` with
    ``P(G >= t) = b^(t - 1)``, ``b = exp(-rate)``, ties to the lowest index.

    ``i`` wins with ``G_i = g`` iff ``c_j + G_j < c_i + g`` for ``j < i`` and ``<=`` for ``j > i``; with
    ``P(G <= t) = 1 - b^t`` (``t >= 0``, 0 below), the sum over ``g`` runs to ``g_max`` with
    ``P(G_i > g_max) = b^g_max <= 1e-17``, the bound on the omitted mass.
    """
    counts = [0] * k
    for v in d:
        counts[v] += 1
    b = math.exp(-rate)
    g_max = int(math.ceil(17.0 * math.log(10.0) / rate))

    def cdf(t):
        return 0.0 if t <= 0 else -math.expm1(t * math.log(b))

    lower = {}
    for i in range(k):
        terms = []
        for g in range(1, g_max + 1):
            term = (1.0 - b) * b ** (g - 1)
            for j in range(k):
                if j != i:
                    term *= cdf(counts[i] + g - counts[j] - (1 if j < i else 0))
            terms.append(term)
        lower[i] = math.fsum(terms)
    omitted = b ** g_max
    return lower, {i: p + omitted for i, p in lower.items()}


def _rnm_loss(d, d_prime, rate, k):
    lo_p, hi_p = _rnm_law_bracket(d, rate, k)
    lo_q, hi_q = _rnm_law_bracket(d_prime, rate, k)
    mid = _law_loss(lo_p, lo_q)
    spread = max(max(abs(math.log(hi_p[i] / lo_q[i])), abs(math.log(lo_p[i] / hi_q[i]))) for i in range(k))
    assert spread - mid < 1e-9, (spread, mid)
    return mid


def report_noisy_max_law(d, epsilon=1.0, k=3):
    return _rnm_law_bracket(d, epsilon / 2.0, k)[0]


def report_noisy_max_buggy_law(d, epsilon=1.0, k=3):
    return _rnm_law_bracket(d, 4.0 * epsilon, k)[0]


def report_noisy_max_loss(d, d_prime, epsilon=1.0, k=3):
    return _rnm_loss(d, d_prime, epsilon / 2.0, k)


def report_noisy_max_buggy_loss(d, d_prime, epsilon=1.0, k=3):
    return _rnm_loss(d, d_prime, 4.0 * epsilon, k)


# Permuted sample ----------------------------------------------------------------------------------------------

def permuted_sample_law(d, epsilon=1.0):
    if len(d) == 0:
        return {-1: 1.0}
    return {v: sum(1 for x in d if x == v) / len(d) for v in set(d)}


def permuted_sample_loss(d, d_prime, epsilon=1.0):
    return _law_loss(permuted_sample_law(d), permuted_sample_law(d_prime))


# ----------------------------------------------------------------------------------------------------------------

def _law_loss(p, q):
    """Exact loss of two finite laws given as ``{release: probability}``."""
    worst = 0.0
    for r in set(p) | set(q):
        a, b = p.get(r, 0.0), q.get(r, 0.0)
        if a == 0.0 and b == 0.0:
            continue
        if a == 0.0 or b == 0.0:
            return math.inf
        worst = max(worst, abs(math.log(a) - math.log(b)))
    return worst


def local_report_loss(d, d_prime, epsilon=1.0):
    """:class:`LocalReport`: the reports are independent, and in each the label's and the bit's log-ratios are
    independent and attain their bounds."""
    return sum(epsilon / 2 * abs(y0 - y1) + epsilon / 2 * (x0 != x1) for (x0, y0), (x1, y1) in zip(d, d_prime))


ORACLE = {
    "NoisyCountsVectorised": noisy_counts_loss,
    "NoisyCountsLoop": noisy_counts_loss,
    "NoisyCountsGlobal": noisy_counts_loss,
    "NoisyCountsHalfNoise": noisy_counts_half_noise_loss,
    "ClampedCount": clamped_count_loss,
    "ClampedCountBuggy": clamped_count_buggy_loss,
    "LaplaceCount": laplace_count_loss,
    "PoissonNoise": poisson_noise_loss,
    "NoisyMajorityRR": noisy_majority_rr_loss,
    "RandomizedResponse": randomized_response_loss,
    "RandomizedResponseChoice": randomized_response_loss,
    "RandomizedResponseWrongP": randomized_response_wrong_p_loss,
    "ReportNoisyMax": report_noisy_max_loss,
    "ReportNoisyMaxBuggy": report_noisy_max_buggy_loss,
    "PermutedSample": permuted_sample_loss,
    "LocalReport": local_report_loss,
}

LAWS = {
    "NoisyCountsVectorised": noisy_counts_law,
    "NoisyCountsLoop": noisy_counts_law,
    "NoisyCountsGlobal": noisy_counts_law,
    "NoisyCountsHalfNoise": noisy_counts_half_noise_law,
    "ClampedCount": clamped_count_law,
    "ClampedCountBuggy": clamped_count_buggy_law,
    "PoissonNoise": poisson_noise_law,
    "NoisyMajorityRR": noisy_majority_rr_law,
    "RandomizedResponse": randomized_response_law,
    "RandomizedResponseChoice": randomized_response_law,
    "RandomizedResponseWrongP": randomized_response_wrong_p_law,
    "ReportNoisyMax": report_noisy_max_law,
    "ReportNoisyMaxBuggy": report_noisy_max_buggy_law,
    "PermutedSample": permuted_sample_law,
}

UNDECIDED = {"LaplaceCount"}

COUNT_PAIRS = [
    (([], []), ([[1.0]], [1])),
    (([[0.0]], [0]), ([[0.0], [1.0]], [0, 1])),
    (([[1.0]], [1]), ([[1.0], [0.0]], [1, 0])),
    (([[0.0], [1.0]], [0, 1]), ([[0.0], [1.0], [1.0]], [0, 1, 1])),
    (([[1.0], [1.0]], [1, 1]), ([[1.0], [1.0], [1.0]], [1, 1, 1])),
]
MAJORITY_PAIRS = [
    (([[0.0]], [0]), ([[0.0]], [1])),
    (([[0.0], [1.0]], [0, 1]), ([[0.0], [1.0]], [1, 1])),
    (([[0.0], [0.0], [1.0]], [0, 0, 1]), ([[0.0], [0.0], [1.0]], [0, 1, 1])),
    (([[0.0], [0.0], [0.0]], [0, 0, 0]), ([[0.0], [0.0], [1.0]], [0, 0, 1])),
    (([[1.0], [0.0]], [1, 0]), ([[0.0], [0.0]], [1, 0])),
]
RR_PAIRS = [((0,), (1,)), ((0, 1), (1, 1)), ((0, 1, 1), (0, 0, 1))]
RNM_PAIRS = [((), (1,)), ((0,), (0, 1)), ((0, 0), (0, 0, 1)), ((0, 1), (0, 1, 2)), ((1, 2), (0, 1, 2)),
             ((0, 0), (0, 0, 0))]
SAMPLE_PAIRS = [((), (0,)), ((0,), (0, 1)), ((0,), (0, 0)), ((0, 1), (0, 1, 1)), ((1, 1), (1, 1, 0))]

REPORT_PAIRS = [(((0, 0),), ((1, 1),)), (((0, 0),), ((0, 1),)), (((0, 1),), ((1, 1),))]

PAIRS = {
    "NoisyCountsVectorised": COUNT_PAIRS,
    "NoisyCountsLoop": COUNT_PAIRS,
    "NoisyCountsGlobal": COUNT_PAIRS,
    "NoisyCountsHalfNoise": COUNT_PAIRS,
    "ClampedCount": COUNT_PAIRS,
    "ClampedCountBuggy": COUNT_PAIRS,
    "LaplaceCount": COUNT_PAIRS,
    "PoissonNoise": COUNT_PAIRS,
    "NoisyMajorityRR": MAJORITY_PAIRS,
    "RandomizedResponse": RR_PAIRS,
    "RandomizedResponseChoice": RR_PAIRS,
    "RandomizedResponseWrongP": RR_PAIRS,
    "ReportNoisyMax": RNM_PAIRS,
    "ReportNoisyMaxBuggy": RNM_PAIRS,
    "PermutedSample": SAMPLE_PAIRS,
    "LocalReport": REPORT_PAIRS,
}

RELATION = {name: "substitution" if name in ("NoisyMajorityRR", "RandomizedResponse", "RandomizedResponseChoice",
                                             "RandomizedResponseWrongP", "LocalReport") else "add/remove" for name in ORACLE}
