"""The layout of issue 20: one place per paper, one validation module, old import paths kept, no giant modules."""
from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from reference._moved import MOVED

ROOT = Path(__file__).resolve().parents[1]
#: ../shared/DESIGN.md: "split a module when it passes ~600 lines"
MAX_LINES = 600


def _modules(package: str):
    return sorted((ROOT / package).rglob("*.py"))


@pytest.mark.parametrize("old,new", sorted((k, v) for k, v in MOVED.items() if v is not None))
def test_every_old_import_path_is_the_module_that_moved(old, new):
    """An old path gives the very module object of the new one (setting an attribute on one is seen on the other)."""
    assert importlib.import_module(old) is importlib.import_module(new)


def test_the_documented_public_paths_still_work():
    """The paths README.md and ../shared/DESIGN.md name."""
    from reference.diprime import DiPriMeForestClassifier, DiPriMeForestRegressor
    from reference.lpdt import LPDTRegressor
    from reference.mechanisms import JointExp, Laplace, PermuteAndFlip, TwoSidedGeometric
    from reference.privatree import PrivaTreeClassifier, budget_split
    from reference.random_trees import RandomDecisionForestClassifier

    assert PrivaTreeClassifier.__module__ == "reference.privatree.learner"
    assert Laplace.__module__ == "reference.mechanisms.laplace" and JointExp.__module__ == "reference.mechanisms.jointexp"
    assert all(callable(c) for c in (DiPriMeForestClassifier, DiPriMeForestRegressor, LPDTRegressor, PermuteAndFlip,
                                     TwoSidedGeometric, RandomDecisionForestClassifier, budget_split))


@pytest.mark.parametrize("package", ["reference"])
def test_no_module_passes_the_split_size(package):
    long = {str(p.relative_to(ROOT)): n for p in _modules(package)
            if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert not long, f"modules over {MAX_LINES} lines: {long}"


def test_parameter_checks_are_defined_once():
    """``check_int`` / ``check_choice`` live in reference/validation.py only (they were copied into three learners)."""
    defined = {}
    for p in _modules("reference"):
        for node in ast.walk(ast.parse(p.read_text())):
            if isinstance(node, ast.FunctionDef) and node.name.lstrip("_") in ("check_int", "check_choice", "check_pair"):
                defined.setdefault(node.name.lstrip("_"), []).append(str(p.relative_to(ROOT)))
    assert defined == {name: ["reference/validation.py"] for name in ("check_int", "check_choice", "check_pair")}


def test_reference_never_imports_the_auditor():
    """Data flows one way: learner -> mechanism -> ledger -> auditor -> report."""
    for p in _modules("reference"):
        for node in ast.walk(ast.parse(p.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            assert not any(n == "audit" or n.startswith("audit.") for n in names), p
