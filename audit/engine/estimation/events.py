"""Distinguishing events, and how the best one is chosen on a pilot batch.

For each kind of output (see :mod:`audit.engine.estimation.sampling`) a family of candidate
events is built from the pilot samples of both inputs, every candidate's
epsilon bound is computed *on the pilot*, and the best one is returned. The
counting batch that later bounds epsilon never sees this choice being made,
so no multiplicity correction is owed for the candidates.

* discrete: sets of outcomes ranked by their pilot likelihood ratio (prefixes
  of that ranking);
* scalar: one-sided thresholds ``x >= t``, ``x <= t`` and intervals
  ``t_i <= x <= t_j`` (whose complements are the two-sided tails);
* vector: per-coordinate one-sided thresholds, products of thresholds at a
  common quantile over all coordinates, a discrete pattern of the
  coordinates' atoms combined with a threshold on a coordinate it leaves
  continuous, thresholds on ratios and products of two coordinates, and a learned score (a logistic
  regression on ``[x, x**2]`` and one on ``x``, in the style of DP-Sniper)
  thresholded like a scalar;
* floating point (on request, :func:`float_probe`; scalars, and each real-valued coordinate of a vector
  that varies in the pilot, at most :data:`MAX_FLOAT_COORDS`): the outcome
  ``(sign, binary exponent, integer mantissa mod q)`` for small moduli ``q``,
  ranked like a discrete output. Adding float noise to a raw value, or drawing
  a uniform inside a data-dependent interval, puts the outputs of neighbouring
  inputs on different float lattices (Mironov 2012): some residues occur from
  one input only. Any function of the output is post-processing, so the event
  stays sound for mechanisms whose outputs lie on a public lattice.
"""
from __future__ import annotations

import contextlib
import contextvars
from dataclasses import dataclass
from typing import Callable, NamedTuple

import numpy as np

from audit.engine.estimation.bounds import epsilon_lower_bound
from audit.engine.presentation.render import compact
from audit.engine.estimation.sampling import Samples

__all__ = ["Event", "choose_event", "float_probe", "float_features", "FLOAT_MODULI", "Coordinates",
           "NamedCoordinates", "coordinates", "float_coordinates", "MAX_FLOAT_COORDS"]

_SCALAR_GRID = 257
_INTERVAL_GRID = 33
_VECTOR_GRID = 33
_MAX_PREFIXES = 64


@dataclass
class Event:
    """A set of outputs: ``member(samples)`` is a boolean mask."""

    description: str
    member: Callable[[Samples], np.ndarray]

    def count(self, samples: Samples) -> int:
        return int(np.count_nonzero(self.member(samples)))


# --------------------------------------------------------------------------- naming coordinates
class Coordinates:
    """How events word the coordinates of vector outputs: ``x[j]`` here; a mechanism whose coordinates mean
    something (:class:`audit.engine.release.EstimatorRelease`: the exception flag, a prediction at a probe
    point, a count of the fitted structure) gives a subclass through :func:`coordinates`."""

    def name(self, j: int) -> str:
        return f"x[{j}]"

    def compare(self, j: int, op: str, t: float) -> str:
        """The event ``x[j] op t`` (``op`` is ``>=`` or ``<=``)."""
        return f"{self.name(j)} {op} {t:.6g}"

    def value(self, j: int, v: float) -> str:
        """The event ``x[j] == v``."""
        return f"{self.name(j)} = {v:.6g}"

    def operation(self, i: int, op: str, j: int) -> str:
        return f"{self.name(i)} {op} {self.name(j)}"

    def pattern(self, key) -> str:
        """A discrete pattern: ``key`` lists ``(j, value or None for a free coordinate)``."""
        return "pattern (" + ", ".join("x" if v is None else f"{v:.6g}" for _, v in key) + ")"


class NamedCoordinates(Coordinates):
    """Coordinates with names (``names[j]``), and words for their comparisons where ``words(j, op, t)`` (or
    ``words(j, "=", v)``) returns one (else the name and the number)."""

    def __init__(self, names, words=None):
        self.names, self.words = list(names), words

    def name(self, j: int) -> str:
        return self.names[j] if j < len(self.names) else f"x[{j}]"

    def compare(self, j: int, op: str, t: float) -> str:
        said = self.words(j, op, t) if self.words else None
        return said or super().compare(j, op, t)

    def value(self, j: int, v: float) -> str:
        said = self.words(j, "=", v) if self.words else None
        return said or super().value(j, v)

    def operation(self, i: int, op: str, j: int) -> str:
        return f"({self.name(i)}) {op} ({self.name(j)})"

    def pattern(self, key) -> str:
        fixed = [self.value(j, v) for j, v in key if v is not None]
        free = sum(v is None for _, v in key)
        return "pattern (" + "; ".join(fixed) + (f"; {free} other coordinate(s) free" if free else "") + ")"


