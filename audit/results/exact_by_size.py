"""The section "Exact ε by number of records" of the ``run`` reports of privatree, diprime and random-trees.

Deterministic (no sampling): the exact loss of each strict learner that has a count law, over every dataset of any
size on its public grid (the all-sizes certificate, :mod:`audit.results.certify_allsizes`: branch and bound over the count
vectors, :mod:`audit.engine.exact_law.allsizes`), with the exact loss over the datasets of at most ``N`` records beside the
ledger's ε; and the published accounting's gaps, from the exact laws of the certificates' listed domains
(:func:`audit.engine.exact_law.domain.loss_by_size`: every neighbouring pair of the domain, grouped by the number of records of
the larger dataset, as a running maximum up to ``Nmax``; a lower bound on the supremum beyond ``Nmax``, not an
all-sizes claim). One table, one figure (:func:`figure`) and a ``report.json`` list (``exact_by_size``).

A fresh ``run`` computes the section (:func:`entries`, cached per target in this process); :func:`splice` writes it
into a committed report in the place a fresh run puts it, without sampling again.
"""
from __future__ import annotations

import dataclasses
import importlib
import json
import math
import time
from functools import lru_cache
from pathlib import Path

from audit.results.findings import REPORTS

__all__ = ["SIZES", "GAPS", "TITLE", "FIGURE", "entries", "section_lines", "figure", "splice", "jsonable"]

TITLE = "## Exact ε by number of records"
FIGURE = "figures/exact-by-size.png"

#: the numbers of records N at which the strict learners' loss over the datasets of at most N records is computed
#: (each a branch and bound capped at N; the certificates compute every N up to 40)
SIZES = (1, 2, 3, 4, 5, 6, 8, 10, 14, 20, 30, 40)

#: a strict configuration searched to a looser tolerance than its certificate's, (target, all-sizes domain) -> tol:
#: the substitution forest's search to the certificate's 2e-5 takes 15 s (its leaf laws are slow to enumerate),
#: to 5e-5 a fraction of a second; the bound U (the claim, analytic) is the same
LOOSER_TOL = {("random-trees", "strict, substitution"): 5e-5}


@dataclasses.dataclass(frozen=True)
class Gap:
    """A published gap's listed domain (``domain``, a name in ``audit.TARGET.certificate.domains()``), enumerated up
    to ``max_records`` records; ``params``: parameters changed from the certificate's (stated in ``why``)."""

    domain: str
    max_records: int
    params: tuple = ()
    why: str = ""


#: the papers' gaps per target (their exact laws: ``audit.TARGET.exact_law``): PrivaTree's stopping rule
#: (Algorithm 1, line 7) and per-feature node budget (Theorem 3, Eqs. 9-10); DiPriMe's count-scaled regression leaf
#: ``Laplace(S / (N eps))`` (V003 section 3, and DP-ERT's, section 4); the random forest's ``Lap(k / epsilon)`` leaf
#: noise claimed under substitution (Bojarski et al. section 5.2)
GAPS: dict[str, tuple[Gap, ...]] = {
    "privatree": (
        Gap("paper stopping (G2)", 6),
        Gap("paper per-feature budget (G1)", 2, (("epsilon", 8.0),),
            "at epsilon 8 instead of the certificate's 2: the noisy counts' law is summed out in a fraction of a "
            "second there, against 75 s at epsilon 2 and 3 s at epsilon 4 (the certificate's value at 2 records, "
            "2.137 against 2, shows the same gap)"),
    ),
    "diprime": (Gap("paper: count-scaled regression leaf", 6), Gap("paper: DP-ERT, count-scaled regression leaf", 6)),
    "random-trees": (Gap("paper noise under substitution", 6),),
}


#: the learner's name in the section (the strict learners': :data:`audit.results.exact_eps.EXACT_TARGETS`)
PAPER_LEARNER = {"privatree": "PrivaTree", "diprime": "DiPriMe", "random-trees": "random decision forest"}


def _certificate(target: str):
    return importlib.import_module(f"audit.{target.replace('-', '_')}.certificate")


def certificate_name(target: str) -> str:
    """The committed certificate of ``target`` as a report names it (its path in the repository)."""
    return f"reports/{target}/certificate.json"


def _committed_all_sizes(target: str) -> dict:
    """The committed certificate's all-sizes entries of ``target`` by domain name."""
    path = REPORTS / target / "certificate.json"
    return {e["domain"]: e for e in json.loads(path.read_text()).get("all_sizes", [])}


