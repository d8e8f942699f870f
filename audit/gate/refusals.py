"""Refusals in ``audit check``: which exceptions of ``fit`` decide, which are exempt (outside the claim's public
domain: an empty dataset by default), and the verdict text when a refusal separates a pair
(:mod:`audit.gate.outcome` codes the outcomes)."""
from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

import numpy as np

from audit.gate.inputs import CheckError
from audit.gate.outcome import REFUSAL_KINDS, admit, refusal_kind, refusal_text
from audit.gate.search import data_key

__all__ = ["EXEMPT_DEFAULT", "EXEMPT_FITS", "EXEMPT_FIRST", "EXEMPT_SECONDS", "Refusal", "certain_refusals",
           "settle_refusals", "settle_exemptions", "ExemptionRefuted", "exempted_texts", "crash_text", "evidence_of",
           "exception_verdict", "exceptions_mode", "exempt_list", "exempt_text", "raises"]


#: refusals exempted by default in each exceptions mode (``Subject.exempt``): that a dataset is not empty is
#: public (a claim's domain is n >= 1); ``report`` also exempts datasets of one class
EXEMPT_DEFAULT = {"fail": ("empty",), "report": ("empty", "one-class"), "off": ()}


#: the fewest fits per dataset that decide whether a refusal is certain on it (a refusal that happens only
#: sometimes is an outcome, never exempt); ``audit check`` judges it on as many fits as the audit draws outputs
#: per input (every draw the audit would take): a count, so the same on any machine
EXEMPT_FITS = 5

#: the exemption's first look (fits per dataset, at most the judgement's own count): the audit runs on the
#: refusals certain at this look, and the rest of the fits are made only when the claim's verdict rests on the
#: exemption (:func:`settle_refusals`); the fits per side at which the determinism probe first looks
EXEMPT_FIRST = 64

#: safety cap (CPU seconds per dataset, far above the expected): past it the judgement stops at the fits made, the
#: report names the cut (``coverage_cut``) and the audit did not finish (exit status 3)
EXEMPT_SECONDS = 300.0


@dataclass
class Refusal:
    """The exemption judgement on one dataset: the refusals' texts, the fits made (every one refused) and the
    stream the next fits draw their seeds from, so a judgement made in looks is the one made in one go."""

    mech: object = field(repr=False)
    data: object = field(repr=False)
    kind: str | None
    texts: set
    made: int = 1
    rng: np.random.Generator = field(repr=False, default_factory=lambda: np.random.default_rng(0xE3E3))

    def what(self) -> str:
        """The refused dataset in words."""
        kind = {"empty": "an empty dataset", "one-class": "a dataset of one class"}.get(self.kind, "a dataset")
        return f"{kind} ({len(self.data[1])} records)"

    def text(self) -> str:
        """The report's words: what ``fit`` refused and on how many fits."""
        return f"fit refuses {self.what()} on every one of {self.made:,} fits: " + " / ".join(sorted(self.texts))

    def more(self, fits: int, cuts: list | None = None) -> bool:
        """Fit on until ``fits`` fits in all (or the safety cap :data:`EXEMPT_SECONDS`, CPU seconds); False as
        soon as one fit succeeds (the refusal is then an outcome, never exempt). A cap that stops the fits is
        recorded in ``cuts`` (when given), naming the stage and the cut."""
        start = time.process_time()
        while self.made < fits and (self.made < EXEMPT_FITS or time.process_time() - start < EXEMPT_SECONDS):
            try:
                self.mech.fit(self.data, int(self.rng.integers(0, 2**31 - 1)))
            except BaseException as exc:  # noqa: BLE001 - the subject's exception is what is measured
                self.texts.add(refusal_text(admit(exc, self.data)))
                self.made += 1
            else:
                return False
        if self.made < fits and cuts is not None:
            cuts.append({"stage": "refusal exemption",
                         "cut": f"{self.what()} exempted on {self.made:,} of {fits:,} fits: the fits stopped at "
                                f"their {EXEMPT_SECONDS:.0f} s CPU safety cap"})
        return True


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


