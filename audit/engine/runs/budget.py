"""Sample-size budgets shared by the command line, the claims file and the pytest plugin, and
:class:`SampleFamily`, the record of what a family of report rows draws per input at each budget (the table of
each target and of ``check``: :mod:`audit.frontends.samples`)."""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

__all__ = ["BUDGETS", "SAMPLES", "current_budget", "samples_for", "ENV_VAR", "SampleFamily"]

BUDGETS = ("quick", "standard", "full")
#: outputs drawn per input (pilot included) for one claim at each budget
SAMPLES = {"quick": 20_000, "standard": 100_000, "full": 1_000_000}
#: the environment variable the pytest plugin's ``--dp-budget`` sets
ENV_VAR = "DPTREE_AUDIT_BUDGET"


def current_budget(default: str = "quick") -> str:
    """The budget in force: ``$DPTREE_AUDIT_BUDGET`` when set, else ``default`` (``quick``, the default of every
    door: ``check``, a claims file, ``assert_private`` and the pytest plugin)."""
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
    matches the regular expression ``rows`` in full; ``zero`` is what the table says where nothing is drawn."""

    name: str
    rows: str
    sizes: dict = field(hash=False)
    kind: str = "claim"
    zero: str = "0 (exact)"

    def matches(self, kind: str, row_id: str) -> bool:
        return kind == self.kind and re.fullmatch(self.rows, row_id) is not None