def _matches(d, entry: dict | None, sizes: list[int]) -> bool:
    """Whether the committed all-sizes ``entry`` was computed for exactly the domain ``d`` (its description,
    parameters, relation, claim, tolerance and upper method), closed its search, and holds the curve at every
    size in ``sizes``: then it is the entry a run computes (tests/test_exact_by_size.py holds the two
    together)."""
    if entry is None:
        return False
    same = (entry.get("description") == d.description
            and entry.get("params") == json.loads(json.dumps(d.params))
            and entry.get("relation") == d.relation
            and float(entry.get("epsilon_claimed", math.nan)) == float(d.epsilon_claimed)
            and float(entry.get("tol", math.nan)) == float(d.tol)
            and entry.get("upper_method") == d.upper_method and entry.get("upper_note") == d.upper_note
            and entry.get("complete") is True)
    return same and set(sizes) <= {p["records"] for p in entry.get("loss_by_size", [])}


def _strict(target: str, committed: bool = False) -> list[dict]:
    """The all-sizes entries of the target's strict learners (Algorithm and theorem cited in each count law);
    with ``committed``, each entry the committed certificate holds for exactly its domain (:func:`_matches`) is
    read from it instead of searched again (marked with ``source``, the certificate's name)."""
    from audit.results import certify_allsizes
    from audit.results.exact_eps import EXACT_TARGETS

    def sizes(d):
        return [n for n in SIZES if n <= (d.sizes or max(SIZES))]

    certified = _certificate(target).all_sizes()
    cert_tol = {d.name: d.tol for d in certified}
    domains = [dataclasses.replace(d, tol=LOOSER_TOL.get((target, d.name), d.tol)) for d in certified if d.in_run]
    stored = _committed_all_sizes(target) if committed else {}
    taken = {d.name for d in domains if _matches(d, stored.get(d.name), sizes(d))}
    computed = {d.name: (d, res, curve, verdict)
                for d, res, curve, verdict in certify_allsizes.run(None, sizes=sizes,
                                                                   domains=[d for d in domains if d.name not in taken])}
    committed_entries = stored if committed else None  # the certificate, read at most once
    out = []
    for c in certified:
        name = f"{dict(EXACT_TARGETS)[target]}, {c.name.removeprefix('strict').lstrip(', ')}"
        if c.name in computed:
            d, res, curve, verdict = computed[c.name]
            e = certify_allsizes.to_json([(d, res, curve, verdict)])[0]
            out.append({"kind": "strict", "learner": name, **e, "seconds_total": res.seconds + res.curve_seconds,
                        "why": f"searched to within {d.tol:g} of the bound U (the certificate: {cert_tol[d.name]:g}, "
                               "the same U)" if d.tol != cert_tol[d.name] else ""})
            continue
        if c.name in taken:  # a quick run: the committed certificate's entry, computed for exactly this domain
            e = dict(stored[c.name])
            e["loss_by_size"] = [p for p in e["loss_by_size"] if p["records"] in SIZES]
            out.append({"kind": "strict", "learner": name, **e, "seconds_total": 0.0,
                        "source": certificate_name(target),
                        "why": f"taken from the committed certificate {certificate_name(target)} (computed for "
                               f"exactly this domain by `python -m audit certify {target}`; its search took "
                               f"{float(e['seconds']):.0f} s), not searched in this run; the standard and full "
                               "budgets search it"})
            continue
        if committed_entries is None:  # an entry too slow for a run: the committed certificate's, as certify wrote it
            committed_entries = _committed_all_sizes(target)
        if c.name not in committed_entries:
            raise ValueError(f"reports: {REPORTS / target / 'certificate.json'} has no all-sizes entry {c.name!r} "
                             f"(python -m audit certify {target} --replace)")
        e = dict(committed_entries[c.name])
        e["loss_by_size"] = [p for p in e["loss_by_size"] if p["records"] in SIZES]
        out.append({"kind": "strict", "learner": name, **e, "seconds_total": 0.0,
                    "why": f"read from the committed certificate (python -m audit certify {target}; its search "
                           f"took {float(e['seconds']):.0f} s)"})
    return out


