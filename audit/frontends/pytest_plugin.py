"""pytest plugin (registered through the ``pytest11`` entry point).

Adds ``--dp-budget quick|standard|full``: it sets the budget in force
(:func:`audit.engine.runs.budget.current_budget`), which scales the default sample size
of :func:`audit.assert_private` across a whole test suite, and provides the
``dp_samples`` fixture (samples per input at that budget) for tests that
call :func:`audit.audit_pairs` themselves.
"""
from __future__ import annotations

import os

import pytest

from audit.engine.runs.budget import BUDGETS, ENV_VAR, samples_for


def pytest_addoption(parser):
    group = parser.getgroup("dptree-audit")
    group.addoption("--dp-budget", choices=BUDGETS, default=None,
                    help="sample-size budget of the DP audits in this test run (default: quick, as `check`, or "
                         f"${ENV_VAR})")


def pytest_configure(config):
    budget = config.getoption("--dp-budget", default=None)
    if budget:
        os.environ[ENV_VAR] = budget


def pytest_report_header(config):
    budget = os.environ.get(ENV_VAR)
    return f"dptree-audit: DP audit budget {budget or 'quick'} ({samples_for(budget):,} samples per input)"


@pytest.fixture
def dp_samples() -> int:
    """Samples per input at the budget in force."""
    return samples_for()
