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

    assert estimate_epsilon.__module__ == "audit.engine.estimation.estimate"
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
        bad = [n for n in _audit_imports(p) if n.startswith(("audit.results.certify", "audit.oracle"))]
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
        bad = [n for n in _audit_imports(p) if n.startswith(papers + ("audit.results.certify", "audit.oracle"))]
        assert not bad, f"{p.relative_to(ROOT)} imports {bad}"


def test_the_layering_check_sees_a_forbidden_import(tmp_path):
    """The checks above parse imports, including ones inside functions (a check that sees nothing passes)."""
    f = tmp_path / "m.py"
    f.write_text("def f():\n    from audit.results.certify import Domain\n    import audit.oracle.exact_laws\n")
    assert _audit_imports(f) == ["audit.results.certify", "audit.oracle.exact_laws"]


# ----------------------------------------------------------------------------- the house: circles, layers, names
# The import graph of the project's modules (audit/ and reference/), drawn from every import statement, at module
# level and inside functions alike (a lazy import still makes its module depend on the other: it only defers
# when), ``if TYPE_CHECKING:`` blocks included. An import of an old path (``audit._moved``,
# ``reference._moved``) counts as an import of the module that moved.

#: the layers, lowest first: a module imports only modules of its own layer or of a lower one
#: (``docs/design.md`` draws them). A module belongs to the layer of the longest prefix that names it.
LAYERS = (
    ("reference.validation", "reference.papers", "reference.randomness", "reference.fast_path", "reference.ledger",
     "reference.tree", "reference.ties", "reference.data_sources", "reference.datasets", "reference._moved"),
    ("reference.mechanisms",),
    ("reference.privatree", "reference.diprime", "reference.random_trees", "reference.lpdt"),
    ("reference.baselines",),
    ("reference",),
    ("audit.engine",),
    ("audit.results",),
    ("audit.gate", "audit.baselines_law", "audit.privatree", "audit.diprime", "audit.random_trees", "audit.lpdt",
     "audit.mechanisms", "audit.mutants", "audit.oracle", "audit.reproduce", "audit.targets"),
    ("audit", "audit.__main__", "audit.frontends", "audit._moved"),
)



def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _project_modules() -> dict[str, Path]:
    return {_module_name(p): p for package in ("audit", "reference") for p in _modules(package)}


def _moved(name: str) -> str:
    """An old path's module (the name itself when it did not move)."""
    new = {**MOVED, **AUDIT_MOVED}.get(name)
    return new if new else name


def _import_edges(path: Path, name: str, modules) -> list[tuple[str, str, str]]:
    """``(imported module, imported name or "", old path or "")`` for every import of a project module."""
    is_package = path.name == "__init__.py"
    out = []

    def module_of(candidate: str):
        old = candidate if candidate in {**MOVED, **AUDIT_MOVED} else ""
        candidate = _moved(candidate)
        while candidate and candidate not in modules:
            if "." not in candidate:
                return None, old
            candidate = candidate.rsplit(".", 1)[0]
        return candidate, old

    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            for a in node.names:
                mod, old = module_of(a.name)
                if mod:
                    out.append((mod, "", old))
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = name.split(".") if is_package else name.split(".")[:-1]
                package = package[:len(package) - node.level + 1]
                base = ".".join(package + ([base] if base else []))
            if not base.startswith(("audit", "reference")):
                continue
            for a in node.names:
                full = f"{base}.{a.name}"
                if _moved(full) in modules:  # ``from package import module``
                    out.append((_moved(full), "", full if full != _moved(full) else ""))
                else:
                    mod, old = module_of(base)
                    if mod:
                        out.append((mod, a.name, old))
    return [e for e in out if e[0] != name]


def _graph():
    modules = _project_modules()
    return modules, {m: _import_edges(p, m, modules) for m, p in modules.items()}


