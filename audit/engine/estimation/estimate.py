"""Black-box epsilon lower bounds: the two-batch protocol.

For inputs ``d0`` and ``d1`` and each direction (``d0`` against ``d1`` and back):

1. draw a *pilot* batch from both inputs and choose the distinguishing event
   on it (:func:`audit.engine.estimation.events.choose_event`);
2. draw a fresh *counting* batch from both inputs, count the event, and turn
   the counts into a Clopper-Pearson lower bound (:mod:`audit.engine.estimation.bounds`)::

       epsilon_lower = ln((p0_lo - delta) / p1_hi)

The ``alpha`` of :func:`estimate_epsilon` is shared by Bonferroni over the two
directions; :func:`audit_pairs` shares it further over the pairs. A correct
``(epsilon, delta)``-DP mechanism is therefore flagged (``epsilon_lower >
epsilon``) with probability at most ``alpha``, whatever the pairs.

``n_samples`` counts the outputs drawn per input in total: a fraction
``pilot_fraction`` of them forms the pilot batch, the rest the counting batch.
Samples come in fixed-size blocks of independent streams spawned from ``seed``
(:mod:`audit.engine.estimation.sampling`), so the same seed gives the same result.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from reference.validation import check_neighbouring, check_positive_finite, check_probability

from audit.engine.runs import checkpoint
from audit.engine.runs import progress
from audit.engine.estimation.bounds import epsilon_lower_bound, min_samples_for_a_bound, point_estimate
from audit.engine.estimation.events import choose_event
from audit.engine.estimation.joint import epsilon_lower_joint
from audit.engine.estimation.sampling import Samples, collect, draw_many, gather

__all__ = ["Claim", "EstimateResult", "AuditResult", "estimate_epsilon", "estimate_from_samples", "audit_pairs",
           "confirm_pairs", "check_sizes", "count_event", "unpack_pair", "BOUNDS", "lower_bound"]


@dataclass(frozen=True)
class Claim:
    """A privacy claim: ``(epsilon, delta)``-DP under a named neighbouring relation."""

    epsilon: float
    delta: float = 0.0
    neighbouring: str = "add-remove"

    def __post_init__(self):
        check_positive_finite("epsilon", self.epsilon)
        check_probability("delta", self.delta, open_high=True)
        check_neighbouring(self.neighbouring)


@dataclass
class EstimateResult:
    """The outcome of :func:`estimate_epsilon` on one pair of inputs."""

    epsilon_lower: float
    epsilon_point: float
    event: str
    direction: str
    counts: dict
    n_samples: int
    alpha: float
    delta: float
    directions: list = field(default_factory=list, repr=False)
    #: the :class:`audit.engine.estimation.events.Event` counted (not in ``to_dict``: a checkpointed result has none)
    chosen: Any = field(default=None, repr=False, compare=False)
    #: how the counts became ``epsilon_lower`` (:data:`BOUNDS`); the power reading follows it
    bound: str = "cp"

    def to_dict(self, *, with_directions: bool = True) -> dict:
        d = {k: getattr(self, k) for k in ("epsilon_lower", "epsilon_point", "event", "direction", "counts",
                                           "n_samples", "alpha", "delta", "bound")}
        if with_directions:  # the best direction is itself one of the directions: no deeper nesting
            d["directions"] = [r.to_dict(with_directions=False) for r in self.directions]
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "EstimateResult":
        d = dict(d)
        directions = [cls.from_dict(r) for r in d.pop("directions", [])]
        best = cls(**d)
        best.directions = [best if r.to_dict(with_directions=False) == best.to_dict(with_directions=False) else r
                           for r in directions]
        return best

    def summary(self) -> str:
        c = self.counts
        return (f"{self.direction}: event [{self.event}] occurred {c['k0']:,}/{c['n0']:,} vs "
                f"{c['k1']:,}/{c['n1']:,} times -> epsilon >= {self.epsilon_lower:.4g} "
                f"(point {self.epsilon_point:.4g}, alpha {self.alpha:.3g})")


#: the lower bounds an audit can take of one event's counts at level ``alpha``: ``"cp"``, a one-sided
#: Clopper-Pearson bound at ``alpha / 2`` on each probability (:func:`audit.engine.estimation.bounds.epsilon_lower_bound`,
#: the conservative reference), and ``"joint"``, one exact test of both counts at the whole ``alpha``
#: (:func:`audit.engine.estimation.joint.epsilon_lower_joint`: coupled thinning and Fisher's test; pure DP only, a
#: claim with ``delta > 0`` keeps ``"cp"``)
BOUNDS = ("cp", "joint")


def lower_bound(k0: int, n0: int, k1: int, n1: int, *, delta: float, alpha: float, bound: str = "cp",
                rng=None) -> tuple[float, str]:
    """``(epsilon_lower, bound used)`` of one event's counts at level ``alpha`` (:data:`BOUNDS`); ``rng`` gives
    the joint bound's thinning and must be independent of the counts (a stream of its own)."""
    if bound not in BOUNDS:
        raise ValueError(f"bound must be one of {BOUNDS}, got {bound!r}")
    if bound == "joint" and rng is None:
        raise ValueError("rng must be given for bound='joint' (a seed or SeedSequence drawn apart from the samples)")
    if bound == "joint" and delta == 0.0:
        return float(epsilon_lower_joint(int(k0), int(n0), int(k1), int(n1), alpha=alpha, rng=rng)), "joint"
    return float(epsilon_lower_bound(k0, n0, k1, n1, delta=delta, alpha=alpha)), "cp"


