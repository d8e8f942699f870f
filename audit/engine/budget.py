"""Sample-size budgets shared by the command line, the claims file and the pytest plugin."""
from __future__ import annotations

import os

__all__ = ["BUDGETS", "SAMPLES", "current_budget", "samples_for", "ENV_VAR"]

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