def _gaps(target: str) -> list[dict]:
    """The gaps' exact loss by number of records (:func:`audit.engine.exact_law.domain.loss_by_size`)."""
    from audit.engine.exact_law.domain import loss_by_size

    listed = {d.name: d for d in _certificate(target).domains()}
    out = []
    for g in GAPS.get(target, ()):
        base = listed[g.domain]
        params = dict(base.params, **dict(g.params))
        claim = dict(g.params).get("epsilon", base.epsilon_claimed)  # a changed epsilon is the changed claim
        d = dataclasses.replace(base, params=params, max_records=g.max_records, epsilon_claimed=claim)
        start = time.perf_counter()
        curve, res = loss_by_size(d)
        changed = "".join(f" Here {k} = {v:g}." for k, v in g.params)
        out.append({"kind": "gap", "learner": f"{PAPER_LEARNER[target]}, {d.name}", "domain": d.name,
                    "description": d.description + changed,
                    "params": params, "relation": d.relation, "epsilon_claimed": d.epsilon_claimed,
                    "grid": d.grid, "classes": d.classes, "max_records": d.max_records, "n_pairs": res.n_pairs,
                    "upper": res.worst["upper"], "lower": res.worst["lower"], "why": g.why,
                    "seconds_total": time.perf_counter() - start,
                    "loss_by_size": [{"records": n, "lower": lo, "upper": up} for n, lo, up in curve],
                    "scope": f"every {d.relation} pair of datasets of at most {d.max_records} records with "
                             f"features on {d.grid} and classes {d.classes} ({res.n_pairs} pairs); beyond "
                             f"{d.max_records} records the value is a lower bound on the supremum"})
    return out


@lru_cache(maxsize=None)
def _entries(target: str, committed: bool) -> tuple:
    return tuple(_strict(target, committed) + _gaps(target))


def entries(target: str, committed: bool = False) -> list[dict]:
    """The section's entries of ``target``: its strict learners' all-sizes results and curves, then its gaps'.

    Computed once per target in a process (a module-level cache), in about 30 s for ``privatree`` (PrivaTree at
    depth 3 is most of it), 5 s for ``diprime`` and 1 s for ``random-trees`` on one core; an entry marked
    ``in_run=False`` (:class:`audit.engine.exact_law.allsizes.AllSizesDomain`) is read from the committed certificate.

    Parameters
    ----------
    target : {"privatree", "diprime", "random-trees"}
    committed : bool
        Read each strict entry from the committed certificate (``reports/TARGET/certificate.json``) when it holds
        an entry computed for exactly that domain (the same description, parameters, relation, claim, tolerance and
        upper method, a closed search, and the curve at every size shown), instead of searching again: the quick
        budget's shortcut (the entry is the one a search gives, held by tests/test_exact_by_size.py). Such an
        entry carries ``source`` (the certificate's name), and the section marks it ``(committed)``; the others,
        and every gap, are computed.

    Returns
    -------
    list of dict
        ``report.json``'s ``exact_by_size``: ``kind`` ("strict" or "gap"), ``learner``, ``relation``,
        ``epsilon_claimed`` (the ledger's ε), ``upper`` and ``lower`` (strict: U over every size and the L of the
        pair found, with ``worst``, ``limit`` and ``verdict``; gap: the listed domain's worst pair), and
        ``loss_by_size``: ``[{"records": N, "lower", "upper"}]``, the exact loss over the datasets of at most N
        records.
    """
    return [dict(e) for e in _entries(target, bool(committed))]


def jsonable(rows: list[dict]) -> list:
    """The entries as ``report.json`` stores them (an infinite loss is the string ``"inf"``)."""
    from audit.engine.presentation.render import json_ready as _jsonable

    return _jsonable(rows)


def _loss(x) -> str:
    x = float(x)
    return "∞" if math.isinf(x) else f"{x:.4f}"


def _cell(point: dict) -> str:
    """A loss interval as one number where its width is below the shown digits, else ``[lower, upper]``."""
    lo, up = float(point["lower"]), float(point["upper"])
    if math.isinf(lo) or abs(up - lo) < 5e-5:
        return _loss(lo)
    return f"[{_loss(lo)}, {_loss(up)}]"


def _mark(e: dict) -> str:
    """`` (committed)`` after the numbers of an entry read from the committed certificate in a quick run."""
    return " (committed)" if e.get("source") else ""


def _committed_sentence(rows: list[dict]) -> str:
    """The sentence naming the certificate the entries marked ``(committed)`` were read from (none when none)."""
    sources = sorted({e["source"] for e in rows if e.get("source")})
    if not sources:
        return ""
    n = sum(1 for e in rows if e.get("source"))
    return (f" Marked (committed): {n} strict {'entry' if n == 1 else 'entries'} taken from the committed "
            f"certificate {', '.join(sources)}, computed for exactly the same domain (description, parameters, "
            "relation, claim, tolerance), not searched in this run (the quick budget; the standard and full budgets "
            "search them).")


