"""Neighbour search: tiny neighbouring datasets over the public domain, screened on a pilot, confirmed fresh.

A leak of an estimator often shows only on a particular pair of datasets (a pure
node and one record of another class, the only record of a class removed, an
empty region receiving one record, ...). :func:`candidate_pairs` generates such
pairs from the public domain alone (bounds and classes, never private data),
family by family, plus random tiny datasets. :func:`search_and_confirm`

1. screens every candidate on a small *pilot* budget, scoring it by the lower
   bound of :func:`audit.engine.estimation.estimate.estimate_from_samples` at a loose level; each
   distinct dataset is sampled once (its own seed) and serves every candidate
   that contains it (40 datasets for the 27 default candidates on two features);
2. confirms the ``confirm`` best on fresh samples (new seeds) with
   :func:`audit.engine.estimation.estimate.audit_pairs`, ``alpha`` shared by Bonferroni over the
   confirmed pairs only.

The pilot's samples never enter the confirmation, so the pairs confirmed are
fixed before the confirming samples are drawn: a correct mechanism is flagged
with probability at most ``alpha`` however many candidates were screened.
"""
from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field

import numpy as np

from audit.engine.presentation.render import plain
from audit.engine.runs import checkpoint, progress
from audit.engine.estimation import sampling
from audit.engine.estimation.estimate import AuditResult, Claim, check_sizes, audit_pairs, estimate_from_samples
from audit.engine.estimation.neighbours import NeighbourPair
from audit.engine.estimation.sequential import looks_text, sequential_audit
from reference.validation import shown

__all__ = ["BOUND", "FAMILIES", "SCREEN_FIRST", "SCREEN_TOP", "candidate_pairs", "search_and_confirm", "screen_first",
           "SearchResult"]

#: how the gate's sampled confirmations turn an event's counts into a lower bound
#: (:data:`audit.engine.estimation.estimate.BOUNDS`). Clopper-Pearson (``"cp"``, alpha / 2 on each count) stays: the
#: joint bound (one exact test at the whole alpha) was measured in the gate (quick, seeds 0-2) on two correct
#: subjects whose loss equals their claim. It stopped no earlier on balance (the lattice classifier conclusive at
#: 2,500 / violation / 5,000 outputs per input, against 2,500 / 7,500 / 2,500; the 1 ms estimator 45 / 58 / 125
#: CPU-s against 42 / 57 / 38), and it refuted the lattice classifier on seed 1: a valid false alarm (its rate at a
#: look is that look's alpha, where Clopper-Pearson's is 30 to 100 times lower), which a gate run on every commit
#: would raise over a repository's history until the full audit's evidence is combined across runs
BOUND = "cp"

FAMILIES = ("pure node + one other class", "only record of a class removed", "identical features",
            "domain corners and bin edges", "empty region receives one record", "near tie between splits",
            "single-class dataset", "one record vs none", "label flip", "random tiny datasets",
            "one vs two records at the bounds")



def _point(x) -> str:
    """A record's features as the reports write numbers (:func:`audit.engine.presentation.render.plain`): the
    rounding of the grid's own arithmetic (``lo + (hi - lo) q``) is not part of the record, so
    ``0.33999999999999997`` reads ``0.34``."""
    return "[" + ", ".join(map(plain, x)) + "]"

def _empty(d: int):
    return np.zeros((0, d)), np.zeros(0, dtype=int)


def _data(rows, labels, d):
    if not rows:
        X, y = _empty(d)
        return X, np.asarray(labels, dtype=int) if not labels else np.asarray(labels)
    return np.asarray(rows, dtype=float).reshape(-1, d), np.asarray(labels)


def _pair(family, desc, rows0, labels0, rows1, labels1, d, relation):
    return NeighbourPair(_data(rows0, labels0, d), _data(rows1, labels1, d), f"[{family}] {desc}", relation)


