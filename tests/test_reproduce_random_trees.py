"""Random decision trees' reproduction: Table 1's numbers, the loaders, the rpart baseline, the smoke pipeline."""
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from audit.reproduce import random_trees as rr
from audit.reproduce import reproduce
from reference import datasets as ds
from reference.baselines.rpart import RpartLikeClassifier
from reference.data_loaders.random_trees import TABLE1_SHAPES

# ----------------------------------------------------------------------------- paper numbers


def test_every_paper_cell_has_a_row_a_column_a_number_and_the_chosen_k_h():
    n = 0
    for row, methods in rr.PAPER_TABLE.items():
        assert set(methods) == set(rr.METHODS), row
        for method, entry in methods.items():
            err, hw = entry[:2]
            assert 0 < err < 50 and 0 < hw < 5
            if method != "rpart":
                k, h = entry[2:]
                assert k % 2 == 1 and 1 <= k <= 21 and 1 <= h <= 15  # spec 4.2: chosen values are odd k <= 21
            n += 1
    assert n == 8 * 5  # spec 4.3: eight datasets, rpart and four random-tree columns


def test_paper_intervals_are_binomial_on_the_dataset_size():
    # spec 4.2: every printed half-width is 1.96 sqrt(p (1 - p) / n), n the dataset size, to 2 decimals
    for row, methods in rr.PAPER_TABLE.items():
        for method, entry in methods.items():
            p = entry[0] / 100
            assert 100 * 1.96 * math.sqrt(p * (1 - p) / rr.PAPER_N[row]) == pytest.approx(entry[1], abs=0.006), \
                (row, method)
    assert rr.paper_se(1.96) == pytest.approx(1.0)


def test_split_is_stratified_disjoint_and_seeded():
    y = np.array([0] * 700 + [1] * 300)
    fit, val, test = rr.split(y, 5)
    assert len(test) == 100 and len(val) == 90 and len(fit) == 810
    assert len(set(fit) | set(val) | set(test)) == 1000
    assert y[test].mean() == pytest.approx(0.3) and y[val].mean() == pytest.approx(0.3, abs=0.012)
    assert all(np.array_equal(a, b) for a, b in zip(rr.split(y, 5), (fit, val, test)))
    assert not np.array_equal(rr.split(y, 6)[2], test)


# ----------------------------------------------------------------------------- loaders
#: (rows, features, class-1 count) as MANIFEST 1.3 / 2.4 and spec 4.1 give them
EXPECTED = {"Ban_Aut": (1372, 4, 610), "BTSC": (748, 4, 178), "CVR": (435, 16, 168), "Mam_Mass": (961, 5, 445),
            "Mushroom": (8124, 22, 3916), "Adult": (32561, 123, 7841)}


def _load(name):
    d = ds.data_dir()
    if d is None:
        pytest.skip("no data directory (reference.datasets.data_dir() is None)")
    try:
        return ds.load("random-trees", name, d)
    except ds.DatasetUnavailable as exc:
        pytest.skip(f"file absent: {exc}")


@pytest.mark.parametrize("name", list(EXPECTED))
def test_loader_shapes_classes_and_bounds(name):
    data = _load(name)
    n, d, positives = EXPECTED[name]
    assert data.X.shape == (n, d) and data.y.shape == (n,)
    assert n == TABLE1_SHAPES[name][0]  # Table 1 keeps every row: nothing is dropped
    assert np.isfinite(data.X).all()
    assert data.classes == (0, 1) and int(data.y.sum()) == positives
    bounds = np.asarray(data.bounds_list())
    assert bounds.shape == (d, 2)
    assert (data.X >= bounds[:, 0]).all() and (data.X <= bounds[:, 1]).all()
    assert data.facts_from_data == (name not in ("CVR", "Adult"))


def test_mammographic_keeps_incomplete_rows_and_imputes_them():
    data = _load("Mam_Mass")
    raw = ds.read_csv(ds.data_dir() / "mammographic_masses.data")
    assert int(raw.notna().all(axis=1).sum()) == 830  # MANIFEST 1.3: 830 complete rows of 961
    assert int(raw.isna().to_numpy().sum()) == 162 and any("162 '?' cells imputed" in n for n in data.notes)
    shape, margin = data.feature_names.index("Shape"), data.feature_names.index("Margin")
    assert {shape: 4, margin: 5} == {j: len(c) for j, c in data.categories.items()}
    for j, codes in data.categories.items():
        assert set(np.unique(data.X[:, j])) == set(codes) and codes == tuple(float(k) for k in range(len(codes)))
    assert data.X[:, 0].max() == 55.0  # the out-of-range BI-RADS value is kept (MANIFEST 2.4)


