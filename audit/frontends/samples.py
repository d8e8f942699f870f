"""What each budget really draws: :func:`samples_table` states, per budget and per family of report rows, the
outputs drawn per input, for ``audit check`` and for each target's ``run`` (declared beside its sample sizes as
``sample_families()``); :func:`family_of` finds a row's family, :func:`table_text` prints the table."""
from __future__ import annotations

import importlib

from audit.engine.runs.budget import BUDGETS, SAMPLES, SampleFamily

__all__ = ["samples_table", "family_of", "table_text"]


def _check_families() -> list[SampleFamily]:
    """``audit check``'s draws: the confirmed pairs at the budget's :data:`SAMPLES` (an estimator's at most: the
    first look of its group-sequential confirmation is a sixteenth), the screening of the candidate pairs in two
    stages (a third of a thirtieth of it, then a thirtieth for the best candidates' datasets), the growth of an inconclusive pass at 4 and 16 times it up to its limit
    (:data:`audit.gate.budget.GROW_MAX`), and the scale family's sizes and the confirmation of its pair at its
    largest size (:data:`audit.gate.budget.SCALE_RECORDS`, :data:`audit.gate.budget.SCALE_CONFIRM_RECORDS`)."""
    from audit.gate.run import pilot_samples
    from audit.gate.budget import GROW_FACTOR, GROW_MAX, GROW_STAGES, SCALE_CONFIRM_RECORDS, SCALE_RECORDS
    from audit.gate.scale import SCALE_PILOT
    from audit.gate.search import SCREEN_TOP, screen_first
    from audit.engine.estimation.sequential import look_sizes

    fams = [SampleFamily("check: each confirmed pair (pilot included; an estimator's at most: its confirmation is "
                         "group-sequential and stops at the first look that decides)", r".*", dict(SAMPLES)),
            SampleFamily("check: the first look of an estimator's group-sequential confirmation", r"(?!)",
                         {b: look_sizes(n)[0] for b, n in SAMPLES.items()}),
            SampleFamily("check: screening each candidate dataset of the neighbour search (first stage)", r"(?!)",
                         {b: screen_first(pilot_samples(n)) for b, n in SAMPLES.items()}),
            SampleFamily(f"check: screening the datasets of the {SCREEN_TOP} best candidates (second stage, in all)",
                         r"(?!)", {b: pilot_samples(n) for b, n in SAMPLES.items()})]
    for kind in ("mechanism", "estimator"):
        fams += [SampleFamily(f"check: growth stage {k} of an inconclusive pass ({kind}s, winning pair only)",
                              r"(?!)", {b: n * GROW_FACTOR ** k if n * GROW_FACTOR ** k <= GROW_MAX[kind][b] else 0
                                        for b, n in SAMPLES.items()}, zero="not drawn")
                 for k in range(1, GROW_STAGES + 1)]
    fams = [f for f in fams if any(f.sizes.values())] + \
        [SampleFamily("check: growth of an estimator's inconclusive pass (only below the budget's outputs per input)",
                      r"(?!)", {b: 0 for b in SAMPLES}, zero="not drawn")]
    fams += [SampleFamily("check: the scale family, each size from 1,000 records to "
                          + " / ".join(f"{SCALE_RECORDS[b]:,}" for b in SAMPLES) + " (estimators)", r"(?!)",
                          {b: SCALE_PILOT for b in SAMPLES}),
             SampleFamily("check: confirming the scale family's pair, at its largest size", r"(?!)",
                          {b: min(n, max(200, SCALE_CONFIRM_RECORDS[b] // (SCALE_RECORDS[b] + 1)))
                           for b, n in SAMPLES.items()})]
    return fams


def samples_table(target: str | None = None) -> list[SampleFamily]:
    """Per family of rows, the outputs drawn per input at each budget.

    ``target`` None gives ``audit check``'s families (a claims file's or the pytest plugin's subject draws the
    same, unless its ``n_samples`` says otherwise); a target name (``python -m audit list``) gives the families
    its ``run`` draws, declared beside its sample sizes as ``sample_families()`` in the target's module.
    ``ValueError`` for a target that declares none.
    """
    if target is None:
        return _check_families()
    from audit.targets import TARGETS

    if target not in TARGETS:
        raise ValueError(f"target must be one of {', '.join(TARGETS)}, got {target!r}")
    declare = getattr(importlib.import_module(TARGETS[target]), "sample_families", None)
    if declare is None:
        raise ValueError(f"target {target!r} declares no sample_families(); its report's n_samples column says "
                         "what each row drew")
    return declare()


def family_of(target: str | None, kind: str, row_id: str) -> SampleFamily:
    """The first family of :func:`samples_table` that holds the row ``row_id`` of ``kind`` (``ValueError``
    when none does)."""
    for fam in samples_table(target):
        if fam.matches(kind, row_id):
            return fam
    raise ValueError(f"no sample family of {target or 'check'} holds the {kind} row {row_id!r}")


def table_text(target: str | None = None) -> list[str]:
    """:func:`samples_table` as Markdown table lines (family, then outputs per input at each budget)."""
    lines = ["| family | " + " | ".join(BUDGETS) + " |", "|---" * (len(BUDGETS) + 1) + "|"]
    for fam in samples_table(target):
        cells = [f"{fam.sizes[b]:,}" if fam.sizes[b] else fam.zero for b in BUDGETS]
        lines.append(f"| {fam.name} | " + " | ".join(cells) + " |")
    return lines