def _thinning(rng, bound: str) -> list:
    """The joint bound's two thinning streams (one per direction) from ``rng``, or ``[None, None]`` for
    ``"cp"``; the joint bound needs a seed: the same seed, the same bound."""
    if bound != "joint":
        return [None, None]
    if rng is None:
        raise ValueError("rng must be given for bound='joint' (a seed or SeedSequence drawn apart from the samples)")
    ss = rng if isinstance(rng, np.random.SeedSequence) else np.random.SeedSequence(int(rng))
    return ss.spawn(2)


def check_sizes(n_samples, alpha, delta, pilot_fraction) -> tuple[int, int]:
    """Check an audit's sizes and levels (each bad value is a ``ValueError`` naming it) and split ``n_samples``
    into the pilot's outputs and the counting outputs, ``(n_pilot, n_count)``."""
    if isinstance(n_samples, bool) or not isinstance(n_samples, (int, np.integer)) or n_samples < 2:
        raise ValueError(f"n_samples must be an integer >= 2, got {n_samples!r}")
    check_probability("alpha", alpha, open_low=True, open_high=True)
    check_probability("delta", delta, open_high=True)
    check_probability("pilot_fraction", pilot_fraction, open_low=True, open_high=True)
    n_pilot = max(1, int(round(n_samples * pilot_fraction)))
    n_count = int(n_samples) - n_pilot
    need = min_samples_for_a_bound(alpha / 2, delta)  # alpha is shared by the two directions
    if n_count < need:
        total = math.ceil(need / (1 - pilot_fraction)) + 1
        raise ValueError(
            f"n_samples={n_samples} is too small to bound anything at alpha={alpha:g}: the counting batch has "
            f"{n_count} samples but needs at least {need}; use n_samples >= {total}")
    return n_pilot, n_count


def estimate_epsilon(mechanism, d0, d1, *, n_samples: int = 100_000, delta: float = 0.0, alpha: float = 0.05,
                     seed: int = 0, pilot_fraction: float = 0.2) -> EstimateResult:
    """A ``(1 - alpha)`` lower confidence bound on the privacy loss of ``mechanism`` between ``d0`` and ``d1``.

    Parameters
    ----------
    mechanism : callable ``m(data, rng)``, optionally with ``m.batch(data, n, rng)``
    d0, d1 : inputs of the mechanism
    n_samples : int
        Outputs drawn per input, pilot batch included.
    delta : float
        The delta of an approximate-DP claim (0 for pure DP).
    alpha : float
        Error probability of the bound, shared by the two directions.
    seed : int or numpy.random.SeedSequence
    pilot_fraction : float
        Share of ``n_samples`` used to choose the event.

    Returns
    -------
    EstimateResult
        ``epsilon_lower`` (>= 0), ``epsilon_point``, ``event`` and the counts
        of the direction that gave the larger bound.
    """
    n_pilot, n_count = check_sizes(n_samples, alpha, delta, pilot_fraction)
    ss = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(int(seed))
    s_pilot0, s_pilot1, s_count0, s_count1 = ss.spawn(4)
    pilot0, pilot1 = gather(draw_many(mechanism, [(d0, n_pilot, s_pilot0), (d1, n_pilot, s_pilot1)]), collect)
    counting = draw_many(mechanism, [(d0, n_count, s_count0), (d1, n_count, s_count1)], expect=pilot0)
    return estimate_from_samples(pilot0, pilot1, counting, delta=delta, alpha=alpha)


