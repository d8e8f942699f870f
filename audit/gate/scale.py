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
   :func:`audit.engine.estimation.estimate.estimate_from_samples` between its ends;
2. it bisects the best interval, always keeping the half whose ends score higher, until the
   ends are neighbours; a pattern whose best interval scores a lower bound of 0 (no interval's law moved,
   even at the lenient level 0.5 of the score) is not bisected and gives no pair: its bisection would
   follow noise, and it is the costliest part of the family (up to 13 more sizes, the largest ones);
3. the pair found joins the screened candidates of
   :func:`audit.engine.search.search_and_confirm`, which confirms on fresh samples.

All of this only chooses *which* pairs to confirm: no sample drawn here enters the
confirmation, so a correct mechanism is still flagged with probability at most ``alpha``.
The work is fixed by counts, never by the clock: the largest size ``n_max`` (``audit check`` takes it
from the budget, :data:`audit.check.SCALE_RECORDS`) and ``n_pilot`` outputs per size, so the sizes sampled
and the pairs found depend on the seed alone, on a quiet machine and on a loaded one. A time cap
(``max_seconds``) remains only as a safety net: when it stops the family, ``cut`` names the patterns and
sizes left out, and ``audit check`` reads the audit as unfinished (exit status 3, never a pass).
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from audit.engine.runs import progress

from audit.engine.estimation import sampling
from audit.engine.estimation.estimate import estimate_from_samples
from audit.engine.estimation.neighbours import NeighbourPair

__all__ = ["SCALE_PATTERNS", "SCALE_PILOT", "pattern_data", "scale_pairs", "ScaleResult", "confirm_samples"]

#: outputs drawn at each size the family samples (half choose the event, half count it)
SCALE_PILOT = 40

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


