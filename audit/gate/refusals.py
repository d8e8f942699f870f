"""Refusals in ``audit check``: which exceptions of ``fit`` decide, which are exempt (outside the claim's public
domain: an empty dataset by default), and the verdict text when a refusal separates a pair
(:mod:`audit.gate.outcome` codes the outcomes)."""
from __future__ import annotations

import re
import time

import numpy as np

from audit.gate.inputs import CheckError
from audit.gate.outcome import REFUSAL_KINDS, admit, refusal_kind, refusal_text
from audit.gate.search import data_key

__all__ = ["EXEMPT_DEFAULT", "EXEMPT_FITS", "EXEMPT_SECONDS", "certain_refusals", "crash_text", "evidence_of",
           "exception_verdict", "exceptions_mode", "exempt_list", "exempt_text", "raises"]


#: refusals exempted by default in each exceptions mode (``Subject.exempt``): that a dataset is not empty is
#: public (a claim's domain is n >= 1); ``report`` also exempts datasets of one class
EXEMPT_DEFAULT = {"fail": ("empty",), "report": ("empty", "one-class"), "off": ()}


#: the fewest fits per dataset that decide whether a refusal is certain on it (a refusal that happens only
#: sometimes is an outcome, never exempt); ``audit check`` judges it on as many fits as the audit draws outputs
#: per input (every draw the audit would take): a count, so the same on any machine
EXEMPT_FITS = 5

#: safety cap (CPU seconds per dataset, far above the expected): past it the judgement stops at the fits made, the
#: report names the cut (``coverage_cut``) and the claim's pass reads inconclusive at best
EXEMPT_SECONDS = 300.0


def exceptions_mode(value) -> str:
    """``"fail"``, ``"report"`` or ``"off"`` from a flag value (``True`` is ``"fail"``, ``False`` ``"off"``)."""
    if value is True:
        return "fail"
    if value is False or value is None:
        return "off"
    if value in ("fail", "report", "off"):
        return value
    raise CheckError(f"exceptions must be 'fail', 'report' or 'off', got {value!r}")


def exempt_list(subject) -> tuple:
    """The refusals that do not decide: the subject's (an :class:`audit.gate.run.Subject`) ``exempt``
    (``"none"`` for none), else its mode's default."""
    mode = exceptions_mode(subject.exceptions)
    if subject.exempt is None:
        return EXEMPT_DEFAULT[mode]
    items = [subject.exempt] if isinstance(subject.exempt, str) else list(subject.exempt)
    items = [str(i).strip() for i in items if str(i).strip()]
    if items == ["none"]:
        return ()
    bad = [i for i in items if i not in REFUSAL_KINDS and not i.isidentifier()]
    if bad or "none" in items:
        raise CheckError(f"--exempt must be none or a comma list of {', '.join(REFUSAL_KINDS)} and exception type "
                         f"names, got {subject.exempt!r}")
    return tuple(items)


def certain_refusals(mech, datasets, exempt, fits: int = EXEMPT_FITS, cuts: list | None = None) -> dict:
    """``data_key -> text`` of the datasets that ``fit`` refuses, with an exempt refusal, on every one of ``fits``
    fits (the calibration's and more with other seeds; ``audit check`` passes its draws per input, at least
    :data:`EXEMPT_FITS`): a refusal that happens only sometimes is an outcome of the mechanism, never a statement
    about the domain. When the safety cap :data:`EXEMPT_SECONDS` (CPU per dataset) stops the fits early, the
    judgement rests on the fits made and ``cuts`` (when given) receives a record naming the stage and the cut."""
    fits = max(EXEMPT_FITS, int(fits))
    out = {}
    for data in datasets:
        key = data_key(data)
        seen = raises(mech, data)
        if seen is None or key in out:
            continue
        kind = refusal_kind(data)
        if kind not in exempt and seen.split("(")[0] not in exempt:
            continue
        rng = np.random.default_rng(0xE3E3)
        texts = {seen}
        made, start = 1, time.process_time()
        while made < fits and (made < EXEMPT_FITS or time.process_time() - start < EXEMPT_SECONDS):
            try:
                mech.fit(data, int(rng.integers(0, 2**31 - 1)))
            except BaseException as exc:  # noqa: BLE001 - the subject's exception is what is measured
                texts.add(refusal_text(admit(exc, data)))
                made += 1
            else:
                break
        else:
            what = {"empty": "an empty dataset", "one-class": "a dataset of one class"}.get(kind, "a dataset")
            out[key] = f"fit refuses {what} ({len(data[1])} records) on every one of {made:,} fits: " + \
                " / ".join(sorted(texts))
            if made < fits and cuts is not None:
                cuts.append({"stage": "refusal exemption",
                             "cut": f"{what} ({len(data[1])} records) exempted on {made:,} of {fits:,} fits: the "
                                    f"fits stopped at their {EXEMPT_SECONDS:.0f} s CPU safety cap"})
    return out


