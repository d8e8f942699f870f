"""Public tiny domains and the exact loss over every neighbouring pair of one (``audit certify``'s engine).

A *domain* is public and finite: every dataset of at most ``max_records`` records whose features
take values on a small public grid and whose labels are public classes. For every neighbouring
pair of the domain (add/remove: one record added; substitute: one record replaced) the exact
laws of the learner's release on both datasets (``law(params, X, y)``, each probability an
interval ``[lower, upper]`` that contains the implementation's true probability) give the exact
loss ``max_r |ln P(r | D) - ln P(r | D')|`` as an interval (:func:`audit.engine.exact_law.laws.pair_interval`),
the release that attains it, and the privacy profile (:func:`audit.engine.exact_law.laws.profile`).

The front end (:mod:`audit.results.certify`) chooses the domains of a target and writes the certificate; the
papers' packages only describe their domains (:class:`Domain`) and their laws.
"""
from __future__ import annotations

import itertools
import math
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from audit.engine.exact_law.laws import ROUNDING, pair_interval, profile
from reference.randomness import in_current_mode

__all__ = ["CLAIM_SLACK", "Domain", "enumerate_pairs", "certify_domain", "DomainResult", "PROFILE_EPSILONS",
           "dataset_arrays", "describe", "loss_by_size"]


@dataclass
class Domain:
    """A learner configuration, a public tiny domain and the claim to certify (or the gap to measure)."""

    name: str
    description: str
    law: Callable | None  # law(params, X, y) -> object with .lower / .upper dicts (a finite release law)
    params: dict
    grid: list  # per feature, its public values
    classes: list
    max_records: int
    relation: str  # "add-remove" or "substitute"
    epsilon_claimed: float
    expected: str  # "certified" (exact loss <= claim) or "gap" (a published gap: exact loss > claim)
    note: str = ""
    #: for releases with a continuous part (no finite law per dataset): ``pair_law(params, d0, d1, grid=grid)``
    #: -> an object with ``lower``, ``upper``, ``release`` and ``delta(epsilon)``
    pair_law: Callable | None = None


def _datasets(types, max_records):
    for n in range(max_records + 1):
        yield from itertools.combinations_with_replacement(range(len(types)), n)


def enumerate_pairs(domain: Domain) -> list[tuple[tuple, tuple]]:
    """Every neighbouring pair of the domain, as pairs of sorted tuples of record types (each unordered
    pair once)."""
    types = list(itertools.product(*domain.grid, range(len(domain.classes))))
    pairs = set()
    for d in _datasets(types, domain.max_records):
        if domain.relation == "add-remove":
            if len(d) < domain.max_records:
                for t in range(len(types)):
                    pairs.add((d, tuple(sorted(d + (t,)))))
        else:
            for i in set(d):
                rest = list(d)
                rest.remove(i)
                for t in range(len(types)):
                    if t != i:
                        pairs.add(tuple(sorted((d, tuple(sorted(rest + [t]))))))
    return sorted(pairs)


def dataset_arrays(domain: Domain, d: tuple):
    types = list(itertools.product(*domain.grid, range(len(domain.classes))))
    m = len(domain.grid)
    if not d:
        return np.zeros((0, m)), np.array([], dtype=type(domain.classes[0]))
    X = np.array([types[t][:m] for t in d], dtype=float)
    y = np.array([domain.classes[types[t][m]] for t in d])
    return X, y


#: a worst pair's upper end within this of the claim certifies it: each probability of an interval law is widened
#: by the relative slack ``ROUNDING``, so a release whose true ratio is exactly ``e^claim`` (a learner that spends
#: its whole budget, as strict PrivaTree with a binary categorical feature does) shows an upper end of
#: ``claim + ln((1 + R) / (1 - R))``, about ``claim + 2 R``; ``1e-12`` more for the arithmetic of the laws
CLAIM_SLACK = 1e-12 + 2 * ROUNDING


