"""PrivaTree's reproduction: the transcribed tables, the guarantee, fold facts, loaders, one fold, the smoke pipeline."""
import json
import math

import numpy as np
import pytest

from audit.reproduce import privatree as rp
from audit.reproduce import reproduce
from audit.reproduce.privatree_tables import ACCURACY_COLUMNS, PAPER_ACCURACY, PAPER_POISONING, TABLE_IV
from reference import datasets as ds

# ----------------------------------------------------------------------------- the paper's numbers


def test_accuracy_tables_cover_every_dataset_and_column():
    # 16 numerical + 7 mixed + 6 UCI rows in each of Tables II, VI, VII (spec 5.4-5.6)
    for eps, table in PAPER_ACCURACY.items():
        assert set(table) == set(TABLE_IV), eps
        for name, row in table.items():
            assert len(row) == len(ACCURACY_COLUMNS)
            for col, entry in zip(ACCURACY_COLUMNS, row):
                if entry is None:  # '-' (DPGDF without categorical features) or BDPT's timeout on Higgs
                    assert (col == "DPGDF" and TABLE_IV[name][2] == 0) or (col == "BDPT" and name == "Higgs")
                else:
                    mean, se = entry
                    assert 0.3 <= mean <= 1.0 and 0.0 <= se < 0.2
    # the decision tree column does not depend on epsilon (spec 5.3 P1)
    for name in TABLE_IV:
        assert len({PAPER_ACCURACY[e][name][0] for e in PAPER_ACCURACY}) == 1, name


def test_poisoning_tables_obey_the_guarantee_formula_up_to_rounding():
    """Every printed guarantee equals acc * exp(-eps floor(p n_train)) within the printed rounding (spec 5.8:
    verified for every row), with n_train = n - floor(n / 5) from Table IV. This checks the transcription and
    :func:`guarantee` together."""
    checked = 0
    for name, rows in PAPER_POISONING.items():
        n = TABLE_IV[name][0]
        n_train = n - n // 5
        unit = 10.0 ** -(3 if rp.SECTION[name] == "numerical" else 2)
        for (method, eps), (acc, *printed) in rows.items():
            for share, value in zip(rp.POISON_SHARES, printed):
                if value is None:  # the paper omits it when floor(p n_train) = 0
                    assert math.floor(share * n_train) == 0
                    continue
                predicted = rp.guarantee(acc, eps, share, n_train)
                assert abs(predicted - value) <= 0.5 * unit * (1 + predicted / acc if acc else 1) + 1e-12, \
                    (name, method, eps, share)
                checked += 1
    assert checked >= 29 * 4 * 3 - 4 * 3  # vote and diabetes lack their 0.1% column


def test_guarantee_rejects_bad_input_by_name():
    assert rp.guarantee(0.8, 0.1, 0.001, 999) == 0.8  # floor(0.999) = 0 poisoned records
    assert rp.guarantee(0.8, 0.1, 0.01, 1000) == pytest.approx(0.8 * math.exp(-1.0))
    with pytest.raises(ValueError, match="share"):
        rp.guarantee(0.8, 0.1, 1.5, 100)
    with pytest.raises(ValueError, match="n_train"):
        rp.guarantee(0.8, 0.1, 0.01, -3)


def test_fold_facts_read_ranges_and_category_sizes_from_the_fold():
    X = np.array([[0.0, 2.0, 5.0], [3.0, 2.0, 1.0], [1.0, 2.0, 0.0]])
    bounds, cats = rp.fold_facts(X, {2: None})
    assert bounds == [(0.0, 3.0), (2.0, 3.0), None]  # a constant column gets a unit-width range
    assert cats == {2: [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]}  # largest code + 1, as the authors' code


# ----------------------------------------------------------------------------- loaders


def _load(name):
    d = ds.data_dir()
    if d is None:
        pytest.skip("no data directory (reference.datasets.data_dir() is None)")
    try:
        return ds.load("privatree", name, d)
    except ds.DatasetUnavailable as exc:
        pytest.skip(f"file absent: {exc}")