def estimate_from_samples(pilot0: Samples, pilot1: Samples, counting, *, delta: float = 0.0,
                          alpha: float = 0.05, bound: str = "cp", rng=None) -> EstimateResult:
    """The bound of :func:`estimate_epsilon` from samples already drawn.

    Parameters
    ----------
    pilot0, pilot1 : Samples
        The pilot batches of ``d0`` and ``d1`` (they choose the events).
    counting : iterable of ``(i, Samples)``
        The counting batches' blocks, ``i`` = 0 for ``d0`` and 1 for ``d1``; independent of the pilots
        and of equal size for both inputs.
    delta, alpha : see :func:`estimate_epsilon`
    bound : ``"cp"`` or ``"joint"`` (:data:`BOUNDS`)
        How each direction's counts become its bound, at ``alpha / 2``.
    rng : numpy.random.SeedSequence or int, optional
        The joint bound's thinning (one child per direction), drawn independently of the samples.
    """
    a_dir = alpha / 2
    thin = _thinning(rng, bound)
    events = {"d0 vs d1": choose_event(pilot0, pilot1, delta=delta, alpha=a_dir),
              "d1 vs d0": choose_event(pilot1, pilot0, delta=delta, alpha=a_dir)}
    k = {name: [0, 0] for name in events}
    n = [0, 0]
    for i, block in counting:
        n[i] += len(block)
        for name, ev in events.items():
            k[name][i] += ev.count(block)
    if n[0] != n[1]:
        raise ValueError(f"the counting batches of the two inputs differ in size: {n[0]} and {n[1]}")
    n_count, n_pilot = n[0], len(pilot0)
    results = []
    for (name, ev), s in zip(events.items(), thin):
        num, den = (k[name][0], k[name][1]) if name == "d0 vs d1" else (k[name][1], k[name][0])
        lower, used = lower_bound(num, n_count, den, n_count, delta=delta, alpha=a_dir, bound=bound, rng=s)
        point = point_estimate(num, n_count, den, n_count, delta=delta)
        results.append(EstimateResult(lower, point, ev.description, name,
                                      {"k0": num, "n0": n_count, "k1": den, "n1": n_count, "n_pilot": n_pilot},
                                      int(n_pilot + n_count), alpha, delta, chosen=ev, bound=used))
    best = max(results, key=lambda r: (r.epsilon_lower, r.epsilon_point))
    best.directions = results
    return best


def count_event(mechanism, d0, d1, event, direction: str, *, n_samples: int, delta: float = 0.0,
                alpha: float = 0.05, seed: int = 0, bound: str = "cp") -> EstimateResult:
    """The bound of one event fixed beforehand (chosen on other samples), counted on ``n_samples`` fresh outputs
    per input, every one of them counted (no pilot: the event is already chosen).

    Parameters
    ----------
    mechanism, d0, d1 : as for :func:`estimate_epsilon`
    event : Event
        The event, chosen before these outputs are drawn (e.g. on an earlier audit's pilot), so the bound holds
        at its level whatever the samples.
    direction : ``"d0 vs d1"`` or ``"d1 vs d0"``
        Which input's frequency is the numerator.
    n_samples : int
    delta, alpha : float
        The bound is taken at ``alpha / 2``, the level of one direction of :func:`estimate_epsilon` (so
        :func:`audit.engine.estimation.power.power_statement` reads the result alike); only one direction is
        counted, so the error probability is at most ``alpha / 2``.
    seed : int or numpy.random.SeedSequence
    bound : ``"cp"`` or ``"joint"`` (:data:`BOUNDS`)
    """
    if direction not in ("d0 vs d1", "d1 vs d0"):
        raise ValueError(f"direction must be 'd0 vs d1' or 'd1 vs d0', got {direction!r}")
    check_sizes(int(n_samples) * 2, alpha, delta, 0.5)  # n_samples counted outputs per input suffice to bound
    ss = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(int(seed))
    s0, s1, s_thin = ss.spawn(3)  # the third stream: the joint bound's thinning
    k, n = [0, 0], [0, 0]
    for i, block in draw_many(mechanism, [(d0, int(n_samples), s0), (d1, int(n_samples), s1)]):
        n[i] += len(block)
        k[i] += event.count(block)
    num, den = (k[0], k[1]) if direction == "d0 vs d1" else (k[1], k[0])
    lower, used = lower_bound(num, n[0], den, n[1], delta=delta, alpha=alpha / 2, bound=bound,
                              rng=_thinning(s_thin, bound)[0])
    point = point_estimate(num, n[0], den, n[1], delta=delta)
    out = EstimateResult(lower, point, event.description, direction,
                         {"k0": num, "n0": n[0], "k1": den, "n1": n[1], "n_pilot": 0}, int(n_samples), alpha, delta,
                         chosen=event, bound=used)
    out.directions = [out]
    return out


