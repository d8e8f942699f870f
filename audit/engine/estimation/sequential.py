"""Group-sequential confirmation: the two-batch protocol of :mod:`audit.engine.estimation.estimate`, looked at
on growing samples, with alpha spent over the looks.

A pair is confirmed at looks of ``n_samples * f`` outputs per input, ``f`` in :data:`LOOKS` (at the quick
budget 1,250, 2,500, 5,000, 7,500, 10,000 and 20,000). Each input has a pilot stream and a counting stream, both
drawn further at each look (never redrawn): at look ``j`` the pilot holds ``pilot_fraction * n_j`` outputs (or
more: it may begin with outputs drawn before on streams of their own, the neighbour search's screening samples,
``pilots``), the counting batch the rest. The event of each direction is chosen on the pilot as it stands and
counted on the whole counting batch, which is independent of every pilot. Each look's bound is a
Clopper-Pearson bound at its own share of alpha (:data:`SPEND`), or with ``bound="joint"`` one exact test of both
counts at that share (:mod:`audit.engine.estimation.joint`, its thinning drawn from the look's own stream, so the
two bounds count the same outputs), so by the union bound over the looks a claim
that holds is flagged at some look with probability at most alpha, whatever the stopping rule. The last look
keeps most of alpha (75%): its bound is the fixed protocol's at 0.75 alpha, a Clopper-Pearson interval wider by
about 2% at the quick budget's levels. The look at 3/8 stops a pass whose loss is near its claim (diffprivlib's
tree) a quarter of the draws before the look at a half.

The confirmation stops after a look when

* a pair's lower bound exceeds the claim (a violation: the finding is final);
* the pass is conclusive at the look, as the row reads it: on the worst pair's event (the pair the row
  reports, with the largest lower bound) a loss of the claim plus
  :data:`audit.engine.estimation.power.POWER_MARGIN` would have been caught there with probability 0.9
  (:func:`audit.engine.estimation.power.pass_power`), exactly the reading the fixed protocol gives its own
  worst pair (its other pairs' power does not enter that reading either); or
* every pair is futile: for both directions the event's *upper* confidence bound on
  ``ln P_D(S) / P_D'(S)`` (level :data:`FUTILITY`) is at most the claim, so more outputs of these events
  could not refute it, and no pair's event, at its observed frequency, would make the pass conclusive by the
  last look (:func:`audit.engine.estimation.power.conclusive_n`; where one would, the confirmation goes on, so a
  pass that the fixed protocol reads conclusive is not cut to an inconclusive one). Futility only ends a pass
  early; it cannot flag anything.

Stopping early never raises the false-alarm rate (it only skips looks that could flag). It costs power only
through a later look's better event: an event the final look's larger pilot would have found and the earlier
pilot missed. A stop reads as what it is: the row's sample size is the look's, and its power statement
is taken at the look's size and level.

References
----------
Jennison, C. and Turnbull, B. W. (2000). *Group Sequential Methods with Applications to Clinical Trials*,
chapter 7 (error spending; here a Bonferroni split over a fixed set of looks).
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from reference.validation import check_probability

from audit.engine.runs import checkpoint, progress
from audit.engine.estimation.bounds import cp_lower, cp_upper
from audit.engine.estimation.estimate import AuditResult, Claim, EstimateResult, check_sizes, estimate_from_samples, \
    unpack_pair
from audit.engine.estimation.power import POWER_MARGIN, conclusive_n, detection_probability, pass_power
from audit.engine.estimation.sampling import Samples, collect, draw_many

__all__ = ["LOOKS", "SPEND", "FUTILITY", "Look", "look_sizes", "sequential_audit", "looks_text", "futile",
           "conclusive"]

#: the looks, as shares of the budget's outputs per input
LOOKS = (0.0625, 0.125, 0.25, 0.375, 0.5, 1.0)
#: the share of alpha each look's bounds are taken at (they sum to 1: Bonferroni over the looks)
SPEND = (0.025, 0.025, 0.05, 0.05, 0.10, 0.75)
#: the error level of the upper confidence bound that declares a pair futile (one per direction)
FUTILITY = 0.01


@dataclass
class Look:
    """One look of a sequential confirmation: its outputs per input, the alpha its bounds were taken at, the
    worst lower bound, and why the confirmation stopped there (``""``: it went on)."""

    n: int
    alpha: float
    epsilon_lower: float
    stop: str = ""

    def to_dict(self) -> dict:
        return {"n": int(self.n), "alpha": float(self.alpha), "epsilon_lower": float(self.epsilon_lower),
                "stop": self.stop}


def look_sizes(n_samples: int, looks=LOOKS) -> list[int]:
    """Outputs per input at each look (the last is ``n_samples``; a look no larger than the one before is
    skipped when drawn)."""
    return [max(2, int(round(n_samples * f))) for f in looks[:-1]] + [int(n_samples)]


def futile(result: EstimateResult, claim: Claim, level: float = FUTILITY) -> bool:
    """Both directions' events are certainly too weak: the upper confidence bound of
    ``ln((P_D(S) - delta) / P_D'(S))`` at ``level`` is at most the claim, for each direction of ``result``."""
    for r in getattr(result, "directions", None) or [result]:
        c = r.counts
        p0_hi = float(cp_upper(c["k0"], c["n0"], level))
        p1_lo = float(cp_lower(c["k1"], c["n1"], level))
        if p1_lo <= 0.0 or math.log(max(p0_hi - claim.delta, 1e-300) / p1_lo) > claim.epsilon:
            return False
    return True


def conclusive(result: EstimateResult, claim: Claim) -> bool:
    """The pass is conclusive at the result's size: :func:`audit.engine.estimation.power.pass_power` says so
    (the row's own reading). One Monte Carlo probability at the target loss screens first, and no loss above
    ``ln(1 / p1)`` is possible at all, so the full bisection runs only where it can succeed."""
    c = result.counts
    n = int(c["n1"])
    p1 = (c["k1"] + 0.5) / (n + 1)
    target = claim.epsilon * (1.0 + POWER_MARGIN)
    if math.log(max((1.0 - claim.delta) / p1, 1.0)) < target:
        return False
    if detection_probability(target + 0.01, p1, n, claim=claim.epsilon, alpha=result.alpha / 2,
                             delta=claim.delta, bound=result.bound) < 0.9:
        return False
    return pass_power(result, claim=claim.epsilon, delta=claim.delta)[0]["power"] == "conclusive"


def _conclusive_within(results, claim: Claim, n_count_last: int) -> bool:
    """Some pair's event, at its observed frequency, would make the pass conclusive by the last look (whose
    counting batch holds ``n_count_last`` outputs per input): a futile stop would then leave an inconclusive
    pass that running on would likely have made conclusive, so the confirmation goes on."""
    target = claim.epsilon * (1.0 + POWER_MARGIN)
    return any(conclusive_n(r, claim=claim.epsilon, target=target, delta=claim.delta, cap=n_count_last)
               is not None for r in results)


@dataclass
class _Stream:
    """One input's pilot (collected) and counting blocks, drawn further at each look."""

    pilot: Samples | None = None
    counting: list = field(default_factory=list)
    n_pilot: int = 0
    n_count: int = 0

    def extend_pilot(self, blocks) -> None:
        new = collect(blocks)
        self.pilot = new if self.pilot is None else collect([self.pilot, new])


def sequential_audit(mechanism, pairs, claim: Claim, *, n_samples: int, alpha: float, seed, pilot_fraction=0.2,
                     looks=LOOKS, spend=SPEND, futility: float = FUTILITY, label: str = "confirmed",
                     pilots=None, bound: str = "cp") -> AuditResult:
    """Audit ``claim`` on ``pairs`` with a group-sequential confirmation (see the module's text).

    Parameters
    ----------
    mechanism : callable ``m(data, rng)`` (as for :func:`audit.engine.estimation.estimate.audit_pairs`)
    pairs : sequence of ``(d0, d1)`` or NeighbourPair
    claim : Claim
    n_samples : int
        Outputs per input at the last look.
    alpha : float
        False-alarm rate of the whole call: split over the looks by ``spend``, then over the pairs and both
        directions.
    seed : int
    pilot_fraction : float
        Share of each look's outputs in the pilot stream.
    looks, spend : sequences of equal length
        The looks as shares of ``n_samples``, and the share of ``alpha`` of each (summing to at most 1).
    futility : float
        Level of the upper bounds that end a pass early (0 turns futility off).
    pilots : list of ``(Samples or None, Samples or None)``, one per pair, or None
        Outputs already drawn from an input on streams of their own (the neighbour search's screening): they
        begin its pilot, and a look draws only what the pilot lacks of ``pilot_fraction * n_j``. They choose
        events and are never counted, so the bounds stay sound.
    bound : ``"cp"`` or ``"joint"``
        How each look's counts become its bounds (:data:`audit.engine.estimation.estimate.BOUNDS`): the joint
        bound spends each look's whole share of alpha on one exact test (its thinning drawn from the look's own
        stream), where Clopper-Pearson spends half on each count; the power reading and the stops follow it.

    Returns
    -------
    AuditResult
        As :func:`audit.engine.estimation.estimate.audit_pairs` gives it at the look where it stopped, with
        ``looks`` (a list of :class:`Look`) set; ``n_samples`` and ``alpha`` are that look's.
    """
    pairs = list(pairs)
    if not pairs:
        raise ValueError("pairs must contain at least one pair of neighbouring inputs, got none")
    check_probability("alpha", alpha, open_low=True, open_high=True)
    if len(looks) != len(spend) or not math.isclose(looks[-1], 1.0) or sum(spend) > 1.0 + 1e-12:
        raise ValueError(f"looks must end at 1 and spend must match it and sum to at most 1, got looks={looks!r}, "
                         f"spend={spend!r}")
    given = [(len(a) if a is not None else 0, len(b) if b is not None else 0) for a, b in pilots] if pilots else []
    key = f"seq{len(pairs)}:n={n_samples}:alpha={alpha}:delta={claim.delta}:seed={seed}:looks={looks}:spend={spend}" \
        + (f":bound={bound}" if bound != "cp" else "") \
        + (f":pilots={given}" if pilots else "")
    saved = checkpoint.lookup(key)
    if saved is not None:
        return _from_saved(saved, claim, pairs)
    sizes = look_sizes(n_samples, looks)
    pair_seeds = np.random.SeedSequence(int(seed)).spawn(len(pairs))
    look_seeds = [s.spawn(len(sizes)) for s in pair_seeds]
    streams = [[_Stream(), _Stream()] for _ in pairs]
    for i, pair_pilots in enumerate(pilots or []):
        for side, pilot in enumerate(pair_pilots):
            if pilot is not None:
                streams[i][side] = _Stream(pilot=pilot, n_pilot=len(pilot))
    data = [unpack_pair(p) for p in pairs]
    n_count_last = sizes[-1] - max(1, int(round(sizes[-1] * pilot_fraction)))  # the last look's counting batch
    history, audit, n_prev = [], None, 0
    start = time.perf_counter()
    for j, n_j in enumerate(sizes):
        if n_j <= n_prev:
            continue
        a_look = alpha * spend[j]
        a_pair = a_look / len(pairs)
        last = j == len(sizes) - 1
        try:
            n_pilot, n_count = check_sizes(n_j, a_pair, claim.delta, pilot_fraction)
        except ValueError:
            if last:
                raise
            continue  # too few outputs to bound anything at this look's level: its alpha is left unspent
        items, where, thin = [], [], []
        for i, (d0, d1, _) in enumerate(data):
            s = look_seeds[i][j].spawn(5)  # pilots, counting batches, and the joint bound's thinning
            thin.append(s[4])
            for side, d in enumerate((d0, d1)):
                st = streams[i][side]
                if n_pilot > st.n_pilot:
                    items.append((d, n_pilot - st.n_pilot, s[side]))
                    where.append((i, side, "pilot"))
                items.append((d, n_count - st.n_count, s[2 + side]))
                where.append((i, side, "count"))
        expect = streams[0][0].pilot
        grouped = {}
        for index, block in draw_many(mechanism, items, expect=expect):
            grouped.setdefault(index, []).append(block)
        for index, (i, side, what) in enumerate(where):
            st = streams[i][side]
            if what == "pilot":
                st.extend_pilot(grouped[index])
                st.n_pilot = n_pilot
            else:
                st.counting.extend(grouped[index])
                st.n_count = n_count
        results = []
        for i in range(len(pairs)):
            s0, s1 = streams[i]
            counting = [(0, b) for b in s0.counting] + [(1, b) for b in s1.counting]
            results.append(estimate_from_samples(s0.pilot, s1.pilot, counting, delta=claim.delta, alpha=a_pair,
                                                 bound=bound, rng=thin[i]))
            progress.step(f"pair {i + 1}/{len(pairs)} {label} at {n_j:,} outputs per input (look {j + 1} of "
                          f"{len(sizes)}): {data[i][2] or f'pair {i}'}: ε ≥ {results[-1].epsilon_lower:.4g}",
                          done=j * len(pairs) + i + 1, total=len(sizes) * len(pairs), since=start)
        audit = AuditResult.of(claim, results, [d[2] for d in data], n_j, a_look)
        look = Look(n_j, a_look, audit.epsilon_lower)
        history.append(look)
        if audit.violation:
            look.stop = "violation"
        elif not last and conclusive(audit.worst, claim):
            look.stop = "conclusive"
        elif not last and futility > 0 and all(futile(r, claim, futility) for r in results) and \
                not _conclusive_within(results, claim, n_count_last):
            look.stop = "futile"
        n_prev = n_j
        if look.stop:
            progress.step(f"sequential confirmation stopped at look {j + 1} of {len(sizes)} ({n_j:,} outputs per "
                          f"input, alpha {a_look:.3g}): {look.stop}")
            break
    audit.looks, audit.planned = history, list(sizes)
    checkpoint.store(key, {"results": [r.to_dict() for r in audit.results],
                           "looks": [lk.to_dict() for lk in history], "planned": sizes})
    return audit


def _from_saved(saved: dict, claim: Claim, pairs) -> AuditResult:
    history = [Look(**lk) for lk in saved["looks"]]
    audit = AuditResult.of(claim, [EstimateResult.from_dict(r) for r in saved["results"]],
                           [unpack_pair(p)[2] for p in pairs], history[-1].n, history[-1].alpha)
    audit.looks, audit.planned = history, list(saved["planned"])
    return audit


def looks_text(looks: list[Look], planned: list[int]) -> str:
    """The report's sentence on a sequential confirmation: the planned looks and where it stopped."""
    plan = "/".join(f"{n:,}" for n in planned)
    spent = "/".join(f"{s:.1%}" for s in SPEND)
    if not looks:
        return ""
    last = looks[-1]
    why = {"violation": "a violation", "conclusive": "the pass conclusive on its worst pair's event",
           "futile": "every pair futile (both directions' events bounded below the claim)"}.get(last.stop, "")
    return (f"sequential confirmation (looks at {plan} outputs per input, alpha spent {spent}): "
            + (f"stopped at {last.n:,} ({why})" if why and last.n < planned[-1] else
               f"ran to {last.n:,}" + (f" ({why})" if why else "")))
