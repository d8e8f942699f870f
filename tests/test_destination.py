"""No command replaces a committed result by accident (audit.engine.runs.destination): ``certify --out DIR`` keeps a
certificate that git tracks and writes beside it, as ``run`` keeps a report of a larger budget; ``--replace``
replaces it; an untracked certificate is simply rewritten. Deterministic."""
import subprocess
from pathlib import Path

import pytest

from audit.__main__ import main
from audit.engine.runs.destination import kept_aside, larger_budget, tracked


def _git(cwd, *args):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                   env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@t", "PATH": "/usr/bin:/bin"})


@pytest.fixture
def repo(tmp_path):
    out = tmp_path / "reports"
    (out / "lpdt").mkdir(parents=True)
    (out / "lpdt" / "certificate.md").write_text("committed\n")
    (out / "lpdt" / "certificate.json").write_text("{}\n")
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-qm", "certificate")
    return out


@pytest.fixture
def one_domain(monkeypatch):
    import audit.lpdt.certificate as cert

    first = cert.domains()[:1]
    monkeypatch.setattr(cert, "domains", lambda: first)


def test_tracked_and_budget_tests(repo, tmp_path):
    assert tracked(repo / "lpdt" / "certificate.md")
    (repo / "lpdt" / "new.md").write_text("x")
    assert not tracked(repo / "lpdt" / "new.md") and not tracked(repo / "lpdt" / "absent.md")
    (tmp_path / "r.json").write_text('{"budget": "full"}')
    assert larger_budget(tmp_path / "r.json", "quick") == "full" and larger_budget(tmp_path / "r.json", "full") is None
    folder, note = kept_aside("reports", "privatree", "quick", "a full-budget report", "choose with --out DIR")
    assert folder == "reports/.runs/quick" and "left as it is" in note and "reports/.runs/quick/privatree/" in note


def test_the_closing_line_names_the_reports_folder_once(tmp_path):
    """The note printed before the run says where it goes; the closing line says it once, not twice."""
    from types import SimpleNamespace

    from audit.engine.runs import progress

    folder, note = kept_aside("reports", "privatree", "quick", "a full-budget report", "choose with --out DIR")
    report = SimpleNamespace(budget="quick", seed=0, elapsed_s=1.0, target="privatree", claims=[], mutants=[],
                             theorems=[], comparisons=[], ok=True, mismatches=lambda: [])
    path = tmp_path / "reports" / ".runs" / "quick" / "privatree"
    note = note.replace("reports/.runs/quick/privatree/", f"{path}/")
    last = progress.summary_lines(report, path, note)[-1]
    assert last.count(str(path)) == 1 and last.endswith("reports/privatree/ holds a full-budget report, left as it is.")


def test_certify_keeps_a_committed_certificate(repo, one_domain, capsys):
    assert main(["certify", "lpdt", "--out", str(repo)]) == 0
    assert (repo / "lpdt" / "certificate.md").read_text() == "committed\n"
    assert (repo / ".runs" / "certify" / "lpdt" / "certificate.md").exists()
    assert "committed certificate (tracked by git), left as it is" in capsys.readouterr().out


def test_certify_replace_and_untracked(repo, one_domain, tmp_path):
    assert main(["certify", "lpdt", "--out", str(repo), "--replace", "--quiet"]) == 0
    assert (repo / "lpdt" / "certificate.md").read_text() != "committed\n"
    loose = tmp_path / "loose"
    (loose / "lpdt").mkdir(parents=True)
    (loose / "lpdt" / "certificate.md").write_text("old\n")
    assert main(["certify", "lpdt", "--out", str(loose), "--quiet"]) == 0
    assert (loose / "lpdt" / "certificate.md").read_text() != "old\n"


def test_the_committed_reports_are_found_beside_the_package():
    """REPORTS is the source checkout's reports/ (it moved with the engine to audit/engine/runs/: one level
    deeper); a wrong level sends `run` to a folder that does not exist and the run fails at its last part."""
    from audit.engine.runs.destination import REPORTS

    assert REPORTS == Path(__file__).resolve().parents[1] / "reports"
    assert (REPORTS / "privatree" / "certificate.json").is_file()
