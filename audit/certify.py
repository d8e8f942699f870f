"""``audit certify TARGET``: the exact privacy loss of a learner over every neighbouring pair of a tiny domain.

A *domain* is public and finite: every dataset of at most ``max_records`` records whose features
take values on a small public grid and whose labels are public classes. For every neighbouring
pair of the domain (add/remove: one record added; substitute: one record replaced) the exact
laws of the learner's release on both datasets (``law(params, X, y)``, each probability an
interval ``[lower, upper]`` that contains the implementation's true probability) give the exact
loss ``max_r |ln P(r | D) - ln P(r | D')|`` as an interval, the release that attains it, and the
privacy profile ``delta(epsilon) <= max over directions of sum_r max(0, upper_D(r) - e^epsilon
lower_D'(r))``.

What a certificate proves, and what it does not: on *this* domain, for the release as
implemented (lattice outputs, exact samplers), no neighbouring pair loses more than the stated
upper end. It says nothing about larger datasets or other grids: those remain the sampled
auditor's job (``audit run``, ``audit check``). The residual delta of floating-point selections
(permute-and-flip's flip probabilities) is accounted separately, in the learner's ledger.
"""
from __future__ import annotations

import itertools
import json
import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from audit.engine.destination import kept_aside, tracked

__all__ = ["Domain", "enumerate_pairs", "certify_domain", "DomainResult", "write_certificate"]


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


def _data(domain: Domain, d: tuple):
    types = list(itertools.product(*domain.grid, range(len(domain.classes))))
    m = len(domain.grid)
    if not d:
        return np.zeros((0, m)), np.array([], dtype=type(domain.classes[0]))
    X = np.array([types[t][:m] for t in d], dtype=float)
    y = np.array([domain.classes[types[t][m]] for t in d])
    return X, y


def _log_ratio(a, b):
    if a <= 0:
        return -math.inf
    if b <= 0:
        return math.inf
    return math.log(a / b)


def _releases(law0, law1) -> list:
    """The releases of either law in the order of their ``repr``: the worst release of a tie, and every sum,
    do not depend on the hash seed."""
    return sorted(set(law0.upper) | set(law1.upper), key=repr)


def pair_interval(law0, law1):
    """``(lower, upper, release)`` of the exact loss between two interval laws."""
    lo_best, hi_best, arg = 0.0, 0.0, None
    for r in _releases(law0, law1):
        l0, u0 = law0.lower.get(r, 0.0), law0.upper.get(r, 0.0)
        l1, u1 = law1.lower.get(r, 0.0), law1.upper.get(r, 0.0)
        lo_best = max(lo_best, _log_ratio(l0, u1), _log_ratio(l1, u0))
        hi = max(_log_ratio(u0, l1), _log_ratio(u1, l0))
        if arg is None or hi > hi_best:
            hi_best, arg = hi, r
    return lo_best, max(hi_best, 0.0), arg


def profile(law0, law1, epsilons) -> list[float]:
    """Upper bounds on ``delta(epsilon)`` (module docstring) at each epsilon."""
    rs = _releases(law0, law1)
    out = []
    for e in epsilons:
        best = 0.0
        for a, b in ((law0, law1), (law1, law0)):
            best = max(best, math.fsum(max(0.0, a.upper.get(r, 0.0) - math.exp(e) * b.lower.get(r, 0.0))
                                       for r in rs))
        out.append(min(best, 1.0))
    return out


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
        if up <= self.domain.epsilon_claimed + 1e-12:
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
    return d, domain.law(domain.params, *_data(domain, d))


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
                it = pool.imap(worker, rest, chunksize=chunksize)
                return head + list(progress(it, total=len(rest), desc=desc, unit=unit) if progress else it)
    it = map(worker, work[len(head):])
    return head + list(progress(it, total=len(work) - len(head), desc=desc, unit=unit) if progress else it)


def _pair_worker(args):
    domain, d0, d1 = args
    r = domain.pair_law(domain.params, _data(domain, d0), _data(domain, d1), grid=domain.grid)
    return r.lower, r.upper, r.release