def exempt_text(pair, certain) -> str:
    """The words of an audited pair one of whose datasets ``fit`` refuses for certain (``certain``: from
    :func:`certain_refusals`): the pair, the refusal and the side it is on."""
    side = "D" if data_key(pair.d0) in certain else "D'"
    text = certain.get(data_key(pair.d0)) or certain.get(data_key(pair.d1))
    return f"{pair.description}: {text} (on {side})"


def raises(mech, data) -> str | None:
    """What ``fit`` raised on ``data`` during calibration (``"Type('message')"``), or None."""
    return getattr(mech, "raised_on", {}).get(data_key(data))


def crash_text(mech, pair) -> str:
    """The words of a pair that ``fit`` raises on one side of and not on the other (seen in calibration)."""
    a, b = raises(mech, pair.d0), raises(mech, pair.d1)
    which, other = ("D", "D'") if a else ("D'", "D")
    return f"fit raises {a or b} on {which} and not on {other} ({pair.description})"


def evidence_of(event: str, names=None) -> list[str]:
    """The kinds of evidence a deciding event reads, from the event itself: ``"exception"`` (it reads the
    exception flag: fit raised / fit succeeded), ``"float probe"`` (float bit patterns of an output) and
    ``"outputs"`` (it reads a published output: one of the release's coordinate ``names`` after the exception
    flag, a generic coordinate ``x[j]``, a learned score or a set of whole outputs). At least one kind."""
    kinds = []
    if _reads_exception(event):
        kinds.append("exception")
    if "float pattern" in event:
        kinds.append("float probe")
    outputs = list(names or [])[1:]
    rest = re.sub(r"fit (succeeded or raised|raised|succeeded)[^;\]]*(\[raised[^\]]*\])?", "", event)
    if "float probe" not in kinds and (any(n in rest for n in outputs) or re.search(r"x\[\d+\]|score|output in", rest)):
        kinds.append("outputs")
    return kinds or ["outputs"]


def _reads_exception(event: str) -> bool:
    """Whether an event's words read the ``raised`` coordinate (fit raised / fit succeeded)."""
    return "fit raised" in event or "fit succeeded" in event or event.startswith("raised") or "[raised" in event


def exception_verdict(row, extra, plan, res, audited, confirmed) -> None:
    """What the refusals decided: the deciding event read for the ``raised`` coordinate, the outputs' own bound
    beside it, and the exempt refusals on a line of their own."""
    mech = plan["mechanism"]
    extra.append("exceptions in fit are outcomes (type and message)" + (
        f"; exempt refusals (not decisive): {', '.join(plan['exempt'])}" if plan["exempt"] else ""))
    crash = plan["crash_pairs"]
    row["exception_findings"] = [crash_text(mech, p) for p in crash]
    row["exempt_refusals"] = list(plan["exempted"])
    if plan["exempted"]:
        what = "empty dataset" if all("an empty dataset" in t for t in plan["exempted"]) else "exempt refusal"
        extra.append(f"reported, not decisive: the refusal of an {what} on {len(plan['exempted'])} pair(s), e.g. "
                     f"{plan['exempted'][0]}; that a dataset has at least one record is public, so such pairs lie "
                     "outside the claim's domain (--exempt none lets them decide)" if what == "empty dataset" else
                     f"reported, not decisive: {len(plan['exempted'])} pair(s) with a dataset fit always refuses "
                     f"(--exempt {','.join(plan['exempt'])}), e.g. {plan['exempted'][0]}")
    worst_pair = audited[res.worst_pair] if audited and res.worst_pair < len(audited) else None
    event = str(getattr(res.worst, "event", ""))
    through_crash = worst_pair is not None and any(worst_pair is p for p in crash) and _reads_exception(event)
    row["decided_by"] = evidence_of(event, getattr(mech, "names", None)) if res.violation else []
    crash_descriptions = {p.description for p in crash}
    alone = [c for c in confirmed if c["pair"] not in crash_descriptions and not _reads_exception(c["event"])]
    if alone:
        best = max(alone, key=lambda c: c["epsilon_lower"])
        row["outputs_alone"] = best
        alone_text = (f"the outputs alone: ε ≥ {best['epsilon_lower']:.3g} on {best['pair']} "
                      f"({'above' if best['epsilon_lower'] > row['epsilon_claimed'] else 'within'} the claim)")
    else:
        alone_text = "the outputs alone were not confirmed on a pair fit accepts on both sides"
    if res.violation and through_crash:
        extra.insert(0, f"violation through an exception: {crash_text(mech, worst_pair)} (the refusal itself "
                        f"tells them apart; --exempt TYPE exempts a refusal you declare public); {alone_text}")
    elif res.violation:
        extra.insert(0, "violation through the outputs")