_COORDINATES: contextvars.ContextVar[Coordinates] = contextvars.ContextVar("coordinates", default=Coordinates())


@contextlib.contextmanager
def coordinates(names: Coordinates | None):
    """Word the events of vector outputs chosen inside this block with ``names`` (``None``: ``x[j]``)."""
    token = _COORDINATES.set(names if names is not None else Coordinates())
    try:
        yield
    finally:
        _COORDINATES.reset(token)


# --------------------------------------------------------------------------- discrete
def _discrete_member(outcomes: frozenset):
    ints = all(isinstance(o, (int, np.integer)) and not isinstance(o, bool) for o in outcomes)
    as_array = np.fromiter(outcomes, dtype=np.int64) if ints else None

    def member(s: Samples) -> np.ndarray:
        if isinstance(s.values, np.ndarray) and as_array is not None:
            return np.isin(s.values, as_array)
        values = s.values.tolist() if isinstance(s.values, np.ndarray) else s.values
        return np.fromiter((v in outcomes for v in values), dtype=bool, count=len(values))

    return member


def _short(outcomes) -> str:
    items = sorted(outcomes, key=repr)
    text = ", ".join(compact(o) for o in items[:4])
    return "{" + text + (f", ... ({len(items)} outcomes)" if len(items) > 4 else "") + "}"



def _discrete_candidates(a: Samples, b: Samples):
    """Prefixes of two rankings of the outcomes: by the smoothed pilot ratio, and by a
    pessimistic ratio (minus two standard errors of its log) that keeps rare outcomes,
    whose ratios are mostly noise, out of the front."""
    ca, cb = a.counts(), b.counts()
    # first-seen order, never a set's hash order: ties in the ranking below keep this order, and
    # strings (inside tree outcomes) hash differently in every process (PYTHONHASHSEED)
    outcomes = list(dict.fromkeys([*ca, *cb]))
    c0 = np.array([ca[o] for o in outcomes], dtype=float) + 0.5
    c1 = np.array([cb[o] for o in outcomes], dtype=float) + 0.5
    log_ratio = np.log(c0 / len(a)) - np.log(c1 / len(b))
    m = len(outcomes)
    sizes = np.arange(1, m + 1) if m <= _MAX_PREFIXES else np.unique(
        np.geomspace(1, m, _MAX_PREFIXES).astype(int))
    seen = set()
    for score in (log_ratio, log_ratio - 2.0 * np.sqrt(1.0 / c0 + 1.0 / c1)):
        order = np.argsort(-score, kind="stable")
        ka, kb = np.cumsum(c0[order] - 0.5), np.cumsum(c1[order] - 0.5)
        for size in sizes:
            chosen = frozenset(outcomes[i] for i in order[:size])
            if chosen in seen:
                continue
            seen.add(chosen)
            yield ka[size - 1], kb[size - 1], lambda chosen=chosen: Event(
                f"output in {_short(chosen)}", _discrete_member(chosen))


# --------------------------------------------------------------------------- thresholds
class _Batch(NamedTuple):
    """Candidates in bulk: the pilot counts of each as arrays, ``make(i)`` the ``i``-th event (built only for
    the one chosen). The order of a batch's entries is the order they were offered in, so ties break as they
    would one by one."""

    ka: np.ndarray
    kb: np.ndarray
    make: Callable[[int], "Event"]


