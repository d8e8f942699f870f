"""The scale family of the neighbour search: tiny patterns scaled up to thousands of records.

The tiny candidates of :mod:`audit.engine.search` cannot see a leak that needs many records:
JointExp's pre-fix forward pass (issue 26, kept as :mod:`audit.privatree.underflow_jointexp`)
behaved correctly up to a size ``n*`` and returned every quantile at the lower bound from
``n*`` records on, with probability 1, so only the pair ``(n* - 1, n*)`` separates, and ``n*``
depends on epsilon (29,806 tied records at epsilon 1; 7,452 at epsilon 4).

Each pattern here is a family of datasets ``D(n)`` (ties at one point, a 0/1 feature, a
5-level feature, a pure region), and ``D(n + 1)`` is ``D(n)`` plus one record, so every
``(D(n), D(n + 1))`` is an add/remove pair (a substitute pair replaces the last record).
:func:`scale_pairs` looks for the ``n`` where the output law moves most:

1. it samples ``D(n)`` at sizes ``n_lo = lo, ..., n_hi`` spaced by factors of about 2,
   ``n_pilot`` outputs each, and scores each consecutive interval by the pilot lower bound of
   :func:`audit.engine.estimate.estimate_from_samples` between its ends;
2. it bisects the best interval, always keeping the half whose ends score higher, until the
   ends are neighbours;
3. the pair found joins the screened candidates of
   :func:`audit.engine.search.search_and_confirm`, which confirms on fresh samples.

All of this only chooses *which* pairs to confirm: no sample drawn here enters the
confirmation, so a correct mechanism is still flagged with probability at most ``alpha``.
The largest size is set from the estimator's measured fit time so that the family stays within
the time it is given (``budget_s``).
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from audit.engine import progress, sampling
from audit.engine.estimate import estimate_from_samples
from audit.engine.neighbours import NeighbourPair

__all__ = ["SCALE_PATTERNS", "pattern_data", "scale_pairs", "ScaleResult"]

#: the patterns scaled up (tiny versions of each are among the search's families)
SCALE_PATTERNS = ("ties at one point", "0/1 feature (40% at the high end)", "5-level feature",
                  "pure region plus one record of another class")


def pattern_data(pattern: str, n: int, bounds, classes):
    """``D(n)``: ``n`` records of ``pattern`` over the public domain (deterministic in ``n``; the
    first ``n`` records of ``D(n + 1)`` are ``D(n)``)."""
    lo = np.array([float(b[0]) for b in bounds])
    hi = np.array([float(b[1]) for b in bounds])
    d = lo.size
    k = np.arange(n)
    c0, c1 = classes[0], classes[-1]
    if pattern == SCALE_PATTERNS[0]:
        q = np.full((n, d), 0.5)
        labels = np.where(k % 2 == 0, c0, c1)
    elif pattern == SCALE_PATTERNS[1]:
        q = np.repeat(((k * 2) % 5 < 2).astype(float)[:, None], d, axis=1)  # 2 of every 5 records high
        labels = np.where(q[:, 0] > 0.5, c1, c0)
    elif pattern == SCALE_PATTERNS[2]:
        q = np.repeat(((k * 3) % 5 / 4.0)[:, None], d, axis=1)
        labels = np.where(k % 2 == 0, c0, c1)
    elif pattern == SCALE_PATTERNS[3]:
        q = np.full((n, d), 0.25)
        labels = np.full(n, c0, dtype=object)
        if n:
            q[-1], labels[-1] = 0.75, c1  # the last record: another class in the other half
    else:
        raise ValueError(f"pattern must be one of {SCALE_PATTERNS}, got {pattern!r}")
    X = lo + (hi - lo) * q
    return X, np.asarray(labels.tolist())


@dataclass
class ScaleResult:
    """The pairs found, the sizes sampled and the time spent per pattern."""

    pairs: list = field(default_factory=list)
    #: pilot score (lower bound, point) of each pair's last bisection interval, in the order of ``pairs``
    scores: list = field(default_factory=list)
    seconds: dict = field(default_factory=dict)
    sizes: dict = field(default_factory=dict)
    n_max: int = 0
    #: measured seconds per output at the smallest size
    per_output: float = 0.0
    lo: int = 1_000
    note: str = ""

    def best(self):
        """The pair whose last bisection interval scored highest (``None`` when there is none)."""
        if not self.pairs:
            return None
        k = max(range(len(self.pairs)), key=lambda i: self.scores[i])
        return self.pairs[k]

    def samples_within(self, pair, seconds: float, cap: int) -> int:
        """Outputs per input that confirming ``pair`` can afford in ``seconds`` (at least 200, at most ``cap``)."""
        n = len(pair.d1[1])
        cost = 2 * self.per_output * max(n / self.lo, 1.0)
        return int(min(cap, max(200, seconds / cost)))

    def summary(self) -> str:
        parts = [f"{p.description} (pilot epsilon >= {lo:.3g})" for p, (lo, _) in zip(self.pairs, self.scores)]
        return (f"scale family: sizes {self.lo:,} to {self.n_max:,} records, {self.seconds.get('total', 0):.1f} s; "
                + "; ".join(parts) + (f"; {self.note}" if self.note else ""))


def _pair(pattern, n, bounds, classes, relation):
    X0, y0 = pattern_data(pattern, n, bounds, classes)
    X1, y1 = pattern_data(pattern, n + 1, bounds, classes)
    if relation == "substitute":  # the same size on both sides: the last record replaced by D(n + 1)'s last
        X1, y1 = np.vstack((X0[:-1], X1[-1:])), np.append(y0[:-1], y1[-1:])
        return NeighbourPair((X0, y0), (X1, y1), f"[scale: {pattern}] {n:,} records, the last one replaced by "
                             f"record {n + 1:,} of the pattern", relation)
    return NeighbourPair((X0, y0), (X1, y1), f"[scale: {pattern}] {n:,} records vs {n + 1:,}", relation)


def _score(a, b, delta):
    r = estimate_from_samples(a[0], b[0], [(0, a[1]), (1, b[1])], delta=delta, alpha=0.5)
    return float(r.epsilon_lower), float(r.epsilon_point)


def scale_pairs(mechanism, bounds, classes, relation: str = "add-remove", *, n_pilot: int = 40,
                budget_s: float = 120.0, lo: int = 1_000, hi: int = 10 ** 6, seed: int = 0,
                delta: float = 0.0, patterns=SCALE_PATTERNS, n_max: int | None = None) -> ScaleResult:
    """Candidate pairs at scale (module docstring), within about ``budget_s`` seconds.

    Parameters
    ----------
    mechanism : callable ``m(data, rng)`` over ``data = (X, y)``
    bounds, classes : the public domain
    relation : ``"add-remove"`` or ``"substitute"``
    n_pilot : int
        Outputs per size (half choose the event, half count it).
    budget_s : float
        Time allowed for the whole family; the largest size is chosen from the measured time of
        one output at ``lo`` records (fits are taken to grow linearly with the records).
    lo, hi : int
        Smallest and largest size tried.
    n_max : int, optional
        The largest size, fixed (``lo`` times a power of two, at most ``hi``): the sizes sampled,
        hence the pairs found for a given ``seed``, then no longer depend on the machine's speed,
        and ``budget_s`` is not used. By default it is chosen from ``budget_s``.
    """
    if n_max is not None:
        ratio = int(n_max) // int(lo)
        if n_max != lo * ratio or ratio < 1 or ratio & (ratio - 1) or n_max > hi:
            raise ValueError(f"n_max must be lo ({lo:,}) times a power of two, at most hi ({hi:,}); got {n_max!r}")
    out = ScaleResult()
    ss = np.random.SeedSequence([int(seed), 0x5CA1E])
    start = time.perf_counter()
    probe = pattern_data(patterns[0], lo, bounds, classes)
    list(sampling.draw_many(mechanism, [(probe, 1, ss.spawn(1)[0])]))  # warm-up (imports, caches)
    t0 = time.perf_counter()
    list(sampling.draw_many(mechanism, [(probe, 4, ss.spawn(1)[0])]))
    per_output = max((time.perf_counter() - t0) / 4, 1e-6)  # seconds per output at lo records
    # one pattern samples the doubling sizes (about 2 n_max / lo outputs' worth of lo-sized fits) and
    # bisects (about log2 n_max sizes at up to n_max records), n_pilot outputs each; fits are taken to
    # grow linearly with the records
    per_pattern = budget_s / max(len(patterns), 1)
    fixed = n_max is not None
    if not fixed:
        n_max = lo
        while n_max * 2 <= hi:
            cost = (2 + math.log2(n_max * 2)) * n_pilot * per_output * (n_max * 2 / lo)
            if cost > per_pattern:
                break
            n_max *= 2
    out.n_max, out.per_output, out.lo = n_max, per_output, lo
    if n_max == lo and not fixed:
        out.note = f"one output at {lo:,} records takes {per_output:.3g} s: the budget allows no larger size"
    streams = iter(ss.spawn(10_000))

    def draw(pattern, n):
        data = pattern_data(pattern, n, bounds, classes)
        half = max(1, n_pilot // 2)
        pilot = next(sampling.gather(sampling.draw_many(mechanism, [(data, half, next(streams))]), sampling.collect))
        count = next(sampling.gather(sampling.draw_many(mechanism, [(data, n_pilot - half, next(streams))]),
                                     sampling.concat))
        return pilot, count

    allowed = "size fixed" if fixed else f"{budget_s:.0f} s allowed"
    progress.step(f"scale family: {len(patterns)} patterns at {lo:,} to {n_max:,} records ({per_output:.3g} s per "
                  f"output at {lo:,}; {allowed})")
    for k_pattern, pattern in enumerate(patterns):
        t = time.perf_counter()
        sizes = [lo]
        while sizes[-1] * 2 <= n_max:
            sizes.append(sizes[-1] * 2)
        samples = {n: draw(pattern, n) for n in sizes}
        if len(sizes) > 1:
            scores = [_score(samples[a], samples[b], delta) for a, b in zip(sizes, sizes[1:])]
            k = max(range(len(scores)), key=lambda i: scores[i])
            a, b = sizes[k], sizes[k + 1]
            score = scores[k]
            while b - a > 1:
                mid = (a + b) // 2
                samples[mid] = draw(pattern, mid)
                left, right = _score(samples[a], samples[mid], delta), _score(samples[mid], samples[b], delta)
                (a, b), score = ((a, mid), left) if left >= right else ((mid, b), right)
            n = a
        else:
            n, score = lo, (0.0, 0.0)
        out.pairs.append(_pair(pattern, n, bounds, classes, relation))
        out.scores.append(score)
        out.sizes[pattern] = sorted(samples)
        out.seconds[pattern] = time.perf_counter() - t
        progress.step(f"scale pattern {k_pattern + 1}/{len(patterns)} [{pattern}]: {n:,} records vs {n + 1:,} "
                      f"(pilot ε ≥ {score[0]:.3g}; {len(samples)} sizes, {out.seconds[pattern]:.1f} s)",
                      done=k_pattern + 1, total=len(patterns), since=start)
    out.seconds["total"] = time.perf_counter() - start
    return out