def section_lines(rows: list[dict]) -> list[str]:
    """The Markdown section: heading, the all-sizes table, the loss-by-size table, the figure and its caption.

    Parameters
    ----------
    rows : list of dict
        :func:`entries`, as stored (:func:`jsonable`) or not.

    Returns
    -------
    list of str
        The section's lines (none when ``rows`` is empty).
    """
    if not rows:
        return []
    strict = [e for e in rows if e["kind"] == "strict"]
    seconds = sum(float(e["seconds_total"]) for e in rows)
    out = [TITLE, "",
           "Computed from the exact laws, not sampled. Strict learners: for every dataset of any size on the public "
           "grid, the loss is at most U, and a pair of the stated number of records attains L (branch and bound over "
           "the count vectors, as in the certificates; *U from*: `law` when U is the law's own bound over every box, "
           "`proof` when it is a paper's bound, quoted); where the supremum is only approached as the counts grow "
           "without bound, the limit says so. The published gaps: every neighbouring pair of the listed datasets of "
           "at most Nmax records, grouped by the number of records of the larger dataset; the loss at N is the "
           "largest over the datasets of at most N records, and beyond Nmax it is a lower bound on the supremum, not "
           f"a claim about every size. {seconds:.1f} s in all." + _committed_sentence(rows), ""]
    if strict:
        out += ["| learner | neighbours | ledger ε | U (every size) | U from | L (pair attaining) | records of the pair | "
                "limit | verdict |", "|---|---|---|---|---|---|---|---|---|"]
        for e in strict:
            lim = "—" if e.get("limit") is None else f"{float(e['limit']):g}"
            out.append(f"| {e['learner']} | {e['relation']} | {float(e['epsilon_claimed']):g} | "
                       f"{float(e['upper']):.6f}{_mark(e)} | {e.get('upper_method', '—')} | "
                       f"{float(e['lower']):.6f}{_mark(e)} | "
                       f"{e['worst']['records']:,} | {lim} | {e['verdict']} |")
        out.append("")
    sizes = sorted({p["records"] for e in rows for p in e["loss_by_size"]})
    out += ["Exact loss over the datasets of at most N records (N: records of the larger dataset of a pair; "
            "– : not computed at that N):", "",
            "| learner | kind | neighbours | ledger ε | " + " | ".join(f"N ≤ {n}" for n in sizes) + " | beyond |",
            "|---|---|---|---|" + "---|" * (len(sizes) + 1)]
    for e in rows:
        at = {p["records"]: p for p in e["loss_by_size"]}
        if e["kind"] == "strict":
            beyond = f"≤ {float(e['upper']):.4f} (every size){_mark(e)}"
        else:
            last = _loss(e["loss_by_size"][-1]["lower"])
            beyond = f"{'' if last == '∞' else '≥ '}{last} (Nmax {e['max_records']})"
        out.append(f"| {e['learner']} | {'strict' if e['kind'] == 'strict' else 'paper gap'} | {e['relation']} | "
                   f"{float(e['epsilon_claimed']):g} | " + " | ".join(_cell(at[n]) if n in at else "–" for n in sizes)
                   + f" | {beyond} |")
    out += [""] + [f"- {e['learner']}: " + "; ".join(t for t in (e.get("scope"), e.get("why")) if t) + "."
                   for e in rows if e.get("scope") or e.get("why")]
    out += ["", f"![exact loss by number of records]({FIGURE})", "",
            "*The exact loss over the datasets of at most N records against N, one curve per strict learner "
            "(all-sizes searches capped at N) and per paper gap (listed pairs up to Nmax), the ledger's ε dashed "
            "(one line per value, labelled); an infinite loss is drawn at the top edge with an upward triangle. Exact "
            "values, no error bars: each point is the lower end of the loss's interval (the table shows the interval "
            "where it is wider than the digits shown).*", ""]
    return out


