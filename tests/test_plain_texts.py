"""Texts a user reads (issue 28 item 5): plain numbers, never numpy reprs, in evidence and error messages."""
import numpy as np
import pytest

from reference.validation import shown


def test_shown_writes_numpy_values_as_python_writes_numbers():
    assert shown(np.int64(0)) == "0" and shown(np.float64(0.5000005000000001)) == "0.5000005000000001"
    assert shown((np.float64(1.0), np.float64(0.0))) == "(1.0, 0.0)"
    assert shown(np.array([0, 0])) == "[0, 0]" and shown({np.int64(1): np.array([0.5])}) == "{1: [0.5]}"
    assert shown("a") == "'a'"


def test_neighbour_descriptions_from_numpy_labels_have_no_numpy_repr():
    from audit.engine.estimation.neighbours import add_remove_pairs, substitute_pairs
    from audit.engine.search import candidate_pairs

    X, y = np.zeros((2, 1)), np.array([1, 0])
    texts = [p.description for p in substitute_pairs(X, y, bounds=[(0, 1)], classes=np.array([0, 1]))]
    texts += [p.description for p in add_remove_pairs(X, y, bounds=[(0, 1)], classes=np.array([0, 1]))]
    texts += [p.description for p in candidate_pairs([(0.0, 1.0)], np.array([0, 1]), relation="substitute",
                                                     n_random=2)]
    assert "record 0 label 1 -> 0" in texts
    assert not [t for t in texts if "np." in t or "array(" in t]


def test_an_exact_witness_is_written_as_a_plain_number():
    from audit.diprime.claims import _exact_row
    from reference.mechanisms import IntervalExponential

    m = IntervalExponential(1.0, (0.0, 1.0))
    row = _exact_row("w", "s", m, (np.array([0.2, 0.4]), np.array([0.2])), 1.0, "pass")
    assert "witness output" in row["detail"] and "np." not in row["detail"]


def _message(fit) -> str:
    with pytest.raises(ValueError) as info:
        fit()
    return str(info.value)


@pytest.mark.parametrize("case", range(9))
def test_diprime_and_random_tree_errors_show_plain_numbers(case):
    from reference.diprime import DiPriMeForestClassifier, DiPriMeForestRegressor
    from reference.random_trees import RandomDecisionForestClassifier

    X, y = np.random.default_rng(0).random((20, 2)), np.arange(20) % 3
    b = [(0.0, 1.0)] * 2
    fits = [
        lambda: DiPriMeForestClassifier(epsilon=1, bounds=b, classes=[0, 1]).fit(X, y),
        lambda: DiPriMeForestClassifier(epsilon=1, bounds=b, classes=np.array([0, 1]),
                                        categories={1: np.array([0, 1])}).fit(X, y % 2),
        lambda: DiPriMeForestClassifier(epsilon=1, bounds=b, classes=np.array([0, 0])).fit(X, y % 2),
        lambda: DiPriMeForestClassifier(epsilon=1, bounds=b, classes=[0, 1], rho=np.float64(2)).fit(X, y % 2),
        lambda: DiPriMeForestRegressor(epsilon=1, bounds=b, target_bounds=(np.float64(1), np.float64(0))).fit(X, y),
        lambda: RandomDecisionForestClassifier(epsilon=1, bounds=b, classes=[0, 1]).fit(X, y),
        lambda: RandomDecisionForestClassifier(epsilon=1, bounds=np.array([(0, 1), (1, 0.0)]),
                                               classes=[0, 1]).fit(X, y % 2),
        lambda: RandomDecisionForestClassifier(epsilon=1, bounds=b, classes=np.array([0, 0])).fit(X, y % 2),
        lambda: RandomDecisionForestClassifier(epsilon=1, bounds=b, classes=[0, 1],
                                               n_estimators=np.float64(0.5)).fit(X, y % 2),
    ]
    text = _message(fits[case])
    assert "np." not in text and "array(" not in text, text


# --------------------------------------------------------------------------- papers by authors, title and year
import ast  # noqa: E402
import re  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
#: what a user cannot look up: the seed collection's file ids, the project's internal notes and issue numbers
INTERNAL = re.compile(r"\d{3}_[0-9a-f]{16}|\(00\d_|\b00\d_\b|seed 00\d|seed slide|\bspecs?\b|\banchors?\b|"
                      r"\[(?:CODE|REC|SEED|VERIFIED)\]|\b[Ii]ssues? #?\d+")