@pytest.mark.parametrize("name", rp.DATASETS)
def test_loader_matches_table_iv(name):
    """Rows after dropping incomplete ones, features, categorical features and the majority share of Table IV."""
    data = _load(name)
    n, d, n_cat, majority = TABLE_IV[name]
    assert data.X.shape == (n, d) and len(data.categories) == n_cat
    assert max(np.mean(data.y), 1 - np.mean(data.y)) == pytest.approx(majority, abs=0.0015)
    assert set(np.unique(data.y)) == {0, 1} and data.classes == (0, 1)
    assert np.all(np.isfinite(data.X)) and data.facts_from_data
    for j, codes in data.categories.items():
        assert set(np.unique(data.X[:, j])) <= set(codes)


def test_nursery_is_binarised_as_openml_959():
    data = _load("nursery")
    assert np.bincount(data.y).tolist() == [8640, 4320]  # N = rest, P = not_recom (MANIFEST 2.1)


def test_every_registered_dataset_is_in_the_protocol():
    assert set(ds.names("privatree")) - set(ds.BUNDLED) == set(rp.DATASETS)  # and the smoke run's bundled set
    assert set(rp.SMOKE_DATASETS) <= set(ds.BUNDLED)
    assert not set(rp.ABSENT) & set(rp.DATASETS) and set(rp.ABSENT) | set(rp.DATASETS) == set(TABLE_IV)


# ----------------------------------------------------------------------------- one fold, the pipeline


def test_one_fold_runs_every_method_with_both_accountings():
    rng = np.random.default_rng(0)
    n = 200
    X = np.column_stack((rng.random(n), rng.integers(0, 3, n))).astype(float)
    y = ((X[:, 0] > 0.5) ^ (X[:, 1] == 2)).astype(int)
    data = ds.Dataset("toy", X, y, "classification", categories={1: (0.0, 1.0, 2.0)}, bounds={0: (0.0, 1.0)},
                      classes=(0, 1))
    out = rp._fold(("toy", data, np.arange(150), np.arange(150, n), (0.1, 1.0), 7))
    assert out["n_train"] == 150
    for eps in (0.1, 1.0):
        assert {("PrivaTree", eps, "paper"), ("PrivaTree", eps, "strict"), ("PrivaTree*", eps, "paper")} <= set(out)
        assert ("PrivaTree*", eps, "strict") not in out  # strict accounting refuses exact quantiles (not DP)
        assert {("BDPT", eps, None), ("DiffPrivLib", eps, None), ("DPGDF", eps, None)} <= set(out)
    assert ("DP-LR", 0.1, None) in out and ("DP-LR", 1.0, None) not in out  # Tables III/VIII: eps 0.01, 0.1
    assert all(0.0 <= v <= 1.0 for k, v in out.items() if k != "n_train")
    assert out[("DT", None, None)] > 0.9  # the non-private tree learns this rule
    again = rp._fold(("toy", data, np.arange(150), np.arange(150, n), (0.1, 1.0), 7))
    assert again == out  # the task's seed fixes every fit


def test_smoke_run_writes_a_report_with_both_accountings(tmp_path):
    if ds.data_dir() is None:
        pytest.skip("no data directory (reference.datasets.data_dir() is None)")
    rep = reproduce("privatree", smoke=True, out=tmp_path, seed=1)
    ran = [c for c in rep.cells if c.ours is not None]
    if not ran:
        pytest.skip(f"no PrivaTree smoke dataset present: {rep.skipped}")
    assert all(c.n_runs == rp.N_FOLDS for c in ran)
    assert {c.column for c in ran if c.strict is not None} == {"PrivaTree", "accuracy", "0.1%",
                                                               "0.5%", "1%"}
    assert all(c.note for c in rep.cells if c.marked)
    assert any("price of strict accounting, PrivaTree" in n for n in rep.notes)
    data = json.loads((tmp_path / "reproductions" / "privatree.json").read_text())
    assert data["smoke"] and len(data["cells"]) == len(rep.cells) and len(data["unavailable"]) == len(rp.ABSENT)
    text = (tmp_path / "reproductions" / "privatree.md").read_text()
    assert "Smoke run" in text and "Table II" in text and "Table VIII" in text
    assert (tmp_path / "reproductions" / "figures" / "privatree-accuracy.png").stat().st_size > 0


def test_absent_files_are_skipped(tmp_path):
    rep = rp.reproduce(["breast-w"], data_dir=tmp_path, smoke=True)  # the paper's sets: files needed
    assert len(rep.skipped) == 1 and rep.cells == []