def certain_refusals(mech, datasets, exempt, fits: int = EXEMPT_FITS, cuts: list | None = None,
                     not_exempt=()) -> dict:
    """``data_key -> Refusal`` of the datasets that ``fit`` refuses, with an exempt refusal, on every one of
    ``fits`` fits (the calibration's and more with other seeds, at least :data:`EXEMPT_FITS`): a refusal that
    happens only sometimes is an outcome of the mechanism, never a statement about the domain. Datasets whose
    key is in ``not_exempt`` (a refusal already seen not to be certain) are left out. When the safety cap
    :data:`EXEMPT_SECONDS` (CPU per dataset) stops the fits early, the judgement rests on the fits made and
    ``cuts`` (when given) receives a record naming the stage and the cut."""
    fits = max(EXEMPT_FITS, int(fits))
    out = {}
    for data in datasets:
        key = data_key(data)
        seen = raises(mech, data)
        if seen is None or key in out or key in not_exempt:
            continue
        kind = refusal_kind(data)
        if kind not in exempt and seen.split("(")[0] not in exempt:
            continue
        refusal = Refusal(mech, data, kind, {seen})
        if refusal.more(fits, cuts):
            out[key] = refusal
    return out


def settle_refusals(refusals: dict, fits: int, cuts: list | None = None) -> list:
    """The second look of a staged exemption: fit each dataset of ``refusals`` (from :func:`certain_refusals` at
    its first look, :data:`EXEMPT_FIRST`) on until ``fits`` fits in all, on the same seed stream, so the judgement
    is the one a single look at ``fits`` gives. Returns the refusals that turned out not to be certain (a fit
    succeeded): the pairs they left out must be audited after all. ``audit check`` settles only a claim whose
    verdict rests on the exemption: a violation found elsewhere stands whether or not a refusal is exempt."""
    return [r for r in refusals.values() if not r.more(max(EXEMPT_FITS, int(fits)), cuts)]


class ExemptionRefuted(Exception):
    """A refusal exempted at the first look turned out not to be certain when the exemption was settled: the claim
    is audited again with it deciding. ``notes``: dataset key -> what was seen."""

    def __init__(self, notes: dict):
        super().__init__("; ".join(notes.values()))
        self.notes = notes


def settle_exemptions(plan: dict, cuts: list | None = None) -> None:
    """Settle a plan's exemptions (:func:`settle_refusals` at the plan's ``draws``), for a claim whose verdict
    rests on them; raises :class:`ExemptionRefuted` when one is not certain."""
    if plan.get("settled") or not plan.get("refusals"):
        return
    refuted = settle_refusals(plan["refusals"], plan["draws"], cuts)
    plan["settled"] = True
    if refuted:
        raise ExemptionRefuted({
            data_key(r.data): f"fit accepted {r.what()} at fit {r.made + 1:,} of the {plan['draws']:,} its refusal "
                              f"was judged on (refused on the first {r.made:,}): the refusal is an outcome, not "
                              "exempt, and the claim was audited again with it deciding" for r in refuted})


def exempted_texts(plan: dict) -> list[str]:
    """The report's words on every pair left out because one of its datasets ``fit`` refuses for certain."""
    return [exempt_text(p, plan["refusals"]) for p in plan.get("outside", ())]


def exempt_text(pair, certain) -> str:
    """The words of an audited pair one of whose datasets ``fit`` refuses for certain (``certain``: from
    :func:`certain_refusals`): the pair, the refusal and the side it is on."""
    side = "D" if data_key(pair.d0) in certain else "D'"
    refusal = certain.get(data_key(pair.d0)) or certain.get(data_key(pair.d1))
    return f"{pair.description}: {refusal.text()} (on {side})"


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
    exempted = exempted_texts(plan)
    row["exempt_refusals"] = exempted
    if exempted:
        what = "empty dataset" if all("an empty dataset" in t for t in exempted) else "exempt refusal"
        extra.append((f"reported, not decisive: the refusal of an {what} on {len(exempted)} pair(s), e.g. "
                      f"{exempted[0]}; that a dataset has at least one record is public, so such pairs lie "
                      "outside the claim's domain (--exempt none lets them decide)" if what == "empty dataset" else
                      f"reported, not decisive: {len(exempted)} pair(s) with a dataset fit always refuses "
                      f"(--exempt {','.join(plan['exempt'])}), e.g. {exempted[0]}") +
                     ("" if plan.get("settled") else
                      f" (judged at the exemption's first look, {EXEMPT_FIRST} fits: the violation does not rest on "
                      f"the exemption, so the rest of its {plan['draws']:,} fits were not made)"))
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