def candidate_pairs(bounds, classes, relation: str = "add-remove", *, seed: int = 0, n_random: int = 6,
                    size: int = 3):
    """Tiny neighbouring datasets over the public domain, one list per family.

    Parameters
    ----------
    bounds : public ``(low, high)`` per feature
    classes : public labels (for regression, the target's public extreme values)
    relation : ``"add-remove"`` or ``"substitute"``
    seed : int
        Seed of the random tiny datasets (public randomness).
    n_random : int
        How many random tiny pairs.
    size : int
        Records in the base of the structured families.

    Returns
    -------
    list of NeighbourPair
        Descriptions start with ``[family]``.
    """
    bounds = [(float(lo), float(hi)) for lo, hi in bounds]
    d = len(bounds)
    lo, hi = np.array([b[0] for b in bounds]), np.array([b[1] for b in bounds])
    at = lambda q: (lo + (hi - lo) * np.asarray(q, dtype=float)).tolist()  # noqa: E731
    c0, c1 = classes[0], classes[-1] if len(classes) > 1 else classes[0]
    low, high, mid = at(0.1), at(0.9), at(0.5)
    pairs = []
    add = relation == "add-remove"

    def neighbour(family, desc, rows, labels, new_row, new_label, i=None):
        """Add ``new_row`` (add/remove) or put it in place of record ``i`` (substitute)."""
        if add:
            pairs.append(_pair(family, desc, rows, labels, rows + [new_row], labels + [new_label], d, relation))
        elif rows:
            i = len(rows) - 1 if i is None else i
            r1, l1 = list(rows), list(labels)
            r1[i], l1[i] = new_row, new_label
            pairs.append(_pair(family, desc, rows, labels, r1, l1, d, relation))

    base = [low] * size
    neighbour(FAMILIES[0], f"{size} records of class {shown(c0)} at one point, plus one of class {shown(c1)} there",
              base, [c0] * size, low, c1)
    neighbour(FAMILIES[0], f"{size} records of class {shown(c0)}, plus one of class {shown(c1)} at the far corner",
              base, [c0] * size, high, c1)
    if len(classes) > 1:
        rows, labels = [low] * size + [high], [c0] * size + [c1]
        if add:
            pairs.append(_pair(FAMILIES[1], f"the only record of class {shown(c1)} removed", rows, labels, rows[:-1],
                               labels[:-1], d, relation))
        else:
            neighbour(FAMILIES[1], f"the only record of class {shown(c1)} becomes class {shown(c0)}", rows, labels, high, c0)
    diag = [at([q] * d) for q in (0.2, 0.4, 0.6)]
    neighbour(FAMILIES[2], "records with every feature equal, plus one at the low corner", diag,
              [c0, c1, c0][:len(diag)], at([0.0] * d), c1)
    neighbour(FAMILIES[2], "records with every feature equal, plus one at the high corner", diag,
              [c0, c1, c0][:len(diag)], at([1.0] * d), c0)
    for corner in itertools.islice(itertools.product((0.0, 1.0), repeat=d), 4):
        neighbour(FAMILIES[3], f"one record at domain corner {at(corner)}", [mid], [c0], at(corner), c1)
    eps = 1e-6
    neighbour(FAMILIES[3], "records just below and above the middle bin edge", [at([0.5 - eps] * d)], [c0],
              at([0.5 + eps] * d), c1)
    rows = [at([0.1 + 0.1 * k] * d) for k in range(size)]
    for label in dict.fromkeys((c0, c1)):
        neighbour(FAMILIES[4], f"records in the low region, one of class {shown(label)} in the empty high region",
                  rows, [c0 if k % 2 else c1 for k in range(size)], at([0.9] * d), label)
    tie = [at([0.25] * d), at([0.75] * d)]
    neighbour(FAMILIES[5], "two records of different classes (every split ties), plus one between",
              tie, [c0, c1], mid, c0)
    neighbour(FAMILIES[6], f"all records of class {shown(c0)}, plus one more of it", [low, mid, high], [c0] * 3, mid, c0)
    if add:
        for label in dict.fromkeys((c0, c1)):
            pairs.append(_pair(FAMILIES[7], f"no records vs one of class {shown(label)}", [], [], [mid], [label], d,
                               relation))
        pairs.append(_pair(FAMILIES[7], f"one record of class {shown(c0)} vs two", [low], [c0], [low, high], [c0, c1], d,
                           relation))
    else:
        for r in (low, high):
            pairs.append(_pair(FAMILIES[8], f"one record at {_point(r)}: label {shown(c0)} vs {shown(c1)}", [r], [c0], [r], [c1], d,
                               relation))
        pairs.append(_pair(FAMILIES[8], f"two records: the first's label {shown(c0)} vs {shown(c1)}", [low, high], [c0, c1],
                           [low, high], [c1, c1], d, relation))
    # one record vs two at the public bounds' corners, labels at the public extremes: where a bounded mean or sum
    # moves most under add/remove (and, under substitution, one record moved from corner to corner)
    bottom, top = at([0.0] * d), at([1.0] * d)
    for (r0, l0), (r1, l1) in (((bottom, c0), (top, c1)), ((top, c1), (bottom, c0)), ((top, c1), (top, c1)),
                               ((bottom, c0), (bottom, c0))):
        if add:
            pairs.append(_pair(FAMILIES[10], f"one record at {_point(r0)} (class {shown(l0)}) vs two, the second at {_point(r1)} "
                               f"(class {shown(l1)})", [r0], [l0], [r0, r1], [l0, l1], d, relation))
        elif (r0, l0) != (r1, l1):
            pairs.append(_pair(FAMILIES[10], f"one record at {_point(r0)} (class {shown(l0)}) vs at {_point(r1)} (class {shown(l1)})",
                               [r0], [l0], [r1], [l1], d, relation))
            pairs.append(_pair(FAMILIES[10], f"two records, the second at {_point(r0)} (class {shown(l0)}) vs at {_point(r1)} "
                               f"(class {shown(l1)})", [r1, r0], [l1, l0], [r1, r1], [l1, l1], d, relation))
    rng = np.random.default_rng(seed)
    for k in range(n_random):
        m = int(rng.integers(0 if add else 1, size + 2))
        rows = [at(rng.random(d)) for _ in range(m)]
        labels = [classes[int(rng.integers(len(classes)))] for _ in range(m)]
        new = at(rng.choice([0.0, 1.0], size=d) if k % 2 else rng.random(d))
        neighbour(FAMILIES[9], f"random tiny dataset #{k} ({m} records) and one record at {np.round(new, 3).tolist()}",
                  rows, labels, new, classes[int(rng.integers(len(classes)))], i=0)
    return pairs