# --------------------------------------------------------------------------- pairs and claims
def unpack_pair(pair) -> tuple[Any, Any, str]:
    """``(d0, d1, description)`` of a NeighbourPair or of a plain ``(d0, d1)`` (description ``""``)."""
    if hasattr(pair, "d0") and hasattr(pair, "d1"):
        return pair.d0, pair.d1, getattr(pair, "description", "")
    d0, d1 = pair
    return d0, d1, ""


@dataclass
class AuditResult:
    """The outcome of :func:`audit_pairs`: the worst pair's bound against the claim."""

    claim: Claim
    epsilon_lower: float
    epsilon_point: float
    violation: bool
    worst_pair: int
    worst_description: str
    results: list
    n_samples: int
    alpha: float

    @classmethod
    def of(cls, claim: Claim, results: list, descriptions: list, n_samples: int, alpha: float) -> "AuditResult":
        """The audit of ``claim`` whose pairs gave ``results``: its worst pair is the one with the largest lower
        bound (then point estimate)."""
        worst = max(range(len(results)), key=lambda i: (results[i].epsilon_lower, results[i].epsilon_point))
        lower = results[worst].epsilon_lower
        return cls(claim, lower, results[worst].epsilon_point, bool(lower > claim.epsilon), worst,
                   descriptions[worst], results, int(n_samples), alpha)

    @property
    def worst(self) -> EstimateResult:
        return self.results[self.worst_pair]

    def evidence(self) -> str:
        pair = f"pair {self.worst_pair}" + (f" ({self.worst_description})" if self.worst_description else "")
        return f"{pair}: {self.worst.summary()}; alpha {self.alpha:g} shared over {len(self.results)} pair(s) x 2 directions"

    def evidence_fields(self) -> dict:
        """The worst pair's evidence as data: which pair, the direction, the event, its counts and the
        per-direction alpha of its bound (the text of :meth:`evidence`, structured)."""
        w = self.worst
        return {"pair": int(self.worst_pair), "pair_description": self.worst_description,
                "n_pairs": len(self.results), "direction": w.direction, "event": w.event,
                "counts": {k: int(v) for k, v in w.counts.items()}, "alpha": float(w.alpha) / 2,
                "epsilon_lower": float(w.epsilon_lower), "epsilon_point": float(w.epsilon_point)}

    def mutant_row(self, case, announce: bool = True) -> dict:
        """A row for :attr:`audit.results.report.Report.mutants`; ``case`` has ``id``, ``description``, ``source``
        (``announce=False`` leaves announcing it to the caller)."""
        row = {"id": case.id, "description": case.description, "source": case.source,
               "epsilon_claimed": self.claim.epsilon, "epsilon_lower": self.epsilon_lower,
               "detected": self.violation, "n_samples": self.n_samples, "alpha": self.alpha,
               "evidence": self.evidence(), "evidence_data": self.evidence_fields()}
        if announce:
            progress.finished("mutant", row)
        return row

    def claim_row(self, *, id: str, subject: str, expected: str, announce: bool = True, power: bool = True,
                  **extra) -> dict:
        """A row for :attr:`audit.results.report.Report.claims`; ``announce=False`` leaves announcing it to the caller
        (``audit check`` completes the row first: power, kept state, what decided it). A pass carries its power
        (``power`` and ``detectable_loss``, :func:`audit.engine.estimation.power.pass_power`): an ``inconclusive`` pass
        is one this sample size could not have turned into a violation at 1.25 times the claim, and its
        console line and report say so; ``power=False`` leaves it to the caller."""
        row = {"id": id, "subject": subject, "neighbouring": self.claim.neighbouring,
               "epsilon_claimed": self.claim.epsilon, "delta": self.claim.delta,
               "epsilon_lower": self.epsilon_lower, "epsilon_point": self.epsilon_point,
               "n_samples": self.n_samples, "alpha": self.alpha,
               "verdict": "violation" if self.violation else "pass", "expected": expected,
               "method": "sampled", "detail": self.evidence(), "evidence_data": self.evidence_fields()}
        if power and not self.violation:
            from audit.engine.estimation.power import pass_power

            fields, text = pass_power(self.worst, claim=self.claim.epsilon, delta=self.claim.delta)
            row.update(fields)
            row["detail"] += ("; inconclusive pass (a loss of 1.25 times the claim would likely have passed too): "
                              if fields["power"] == "inconclusive" else "; ") + text
        row.update(extra)
        if announce:
            progress.finished("claim", row)
        return row