def figure(rows: list[dict], path) -> None:
    """One figure: the exact loss against the number of records, a curve per entry, the ledger's ε dashed.

    Parameters
    ----------
    rows : list of dict
        :func:`entries` (stored or not): the figure needs nothing else, so it can be redrawn from a ``report.json``.
    path : str or Path
        Where the PNG is written.
    """
    from audit.engine.presentation.figures import integer_ticks, legend_below, pyplot

    plt = pyplot()
    fig, ax = plt.subplots(figsize=(8, 4))
    finite = [float(p["lower"]) for e in rows for p in e["loss_by_size"] if math.isfinite(float(p["lower"]))]
    finite += [float(e["epsilon_claimed"]) for e in rows]
    top = max(finite) * 2.0
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for k, e in enumerate(rows):
        c = colours[k % len(colours)]
        n = [p["records"] for p in e["loss_by_size"]]
        y = [float(p["lower"]) for p in e["loss_by_size"]]
        shown = [v if math.isfinite(v) else top for v in y]
        ax.plot(n, shown, marker="o", ms=3, color=c,
                label=f"{e['learner']} ({e['relation']}; ε {float(e['epsilon_claimed']):g})")
        inf_n = [m for m, v in zip(n, y) if not math.isfinite(v)]
        if inf_n:
            ax.plot(inf_n, [top] * len(inf_n), ls="none", marker="^", ms=8, color=c)
            ax.annotate("∞", (inf_n[0], top), textcoords="offset points", xytext=(-12, -4), color=c)
    right = max(p["records"] for e in rows for p in e["loss_by_size"])
    for k, v in enumerate(sorted({float(e["epsilon_claimed"]) for e in rows})):  # one dashed line per ledger ε
        ax.axhline(v, color="k", ls="--", lw=1, label="the ledger's ε" if k == 0 else None)
        ax.annotate(f"ε = {v:g}", (right, v), textcoords="offset points", xytext=(4, 3), fontsize=8)
    ax.set_yscale("log")
    ax.set_ylim(min(v for v in finite if v > 0) / 2, top * 1.3)
    ax.set_xlabel("N (records of the larger dataset, at most)")
    ax.set_ylabel("exact privacy loss (log scale)")
    ax.set_title("exact loss by number of records")
    integer_ticks(ax.xaxis)
    fig.tight_layout()
    legend_below(fig, ncol=2)
    fig.savefig(path, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)


def _without_section(text: str) -> str:
    if TITLE not in text:
        return text
    head, rest = text.split(TITLE, 1)
    nxt = rest.find("\n## ")
    return head + (rest[nxt + 1:] if nxt >= 0 else "")


def splice(folder, target: str | None = None, rows: list[dict] | None = None) -> list[dict]:
    """Write the section into a written report where a fresh run puts it, without sampling again.

    The section goes after the privacy claims, before the next section (an older copy is replaced);
    ``report.json`` gets ``exact_by_size`` after ``claims``; the figure is drawn.

    Parameters
    ----------
    folder : str or Path
        The report's folder (``report.md``, ``report.json``, ``figures/``).
    target : str, optional
        Default: the report's own target.
    rows : list of dict, optional
        The entries to write (default: :func:`entries` of the target, computed now).

    Returns
    -------
    list of dict
        The entries written, as ``report.json`` stores them.

    Raises
    ------
    ValueError
        When the report has no privacy-claims section to put the section after.
    """
    folder = Path(folder)
    data = json.loads((folder / "report.json").read_text())
    target = target or data["target"]
    rows = jsonable(entries(target) if rows is None else rows)
    md = _without_section((folder / "report.md").read_text())
    claims = md.find("\n## Privacy claims")
    nxt = md.find("\n## ", claims + 1)
    if claims < 0 or nxt < 0:
        raise ValueError(f"{folder / 'report.md'}: no privacy-claims section to put the section after")
    md = md[:nxt + 1] + "\n".join(section_lines(rows)) + "\n" + md[nxt + 1:]
    new = {}
    for k, v in data.items():
        if k != "exact_by_size":
            new[k] = v
        if k == "claims":
            new["exact_by_size"] = rows
    (folder / "figures").mkdir(exist_ok=True)
    # whole or not at all: every file to a temporary name first, then each renamed into place
    written = {folder / FIGURE: None, folder / "report.json": json.dumps(new, indent=2) + "\n",
               folder / "report.md": md}
    tmp = {path: path.with_name(path.name + ".tmp") for path in written}
    try:
        figure(rows, tmp[folder / FIGURE])
        for path, text in written.items():
            if text is not None:
                tmp[path].write_text(text)
    except BaseException:
        for t in tmp.values():
            t.unlink(missing_ok=True)
        raise
    for path, t in tmp.items():
        t.replace(path)
    return rows