def test_categoricals_are_coded():
    mush = _load("Mushroom")
    assert len(mush.categories) == 22
    for j, codes in mush.categories.items():
        assert set(np.unique(mush.X[:, j])) == set(codes) and mush.bounds[j] == (0.0, len(codes) - 1.0)
    root = mush.feature_names.index("stalk-root")
    assert len(mush.categories[root]) == 5  # b, c, e, r and the 2480 '?' (MANIFEST 2.1)
    assert np.bincount(mush.X[:, root].astype(int))[0] == 2480  # '?' sorts first
    vote = _load("CVR")
    values, counts = np.unique(vote.X, return_counts=True)
    assert values.tolist() == [0.0, 0.5, 1.0] and counts[1] == 392  # MANIFEST 2.1: 392 '?' cells


# ----------------------------------------------------------------------------- the rpart baseline
def test_rpart_like_tree_learns_a_clean_rule_and_prunes_noise():
    rng = np.random.default_rng(0)
    X = rng.random((600, 3))
    y = ((X[:, 0] > 0.5) & (X[:, 1] > 0.3)).astype(int)
    clean = RpartLikeClassifier().fit(X, y)
    assert np.mean(clean.predict(X) == y) > 0.98
    noise = rng.integers(0, 2, 600)
    pruned = RpartLikeClassifier(cp=0.05).fit(X, noise)
    full = RpartLikeClassifier(cp=0.0).fit(X, noise)
    # the labels are independent of X: cp = 0.05 leaves far fewer leaves than no pruning at all
    assert pruned.n_leaves_ < full.n_leaves_ / 4 and clean.n_leaves_ <= 6
    assert np.mean(full.predict(X) == noise) > np.mean(pruned.predict(X) == noise)


def test_rpart_like_rejects_bad_parameters_by_name():
    X, y = np.zeros((30, 2)), np.arange(30) % 2
    with pytest.raises(ValueError, match="cp"):
        RpartLikeClassifier(cp=1.5).fit(X, y)
    with pytest.raises(ValueError, match="min_split"):
        RpartLikeClassifier(min_split=0).fit(X, y)
    with pytest.raises(ValueError, match="not fitted"):
        RpartLikeClassifier().predict(X)


# ----------------------------------------------------------------------------- pipeline
def test_smoke_run_writes_a_report_with_cells(tmp_path):
    if ds.data_dir() is None:
        pytest.skip("no data directory (reference.datasets.data_dir() is None)")
    rep = reproduce("random-trees", smoke=True, out=tmp_path, seed=1)
    ran = [c for c in rep.cells if c.ours is not None]
    if not ran:
        pytest.skip(f"no random-trees smoke dataset present: {rep.skipped}")
    assert all(c.n_runs == rr.SMOKE_RUNS for c in ran)
    assert {c.column for c in ran} >= set(rr.METHODS)
    assert all(c.note for c in rep.cells if c.marked)
    data = json.loads((tmp_path / "reproductions" / "random-trees.json").read_text())
    assert data["smoke"] and len(data["cells"]) == len(rep.cells) and len(data["unavailable"]) == 2
    assert "Smoke run" in (tmp_path / "reproductions" / "random-trees.md").read_text()


def test_absent_files_are_skipped(tmp_path):
    rep = rr.reproduce(["CVR"], data_dir=tmp_path, smoke=True)  # the paper's sets: files needed
    assert len(rep.skipped) == 1 and rep.cells == []


def test_committed_report_explains_every_marked_cell():
    path = Path(__file__).resolve().parent.parent / "reports" / "reproductions" / "random-trees.json"
    if not path.is_file():
        pytest.skip("no committed random-trees reproduction")
    data = json.loads(path.read_text())
    assert not data["smoke"]
    marked = [c for c in data["cells"] if c["marked"]]
    assert marked and all(c["note"] and "no explanation found" not in c["note"] for c in marked)
    table = pd.DataFrame(data["cells"])
    assert set(table["row"]) >= set(rr.DATASETS)
