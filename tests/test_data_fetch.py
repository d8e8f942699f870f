"""``python -m audit data fetch`` against a local HTTP server, and ``reproduce`` that never replaces a
committed report with a partial run (issue 28 items 1-2). No outside network: the server runs on
127.0.0.1 in a thread and serves files laid out as OWNER/REPO/COMMIT/PATH from a temporary directory.
"""
from __future__ import annotations

import functools
import gzip
import hashlib
import http.server
import threading

import pytest

from audit.__main__ import main
from reference import data_sources, datasets
from reference.data_sources import SOURCES, Source

FISH = "lpdt_fish.csv"  # the smallest LPDT dataset (FIS), for a reproduction on fetched files


def _source(name, content, path):
    return Source(name, hashlib.sha256(content).hexdigest(), len(content), "owner/repo", "0" * 40, path,
                  "test data")


@pytest.fixture()
def server(tmp_path, monkeypatch):
    """Two synthetic files (one stored gzipped) registered as sources, and the real FIS file when the offline
    copy is present, served from a temporary directory."""
    root = tmp_path / "www"
    files = {"plain.txt": (b"a,b\n1,2\n" * 50, "data/plain.txt"), "packed.csv.gz": (b"x,y\n3,4\n" * 80, "data/p.csv")}
    sources = dict(SOURCES)
    for name, (content, path) in files.items():
        sources[name] = _source(name, content, path)
        target = root / "owner/repo" / ("0" * 40) / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)
    shared = datasets.data_dir()
    if shared is not None and (shared / FISH).is_file():
        s = SOURCES[FISH]
        target = root / s.repo / s.commit / s.path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes((shared / FISH).read_bytes())
    monkeypatch.setattr(data_sources, "SOURCES", sources)
    monkeypatch.setattr("audit.results.data_fetch.SOURCES", sources)
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    handler.log_message = lambda *a, **k: None
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", root, files
    httpd.shutdown()


def test_fetch_verifies_and_places_files(server, tmp_path):
    base, _, files = server
    dest = tmp_path / "data"
    assert main(["data", "fetch", "plain.txt", "packed.csv.gz", "--data-dir", str(dest), "--source-url", base]) == 0
    assert (dest / "plain.txt").read_bytes() == files["plain.txt"][0]
    assert gzip.decompress((dest / "packed.csv.gz").read_bytes()) == files["packed.csv.gz"][0]
    assert not list(dest.glob(".*.part"))  # nothing half-written
    assert main(["data", "fetch", "plain.txt", "--data-dir", str(dest), "--source-url", base]) == 0  # present


def test_a_corrupted_file_is_rejected_and_not_placed(server, tmp_path, capsys):
    base, root, _ = server
    (root / "owner/repo" / ("0" * 40) / "data/plain.txt").write_bytes(b"not the file\n")
    dest = tmp_path / "data"
    assert main(["data", "fetch", "plain.txt", "--data-dir", str(dest), "--source-url", base]) == 1
    assert "checksum mismatch" in capsys.readouterr().out and not (dest / "plain.txt").exists()


def test_a_missing_file_is_named_and_the_exit_is_non_zero(server, tmp_path, capsys):
    base, _, _ = server
    assert main(["data", "fetch", "abalone_uci.data", "--data-dir", str(tmp_path / "d"), "--source-url", base]) == 1
    assert "abalone_uci.data: could not be fetched" in capsys.readouterr().out


def test_a_reproduction_runs_on_fetched_files(server, tmp_path):
    base, root, _ = server
    s = SOURCES[FISH]
    if not (root / s.repo / s.commit / s.path).is_file():
        pytest.skip("no offline copy of the benchmark files: the local server cannot serve the FIS dataset")
    dest = tmp_path / "data"
    assert main(["data", "fetch", "FIS", "--paper", "lpdt", "--data-dir", str(dest), "--source-url", base]) == 0
    out = tmp_path / "reports"
    code = main(["reproduce", "lpdt", "--datasets", "FIS", "--smoke", "--data-dir", str(dest), "--out", str(out)])
    assert code == 0 and (out / "reproductions" / "lpdt.md").is_file()


def test_reproduce_without_data_writes_nothing_and_names_the_fetch_command(tmp_path, monkeypatch, capsys):
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.chdir(tmp_path)
    code = main(["reproduce", "random-trees", "--smoke", "--datasets", "CVR", "--data-dir", str(empty)])
    err = capsys.readouterr().err
    assert code == 2 and "python -m audit data fetch --paper random-trees" in err
    assert not (tmp_path / "reports").exists()


def test_every_source_has_a_checksum_and_a_url():
    assert len(SOURCES) >= 50
    assert all(len(s.sha256) == 64 and s.size > 0 and s.url().startswith("https://") for s in SOURCES.values())