def _user_strings(path: Path):
    """Every string literal of a module except docstrings (which are for developers)."""
    tree = ast.parse(path.read_text())
    docs = {id(n.body[0].value) for n in ast.walk(tree)
            if isinstance(n, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n.body
            and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            yield node.lineno, node.value


#: a table title kept as it is: reproductions match cells to an earlier run's by table name (--baseline)
KEPT = {"V003 Table 2 ([CODE], classification error, ε = 2)"}


def test_no_user_facing_text_cites_a_seed_file_or_an_internal_note():
    found = []
    for package in ("audit", "reference"):
        for path in sorted((ROOT / package).rglob("*.py")):
            if path.name == "papers.py":  # the references section's source, the one place seed files are named
                continue
            for line, text in _user_strings(path):
                if text not in KEPT and INTERNAL.search(text):
                    found.append(f"{path.relative_to(ROOT)}:{line}: {INTERNAL.search(text).group(0)!r} in {text[:80]!r}")
    assert not found, "\n".join(found)


def _cli(*args) -> str:
    proc = subprocess.run([sys.executable, "-m", "audit", *args], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_audit_list_and_reference_list_cite_papers_by_authors_and_year():
    for out in (_cli("list"), _cli("compare", "x:y", "--reference", "list")):
        assert not INTERNAL.search(out), INTERNAL.search(out).group(0)
        assert "Vos et al. 2023" in out and "Ma et al. 2023" in out and "Bojarski et al. 2014" in out


def test_a_report_cites_papers_in_text_and_lists_them_in_full_under_references(tmp_path):
    from audit.results.report import Report, write_report
    from reference.papers import PAPERS, cite

    rep = Report("demo", "quick", 0, title=f"A demo of {cite('lpdt')}")
    rep.theorems.append({"id": "t", "paper": cite("privatree"), "statement": "s", "estimate": 0.5,
                         "ci": [0.4, 0.6], "bound": 1.0, "verdict": "holds", "expected": "holds",
                         "direction": "upper", "interval": "99% normal"})
    md = (write_report(rep, tmp_path) / "report.md").read_text()
    refs = md.index("## References")
    for key in ("privatree", "lpdt"):
        assert PAPERS[key].title in md[refs:]
    assert PAPERS["random-trees"].title not in md  # only the papers the report cites
    assert not SEED_OR_ISSUE.search(md), SEED_OR_ISSUE.search(md).group(0)


#: what a user cannot look up: a seed file of the papers' texts, or a number of the project's issue tracker
SEED_OR_ISSUE = re.compile(r"\d{3}_[0-9a-f]{16}|\bseed files?\b|\bseed collection\b|\bissues? #?\d+", flags=re.I)


def _texts():
    """The README, every documentation page, and every committed report's text (Markdown and JSON)."""
    yield ROOT / "README.md"
    yield ROOT / "CHANGELOG.md"
    yield from sorted((ROOT / "docs").rglob("*.md"))
    for ext in ("md", "json"):
        yield from sorted(p for p in (ROOT / "reports").rglob(f"*.{ext}") if "/." not in str(p.relative_to(ROOT)))


def test_readme_docs_and_committed_reports_name_no_seed_file_and_no_issue():
    found = []
    for path in _texts():
        for m in SEED_OR_ISSUE.finditer(path.read_text()):
            found.append(f"{path.relative_to(ROOT)}: {m.group(0)!r}")
    assert not found, "\n".join(found)


def test_readme_lists_the_papers_and_the_snippets_print():
    readme = (ROOT / "README.md").read_text()
    _, _, papers = readme.partition("\n## Papers\n")
    assert papers and all(p.title in papers.replace("\n  ", " ") for k, p in
                          __import__("reference.papers").papers.PAPERS.items() if p.seed_file)
    pages = [readme] + [p.read_text() for p in sorted((ROOT / "docs").rglob("*.md"))]
    for lang, code in [b for text in pages for b in re.findall(r"```(\w+)\n(.*?)```", text, flags=re.S)]:
        if lang == "python":  # run as a script, a bare expression shows nothing
            bare = [ast.unparse(s) for s in ast.parse(code).body
                    if isinstance(s, ast.Expr) and not isinstance(s.value, (ast.Call, ast.Constant))]
            assert not bare, bare


def test_the_examples_reports_directory_is_ignored():
    proc = subprocess.run(["git", "check-ignore", "-q", "examples/reports/demo/report.md"], cwd=ROOT)
    assert proc.returncode == 0