@dataclass
class SearchResult:
    """Screened candidates (description, pilot lower bound, pilot point) and the confirmation."""

    tried: list
    confirmed: list
    audit: AuditResult
    n_pilot: int
    notes: list = field(default_factory=list)
    #: the confirmation of the scale family's pair (its own share of alpha), when there is one
    scale_audit: AuditResult | None = None
    #: the pairs confirmed with the main share of alpha, in the order of ``audit.results``
    pairs: list = field(default_factory=list)

    @property
    def decisive(self) -> AuditResult:
        """The confirmation that decides: a violating one if any (the larger lower bound), else the main one."""
        if self.scale_audit is not None and self.scale_audit.violation and \
                (not self.audit.violation or self.scale_audit.epsilon_lower > self.audit.epsilon_lower):
            return self.scale_audit
        return self.audit

    def summary(self, top: int = 5) -> str:
        best = sorted(self.tried, key=lambda t: (-t[1], -t[2]))[:top]
        lines = [f"{len(self.tried)} candidate pairs screened at {self.n_pilot:,} outputs per input; "
                 f"confirmed on fresh samples: {', '.join(self.confirmed)}; best pilot scores: " +
                 "; ".join(f"{desc} (pilot epsilon >= {lo:.3g}, point {pt:.3g})" for desc, lo, pt in best)]
        for what, res in (("the pairs", self.audit), ("the scale family's pair", self.scale_audit)):
            if getattr(res, "looks", None):
                lines.append(f"{what}: " + looks_text(res.looks, res.planned))
        return "; ".join(lines)


def _sequential(mechanism, pairs, claim, *, n_samples, alpha, seed, pilots=None) -> AuditResult:
    return sequential_audit(mechanism, pairs, claim, n_samples=n_samples, alpha=alpha, seed=seed, pilots=pilots,
                            bound=BOUND)


def _screened_pilots(pairs, screened: dict):
    """The screening's samples of each input of ``pairs`` (all of them: its pilot and counting halves), as a
    pilot for the confirmation: ``[(pilot of d0 or None, pilot of d1 or None)]``, or None when the screening
    drew none of them. They chose the pairs and may choose the events; the confirmation's counting batches are
    fresh and never see them, so its bounds stay sound (a pilot is never counted)."""
    def pilot(d):
        got = screened.get(data_key(d))
        return None if got is None else sampling.collect([got[0], got[1]])

    out = [(pilot(p.d0), pilot(p.d1)) if isinstance(p, NeighbourPair) else (None, None) for p in pairs]
    return out if any(a is not None or b is not None for a, b in out) else None


