"""The all-sizes part of ``python -m audit certify TARGET``: every dataset of any size on the target's grid.

A target's certificate module may declare ``all_sizes()``, a list of
:class:`audit.engine.exact_law.allsizes.AllSizesDomain`; each is certified by branch and bound over boxes of count
vectors (:func:`audit.engine.exact_law.allsizes.certify_all_sizes`) and reported as "for every dataset of any size,
the loss is at most U; a pair of N records attains L", with the exact loss over the datasets of at most
``N`` records for ``N = 1, 2, ...`` as a table and a figure against the ledger's claim.
"""
from __future__ import annotations

import math

__all__ = ["run", "lines", "figure", "to_json", "summary"]


def run(module, progress=None, sizes=None, domains=None) -> list:
    """``[(domain, result, curve, verdict)]`` of the module's ``all_sizes()`` (none when it declares none), or of
    ``domains`` when given; ``sizes(domain)``, when given, names the numbers of records of each curve (default:
    ``1..domain.sizes``)."""
    out = []
    for d in getattr(module, "all_sizes", lambda: [])() if domains is None else domains:
        res, curve = d.run(None if sizes is None else sizes(d))
        out.append((d, res, curve, d.verdict(res)))
    return out


def summary(d, res, verdict: str) -> str:
    """One sentence: the bound, the pair attaining the best loss, the gap and the limit."""
    w = res.worst
    text = (f"{d.name}: for every dataset of any size, the loss is at most {res.upper:.12g} (from the "
            f"{d.upper_method}); a pair of "
            f"{w['records']} records attains {res.lower:.12g} (U - L = {res.gap:.1e}"
            f"{'' if res.complete else ', search budget exhausted'}) against the claim {d.epsilon_claimed:g}: "
            f"{verdict}")
    if res.limit is not None and res.limit >= res.lower:
        text += (f"; the supremum {res.limit:g} is approached as the counts grow without bound, and no pair "
                 f"evaluated reaches it ({res.limit_note})")
    return text + f" [{res.boxes} boxes, {res.seconds:.2f} s, {1e3 * res.seconds_per_box:.2f} ms per box]"


def lines(results: list, first_figure: int) -> list[str]:
    """The certificate's markdown section."""
    if not results:
        return []
    out = ["## Every dataset of any size", "",
           "The release law depends on a dataset only through its count vector (records per cell: bin or grid "
           "point x class). Branch and bound over boxes of count vectors, with an interval of every release's "
           "log-ratio valid on a whole box (each law's own argument, stated in its module: monotone factor bounds "
           "whose extremes at an infinite count are the factor's limits, or the noise's analytic ratio bound), "
           "covers every dataset of any size: the upper bound U holds for every pair, and the pair found attains "
           "L. *certified*: U is at most the claim, up to 1e-9 of floating-point slack (a "
           "supremum equal to the claim, approached but not reached, is certified); *gap*: L exceeds it.", "",
           "*U from*: `law` when U is the largest of the law's own bounds over the boxes, `proof` when the boxes "
           "carry a paper's privacy bound (quoted, stated in the entry) and the search supplies only L.", "",
           "| learner | relation | claim ε | U (every size) | U from | L (pair attaining) | records of the pair | "
           "U - L | limit | boxes | ms per box | verdict |", "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for d, res, _, verdict in results:
        lim = "—" if res.limit is None else f"{res.limit:g}"
        out.append(f"| {d.name} | {d.relation} | {d.epsilon_claimed:g} | {res.upper:.12g} | {d.upper_method} | "
                   f"{res.lower:.12g} | "
                   f"{res.worst['records']} | {res.gap:.1e} | {lim} | {res.boxes} | "
                   f"{1e3 * res.seconds_per_box:.2f} | **{verdict}** |")
    out.append("")
    for k, (d, res, curve, verdict) in enumerate(results):
        w = res.worst
        out += [f"### {d.name} (every size)", "", d.description, "", "- " + summary(d, res, verdict),
                f"- worst pair found: counts {w['c0']} and {w['c1']} (cells: "
                f"{'; '.join(d.law(d.params).cells)}), release `{w['release']}`"]
        if d.upper_note:
            out.append(f"- upper end from the {d.upper_method}: {d.upper_note}")
        if d.note:
            out.append(f"- {d.note}")
        if not curve:
            out.append("")
            continue
        shown = [c for c in curve if c[0] in (1, 2, 3, 4, 5, 6, 8, 10, 14, 20, 30, 40) or c[0] == curve[-1][0]]
        out += ["", "| records (at most) | " + " | ".join(str(n) for n, _, _ in shown) + " | every size |",
                "|---|" + "---|" * (len(shown) + 1),
                "| exact loss | " + " | ".join(f"{lo:.6f}" for _, lo, _ in shown) + f" | ≤ {res.upper:.6f} |", "",
                f"![{d.name}, every size](figures/certificate-{first_figure + k}.png)", "",
                "*The exact loss over every pair whose larger dataset holds at most N records (lower end of its "
                "interval; the width is below 1e-9), against N, with the ledger's claim and the all-sizes bound U.*",
                ""]
    return out


def figure(plt, d, res, curve, path) -> None:
    """The exact loss against the number of records, the claim and the bound (written to ``path``)."""
    from audit.engine.presentation.figures import legend_below

    fig, ax = plt.subplots(figsize=(7, 3.4))
    n = [c[0] for c in curve]
    ax.plot(n, [c[1] for c in curve], marker="o", ms=3, color="#4477aa", label="exact loss, datasets of ≤ N records")
    ax.axhline(d.epsilon_claimed, color="#cc3311", ls="--", label=f"ledger's claim ε = {d.epsilon_claimed:g}")
    ax.axhline(res.upper, color="#228833", ls=":", label=f"bound over every size U = {res.upper:.6f}")
    ax.set_xlabel("N (records of the larger dataset, at most)")
    ax.set_ylabel("exact privacy loss")
    ax.set_title(d.name)
    ax.set_ylim(0, max(d.epsilon_claimed, res.upper) * 1.1)
    fig.tight_layout()
    legend_below(fig, ncol=2)
    fig.savefig(path, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)


def to_json(results: list) -> list:
    return [{"domain": d.name, "description": d.description, "params": d.params, "relation": d.relation,
             "epsilon_claimed": d.epsilon_claimed, "verdict": verdict, **res.to_json(),
             "upper_method": d.upper_method, "upper_note": d.upper_note,
             "loss_by_size": [{"records": n, "lower": lo, "upper": up} for n, lo, up in curve],
             "finite": math.isfinite(res.upper)}
            for d, res, curve, verdict in results]