@dataclass
class DomainResult:
    domain: Domain
    n_pairs: int
    n_datasets: int
    losses: list  # (lower, upper) per pair
    worst: dict
    width: float
    seconds: float
    profile: list = field(default_factory=list)
    width_of: str = "probability"  # what ``width`` bounds: a release's probability, or a pair's loss

    @property
    def verdict(self) -> str:
        up = self.worst["upper"]
        lo = self.worst["lower"]
        if up <= self.domain.epsilon_claimed + CLAIM_SLACK:
            return "certified"
        if lo > self.domain.epsilon_claimed:
            return "gap"
        return "inconclusive"

    @property
    def as_expected(self) -> bool:
        return self.verdict == self.domain.expected

    def to_json(self) -> dict:
        return {"domain": self.domain.name, "description": self.domain.description, "params": self.domain.params,
                "grid": self.domain.grid, "classes": self.domain.classes, "max_records": self.domain.max_records,
                "relation": self.domain.relation, "epsilon_claimed": self.domain.epsilon_claimed,
                "expected": self.domain.expected, "verdict": self.verdict, "n_pairs": self.n_pairs,
                "n_datasets": self.n_datasets, "worst": self.worst, "interval_width": self.width,
                "width_of": self.width_of,
                "seconds": self.seconds, "profile": self.profile, "note": self.domain.note,
                "loss_upper_quantiles": _quantiles([u for _, u in self.losses])}


def _quantiles(values) -> dict:
    """Lower empirical quantiles (``inf`` allowed) of the pairs' losses."""
    v = sorted(values)
    return {str(q): v[min(len(v) - 1, int(q * (len(v) - 1)))] for q in (0.5, 0.9, 1.0)} if v else {}


def _law_worker(args):
    domain, d = args
    return d, domain.law(domain.params, *dataset_arrays(domain, d))


#: where the worst pair's privacy profile is reported
PROFILE_EPSILONS = (0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0)


#: with ``jobs > 1``, the work is first run here for this long; a pool is started for the rest only when the
#: rest would take longer than :data:`POOL_WORTH_S` (spawned interpreters importing the audit take a second or
#: two each, more than many small domains need in all)
POOL_PROBE_S = 0.5
POOL_WORTH_S = 4.0


def _map(worker, work: list, jobs: int, progress, desc: str, unit: str, chunksize: int) -> list:
    """``[worker(w) for w in work]`` in order, over a spawn pool of ``jobs`` processes when ``jobs > 1`` and the
    work is worth one (:data:`POOL_PROBE_S`), shown by ``progress`` (a tqdm-like wrapper) when given."""
    head = []
    if jobs > 1:
        start = time.perf_counter()
        while len(head) < len(work) and (not head or time.perf_counter() - start < POOL_PROBE_S):
            head.append(worker(work[len(head)]))
        rest = work[len(head):]
        if rest and (time.perf_counter() - start) / len(head) * len(rest) > POOL_WORTH_S:
            from multiprocessing import get_context

            with get_context("spawn").Pool(jobs) as pool:
                # spawned interpreters start in their own default mode: carry the caller's (reference.randomness)
                it = pool.imap(in_current_mode(worker), rest, chunksize=chunksize)
                return head + list(progress(it, total=len(rest), desc=desc, unit=unit) if progress else it)
    it = map(worker, work[len(head):])
    return head + list(progress(it, total=len(work) - len(head), desc=desc, unit=unit) if progress else it)


def _pair_worker(args):
    domain, d0, d1 = args
    r = domain.pair_law(domain.params, dataset_arrays(domain, d0), dataset_arrays(domain, d1), grid=domain.grid)
    return r.lower, r.upper, r.release