def data_key(data):
    """A hashable key of a dataset's content: equal datasets (arrays compared bytewise) share it."""
    if isinstance(data, (tuple, list)):
        return (type(data).__name__,) + tuple(data_key(x) for x in data)
    if isinstance(data, np.ndarray):
        return ("ndarray", data.dtype.str, data.shape, data.tobytes())
    try:
        hash(data)
        return data
    except TypeError:
        return ("repr", repr(data))


#: screening in two stages: every dataset at a third of the pilot budget, then the datasets of the
#: :data:`SCREEN_TOP` best-scoring candidates topped up to the whole of it and scored again
SCREEN_FIRST = 1 / 3
SCREEN_TOP = 6


def screen_first(n_pilot: int) -> int:
    """Outputs per dataset at the screening's first stage (half to choose events, half to count them): a third
    of ``n_pilot``, at least 200 (at most ``n_pilot``: then the screening has one stage)."""
    n_half = max(1, int(round(n_pilot * 0.5)))
    return 2 * min(n_half, max(100, int(round(n_half * SCREEN_FIRST))))


def _dataset_keys(candidates, indices) -> list:
    """The distinct datasets (their :func:`data_key`) of the candidates at ``indices``, in order."""
    return list(dict.fromkeys(data_key(d) for k in indices for d in (candidates[k].d0, candidates[k].d1)))


def _screen(mechanism, candidates, todo, *, n_pilot, delta, pilot_alpha, ss, top=None, only=None):
    """Pilot scores ``[lower, point]`` of the candidates ``todo``, the samples drawn (dataset key ->
    ``(pilot, counts)``) and the candidates whose datasets the second stage topped up.

    Each distinct dataset is sampled once (half its outputs to choose the events, half to count them), and its
    samples serve every candidate pair it belongs to: the candidates share many datasets (the same base with
    different added records). Two stages: every dataset at :data:`SCREEN_FIRST` of ``n_pilot``; then the
    datasets of the :data:`SCREEN_TOP` best candidates are drawn further, on streams of their own, to
    ``n_pilot`` in all, and those candidates scored again (the others keep their first score, a bound on
    fewer outputs and so a lower one). The scores only rank the candidates; none of these samples is ever
    *counted* by the confirmation (they may be its pilot: :func:`search_and_confirm`).

    ``only`` (dataset keys) and ``top`` (the candidates the screening topped up) draw again, with no score, the
    samples of a screening already scored (a resumed run), for the datasets of ``only``: the first stage for
    those among the datasets of ``todo``, the second for those among the datasets of ``top``, on the same
    streams, so the samples are those of the first run.
    """
    check_sizes(n_pilot, pilot_alpha, delta, 0.5)
    n_half = max(1, int(round(n_pilot * 0.5)))
    n_first = screen_first(n_pilot) // 2
    try:
        check_sizes(2 * n_first, pilot_alpha, delta, 0.5)
    except ValueError:
        n_first = n_half  # too few outputs for two stages at this level: one stage at the whole pilot budget
    start = time.perf_counter()
    keys = {}
    for pair in candidates:  # every candidate, so a dataset's seed does not depend on what is resumed
        for d in (pair.d0, pair.d1):
            keys.setdefault(data_key(d), d)
    seeds = dict(zip(keys, ss.spawn(max(1, len(keys)))))
    streams = {key: seeds[key].spawn(4) for key in keys}  # pilot and counting streams of each stage
    needed = _dataset_keys(candidates, todo)
    if only is not None:  # the samples of a screening already scored, drawn again
        again = [key for key in _dataset_keys(candidates, top) if key in only]
        samples = _draw_stage(mechanism, keys, [key for key in needed if key in only], n_first, n_first, streams, 0,
                              {})
        if n_first < n_half and again:
            samples = _draw_stage(mechanism, keys, again, n_half - n_first, n_pilot - n_half - n_first, streams, 2,
                                  samples)
        return None, samples, list(top)
    progress.step(f"screening {len(todo)} candidate pairs: {len(needed)} datasets at {2 * n_first:,} outputs each"
                  + (f", the datasets of the best {SCREEN_TOP} then at {n_pilot:,}" if n_first < n_half else ""))
    samples = _draw_stage(mechanism, keys, needed, n_first, n_first, streams, 0, {})

    def score(k):
        (p0, c0), (p1, c1) = samples[data_key(candidates[k].d0)], samples[data_key(candidates[k].d1)]
        r = estimate_from_samples(p0, p1, [(0, c0), (1, c1)], delta=delta, alpha=pilot_alpha)
        return [float(r.epsilon_lower), float(r.epsilon_point)]

    scores, top = {k: score(k) for k in todo}, []
    if n_first < n_half:
        top = sorted(todo, key=lambda k: (-scores[k][0], -scores[k][1]))[:SCREEN_TOP]
        again = _dataset_keys(candidates, top)
        samples = _draw_stage(mechanism, keys, again, n_half - n_first, n_pilot - n_half - n_first, streams, 2,
                              samples)
        scores.update({k: score(k) for k in top})
    progress.step(f"screened {len(todo)} candidate pairs in {time.perf_counter() - start:.1f} s")
    return [scores[k] for k in todo], samples, top


