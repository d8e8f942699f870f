"""Offline first steps: ``reproduce PAPER --smoke`` runs with no network and no data directory, on a set bundled
with scikit-learn, exits 0 and writes only under ``--out`` (by default a temporary folder: the working tree stays
clean); a smoke run that cannot run writes nothing; ``data list`` names the folder it searched. Deterministic."""
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from audit.__main__ import main
from audit.reproduce import PAPERS

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def offline(tmp_path, monkeypatch):
    """No data directory (``$DPTREE_AUDIT_DATA`` an empty folder hides ../shared/data) and no network."""
    empty = tmp_path / "no-data"
    empty.mkdir()
    monkeypatch.setenv("DPTREE_AUDIT_DATA", str(empty))

    def refuse(*args, **kwargs):
        raise OSError("network disabled in this test")

    monkeypatch.setattr(socket, "socket", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    return empty


@pytest.mark.parametrize("paper", sorted(PAPERS))
def test_smoke_runs_offline_on_a_bundled_set(paper, offline, tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["reproduce", paper, "--smoke", "--out", str(out)]) == 0, capsys.readouterr()
    data = json.loads((out / "reproductions" / f"{paper}.json").read_text())
    assert data["smoke"] and any(c["ours"] is not None for c in data["cells"])
    assert any("sklearn-" in c["row"] + c["column"] for c in data["cells"])
    assert not any(offline.iterdir())  # nothing fetched or written into the data folder


def test_a_smoke_run_that_cannot_run_writes_nothing(offline, tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["reproduce", "lpdt", "--smoke", "--datasets", "ALG", "--out", str(out)]) == 2
    assert "nothing written" in capsys.readouterr().err
    assert not out.exists()  # lpdt's synthetic part alone no longer makes a report that then exits 2


def test_smoke_command_leaves_the_working_tree_clean(tmp_path):
    def status():
        return subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=ROOT,
                              capture_output=True, text=True).stdout

    before = status()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "DPTREE_AUDIT_DATA": str(tmp_path), "TMPDIR": str(tmp_path)}
    proc = subprocess.run([sys.executable, "-m", "audit", "reproduce", "random-trees", "--smoke"], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert str(tmp_path) in proc.stdout and (tmp_path / "dptree-audit" / "smoke" / "reproductions").is_dir()
    assert status() == before


def test_data_list_names_the_folder_it_searched(offline, capsys):
    assert main(["data", "list"]) == 0
    assert f"present in {offline};" in capsys.readouterr().out
    assert main(["data", "list", "--data-dir", str(offline)]) == 0
    assert f"in {offline}" in capsys.readouterr().out
