"""LPDT's reproduction: Table 2 and the synthetic numbers, the loaders, the splits, the smoke pipeline."""
import json
import math

import numpy as np
import pytest

from audit.reproduce import lpdt as rl
from audit.reproduce import reproduce
from reference import datasets as ds
from reference.data_loaders.lpdt import FILES, SHAPES

# ----------------------------------------------------------------------------- paper numbers


def test_every_table2_cell_has_a_row_a_column_and_a_number():
    assert len(rl.PAPER_TABLE2) == 14 * (1 + 2 * 5)  # spec 8.3: 14 datasets, DT + 5 methods at two epsilons
    rows = {r for r, _ in rl.PAPER_TABLE2}
    assert rows == set(rl.DATASETS) == set(FILES)
    missing = sorted((r, c) for (r, c), v in rl.PAPER_TABLE2.items() if v is None)
    # "-": APHIST and PHIST were not run on BUI and MUS (d >= 32)
    assert missing == sorted((r, f"ε = {e:g}: {m}") for r in ("BUI", "MUS") for e in (2, 6)
                             for m in ("APHIST", "PHIST"))
    for (row, column), value in rl.PAPER_TABLE2.items():
        assert value is None or value > 0, (row, column)
    assert rl.PAPER_TABLE2[("CPU", "ε = 6: LPDT-V")] == 61.5 and rl.PAPER_TABLE2[("ABA", "DT")] == 5.67


def test_synthetic_table_has_every_epsilon_from_2_to_10():
    assert sorted(rl.PAPER_SYNTHETIC) == list(range(2, 11))
    means = [rl.PAPER_SYNTHETIC[e][0] for e in range(2, 11)]
    assert all(m > 1.0 for m in means)  # the test MSE includes the unit noise variance
    assert means[-1] < means[0]


def test_phist_grid_follows_the_skip_rule():
    assert rl.phist_bins(1) == (1, 2, 3, 4, 5, 6)
    assert rl.phist_bins(32) == () and rl.phist_bins(68) == ()
    assert rl.phist_bins(12) == (1, 2)  # 3^12 > 2^16 cells
    for d in range(1, 32):
        for b in rl.phist_bins(d):
            assert d * math.log(b) <= 30 * math.log(2) + 1e-9 and b ** d <= 2 ** 16


def test_split_sizes_and_disjointness():
    pri, pub, test = rl.split(1000, 3)
    assert len(test) == 200 and len(pub) == 80 and len(pri) == 720
    assert len(set(pri) | set(pub) | set(test)) == 1000
    assert all(np.array_equal(a, b) for a, b in zip(rl.split(1000, 3), (pri, pub, test)))


def test_synthetic_model_is_the_codes():
    X, y = rl.synthetic_data(np.random.default_rng(0), 20000)
    assert X.shape == (20000, 1) and 0 <= X.min() and X.max() <= 1
    resid = y - np.sin(16 * X[:, 0])
    assert abs(resid.mean()) < 0.05 and abs(resid.var() - 1.0) < 0.05  # N(0, 1) noise; ~4 SE margins


# ----------------------------------------------------------------------------- loaders
def _load(name):
    d = ds.data_dir()
    if d is None:
        pytest.skip("no data directory (reference.datasets.data_dir() is None)")
    try:
        return ds.load("lpdt", name, d)
    except ds.DatasetUnavailable as exc:
        pytest.skip(f"file absent: {exc}")


#: spec 8.2's label variances (the "var" column), 2 significant digits
VARIANCES = {"ABA": 10.4, "AIR": 47.6, "ALG": 0.25, "CCP": 291, "CON": 279, "CPU": 334, "HOU": 84, "RED": 0.65,
             "WHI": 0.78}


@pytest.mark.parametrize("name", sorted(FILES))
def test_loader_shapes_scaling_and_facts(name):
    data = _load(name)
    assert data.X.shape == SHAPES[name] and data.y.shape == (SHAPES[name][0],)
    assert data.task == "regression" and data.facts_from_data
    assert np.isfinite(data.X).all() and data.X.min() >= 0.0 and data.X.max() <= 1.0
    varying = data.X.max(axis=0) > data.X.min(axis=0)
    assert np.allclose(data.X[:, varying].min(axis=0), 0.0) and np.allclose(data.X[:, varying].max(axis=0), 1.0)
    assert data.target_bounds == (data.y.min(), data.y.max())
    if name in VARIANCES:
        assert data.y.var() == pytest.approx(VARIANCES[name], rel=0.03)


# ----------------------------------------------------------------------------- pipeline
def test_smoke_run_writes_a_report_with_both_accountings(tmp_path):
    if ds.data_dir() is None:
        pytest.skip("no data directory (reference.datasets.data_dir() is None)")
    rep = reproduce("lpdt", smoke=True, out=tmp_path, seed=1)
    ran = [c for c in rep.cells if c.ours is not None]
    assert any(c.table == rl.TS for c in ran)  # the synthetic part needs no file
    lpdt_cells = [c for c in ran if c.column.endswith("LPDT-M")]
    assert lpdt_cells and all(c.strict is not None for c in lpdt_cells)
    assert all(c.note for c in rep.cells if c.marked or c.ours is None)
    data = json.loads((tmp_path / "reproductions" / "lpdt.json").read_text())
    assert data["smoke"] and len(data["cells"]) == len(rep.cells) and data["unavailable"]
    assert "Smoke run" in (tmp_path / "reproductions" / "lpdt.md").read_text()


def test_absent_files_skip_table2_but_not_the_synthetic_part(tmp_path):
    rep = rl.reproduce(["ALG"], data_dir=tmp_path, smoke=True)  # the paper's sets: files needed
    assert len(rep.skipped) == 1
    assert rep.cells and all(c.table == rl.TS for c in rep.cells)


def test_committed_report_explains_every_marked_cell():
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "reports" / "reproductions" / "lpdt.json"
    if not path.is_file():
        pytest.skip("no committed lpdt reproduction")
    data = json.loads(path.read_text())
    assert not data["smoke"]
    marked = [c for c in data["cells"] if c["marked"]]
    assert all(c["note"] and "no explanation found" not in c["note"] for c in marked)
    assert {c["row"] for c in data["cells"]} >= set(rl.DATASETS)
    assert any(c["strict"] is not None for c in data["cells"])
