"""DiPriMe's reproduction: the paper tables, the depth rule, the loaders' preprocessing, the smoke pipeline."""
import json
import math

import numpy as np
import pandas as pd
import pytest

from audit.reproduce import diprime as rd
from audit.reproduce import reproduce
from reference import datasets as ds

# ----------------------------------------------------------------------------- paper numbers


def test_every_paper_cell_has_a_row_a_column_and_a_number():
    n = 0
    for table, rows in rd.PAPER_TABLES.items():
        assert table in rd.TABLE_DATASETS
        for method, cols in rows.items():
            assert method and cols
            for dataset, entry in cols.items():
                assert dataset in rd.TABLE_DATASETS[table] and dataset in rd.LABEL
                value = entry if isinstance(entry, float) else entry[0]
                assert isinstance(value, float) and value >= 0.0
                n += 1
    # V003 T1 8x5, V003 T2 9x5, V000 T1 5x3, V000 T2 6x3 (spec/diprime.md section 3.4)
    assert n == 40 + 45 + 15 + 18


def test_depth_rule_reproduces_every_depth_printed_in_v003_table_1():
    paper_n = {"parkinsons": 5875, "appliances": 19735, "traffic": 48204, "turbine": 36733, "flight": 800000}
    full = {"RF", "ERT", "Median", "DP-ERT"}
    for method, cols in rd.PAPER_TABLES[rd.T1_003].items():
        for dataset, (_, _, depth) in cols.items():
            n_train = math.floor(0.9 * paper_n[dataset])
            if method in full:
                ours = rd.tree_depth(n_train, 25)
            elif method == "DP-RF":
                ours = rd.tree_depth(n_train, 25, branching=5)
            else:
                ours = rd.tree_depth(n_train, 25, n_trees=10)
            assert ours == depth, (method, dataset)
    assert rd.tree_depth(1234, 10, n_trees=10) == 3  # Banknote's d_part (spec 3.1 table)
    assert rd.tree_depth(2 ** 7 * 25, 25) == 7  # an exact power is not rounded down


def test_depth_rule_rejects_bad_input_by_name():
    with pytest.raises(ValueError, match="n_train"):
        rd.tree_depth(0, 25)
    with pytest.raises(ValueError, match="branching"):
        rd.tree_depth(100, 25, branching=1)
    with pytest.raises(ValueError, match="min_occupancy"):
        rd.tree_depth(100, 2.5)


def test_paper_half_width_becomes_the_standard_error_of_ten_runs():
    v = np.random.default_rng(3).normal(size=10)
    hw = rd.T_975_9 * np.std(v) / math.sqrt(10)  # the authors' interval (std with ddof=0)
    assert rd.paper_se(hw) == pytest.approx(pd.Series(v).sem())
    assert rd.paper_se(None) is None


# ----------------------------------------------------------------------------- loaders
SHAPES = {"parkinsons": (5875, 19, {1: 2}), "appliances": (19735, 27, {25: 5}),
          "traffic": (48204, 8, {0: 12, 5: 11, 6: 7}), "turbine": (36733, 10, {}), "banknote": (1372, 4, {}),
          "credit": (30000, 23, {1: 2, 2: 7, 3: 4}), "robot": (5456, 24, {})}
#: MANIFEST section 2.3 class counts
CLASS_COUNTS = {"banknote": [762, 610], "credit": [23364, 6636], "robot": [2205, 3251]}


def _load(name):
    d = ds.data_dir()
    if d is None:
        pytest.skip("no data directory (reference.datasets.data_dir() is None)")
    try:
        return ds.load("diprime", name, d)
    except ds.DatasetUnavailable as exc:
        pytest.skip(f"file absent: {exc}")


@pytest.mark.parametrize("name", list(SHAPES))
def test_loader_shapes_codes_and_facts(name):
    data = _load(name)
    n, d, cats = SHAPES[name]
    # every row is complete (MANIFEST 1.2: complete-row count = row count), so nothing is dropped
    assert data.X.shape == (n, d) and data.y.shape == (n,)
    assert not any("dropped" in note and "rows" in note for note in data.notes)
    assert {j: len(v) for j, v in data.categories.items()} == cats
    for j, codes in data.categories.items():
        assert set(np.unique(data.X[:, j])) <= set(codes) and codes == tuple(float(k) for k in range(len(codes)))
    for j, (lo, hi) in data.bounds.items():
        assert lo == data.X[:, j].min() and hi == data.X[:, j].max()
    assert data.facts_from_data
    if data.task == "regression":
        assert data.target_bounds == (0.0, 1.0)
        assert data.y.max() == pytest.approx(1.0) and data.y.min() >= 0.0
        if name != "parkinsons":  # min-max scaled; Parkinson's is y / max(y)
            assert data.y.min() == 0.0
    else:
        assert np.bincount(data.y).tolist() == CLASS_COUNTS[name]


def test_derived_calendar_features():
    data = _load("appliances")
    month, day = data.feature_names.index("Month"), data.feature_names.index("Day")
    assert "date" not in data.feature_names and month in data.categories
    assert data.bounds[day] == (1.0, 31.0)
    traffic = _load("traffic")
    assert traffic.feature_names == ["holiday", "temp", "rain_1h", "snow_1h", "clouds_all", "weather_main",
                                     "weekday", "hour"]
    assert traffic.bounds[7] == (0.0, 23.0)
    # 'None' (no holiday) is a category, not a missing value: 11 holidays + None
    assert any("'None'" in note for note in traffic.notes) and len(traffic.categories[0]) == 12


# ----------------------------------------------------------------------------- pipeline
def test_smoke_run_writes_a_report_with_cells(tmp_path):
    if ds.data_dir() is None:
        pytest.skip("no data directory (reference.datasets.data_dir() is None)")
    rep = reproduce("diprime", smoke=True, out=tmp_path, seed=1)
    ran = [c for c in rep.cells if c.ours is not None]
    if not ran:
        pytest.skip(f"no DiPriMe smoke dataset present: {rep.skipped}")
    assert all(c.n_runs == rd.SMOKE_RUNS for c in ran)
    strict_rows = {c.row for c in ran if c.strict is not None}
    assert {"DiPriMe", "DP-ERT"} <= strict_rows or {"DiPriMe", "DP-ERT (0/1 error)"} <= strict_rows
    assert all(c.note for c in rep.cells if c.marked)
    assert all(c.note for c in rep.cells if c.ours is None)  # not implemented / not available, said so
    data = json.loads((tmp_path / "reproductions" / "diprime.json").read_text())
    assert data["smoke"] and len(data["cells"]) == len(rep.cells) and data["unavailable"]
    assert "Smoke run" in (tmp_path / "reproductions" / "diprime.md").read_text()


def test_absent_files_are_skipped(tmp_path):
    rep = rd.reproduce(["parkinsons", "banknote"], data_dir=tmp_path, smoke=True)  # the paper's sets: files needed
    assert len(rep.skipped) == 2 and rep.cells == []
