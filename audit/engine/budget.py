"""Sample-size budgets shared by the command line, the claims file and the pytest plugin, and what each budget
really draws: :func:`samples_table` states, per budget and per family of rows, the outputs drawn per input."""
from __future__ import annotations

import importlib
import os
import re
from dataclasses import dataclass, field

__all__ = ["BUDGETS", "SAMPLES", "current_budget", "samples_for", "ENV_VAR", "SampleFamily", "samples_table",
           "family_of", "table_text"]

BUDGETS = ("quick", "standard", "full")
#: outputs drawn per input (pilot included) for one claim at each budget
SAMPLES = {"quick": 20_000, "standard": 100_000, "full": 1_000_000}
#: the environment variable the pytest plugin's ``--dp-budget`` sets
ENV_VAR = "DPTREE_AUDIT_BUDGET"


def current_budget(default: str = "standard") -> str:
    """The budget in force: ``$DPTREE_AUDIT_BUDGET`` when set, else ``default``."""
    budget = os.environ.get(ENV_VAR, default)
    if budget not in BUDGETS:
        raise ValueError(f"{ENV_VAR} must be one of {BUDGETS}, got {budget!r}")
    return budget


def samples_for(budget: str | None = None) -> int:
    """Samples per input of one claim at ``budget`` (default: the budget in force)."""
    budget = current_budget() if budget is None else budget
    if budget not in BUDGETS:
        raise ValueError(f"budget must be one of {BUDGETS}, got {budget!r}")
    return SAMPLES[budget]


@dataclass(frozen=True)
class SampleFamily:
    """A family of report rows drawn alike: ``sizes[budget]`` outputs per input (the pilot included; 0 when
    nothing is drawn: an exact law or the ledger decides), for the rows of ``kind`` (claim or mutant) whose id
    matches the regular expression ``rows`` in full."""

    name: str
    rows: str
    sizes: dict = field(hash=False)
    kind: str = "claim"

    def matches(self, kind: str, row_id: str) -> bool:
        return kind == self.kind and re.fullmatch(self.rows, row_id) is not None


def _check_families() -> list[SampleFamily]:
    """``audit check``'s draws: the confirmed pairs at the budget's :data:`SAMPLES`, the screening of the
    candidate pairs at a thirtieth of it, and the growth of an inconclusive pass at 4 and 16 times it."""
    from audit.check import GROW_FACTOR, GROW_STAGES, pilot_samples

    fams = [SampleFamily("check: each confirmed pair (pilot included)", r".*", dict(SAMPLES)),
            SampleFamily("check: screening each candidate dataset of the neighbour search", r"(?!)",
                         {b: pilot_samples(n) for b, n in SAMPLES.items()})]
    fams += [SampleFamily(f"check: growth stage {k} of an inconclusive pass (winning pair only)", r"(?!)",
                          {b: n * GROW_FACTOR ** k for b, n in SAMPLES.items()}) for k in range(1, GROW_STAGES + 1)]
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
        cells = [f"{fam.sizes[b]:,}" if fam.sizes[b] else "0 (exact)" for b in BUDGETS]
        lines.append(f"| {fam.name} | " + " | ".join(cells) + " |")
    return lines