def _certify_pairs(domain: Domain, pairs, start, jobs, progress) -> DomainResult:
    """:func:`certify_domain` through the domain's ``pair_law`` (one exact loss per pair)."""
    results = _map(_pair_worker, [(domain, d0, d1) for d0, d1 in pairs], jobs, progress, f"{domain.name}: pairs",
                   "pair", 8)
    losses = [(lo, hi) for lo, hi, _ in results]
    i = max(range(len(pairs)), key=lambda j: (results[j][1], results[j][0]))
    lo, hi, release = results[i]
    d0, d1 = pairs[i]
    worst = {"lower": lo, "upper": hi, "release": release, "d0": describe(domain, d0), "d1": describe(domain, d1)}
    # the workers return plain numbers; the worst pair's law is built once more here for its profile
    best = domain.pair_law(domain.params, dataset_arrays(domain, d0), dataset_arrays(domain, d1), grid=domain.grid)
    prof = [(e, best.delta(e)) for e in PROFILE_EPSILONS]
    n_datasets = len({d for p in pairs for d in p})
    width = max(h - l for l, h in losses if math.isfinite(h)) if losses else 0.0
    return DomainResult(domain, len(pairs), n_datasets, losses, worst, width, time.perf_counter() - start, prof,
                        width_of="loss")


def certify_domain(domain: Domain, *, jobs: int = 1, progress=None) -> DomainResult:
    """The exact loss of every neighbouring pair of ``domain`` (module docstring)."""
    start = time.perf_counter()
    pairs = enumerate_pairs(domain)
    if domain.pair_law is not None:
        return _certify_pairs(domain, pairs, start, jobs, progress)
    datasets = sorted({d for p in pairs for d in p}, key=lambda d: (len(d), d))
    laws = dict(_map(_law_worker, [(domain, d) for d in datasets], jobs, progress, f"{domain.name}: laws",
                     "dataset", 4))
    losses, worst = [], None
    for d0, d1 in pairs:
        lo, hi, r = pair_interval(laws[d0], laws[d1])
        losses.append((lo, hi))
        if worst is None or hi > worst["upper"]:
            worst = {"lower": lo, "upper": hi, "release": repr(r), "d0": describe(domain, d0),
                     "d1": describe(domain, d1), "pair": (d0, d1)}
    width = max(max(l.upper[r] - l.lower[r] for r in l.upper) for l in laws.values())
    d0, d1 = worst.pop("pair")
    prof = list(zip(PROFILE_EPSILONS, profile(laws[d0], laws[d1], PROFILE_EPSILONS)))
    return DomainResult(domain, len(pairs), len(datasets), losses, worst, width, time.perf_counter() - start, prof)


def loss_by_size(domain: Domain, *, jobs: int = 1) -> tuple[list, DomainResult]:
    """The exact loss of the domain's pairs grouped by the number of records of the larger dataset, as a
    running maximum: ``[(N, lower, upper)]`` for ``N = 1..max_records``, where ``[lower, upper]`` contains the
    largest loss over the pairs whose larger dataset holds at most ``N`` records (:func:`certify_domain`'s
    intervals). Over a listed domain this is a lower bound on the learner's supremum beyond ``max_records``,
    never an all-sizes claim. Returns the curve and the domain's result."""
    res = certify_domain(domain, jobs=jobs)
    worst: dict[int, tuple[float, float]] = {}
    for (d0, d1), (lo, hi) in zip(enumerate_pairs(domain), res.losses):  # the order certify_domain used
        n = max(len(d0), len(d1))
        a, b = worst.get(n, (0.0, 0.0))
        worst[n] = (max(a, lo), max(b, hi))
    curve, lo_run, hi_run = [], 0.0, 0.0
    for n in range(1, domain.max_records + 1):
        a, b = worst.get(n, (0.0, 0.0))
        lo_run, hi_run = max(lo_run, a), max(hi_run, b)
        if n in worst or curve:
            curve.append((n, lo_run, hi_run))
    return curve, res


def describe(domain: Domain, d: tuple) -> str:
    X, y = dataset_arrays(domain, d)
    if not len(y):
        return "no records"
    return ", ".join(f"{tuple(float(v) for v in x)}:{c}" for x, c in zip(X.tolist(), y.tolist()))
