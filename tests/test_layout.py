"""The layout of issue 20: one place per paper, one validation module, old import paths kept, no giant modules."""
from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from audit._moved import MOVED as AUDIT_MOVED
from reference._moved import MOVED

ROOT = Path(__file__).resolve().parents[1]
#: ../shared/DESIGN.md: "split a module when it passes ~600 lines"
MAX_LINES = 600


def _modules(package: str):
    return sorted((ROOT / package).rglob("*.py"))


@pytest.mark.parametrize("old,new", sorted((k, v) for k, v in {**MOVED, **AUDIT_MOVED}.items() if v is not None))
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
    from audit import Claim, assert_private, audit_pairs, estimate_epsilon, learner_mechanism

    assert estimate_epsilon.__module__ == "audit.engine.estimate"
    assert all(callable(c) for c in (Claim, assert_private, audit_pairs, learner_mechanism))
    assert all(callable(c) for c in (DiPriMeForestClassifier, DiPriMeForestRegressor, LPDTRegressor, PermuteAndFlip,
                                     TwoSidedGeometric, RandomDecisionForestClassifier, budget_split))


@pytest.mark.parametrize("package", ["reference", "audit"])
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


def _imports(path: Path) -> list[str]:
    names = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.append(node.module)
    return names


def test_the_engine_knows_no_target_and_no_front_end():
    """audit/engine/ imports only itself, reference/ and third-party code (no arrow back up)."""
    allowed = ("audit.engine",)
    for p in _modules("audit/engine"):
        bad = [n for n in _imports(p) if n.startswith("audit") and not n.startswith(allowed)]
        assert not bad, f"{p.relative_to(ROOT)} imports {bad}"


@pytest.mark.parametrize("target", ["privatree", "diprime", "random_trees", "lpdt", "mechanisms", "oracle"])
def test_each_target_lives_in_one_package(target):
    """Its claims module is the one `python -m audit run` loads, and it sits in audit/<target>/."""
    from audit.targets import TARGETS, load

    name = target.replace("_", "-")
    assert TARGETS[name] == f"audit.{target}.claims"
    module = load(name)
    assert Path(module.__file__).parent == ROOT / "audit" / target and callable(module.run)


#: the papers' packages: each composes its learners' laws from the engine's generic pieces
PAPERS = ("privatree", "diprime", "random_trees", "lpdt", "mechanisms")


def _audit_imports(path: Path) -> list[str]:
    return [n for n in _imports(path) if n == "audit" or n.startswith("audit.")]


@pytest.mark.parametrize("paper", PAPERS)
def test_no_paper_package_imports_the_certify_front_end_or_the_oracle(paper):
    """The law layering: the generic law pieces are in audit/engine (laws, domain), so a paper's package never
    reaches up to the ``certify`` front end or across to the ``oracle`` target."""
    for p in _modules(f"audit/{paper}"):
        bad = [n for n in _audit_imports(p) if n.startswith(("audit.certify", "audit.oracle"))]
        assert not bad, f"{p.relative_to(ROOT)} imports {bad}"


@pytest.mark.parametrize("paper", PAPERS)
def test_a_papers_laws_import_no_other_papers_package(paper):
    """A paper's law modules (exact laws, cell laws, certificates) compose engine pieces and the baselines' laws,
    never another paper's."""
    others = tuple(f"audit.{q}" for q in PAPERS if q != paper)
    for p in _modules(f"audit/{paper}"):
        if p.stem in ("exact_law", "cell_law", "certificate", "regression_leaf"):
            bad = [n for n in _audit_imports(p) if n.startswith(others)]
            assert not bad, f"{p.relative_to(ROOT)} imports {bad}"


def test_the_baselines_laws_import_no_paper_package():
    """audit/baselines_law composes the engine's pieces only (the papers' certificates import it, not the reverse)."""
    papers = tuple(f"audit.{q}" for q in PAPERS)
    for p in _modules("audit/baselines_law"):
        bad = [n for n in _audit_imports(p) if n.startswith(papers + ("audit.certify", "audit.oracle"))]
        assert not bad, f"{p.relative_to(ROOT)} imports {bad}"


def test_the_layering_check_sees_a_forbidden_import(tmp_path):
    """The checks above parse imports, including ones inside functions (a check that sees nothing passes)."""
    f = tmp_path / "m.py"
    f.write_text("def f():\n    from audit.certify import Domain\n    import audit.oracle.exact_laws\n")
    assert _audit_imports(f) == ["audit.certify", "audit.oracle.exact_laws"]