def _threshold_candidates(sa: np.ndarray, sb: np.ndarray, label: str, score_of: Callable[[Samples], np.ndarray],
                          grid: int, intervals: bool, describe: Callable[[str, float], str] | None = None):
    """Events on a real-valued score, as :class:`_Batch` es: one-sided thresholds ``>= t`` then ``<= t`` at
    the pooled pilot's quantiles, and (optionally) intervals on a coarser grid, each followed by its
    complement (the two tails); ``describe(op, t)`` words a one-sided threshold (default ``f"{label} {op}
    {t:.6g}"``)."""
    if describe is None:
        describe = lambda op, t: f"{label} {op} {t:.6g}"  # noqa: E731
    pooled = np.concatenate((sa, sb))
    if not len(pooled):
        return
    ts = np.unique(np.quantile(pooled, np.linspace(0, 1, grid)))
    sa_sorted, sb_sorted = np.sort(sa), np.sort(sb)

    def le(sorted_s, t):  # count of s <= t
        return np.searchsorted(sorted_s, t, side="right")

    def ge(sorted_s, t):  # count of s >= t
        return len(sorted_s) - np.searchsorted(sorted_s, t, side="left")

    yield _Batch(ge(sa_sorted, ts), ge(sb_sorted, ts),
                 lambda i: Event(describe(">=", ts[i]), lambda s, t=ts[i]: score_of(s) >= t))
    yield _Batch(le(sa_sorted, ts), le(sb_sorted, ts),
                 lambda i: Event(describe("<=", ts[i]), lambda s, t=ts[i]: score_of(s) <= t))
    if intervals:
        coarse = np.unique(np.quantile(pooled, np.linspace(0, 1, _INTERVAL_GRID)))
        first, second = np.triu_indices(len(coarse), k=1)  # every (i, j) with i < j, row by row
        inside_a = le(sa_sorted, coarse)[second] - np.searchsorted(sa_sorted, coarse, side="left")[first]
        inside_b = le(sb_sorted, coarse)[second] - np.searchsorted(sb_sorted, coarse, side="left")[first]
        ka, kb = np.empty(2 * len(first), dtype=np.int64), np.empty(2 * len(first), dtype=np.int64)
        ka[0::2], ka[1::2] = inside_a, len(sa) - inside_a  # each interval, then its complement
        kb[0::2], kb[1::2] = inside_b, len(sb) - inside_b

        def make(k):
            lo, hi = coarse[first[k // 2]], coarse[second[k // 2]]
            if k % 2 == 0:
                return Event(f"{lo:.6g} <= {label} <= {hi:.6g}",
                             lambda s, lo=lo, hi=hi: (score_of(s) >= lo) & (score_of(s) <= hi))
            return Event(f"{label} < {lo:.6g} or {label} > {hi:.6g}",
                         lambda s, lo=lo, hi=hi: (score_of(s) < lo) | (score_of(s) > hi))

        yield _Batch(ka, kb, make)


def _vector_candidates(a: Samples, b: Samples):
    xa, xb = a.values, b.values
    d = xa.shape[1]
    varying = [j for j in range(d) if not (np.all(xa[:, j] == xa[0, j]) and np.all(xb[:, j] == xa[0, j]))]
    names = _COORDINATES.get()
    for j in varying:  # a coordinate constant on both pilots gives only empty or full events
        yield from _threshold_candidates(xa[:, j], xb[:, j], names.name(j), lambda s, j=j: s.values[:, j],
                                         _VECTOR_GRID, intervals=False,
                                         describe=lambda op, t, j=j: names.compare(j, op, t))
    if d > 1:
        pooled = np.concatenate((xa, xb))
        qs = np.linspace(0.02, 0.98, _VECTOR_GRID)
        for q, t in zip(qs, np.quantile(pooled, qs, axis=0)):  # one sort of each column for every level
            for sign, word in ((1, ">="), (-1, "<=")):
                ka = np.count_nonzero(np.all(sign * (xa - t) >= 0, axis=1))
                kb = np.count_nonzero(np.all(sign * (xb - t) >= 0, axis=1))
                yield ka, kb, lambda t=t, sign=sign, word=word, q=q: Event(
                    f"every x[j] {word} its pooled {q:.2f}-quantile",
                    lambda s, t=t, sign=sign: np.all(sign * (s.values - t) >= 0, axis=1))
    yield from _pattern_candidates(xa, xb, varying)
    yield from _pair_candidates(xa, xb, varying)
    if _FLOAT.get():
        yield from _vector_float_candidates(xa, xb, varying)
    cols = np.asarray(varying if varying else [0], dtype=int)  # constant columns add nothing to the fit
    for squares in (True, False):
        score = _learned_score(xa[:, cols], xb[:, cols], squares)
        if score is not None:
            label = "logistic score on [x, x^2]" if squares else "logistic score on x"
            yield from _threshold_candidates(score(xa[:, cols]), score(xb[:, cols]), label,
                                             lambda s, score=score, cols=cols: score(s.values[:, cols]),
                                             _SCALAR_GRID, intervals=True)


#: an exact value of one coordinate is an atom when it holds at least this share of the pooled pilot
_ATOM_SHARE = 0.01
#: the most frequent discrete patterns whose scalar coordinates are thresholded
_MAX_PATTERNS = 8
#: the continuous coordinates of a pattern that are thresholded (the first)
_MAX_PATTERN_COORDS = 16
#: coordinates whose pairwise ratios and products are thresholded (the first that vary)
_MAX_PAIR_COORDS = 6


def _patterns(xa: np.ndarray, xb: np.ndarray, varying: list[int]):
    """The discrete part of each output: per varying coordinate, its value when that value is an atom of the
    pooled pilot (a code such as ⊥, a stop mark, a count), else the wildcard ``nan`` (a continuous value).
    Returns ``(pattern rows of a, of b, the atoms of each coordinate)``."""
    pooled = np.concatenate((xa, xb))
    atoms = {}
    for j in varying:
        vals, counts = np.unique(pooled[:, j], return_counts=True)
        atoms[j] = vals[counts >= max(2, _ATOM_SHARE * len(pooled))]

    def code(x):
        out = np.full((len(x), len(varying)), np.nan)
        for k, j in enumerate(varying):
            hit = np.isin(x[:, j], atoms[j])
            out[hit, k] = x[hit, j]
        return out

    return code, atoms


def _pattern_candidates(xa: np.ndarray, xb: np.ndarray, varying: list[int]):
    """A discrete part combined with a threshold on a scalar part: ``pattern == P and x[j] >= t`` (or
    ``<= t``), for the most frequent patterns P of the atoms and each coordinate j that P leaves continuous
    (the sparse vector technique releasing its noisy answers, Lyu, Su and Li 2017, Alg. 3: which queries
    answered, and how large the answer was)."""
    if not varying:
        return
    code, atoms = _patterns(xa, xb, varying)
    names = _COORDINATES.get()
    if not any(len(a) for a in atoms.values()):
        return  # no discrete part: the per-coordinate thresholds already cover it
    ca, cb = code(xa), code(xb)
    keys, counts = np.unique(np.nan_to_num(np.concatenate((ca, cb)), nan=np.inf), axis=0, return_counts=True)
    for key in keys[np.argsort(-counts, kind="stable")][:_MAX_PATTERNS]:
        key = np.where(np.isinf(key), np.nan, key)

        def match(c, key=key):
            return np.all((c == key) | (np.isnan(c) & np.isnan(key)), axis=1)

        ma, mb = match(ca), match(cb)
        label = names.pattern([(j, None if np.isnan(v) else float(v)) for j, v in zip(varying, key)])
        yield int(ma.sum()), int(mb.sum()), lambda key=key, label=label: Event(
            label, lambda s, key=key: np.all((code(s.values) == key) | (np.isnan(code(s.values)) & np.isnan(key)),
                                             axis=1))
        free = [(k, j) for k, j in enumerate(varying) if np.isnan(key[k])][:_MAX_PATTERN_COORDS]
        for k, j in free:
            if not (ma.any() or mb.any()):
                continue

            def score(s, key=key, j=j):
                c = code(s.values)
                hit = np.all((c == key) | (np.isnan(c) & np.isnan(key)), axis=1)
                return np.where(hit, s.values[:, j], np.nan)

            yield from _threshold_candidates(xa[ma, j], xb[mb, j], f"{label} and {names.name(j)}", score,
                                             _VECTOR_GRID, intervals=False,
                                             describe=lambda op, t, j=j, label=label:
                                             f"{label} and {names.compare(j, op, t)}")


def _pair_candidates(xa: np.ndarray, xb: np.ndarray, varying: list[int]):
    """Thresholds on ratios ``x[i] / x[j]`` and products ``x[i] * x[j]`` of two coordinates (a report
    ``(V, U)`` with ``V = (y + noise) U`` reveals ``y + noise`` only through ``V / U``)."""
    cols = varying[:_MAX_PAIR_COORDS]
    names = _COORDINATES.get()
    for i in cols:
        for j in cols:
            if i == j:
                continue
            with np.errstate(divide="ignore", invalid="ignore"):
                ra, rb = xa[:, i] / xa[:, j], xb[:, i] / xb[:, j]
            fa, fb = np.isfinite(ra), np.isfinite(rb)
            if fa.any() or fb.any():
                def ratio(s, i=i, j=j):
                    with np.errstate(divide="ignore", invalid="ignore"):
                        r = s.values[:, i] / s.values[:, j]
                    return np.where(np.isfinite(r), r, np.nan)

                yield from _threshold_candidates(ra[fa], rb[fb], names.operation(i, "/", j), ratio, _VECTOR_GRID,
                                                 intervals=False)
            if i < j:
                yield from _threshold_candidates(xa[:, i] * xa[:, j], xb[:, i] * xb[:, j], names.operation(i, "*", j),
                                                 lambda s, i=i, j=j: s.values[:, i] * s.values[:, j],
                                                 _VECTOR_GRID, intervals=False)


def _learned_score(xa: np.ndarray, xb: np.ndarray, squares: bool = True):
    """A logistic regression separating the two pilot samples on ``[x, x**2]`` or on ``x``
    (DP-Sniper style; the linear one suits 0/1 coordinates, whose squares add nothing)."""
    from sklearn.linear_model import LogisticRegression

    m = min(len(xa), len(xb), 20_000)
    feats = np.concatenate((xa[:m], xb[:m]))
    mu, sd = feats.mean(0), feats.std(0)
    sd[sd == 0] = 1.0

    def features(x):
        z = (x - mu) / sd
        return np.hstack((z, z ** 2)) if squares else z

    labels = np.r_[np.ones(m), np.zeros(m)]
    if np.all(sd == 1.0) and np.allclose(feats, feats[0]):
        return None
    clf = LogisticRegression(max_iter=500).fit(features(feats), labels)
    w, c = clf.coef_[0], clf.intercept_[0]
    # row by row (an elementwise product summed along each row), not a matrix product: BLAS rounds a row by its
    # position in the batch, so equal outputs got scores an ulp apart and a threshold split an atom at random
    return lambda x: (features(x) * w).sum(axis=1) + c


# --------------------------------------------------------------------------- floating point
#: moduli of the integer mantissa: powers of two see trailing zeros (a sum rounded to a coarser ulp),
#: the others see the Beatty-like patterns of a uniform scaled by a data-dependent width
FLOAT_MODULI = (2, 4, 8, 16, 64, 3, 5, 6, 7, 9, 10, 12)
_FLOAT: contextvars.ContextVar[bool] = contextvars.ContextVar("float_probe", default=False)


@contextlib.contextmanager
def float_probe(on: bool = True):
    """Add the floating-point events to the candidates of scalar outputs, and of the real-valued coordinates
    of vector outputs, inside this block."""
    token = _FLOAT.set(bool(on))
    try:
        yield
    finally:
        _FLOAT.reset(token)


def float_features(x: np.ndarray, q: int) -> np.ndarray:
    """``(sign, exponent, mantissa mod q)`` of each float, coded as one integer."""
    x = np.asarray(x, dtype=float)
    m, e = np.frexp(np.abs(x))
    mant = (m * 2.0 ** 53).astype(np.int64)  # exact: m has 53 significant bits
    return ((e.astype(np.int64) + 1100) * 2 + (x < 0)) * 128 + mant % q


def _float_candidates(a: Samples, b: Samples):
    for q in FLOAT_MODULI:
        fa = Samples("discrete", float_features(a.values, q), ("int",))
        fb = Samples("discrete", float_features(b.values, q), ("int",))
        for ka, kb, make in _discrete_candidates(fa, fb):
            def wrapped(make=make, q=q):
                inner = make()
                return Event(f"float pattern (sign, exponent, mantissa mod {q}) {inner.description}",
                             lambda s, inner=inner, q=q: inner.member(
                                 Samples("discrete", float_features(s.values, q), ("int",))))
            yield ka, kb, wrapped


#: coordinates of a vector output that get the floating-point events at most (the first real-valued ones
#: that vary in the pilot; the events' count is this times ``len(FLOAT_MODULI)`` times at most 128)
MAX_FLOAT_COORDS = 256
#: floating-point events of a vector output offered to :func:`choose_event` (the best of the pilot's prefixes)
MAX_FLOAT_EVENTS = 512


def float_coordinates(xa: np.ndarray, xb: np.ndarray, varying: list[int]) -> list[int]:
    """The coordinates of a vector pilot that the floating-point probe reads: those that vary and are not all
    integers (an integer-valued coordinate sits on the integer lattice whatever the input), at most
    :data:`MAX_FLOAT_COORDS`."""
    out = []
    for j in varying:
        col = np.concatenate((xa[:, j], xb[:, j]))
        if not np.all(col == np.round(col)):
            out.append(j)
            if len(out) == MAX_FLOAT_COORDS:
                break
    return out


def _float_codes_text(codes) -> str:
    """``{(+, 2^3, 5), ...}``: the patterns of :func:`float_features` codes (sign, binary exponent of the
    mantissa in [0.5, 1), residue), the first four and how many."""
    codes = [int(c) for c in codes]
    parts = [f"({'-' if (c // 128) % 2 else '+'}, 2^{c // 256 - 1100}, {c % 128})" for c in codes[:4]]
    return "{" + ", ".join(parts) + (f", ... ({len(codes)} patterns)" if len(codes) > 4 else "") + "}"


def _vector_float_candidates(xa: np.ndarray, xb: np.ndarray, varying: list[int]):
    """The floating-point events of :func:`_float_candidates` on each real-valued coordinate of a vector output
    (:func:`float_coordinates`): ``(sign, exponent, mantissa mod q)`` of ``x[j]`` in a set of patterns, the
    prefixes of the two rankings of :func:`_discrete_candidates` for every coordinate and modulus.

    A vector has many coordinates, each with many patterns (up to 64 residues per sign and exponent), so a set
    of patterns seen from one input only by chance would look decisive on the samples that chose it. The
    patterns are therefore ranked on the first half of the pilot and each prefix is counted on the second half
    (its counts scaled to the pilot's size): an accidental pattern does not repeat there, a lattice does. Only
    the :data:`MAX_FLOAT_EVENTS` best prefixes by a cheap pessimistic log ratio (the point estimate minus two
    standard errors) are offered to :func:`choose_event`, which ranks them with the other candidates. The
    choice is made on the pilot only, so none of this can make the later bound unsound.
    """
    names = _COORDINATES.get()
    cols = float_coordinates(xa, xb, varying)
    if not cols:
        return
    na, nb = len(xa), len(xb)
    ha, hb = na // 2, nb // 2
    if min(ha, hb, na - ha, nb - hb) < 1:
        return
    kas, kbs, owners, chosen = [], [], [], []
    for q in FLOAT_MODULI:
        fa, fb = float_features(xa[:, cols], q), float_features(xb[:, cols], q)
        for k, j in enumerate(cols):
            codes, inv = np.unique(np.concatenate((fa[:, k], fb[:, k])), return_inverse=True)
            m = len(codes)
            if m < 2:
                continue
            rank0 = np.bincount(inv[:ha], minlength=m) + 0.5  # the halves that rank
            rank1 = np.bincount(inv[na:na + hb], minlength=m) + 0.5
            count0 = np.bincount(inv[ha:na], minlength=m) * (na / (na - ha))  # the halves that count
            count1 = np.bincount(inv[na + hb:], minlength=m) * (nb / (nb - hb))
            log_ratio = np.log(rank0 / ha) - np.log(rank1 / hb)
            for score in (log_ratio, log_ratio - 2.0 * np.sqrt(1.0 / rank0 + 1.0 / rank1)):
                order = np.argsort(-score, kind="stable")
                kas.append(np.cumsum(count0[order])[:-1])
                kbs.append(np.cumsum(count1[order])[:-1])
                owners.append(np.full(m - 1, len(chosen)))
                chosen.append((j, q, codes[order]))
    if not kas:
        return
    ka, kb, owner = np.concatenate(kas), np.concatenate(kbs), np.concatenate(owners)
    size = np.concatenate([np.arange(1, len(c)) for _, _, c in chosen])
    p0, p1 = (ka + 0.5) / (na + 1), (kb + 0.5) / (nb + 1)
    proxy = np.log(p0) - np.log(p1) - 2.0 * np.sqrt((1 - p0) / (ka + 0.5) + (1 - p1) / (kb + 0.5))
    keep = np.argsort(-proxy, kind="stable")[:MAX_FLOAT_EVENTS]
    for i in keep:
        j, q, ordered = chosen[owner[i]]

        def make(j=j, q=q, codes=ordered[:size[i]]):
            return Event(f"float pattern (sign, exponent, mantissa mod {q}) of {names.name(j)} in "
                         f"{_float_codes_text(codes)}",
                         lambda s: np.isin(float_features(s.values[:, j], q), codes))

        yield ka[i], kb[i], make


# --------------------------------------------------------------------------- integer lattice
#: a float is read as the integer it equals up to this magnitude (every integer below it is a float64)
_EXACT_INTEGERS = 2.0 ** 53


def on_integers(*values: np.ndarray) -> bool:
    """Whether every value is an integer (a float64 output of integer noise: ``float(count + geometric)``)."""
    return all(np.all(np.abs(v) < _EXACT_INTEGERS) and np.all(v == np.round(v)) for v in values)


def as_integers(s: Samples) -> Samples:
    """Float samples that lie on the integer lattice as the discrete samples they are: each value is then an
    outcome of its own (``output in {3, 5, ...}``) beside the thresholds, as for an integer output. The float probe
    is not offered there: an integer-valued float sits on the integer lattice whatever the input, so a pattern of
    its mantissa is a pattern of the integers, and crediting it to floating point would hide a bug of the integer
    mechanism behind ``--no-float-probe``."""
    return Samples("discrete", np.asarray(s.values, dtype=np.int64), ("int",))


# --------------------------------------------------------------------------- selection
def _offered(a: Samples, b: Samples):
    """Every candidate event of the pilot samples, in order: ``(count_a, count_b, make_event)`` triples and
    :class:`_Batch` es of them."""
    if a.kind == "discrete":
        yield from _discrete_candidates(a, b)
    elif a.kind == "scalar":
        yield from _threshold_candidates(a.values, b.values, "x", lambda s: s.values, _SCALAR_GRID, intervals=True)
        if on_integers(a.values, b.values):
            yield from _discrete_candidates(as_integers(a), as_integers(b))
        elif _FLOAT.get():
            yield from _float_candidates(a, b)
    else:
        yield from _vector_candidates(a, b)


def candidates(a: Samples, b: Samples):
    """Yield ``(count_a, count_b, make_event)`` for every candidate event of the pilot samples."""
    return _triples(_offered(a, b))


def _triples(offered):
    """The candidates ``offered`` (triples and batches) one by one, as triples."""
    for item in offered:
        if isinstance(item, _Batch):
            for i in range(len(item.ka)):
                yield item.ka[i], item.kb[i], lambda i=i, make=item.make: make(i)
        else:
            yield item


def _in_bulk(a: Samples, b: Samples):
    """The candidates as ``(count_a, count_b, make)`` over all of them: two float arrays and ``make(i)`` the
    ``i``-th event, in the order :func:`candidates` yields them (batches kept whole, so thousands of
    thresholds cost a few array operations, not a Python step each)."""
    kas, kbs, parts, total = [], [], [], 0  # parts: (first index, a batch's make or a run of single makers)
    for item in _offered(a, b):
        if isinstance(item, _Batch):
            parts.append((total, item.make))
            kas.append(np.asarray(item.ka, dtype=float))
            kbs.append(np.asarray(item.kb, dtype=float))
            total += len(item.ka)
        else:
            if not parts or not isinstance(parts[-1][1], list):
                parts.append((total, []))
                kas.append([])
                kbs.append([])
            parts[-1][1].append(item[2])
            kas[-1].append(float(item[0]))
            kbs[-1].append(float(item[1]))
            total += 1
    starts = [p[0] for p in parts]

    def make(i):
        first, maker = parts[int(np.searchsorted(starts, i, side="right")) - 1]
        return maker[i - first]() if isinstance(maker, list) else maker(i - first)

    join = lambda xs: np.concatenate([np.asarray(x, dtype=float) for x in xs]) if xs else np.zeros(0)  # noqa: E731
    return join(kas), join(kbs), make


def choose_event(a: Samples, b: Samples, *, delta: float, alpha: float) -> Event:
    """The candidate event with the largest pilot lower bound on ``ln P_a(S) / P_b(S)``.

    Ties (including "no candidate bounds anything") are broken by the
    smoothed pilot point estimate, then by order.
    """
    ka, kb, make = _in_bulk(a, b)
    bound = epsilon_lower_bound(ka, len(a), kb, len(b), delta=delta, alpha=alpha)
    with np.errstate(divide="ignore", invalid="ignore"):
        point = np.log(np.maximum((ka + 0.5) / (len(a) + 1) - delta, 1e-300)) - np.log((kb + 0.5) / (len(b) + 1))
    best = int(np.lexsort((-point, -bound))[0])
    return make(best)