def _draw_stage(mechanism, keys, needed, n_pilot_half, n_count_half, streams, first, samples):
    """Draw ``n_pilot_half`` pilot and ``n_count_half`` counting outputs more for each dataset of ``needed``,
    on its streams ``first`` and ``first + 1``, and join them to ``samples`` (dataset key -> (pilot, counts))."""
    pilot_items = [(keys[key], n_pilot_half, streams[key][first]) for key in needed]
    # every dataset's blocks in one pool under --jobs (sampling.draw_many), each with its own seed
    pilots = list(checkpoint.progress(sampling.gather(sampling.draw_many(mechanism, pilot_items), sampling.collect),
                                      total=len(needed), desc="screening: pilots", unit="dataset"))
    count_items = [(keys[key], n_count_half, streams[key][first + 1]) for key in needed]
    counts = checkpoint.progress(sampling.gather(sampling.draw_many(mechanism, count_items, expect=pilots[0]),
                                                 sampling.concat),
                                 total=len(needed), desc="screening: counts", unit="dataset")
    out = dict(samples)
    for key, p, c in zip(needed, pilots, counts):
        old = samples.get(key)
        out[key] = (p, c) if old is None else (sampling.collect([old[0], p]), sampling.concat([old[1], c]))
    return out


def search_and_confirm(mechanism, candidates, claim: Claim, *, n_pilot: int, n_samples: int, alpha: float,
                       seed: int, confirm: int = 2, pilot_alpha: float = 0.5, fixed=(), scale=None,
                       scale_share: float = 1 / 3, also=None, sequential: bool = True) -> SearchResult:
    """Screen ``candidates`` on ``n_pilot`` outputs per input; confirm the best ``confirm`` (plus ``fixed``
    pairs, always confirmed) on ``n_samples`` fresh outputs per input with ``alpha`` shared over them.

    Parameters
    ----------
    mechanism : callable ``m(data, rng)``
    candidates : list of NeighbourPair
    claim : Claim
    n_pilot, n_samples : int
        Outputs per input for the screening and for each confirmed pair.
    alpha : float
        The run's error probability: shared over the confirmed pairs (never over the screened ones).
    seed : int
    confirm : int
        How many of the screened candidates to confirm.
    pilot_alpha : float
        Level of the screening bounds (they only rank candidates).
    fixed : sequence of NeighbourPair
        Pairs confirmed whatever the screening says (the user's ``--pairs``).
    also : callable ``pair -> bool`` or None
        When none of the confirmed pairs satisfies it, the best-ranked candidate that does is confirmed too.
    scale : ``(NeighbourPair, n)`` or None
        The scale family's pair (:mod:`audit.gate.scale`, chosen on its own pilot samples) and the outputs per
        input its confirmation can afford; it is confirmed with ``scale_share`` of ``alpha``, the other pairs
        with the rest (``scale_audit`` of the result).
    sequential : bool
        Confirm group-sequentially (:mod:`audit.engine.estimation.sequential`): looks at the shares
        :data:`~audit.engine.estimation.sequential.LOOKS` of ``n_samples``, alpha spent over them, stopping at
        a violation, when the pass is conclusive, or when every pair is futile. False: one look at ``n_samples``
        (:func:`audit.engine.estimation.estimate.audit_pairs`).
    """
    ss_screen, ss_confirm = np.random.SeedSequence([int(seed), 0x5C4EE7]).spawn(2)
    tried, screened = [], {}
    if len(candidates) > confirm:
        keys = [f"screen-shared{k}/{len(candidates)}:n={n_pilot}:seed={seed}" for k in range(len(candidates))]
        top_key = f"screen-top/{len(candidates)}:n={n_pilot}:seed={seed}"
        scores = {k: checkpoint.lookup(key) for k, key in enumerate(keys)}
        todo = [k for k, v in scores.items() if v is None]
        if todo:
            new, screened, top = _screen(mechanism, candidates, todo, n_pilot=n_pilot, delta=claim.delta,
                                         pilot_alpha=pilot_alpha, ss=ss_screen)
            checkpoint.store(top_key, top)
            for k, saved in zip(todo, new):
                checkpoint.store(keys[k], saved)
                scores[k] = saved
        tried = [(pair.description, scores[k][0], scores[k][1]) for k, pair in enumerate(candidates)]
        order = sorted(range(len(candidates)), key=lambda i: (-tried[i][1], -tried[i][2]))[:confirm]
        chosen = [candidates[i] for i in sorted(order)]
    else:
        chosen = list(candidates)
        tried = [(p.description, float("nan"), float("nan")) for p in chosen]
    if also is not None and not any(also(p) for p in chosen):
        # the best-ranked candidate of the other kind (e.g. output-based when the best were crash pairs) is
        # confirmed too, so the report shows both kinds of evidence (alpha shared over one more pair)
        ranked = sorted(range(len(candidates)), key=lambda i: (-tried[i][1], -tried[i][2])) if tried else []
        extra = next((candidates[i] for i in ranked
                      if also(candidates[i]) and all(candidates[i] is not c for c in chosen)), None)
        if extra is not None:
            chosen.append(extra)
    chosen = list(fixed) + chosen
    if tried and len(candidates) > confirm:
        best = sorted(tried, key=lambda t: (-t[1], -t[2]))[:3]
        progress.step("best pilot scores: " + "; ".join(f"{d} (ε ≥ {lo:.3g})" for d, lo, _ in best))
    progress.step(f"confirming {len(chosen)} pair(s) on fresh samples at {n_samples:,} outputs per input"
                  + (" (and the scale family's pair)" if scale is not None else ""))
    alpha_main = alpha * (1.0 - scale_share) if scale is not None else alpha
    confirm_with = _sequential if sequential else audit_pairs
    pilots = {}
    if sequential:
        if len(candidates) > confirm and not screened:  # resumed after the screening: its samples drawn again
            top = checkpoint.lookup(top_key)
            if top is not None:  # ss_screen is still unspawned: the streams are the first run's
                only = {data_key(d) for p in chosen if isinstance(p, NeighbourPair) for d in (p.d0, p.d1)}
                _, screened, _ = _screen(mechanism, candidates, list(range(len(candidates))), n_pilot=n_pilot,
                                         delta=claim.delta, pilot_alpha=pilot_alpha, ss=ss_screen, top=top, only=only)
        pilots = {"pilots": _screened_pilots(chosen, screened)}
    res = confirm_with(mechanism, chosen, claim, n_samples=n_samples, alpha=alpha_main,
                       seed=int(ss_confirm.generate_state(1)[0]), **pilots)
    out = SearchResult(tried, [p.description for p in chosen], res, n_pilot)
    out.pairs = chosen
    if scale is not None:
        pair, n_scale = scale
        progress.step(f"confirming the scale family's pair at {n_scale:,} outputs per input: {pair.description}")
        # the scale family's best pair, chosen on its own pilot samples, confirmed on fresh ones with the rest of
        # alpha (Bonferroni: a correct mechanism is flagged by either confirmation with probability <= alpha)
        out.scale_audit = confirm_with(mechanism, [pair], claim, n_samples=n_scale, alpha=alpha * scale_share,
                                       seed=int(ss_confirm.generate_state(2)[1]))
        out.confirmed.append(pair.description)
    return out