def _certify_pairs(domain: Domain, pairs, start, jobs, progress) -> DomainResult:
    """:func:`certify_domain` through the domain's ``pair_law`` (one exact loss per pair)."""
    results = _map(_pair_worker, [(domain, d0, d1) for d0, d1 in pairs], jobs, progress, f"{domain.name}: pairs",
                   "pair", 8)
    losses = [(lo, hi) for lo, hi, _ in results]
    i = max(range(len(pairs)), key=lambda j: (results[j][1], results[j][0]))
    lo, hi, release = results[i]
    d0, d1 = pairs[i]
    worst = {"lower": lo, "upper": hi, "release": release, "d0": _describe(domain, d0), "d1": _describe(domain, d1)}
    # the workers return plain numbers; the worst pair's law is built once more here for its profile
    best = domain.pair_law(domain.params, _data(domain, d0), _data(domain, d1), grid=domain.grid)
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
            worst = {"lower": lo, "upper": hi, "release": repr(r), "d0": _describe(domain, d0),
                     "d1": _describe(domain, d1), "pair": (d0, d1)}
    width = max(max(l.upper[r] - l.lower[r] for r in l.upper) for l in laws.values())
    d0, d1 = worst.pop("pair")
    prof = list(zip(PROFILE_EPSILONS, profile(laws[d0], laws[d1], PROFILE_EPSILONS)))
    return DomainResult(domain, len(pairs), len(datasets), losses, worst, width, time.perf_counter() - start, prof)


def _describe(domain: Domain, d: tuple) -> str:
    X, y = _data(domain, d)
    if not len(y):
        return "no records"
    return ", ".join(f"{tuple(float(v) for v in x)}:{c}" for x, c in zip(X.tolist(), y.tolist()))


def _fmt(x: float) -> str:
    return "inf" if math.isinf(x) else f"{x:.6f}"


def write_certificate(target: str, results: list[DomainResult], out: Path, elapsed: float, seed: int) -> Path:
    """``OUT/TARGET/certificate.md``, ``certificate.json`` and ``figures/certificate-*.png``, written
    whole (to temporary names, then renamed) or not at all."""
    from audit.engine.figures import integer_ticks, legend_below, pyplot

    plt = pyplot()
    folder = out / target
    (folder / "figures").mkdir(parents=True, exist_ok=True)
    lines = [f"# Certificate: {target}", "",
             "Exact privacy loss of the learner's release over every neighbouring pair of a tiny public domain "
             "(`python -m audit certify`). A certificate holds on the stated domain only: larger inputs remain "
             "the sampled auditor's job.", "",
             "## Verdicts", "",
             "| domain | relation | pairs | claim ε | exact loss (worst pair) | interval width | verdict | expected |",
             "|---|---|---|---|---|---|---|---|"]
    for r in results:
        lines.append(f"| {r.domain.name} | {r.domain.relation} | {r.n_pairs} | {r.domain.epsilon_claimed:g} | "
                     f"[{_fmt(r.worst['lower'])}, {_fmt(r.worst['upper'])}] | {r.width:.1e} | **{r.verdict}** | "
                     f"{r.domain.expected} |")
    lines += ["", "Exact loss: `max_r |ln P(r|D) - ln P(r|D')|` over every release `r`, as an interval from the "
              "two laws' probability intervals. *certified*: the upper end is at most the claim; *gap*: the lower "
              "end exceeds it (a published privacy gap, measured exactly); *inconclusive*: the interval straddles "
              "the claim.", ""]
    for k, r in enumerate(results):
        d = r.domain
        fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 3.4))
        ups = np.array([u for _, u in r.losses])
        finite = ups[np.isfinite(ups)]
        a1.hist(finite, bins=30, color="#4477aa")
        a1.axvline(d.epsilon_claimed, color="#cc3311", ls="--", label=f"claim ε = {d.epsilon_claimed:g}")
        n_inf = int(np.sum(~np.isfinite(ups)))
        a1.set_title(f"exact loss over {r.n_pairs} pairs" + (f" ({n_inf} infinite, not shown)" if n_inf else ""))
        a1.set_xlabel("exact loss (upper end)")
        a1.set_ylabel("pairs")
        integer_ticks(a1.yaxis)
        eps, dl = np.array(r.profile, dtype=float).T
        pos = dl > 0
        a2.semilogy(eps[pos], dl[pos], marker="o", color="#228833", label="δ(ε) > 0 (upper bound)")
        floor = float(dl[pos].min()) / 100 if pos.any() else 1e-12
        if (~pos).any():  # a zero cannot sit on a log axis: an open marker on the floor instead
            a2.plot(eps[~pos], np.full((~pos).sum(), floor), ls="none", marker="o", mfc="none", color="#228833",
                    label=f"δ(ε) = 0 (drawn at {floor:.0e})")
        a2.axvline(d.epsilon_claimed, color="#cc3311", ls="--", label=f"claim ε = {d.epsilon_claimed:g}")
        a2.set_title("worst pair: privacy profile δ(ε)")
        a2.set_xlabel("ε")
        a2.set_ylabel("δ(ε)")
        fig.suptitle(d.name)
        fig.tight_layout()
        legend_below(fig, ncol=3)
        name = f"certificate-{k}.png"
        fig.savefig(folder / "figures" / (name + ".tmp"), format="png", dpi=110, bbox_inches="tight")
        plt.close(fig)
        lines += [f"## {d.name}", "", d.description, "",
                  f"- parameters: `{json.dumps(d.params)}`",
                  f"- domain: features on {d.grid}, classes {d.classes}, at most {d.max_records} records; "
                  f"{r.n_datasets} datasets, {r.n_pairs} {d.relation} pairs ({r.seconds:.1f} s)",
                  f"- worst pair: D = [{r.worst['d0']}] and D' = [{r.worst['d1']}]; release `{r.worst['release']}`; "
                  f"exact loss in [{_fmt(r.worst['lower'])}, {_fmt(r.worst['upper'])}] against the claim "
                  f"{d.epsilon_claimed:g}: **{r.verdict}**",
                  f"- largest width of a {r.width_of} interval: {r.width:.1e}",
                  "- privacy profile of the worst pair (upper bounds): " +
                  ", ".join(f"δ({e:g}) ≤ {v:.2e}" for e, v in r.profile)]
        if d.note:
            lines.append(f"- {d.note}")
        lines += ["", f"![{d.name}](figures/{name})", "",
                  "*Left: histogram of the upper end of the exact loss over all pairs (no error bars: exact values). "
                  "Right: the worst pair's privacy profile, an upper bound computed from the two exact laws.*", ""]
    lines += [f"Seed {seed} (the certificate uses no randomness); {elapsed:.1f} s in all.", ""]
    payload = {"target": target, "seed": seed, "elapsed_s": elapsed, "domains": [r.to_json() for r in results]}
    (folder / "certificate.md.tmp").write_text("\n".join(lines))
    (folder / "certificate.json.tmp").write_text(json.dumps(payload, indent=2, default=str))
    for k in range(len(results)):
        (folder / "figures" / f"certificate-{k}.png.tmp").replace(folder / "figures" / f"certificate-{k}.png")
    (folder / "certificate.json.tmp").replace(folder / "certificate.json")
    (folder / "certificate.md.tmp").replace(folder / "certificate.md")
    return folder / "certificate.md"


