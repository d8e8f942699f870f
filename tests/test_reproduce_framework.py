"""The reproduction framework: cell arithmetic, files written whole, absent data skipped."""
import json
import math

import numpy as np
import pytest

from audit.reproduce import Reproduction, load_datasets, mean_se, parallel_map, write_reproduction
from audit.reproduce.cells import Cell
from reference import datasets as ds


def test_z_uses_both_standard_errors_and_marks_beyond_two():
    c = Cell("T", "r", "c", paper=0.80, paper_se=0.03, ours=0.70, ours_se=0.04)
    assert c.z == pytest.approx(-0.10 / 0.05)
    c.ours = 0.71  # -1.8 SE
    assert not c.marked
    c.ours = 0.69  # -2.2 SE
    assert c.marked


def test_paper_without_se_and_missing_values():
    assert Cell("T", "r", "c", paper=0.5, ours=0.6, ours_se=0.02).z == pytest.approx(5.0)
    assert Cell("T", "r", "c", paper=None, ours=0.6, ours_se=0.02).z is None
    assert not Cell("T", "r", "c", paper=0.5).marked


def test_price_of_strict_accounting():
    c = Cell("T", "r", "c", paper=0.8, ours=0.75, ours_se=0.03, strict=0.70, strict_se=0.04)
    assert c.price == pytest.approx(-0.05)
    assert c.price_se == pytest.approx(0.05)
    assert Cell("T", "r", "c", paper=0.8, ours=0.75).price is None


def test_mean_se_is_pandas_sem():
    m, se = mean_se([1.0, 2.0, 3.0, 4.0])
    assert m == 2.5 and se == pytest.approx(np.std([1, 2, 3, 4], ddof=1) / 2)
    assert math.isnan(mean_se([1.0])[1])


def test_write_reproduction_writes_md_and_json(tmp_path):
    rep = Reproduction("toy", "a toy paper", cells=[Cell("Table 1", "set", "method", 0.9, 0.01, 0.5, 0.01, 5,
                                                         note="far off on purpose")],
                       skipped=["x: x.csv not found"], unavailable=["Higgs"])
    path = write_reproduction(rep, tmp_path)
    text = path.read_text()
    assert "✗" in text and "far off on purpose" in text and "Higgs" in text and "x.csv not found" in text
    data = json.loads((tmp_path / "reproductions" / "toy.json").read_text())
    assert data["cells"][0]["marked"] is True and data["unavailable"] == ["Higgs"]
    assert not [p for p in (tmp_path / "reproductions").iterdir() if p.name.startswith(".")]


def test_nothing_half_written_when_a_figure_fails(tmp_path):
    def boom(path):
        raise RuntimeError("figure failed")

    rep = Reproduction("toy", "t", cells=[Cell("T", "r", "c", 0.5, None, 0.5, 0.1, 2)])
    rep.figures.append(("bad", boom))
    with pytest.raises(RuntimeError):
        write_reproduction(rep, tmp_path)
    d = tmp_path / "reproductions"
    assert not (d / "toy.md").exists() and not (d / "toy.json").exists()
    assert not [p for p in d.rglob(".*")]


def test_absent_files_are_skipped_not_errors(tmp_path):
    @ds.register("toy-paper", "ghost", files=("ghost.csv",))
    def _ghost(d):  # pragma: no cover - never reached, the file is absent
        raise AssertionError

    rep = Reproduction("toy-paper", "t")
    assert list(load_datasets("toy-paper", ["ghost"], tmp_path, rep)) == []
    assert len(rep.skipped) == 1 and "ghost.csv" in rep.skipped[0]


def test_data_dir_errors_name_the_parameter(tmp_path):
    with pytest.raises(ValueError, match="data_dir="):
        ds.data_dir(tmp_path / "nope")
    with pytest.raises(ValueError, match="name='nope'"):
        ds.load("toy-paper", "nope", tmp_path)


def _square(x):
    return x * x


def test_parallel_map_keeps_order_for_any_jobs():
    assert parallel_map(_square, range(7), jobs=2) == parallel_map(_square, range(7), jobs=1) == [i * i for i in range(7)]


def test_cli_unknown_paper_is_a_usage_error(capsys):
    from audit.__main__ import main

    assert main(["reproduce", "nope"]) == 2
    assert "unknown paper" in capsys.readouterr().err
