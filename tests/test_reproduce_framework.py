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


def _toy_json(tmp_path, cells, paper="toy"):
    rep = Reproduction(paper, "a toy paper", cells=cells)
    write_reproduction(rep, tmp_path / "old")
    return tmp_path / "old" / "reproductions" / f"{paper}.json"


def test_baseline_comparison_measures_each_change_in_se(tmp_path):
    from audit.reproduce.baseline import compare_with_baseline, load_baseline

    old = _toy_json(tmp_path, [Cell("T", "a", "m", 0.9, None, 0.80, 0.03, 5, strict=0.70, strict_se=0.04),
                               Cell("T", "b", "m", 0.9, None, 0.60, 0.01, 5),
                               Cell("T", "gone", "m", 0.9, None, 0.5, 0.1, 5)])
    new = [Cell("T", "a", "m", 0.9, None, 0.84, 0.04, 5, strict=0.70, strict_se=0.04),  # +0.8 SE; strict 0
           Cell("T", "b", "m", 0.9, None, 0.50, 0.01, 5),  # -7.1 SE
           Cell("T", "new", "m", 0.9, None, 0.5, 0.1, 5)]  # not in the baseline
    cmp = compare_with_baseline(new, load_baseline(old, "toy"), "old run")
    by = {(c.row, c.kind): c for c in cmp.changes}
    assert set(by) == {("a", "ours"), ("a", "strict"), ("b", "ours")}
    assert by[("a", "ours")].z == pytest.approx(0.04 / 0.05)
    assert by[("a", "strict")].z == pytest.approx(0.0)
    assert by[("b", "ours")].z == pytest.approx(-0.10 / math.sqrt(2e-4))
    assert [c.row for c in cmp.beyond(2.0)] == ["b"]
    text = cmp.summary()
    assert "3 numbers matched" in text and "1 beyond 2 SE (1 lower, 0 higher)" in text and "T / b / m" in text


def test_baseline_appears_in_the_written_report(tmp_path):
    from audit.reproduce.baseline import compare_with_baseline, load_baseline

    old = _toy_json(tmp_path, [Cell("T", "a", "m", 0.9, None, 0.80, 0.03, 5)])
    rep = Reproduction("toy", "a toy paper", cells=[Cell("T", "a", "m", 0.9, None, 0.81, 0.03, 5)])
    rep.baseline = compare_with_baseline(rep.cells, load_baseline(old, "toy"), "the old run")
    path = write_reproduction(rep, tmp_path / "new")
    assert "## Change from the baseline run" in path.read_text()
    data = json.loads((tmp_path / "new" / "reproductions" / "toy.json").read_text())
    assert data["baseline"]["changes"][0]["change"] == pytest.approx(0.01)


def test_bad_baseline_is_a_clear_error(tmp_path):
    from audit.reproduce.baseline import load_baseline

    other = _toy_json(tmp_path, [Cell("T", "a", "m", 0.9)], paper="other")
    with pytest.raises(ValueError, match="reproduction of 'other', not of 'toy'"):
        load_baseline(other, "toy")
    junk = tmp_path / "junk.json"
    junk.write_text("not json")
    with pytest.raises(ValueError, match="junk.json.*not a readable reproduction JSON"):
        load_baseline(junk, "toy")