#: targets whose learners have exact laws (module ``audit.TARGET.certificate`` with ``domains()``)
CERTIFY_TARGETS = ("privatree", "random-trees", "lpdt", "diprime")


def command(args, progress, error) -> int:
    """``python -m audit certify TARGET``: every domain of the target, a verdict per domain; exit 0 when all
    are as expected (``error(msg)`` prints and returns 2)."""
    import importlib

    if args.target not in CERTIFY_TARGETS:
        return error(f"certify: no exact law for target {args.target!r} yet; available: {', '.join(CERTIFY_TARGETS)}")
    domains = importlib.import_module(f"audit.{args.target.replace('-', '_')}.certificate").domains()
    start = time.perf_counter()
    results = []
    for d in domains:
        r = certify_domain(d, jobs=args.jobs, progress=progress)
        results.append(r)
        if not args.quiet and args.format == "text":
            w = r.worst
            print(f"{d.name}: {r.n_pairs} {d.relation} pairs, exact loss of the worst pair in "
                  f"[{w['lower']:.6g}, {w['upper']:.6g}] against the claim {d.epsilon_claimed:g}: {r.verdict} "
                  f"(expected {d.expected}; {r.seconds:.1f} s)")
    out, note = Path(args.out) if args.out else Path("reports") / ".runs", ""
    if not getattr(args, "replace", False) and any(tracked(out / args.target / f"certificate.{ext}")
                                                   for ext in ("md", "json")):
        out, note = kept_aside(str(out), args.target, "certify", "a committed certificate (tracked by git)",
                               "--replace replaces it")
        out = Path(out)
    if note and args.format == "text":
        print(note, flush=True)
    path = write_certificate(args.target, results, out, time.perf_counter() - start, args.seed)
    ok = all(r.as_expected for r in results)
    if args.format == "json":
        print(json.dumps({"target": args.target, "ok": ok, "report": str(path), **({"note": note} if note else {}),
                          "domains": [r.to_json() for r in results]}, default=str))
    else:
        print(f"{sum(r.as_expected for r in results)} of {len(results)} verdicts as expected; certificate in {path}")
    return 0 if ok else 1