def confirm_samples(pair, records: int, cap: int) -> int:
    """Outputs per input for confirming a scale pair: ``records`` records fitted per input in all, divided by
    the pair's larger size (at least 200, at most ``cap``). A count, so the same on any machine."""
    n = max(len(pair.d0[1]), len(pair.d1[1]), 1)
    return int(min(cap, max(200, int(records) // n)))


@dataclass
class ScaleResult:
    """The pairs found, the sizes sampled and the time spent per pattern (times are for the console only)."""

    pairs: list = field(default_factory=list)
    #: pilot score (lower bound, point) of each pair's last bisection interval, in the order of ``pairs``
    scores: list = field(default_factory=list)
    seconds: dict = field(default_factory=dict)
    sizes: dict = field(default_factory=dict)
    n_max: int = 0
    lo: int = 1_000
    note: str = ""
    #: what the safety cap left out (empty when the family ran in full)
    cut: str = ""
    #: patterns not bisected: no interval's pilot lower bound was above 0
    flat: list = field(default_factory=list)

    def best(self):
        """The pair whose last bisection interval scored highest (``None`` when there is none)."""
        if not self.pairs:
            return None
        k = max(range(len(self.pairs)), key=lambda i: self.scores[i])
        return self.pairs[k]

    def summary(self) -> str:
        """The family in words, without times (it enters the report: the same seed gives the same words)."""
        parts = [f"{p.description} (pilot epsilon >= {lo:.3g})" for p, (lo, _) in zip(self.pairs, self.scores)]
        if self.flat:
            parts.append("not bisected (no size interval's pilot lower bound above 0): "
                         + ", ".join(f"[{p}]" for p in self.flat))
        return (f"scale family: sizes {self.lo:,} to {self.n_max:,} records; " + "; ".join(parts)
                + (f"; {self.note}" if self.note else "") + (f"; CUT: {self.cut}" if self.cut else ""))


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


def scale_pairs(mechanism, bounds, classes, relation: str = "add-remove", *, n_pilot: int = SCALE_PILOT,
                n_max: int = 16_000, lo: int = 1_000, hi: int = 10 ** 6, seed: int = 0, delta: float = 0.0,
                patterns=SCALE_PATTERNS, max_seconds: float | None = None) -> ScaleResult:
    """Candidate pairs at scale (module docstring): sizes ``lo`` to ``n_max``, ``n_pilot`` outputs each.

    Parameters
    ----------
    mechanism : callable ``m(data, rng)`` over ``data = (X, y)``
    bounds, classes : the public domain
    relation : ``"add-remove"`` or ``"substitute"``
    n_pilot : int
        Outputs per size (half choose the event, half count it).
    n_max : int
        The largest size (``lo`` times a power of two, at most ``hi``). The sizes sampled, hence the pairs
        found for a given ``seed``, depend on it and the seed only, never on the machine's speed.
    lo, hi : int
        Smallest size tried, and the largest ``n_max`` accepted.
    max_seconds : float, optional
        Safety cap (wall seconds), set far above the family's expected time: past it no new size is drawn,
        the patterns finished so far keep their pairs, and ``cut`` of the result names what was left out.
    """
    ratio = int(n_max) // int(lo)
    if n_max != lo * ratio or ratio < 1 or ratio & (ratio - 1) or n_max > hi:
        raise ValueError(f"n_max must be lo ({lo:,}) times a power of two, at most hi ({hi:,}); got {n_max!r}")
    if max_seconds is not None and not max_seconds > 0:
        raise ValueError(f"max_seconds must be a positive number of seconds, got {max_seconds!r}")
    out = ScaleResult(n_max=int(n_max), lo=int(lo))
    ss = np.random.SeedSequence([int(seed), 0x5CA1E])
    start = time.perf_counter()
    ss.spawn(2)  # the two streams the timing probe once drew, skipped: a seed finds the pairs it found before
    streams = iter(ss.spawn(10_000))

    class _Cap(Exception):
        pass

    def draw(pattern, n):
        if max_seconds is not None and time.perf_counter() - start > max_seconds:
            raise _Cap
        data = pattern_data(pattern, n, bounds, classes)
        half = max(1, n_pilot // 2)
        pilot = next(sampling.gather(sampling.draw_many(mechanism, [(data, half, next(streams))]), sampling.collect))
        count = next(sampling.gather(sampling.draw_many(mechanism, [(data, n_pilot - half, next(streams))]),
                                     sampling.concat))
        return pilot, count

    cap = "" if max_seconds is None else f"; safety cap {max_seconds:.0f} s"
    progress.step(f"scale family: {len(patterns)} patterns at {lo:,} to {n_max:,} records, {n_pilot} outputs per "
                  f"size{cap}")
    for k_pattern, pattern in enumerate(patterns):
        t = time.perf_counter()
        sizes = [lo]
        while sizes[-1] * 2 <= n_max:
            sizes.append(sizes[-1] * 2)
        samples = {}
        try:
            for n in sizes:
                samples[n] = draw(pattern, n)
            if len(sizes) > 1:
                scores = [_score(samples[a], samples[b], delta) for a, b in zip(sizes, sizes[1:])]
                k = max(range(len(scores)), key=lambda i: scores[i])
                a, b = sizes[k], sizes[k + 1]
                score = scores[k]
                flat = score[0] <= 0.0  # no interval moved: bisecting would follow noise
                while not flat and b - a > 1:
                    mid = (a + b) // 2
                    samples[mid] = draw(pattern, mid)
                    left, right = _score(samples[a], samples[mid], delta), _score(samples[mid], samples[b], delta)
                    (a, b), score = ((a, mid), left) if left >= right else ((mid, b), right)
                n = None if flat else a
            else:
                n, score = lo, (0.0, 0.0)
        except _Cap:
            left_out = [f"[{p}]" for p in patterns[k_pattern:]]
            out.cut = (f"the scale family stopped at its {max_seconds:.0f} s safety cap in pattern {k_pattern + 1}/"
                       f"{len(patterns)} after {len(samples)} sizes; not searched: {', '.join(left_out)}")
            progress.step("SAFETY CAP: " + out.cut)
            break
        out.sizes[pattern] = sorted(samples)
        out.seconds[pattern] = time.perf_counter() - t
        if n is None:
            out.flat.append(pattern)
            progress.step(f"scale pattern {k_pattern + 1}/{len(patterns)} [{pattern}]: no size interval's pilot "
                          f"lower bound above 0, not bisected ({len(samples)} sizes, {out.seconds[pattern]:.1f} s)",
                          done=k_pattern + 1, total=len(patterns), since=start)
            continue
        out.pairs.append(_pair(pattern, n, bounds, classes, relation))
        out.scores.append(score)
        progress.step(f"scale pattern {k_pattern + 1}/{len(patterns)} [{pattern}]: {n:,} records vs {n + 1:,} "
                      f"(pilot ε ≥ {score[0]:.3g} at the lenient level 0.5: where to confirm, not a verdict; "
                      f"{len(samples)} sizes, {out.seconds[pattern]:.1f} s)",
                      done=k_pattern + 1, total=len(patterns), since=start)
    out.seconds["total"] = time.perf_counter() - start
    return out