def confirm_pairs(pairs: list, seed: int, key, estimate, label: str) -> tuple[list, list]:
    """``(results, descriptions)``: per pair ``i``, ``estimate(i, d0, d1, seed_seq)`` (an :class:`EstimateResult`),
    or its checkpointed copy under ``key(i)``, announced as a step (``label`` says how it was drawn). The pairs'
    seeds are spawned from ``seed``."""
    seeds = np.random.SeedSequence(int(seed)).spawn(len(pairs))
    results, descriptions = [], []
    start = time.perf_counter()
    for i, (pair, s) in enumerate(checkpoint.progress(list(zip(pairs, seeds)), desc="pairs", unit="pair")):
        d0, d1, desc = unpack_pair(pair)
        saved = checkpoint.lookup(key(i))
        t = time.perf_counter()
        if saved is not None:
            results.append(EstimateResult.from_dict(saved))
        else:
            results.append(estimate(i, d0, d1, s))
            checkpoint.store(key(i), results[-1].to_dict())
        descriptions.append(desc)
        progress.step(f"pair {i + 1}/{len(pairs)} {label}: {desc or f'pair {i}'}: ε ≥ {results[-1].epsilon_lower:.4g} "
                      + ("(from the checkpoint)" if saved is not None else f"({time.perf_counter() - t:.1f} s)"),
                      done=i + 1, total=len(pairs), since=start)
    return results, descriptions


def audit_pairs(mechanism, pairs: Sequence, claim: Claim = Claim(epsilon=1.0), *, n_samples: int = 100_000,
                alpha: float = 0.05, seed: int = 0, pilot_fraction: float = 0.2) -> AuditResult:
    """Audit ``claim`` on every pair of neighbouring inputs.

    ``alpha`` is shared by Bonferroni over the pairs (and, inside
    :func:`estimate_epsilon`, over both directions), so ``violation`` is a
    finding at confidence ``1 - alpha`` for the whole call.

    Parameters
    ----------
    mechanism : callable
        ``m(data, rng)``, optionally with ``m.batch(data, n, rng)`` (as for :func:`estimate_epsilon`).
    pairs : sequence of ``(d0, d1)`` or :class:`audit.engine.estimation.neighbours.NeighbourPair`
        The neighbouring inputs to audit.
    claim : Claim
        The claimed ``(epsilon, delta)``.
    n_samples : int, default 100_000
        Outputs drawn per input of each pair, pilot batch included.
    alpha : float, default 0.05
        False-alarm rate of the whole call, shared by the pairs and directions.
    seed : int or SeedSequence, default 0
        The same seed gives the same result.
    pilot_fraction : float, default 0.2
        Share of ``n_samples`` used to choose each pair's event.

    Returns
    -------
    AuditResult
        The worst pair's bound against the claim (``violation``, ``epsilon_lower``, ``evidence()``).
    """
    if not isinstance(claim, Claim):
        raise TypeError(f"claim must be an audit.Claim, got {claim!r}")
    pairs = list(pairs)
    if not pairs:
        raise ValueError("pairs must contain at least one pair of neighbouring inputs, got none")
    check_probability("alpha", alpha, open_low=True, open_high=True)
    a_pair = alpha / len(pairs)
    results, descriptions = confirm_pairs(
        pairs, seed, lambda i: f"pair{i}/{len(pairs)}:n={n_samples}:alpha={alpha}:delta={claim.delta}:seed={seed}"
                               f":pilot={pilot_fraction}",
        lambda i, d0, d1, s: estimate_epsilon(mechanism, d0, d1, n_samples=n_samples, delta=claim.delta,
                                              alpha=a_pair, seed=s, pilot_fraction=pilot_fraction),
        f"confirmed at {n_samples:,} outputs per input")
    return AuditResult.of(claim, results, descriptions, n_samples, alpha)