def _circles(edges: dict[str, set]) -> list[frozenset]:
    """The strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, found, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(frozenset(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def _layer(module: str) -> int:
    best = max((p for layer in LAYERS for p in layer if module == p or module.startswith(p + ".")), key=len)
    return next(i for i, layer in enumerate(LAYERS) if best in layer)


def test_no_import_circle():
    """No two project modules import each other, directly or round a longer circle (the six circles there were:
    the gate's three modules, report and exact_by_size, findings and exact_eps, PrivaTree's claims and theorems,
    PrivaTree's and DiPriMe's learner and batch, whose learners now find their batch in reference.fast_path's
    registry)."""
    _, graph = _graph()
    circles = _circles({m: {e[0] for e in es} for m, es in graph.items()})
    assert not circles, f"import circles: {[sorted(c) for c in circles]}"


def test_no_upward_import():
    """Every import runs down the layers of LAYERS (or stays in its layer): reference never imports audit, the
    engine imports no gate, report or target, the targets never import a front end (the ``audit`` package
    itself included)."""
    _, graph = _graph()
    up = sorted((m, e[0]) for m, es in graph.items() for e in es if _layer(e[0]) > _layer(m))
    assert not up, f"upward imports: {up}"


#: the engine's packages by job, lowest first: each imports only its own package and the ones before it
ENGINE_LAYERS = ("presentation", "runs", "estimation", "comparison", "exact_law", "exact_code")


def test_the_engine_is_grouped_by_job_and_layered():
    """Every engine module sits in one of the packages of ENGINE_LAYERS (none loose in audit/engine/), and every
    import between them runs down that order (docs/design.md's engine table)."""
    modules, graph = _graph()
    engine = [m for m in modules if m.startswith("audit.engine.")]
    loose = [m for m in engine if m.split(".")[2] not in ENGINE_LAYERS]
    assert engine and not loose, f"engine modules outside a package by job: {loose}"
    rank = {m: ENGINE_LAYERS.index(m.split(".")[2]) for m in engine}
    up = sorted((m, e[0]) for m in engine for e in graph[m] if e[0] in rank and rank[e[0]] > rank[m])
    assert not up, f"upward imports inside the engine: {up}"
    text = (ROOT / "docs" / "design.md").read_text()
    for package in ENGINE_LAYERS:
        stems = sorted(p.stem for p in (ROOT / "audit" / "engine" / package).glob("*.py") if p.stem != "__init__")
        row = next(r for r in text.splitlines() if r.startswith(f"| `{package}` |"))
        assert all(f"`{s}`" in row for s in stems), f"docs/design.md's engine row {package} misses one of {stems}"


def test_the_audit_package_shows_its_layers_at_a_glance():
    """audit/ holds packages by job (front ends, results, the gate, the engine, one per paper target) and, loose,
    only the package's own files: its Python API, the command line and the old paths."""
    loose = sorted(p.name for p in (ROOT / "audit").glob("*.py"))
    assert loose == ["__init__.py", "__main__.py", "_moved.py"], loose


def test_every_module_has_a_layer():
    modules = _project_modules()
    assert all(any(m == p or m.startswith(p + ".") for layer in LAYERS for p in layer) for m in modules)


def test_project_modules_import_new_paths():
    """The old paths are for code outside the project; inside it, every import names the module where it is."""
    _, graph = _graph()
    old = sorted((m, e[2]) for m, es in graph.items() for e in es if e[2])
    assert not old, f"imports of old paths: {old}"


def test_no_private_name_crosses_modules():
    """No module imports another module's underscore name: a name used elsewhere is public and documented."""
    _, graph = _graph()
    private = sorted((m, e[0], e[1]) for m, es in graph.items() for e in es
                     if e[1].startswith("_") and not e[1].startswith("__"))
    assert not private, f"private names imported across modules: {private}"


def test_the_graph_sees_lazy_relative_and_old_path_imports(tmp_path):
    """The graph the tests above read is not empty of what they look for: a function-level import, a relative
    import, an old path and a private name each make an edge."""
    pkg = tmp_path / "audit" / "gate"
    pkg.mkdir(parents=True)
    f = pkg / "x.py"
    f.write_text("def f():\n    from .verdict import ALPHA\n    from audit.check import _hidden\n"
                 "    import audit.engine.search\n")
    modules = {"audit.gate.verdict": None, "audit.gate.run": None, "audit.gate.search": None, "audit.gate.x": f}
    assert _import_edges(f, "audit.gate.x", modules) == [
        ("audit.gate.verdict", "ALPHA", ""), ("audit.gate.run", "_hidden", "audit.check"),
        ("audit.gate.search", "", "audit.engine.search")]
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [frozenset("abc")]
    assert _layer("audit.engine.estimation.sampling") < _layer("audit.gate.run") < _layer("audit.frontends.doors")


def test_the_design_page_draws_the_layers_and_the_gate():
    """docs/design.md names every layer's modules (in its layer table) and every module of audit/gate/."""
    text = (ROOT / "docs" / "design.md").read_text()
    table = text[text.index("| layer | modules | imports |"):text.index("```\nreference/")]
    rows = [r for r in table.splitlines()[2:] if r.startswith("|")]
    missing = [p for layer in LAYERS for p in layer
               if p != "reference._moved" and p != "audit._moved" and not any(
                   f"`{p}`" in r or f"`{p.rsplit('.', 1)[-1]}`" in r for r in rows)]
    assert not missing, f"layers missing from docs/design.md: {missing}"
    gate = sorted(str(p.relative_to(ROOT / "audit" / "gate")) for p in (ROOT / "audit" / "gate").rglob("*.py")
                  if p.name != "__init__.py")
    assert all(Path(g).name in text for g in gate), [g for g in gate if Path(g).name not in text]


def test_papers_are_cited_by_name_not_by_seed_file():
    """A module cites a paper by its authors and year (``reference.papers``), never by the file name of its text
    in the project's seed collection, which no reader can open; ``reference/papers.py`` alone keeps that map."""
    import re

    seed = re.compile(r"\d{3}_[0-9a-f]{16}\.txt")
    named = [str(p.relative_to(ROOT)) for package in ("audit", "reference", "benchmarks", "examples", "tests")
             for p in sorted((ROOT / package).rglob("*.py"))
             if seed.search(p.read_text()) and p != ROOT / "reference" / "papers.py" and p.name != "test_layout.py"]
    assert not named, f"modules naming a seed file: {named}"
