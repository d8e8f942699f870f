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

import json
import math
import time
from pathlib import Path

import numpy as np

from audit.engine.runs.destination import kept_aside, tracked
from audit.engine.exact_law.domain import CLAIM_SLACK, PROFILE_EPSILONS, Domain, DomainResult, certify_domain, enumerate_pairs
from audit.engine.exact_law.laws import pair_interval, profile

__all__ = ["Domain", "enumerate_pairs", "certify_domain", "DomainResult", "write_certificate", "pair_interval",
           "profile", "PROFILE_EPSILONS", "CERTIFY_TARGETS"]


def _fmt(x: float) -> str:
    return "inf" if math.isinf(x) else f"{x:.6f}"


def write_certificate(target: str, results: list[DomainResult], out: Path, elapsed: float, seed: int,
                      all_sizes: list = ()) -> Path:
    """``OUT/TARGET/certificate.md``, ``certificate.json`` and ``figures/certificate-*.png``, written
    whole (to temporary names, then renamed) or not at all; ``all_sizes``: the all-sizes results
    (:func:`audit.results.certify_allsizes.run`), a section and a figure each."""
    from audit.results import certify_allsizes

    from audit.engine.presentation.figures import integer_ticks, legend_below, pyplot

    plt = pyplot()
    folder = out / target
    (folder / "figures").mkdir(parents=True, exist_ok=True)
    lines = [f"# Certificate: {target}", "",
             "Exact privacy loss of the learner's release over every neighbouring pair of a tiny public domain "
             "(`python -m audit certify`). A listed-domain certificate holds on the stated domain only; the "
             "all-sizes section (when present) holds for every dataset of any size on the learner's grid; other "
             "inputs remain the sampled auditor's job.", "",
             "## Verdicts", "",
             "| domain | relation | pairs | claim ε | exact loss (worst pair) | interval width | verdict | expected |",
             "|---|---|---|---|---|---|---|---|"]
    for r in results:
        lines.append(f"| {r.domain.name} | {r.domain.relation} | {r.n_pairs} | {r.domain.epsilon_claimed:g} | "
                     f"[{_fmt(r.worst['lower'])}, {_fmt(r.worst['upper'])}] | {r.width:.1e} | **{r.verdict}** | "
                     f"{r.domain.expected} |")
    lines += ["", "Exact loss: `max_r |ln P(r|D) - ln P(r|D')|` over every release `r`, as an interval from the "
              "two laws' probability intervals. *certified*: the upper end is at most the claim, up to "
              f"{CLAIM_SLACK:.0e} of rounding slack (two probabilities' intervals); *gap*: the lower "
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
    lines += certify_allsizes.lines(list(all_sizes), len(results))
    figures = [f"certificate-{k}.png" for k in range(len(results))]
    for k, (d, res, curve, _) in enumerate(all_sizes):
        if curve:  # a learner whose bound is its claim at every size has no curve
            figures.append(f"certificate-{len(results) + k}.png")
            certify_allsizes.figure(plt, d, res, curve, folder / "figures" / (figures[-1] + ".tmp"))
    lines += [f"Seed {seed} (the certificate uses no randomness); {elapsed:.1f} s in all.", ""]
    payload = {"target": target, "seed": seed, "elapsed_s": elapsed, "domains": [r.to_json() for r in results],
               "all_sizes": certify_allsizes.to_json(list(all_sizes))}
    (folder / "certificate.md.tmp").write_text("\n".join(lines))
    (folder / "certificate.json.tmp").write_text(json.dumps(payload, indent=2, default=str))
    for name in figures:
        (folder / "figures" / (name + ".tmp")).replace(folder / "figures" / name)
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
    from audit.results import certify_allsizes

    module = importlib.import_module(f"audit.{args.target.replace('-', '_')}.certificate")
    domains = module.domains()
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
    all_sizes = certify_allsizes.run(module)
    if not args.quiet and args.format == "text":
        for d, res, _, verdict in all_sizes:
            print(certify_allsizes.summary(d, res, verdict) + f" (expected {d.expected})")
    out, note = Path(args.out) if args.out else Path("reports") / ".runs", ""
    if not getattr(args, "replace", False) and any(tracked(out / args.target / f"certificate.{ext}")
                                                   for ext in ("md", "json")):
        out, note = kept_aside(str(out), args.target, "certify", "a committed certificate (tracked by git)",
                               "--replace replaces it")
        out = Path(out)
    if note and args.format == "text":
        print(note, flush=True)
    path = write_certificate(args.target, results, out, time.perf_counter() - start, args.seed, all_sizes)
    ok = all(r.as_expected for r in results) and all(v == d.expected for d, _, _, v in all_sizes)
    if args.format == "json":
        print(json.dumps({"target": args.target, "ok": ok, "report": str(path), **({"note": note} if note else {}),
                          "domains": [r.to_json() for r in results],
                          "all_sizes": certify_allsizes.to_json(all_sizes)}, default=str))
    else:
        n_ok = sum(r.as_expected for r in results) + sum(v == d.expected for d, _, _, v in all_sizes)
        print(f"{n_ok} of {len(results) + len(all_sizes)} verdicts as expected; certificate in {path}")
    return 0 if ok else 1
