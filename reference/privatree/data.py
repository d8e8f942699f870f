"""PrivaTree's benchmark sets, preprocessed as the paper and the authors' code do.

Vos et al. 2023 (PrivaTree), section VI and
Table IV; spec/privatree.md section 5.2; ``../shared/data/MANIFEST.md``
sections 1.1, 2.1 and 2.2.

* **UCI sets** (OpenML 15, 24, 37, 56, 959, 1590, read from Weka's arff files
  and UCI's adult files): every row with a missing value dropped (Table IV's
  sizes: breast-w 683, vote 232, mushroom 5644, adult 45222); nominal
  features coded ``0..c-1`` and declared categorical; nursery binarised as
  OpenML 959 does (``not_recom`` against the rest, majority share 0.667);
  adult is ``adult.data`` and ``adult.test`` concatenated (OpenML 1590),
  with the test labels' trailing ``.`` stripped.
* **Tabular benchmark** (Grinsztajn et al. 2022, OpenML suites 337 and 334):
  the ``grinsztajn_clf_num_*`` files (numerical features only) and the
  ``grinsztajn_clf_cat_*`` files (the suite-334 versions, whose nominal
  columns MANIFEST 2.2 lists). Both versions of a dataset that appears in the
  two suites are different OpenML datasets; the categorical version's name
  here ends in ``-cat``.

Classes are coded ``0..K-1`` in sorted order of the file's labels (all sets
are binary). Nominal codes are in sorted order of the values; OpenML's codes
follow the arff declaration order, which only matters to the learners that
treat codes as numbers (the DiffPrivLib-style tree, BDPT, logistic
regression).

Public facts: the paper's code reads each feature's range from the training
fold (min, max) and each categorical feature's size from the training fold's
largest code (spec 5.2). The loaders record the whole file's ranges and code
sets; :mod:`audit.reproduce.privatree` recomputes them per training fold, as
the paper did, and the report marks them as read from the data.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from reference.datasets import Dataset, encode_categories, minmax_bounds, read_arff, read_csv, register

__all__ = ["UCI", "NUMERICAL", "MIXED", "GRINSZTAJN_CAT_COLUMNS"]

#: Table II's three sections, in the paper's row order (names of the registered loaders)
NUMERICAL = ("Diabetes130US", "MagicTelescope", "bank-marketing", "california", "credit",
             "default-of-credit-card-clients", "electricity", "eye_movements", "heloc", "house_16H", "pol")
MIXED = ("compas-two-years", "default-of-credit-card-clients-cat", "electricity-cat", "eye_movements-cat")
UCI = ("adult", "breast-w", "diabetes", "mushroom", "nursery", "vote")

#: nominal columns of the suite-334 files (MANIFEST 2.2)
GRINSZTAJN_CAT_COLUMNS = {
    "compas-two-years": ("sex", "age_cat_25-45", "age_cat_Greaterthan45", "age_cat_Lessthan25",
                         "race_African-American", "race_Caucasian", "c_charge_degree_F", "c_charge_degree_M"),
    "default-of-credit-card-clients": ("x2",),
    "electricity": ("day",),
    "eye_movements": ("P1stFixation", "P2stFixation", "nextWordRegress"),
}

_FACTS = ("feature ranges (min, max) and categorical sizes (largest code + 1) read from each training fold, as "
          "the authors' code does; not differentially private")


def _dataset(name: str, df: pd.DataFrame, target: str, categorical, notes) -> Dataset:
    """Drop incomplete rows, code nominal columns and the binary target, read the whole file's facts."""
    n_raw = len(df)
    df = df.dropna().reset_index(drop=True)
    notes = list(notes)
    if n_raw != len(df):
        notes.append(f"{n_raw - len(df)} of {n_raw} rows with a missing value dropped (Table IV)")
    feats = [c for c in df.columns if c != target]
    df, levels = encode_categories(df, list(categorical))
    X = df[feats].to_numpy(dtype=float)
    cat_idx = {feats.index(c): tuple(float(k) for k in range(len(levels[c]))) for c in levels}
    labels = pd.Categorical(df[target].astype(str).str.strip().str.rstrip("."))
    if len(labels.categories) != 2:
        raise ValueError(f"{name}: expected a binary target, found {list(labels.categories)}")
    y = labels.codes.astype(int)
    share = max(np.mean(y), 1 - np.mean(y))
    notes.append(f"{len(df)} rows, {len(feats)} features ({len(cat_idx)} categorical); classes "
                 f"{dict(enumerate(labels.categories))}; majority share {share:.3f}")
    return Dataset(name=name, X=X, y=y, task="classification", feature_names=feats, categories=cat_idx,
                   bounds=minmax_bounds(X, [j for j in range(len(feats)) if j not in cat_idx]), classes=(0, 1),
                   facts_from_data=True, facts_note=_FACTS, notes=notes)


# ----------------------------------------------------------------------------- UCI sets
def _arff(name: str, file: str, target: str, categorical: bool, notes=()):
    @register("privatree", name, files=(file,))
    def load(d: Path) -> Dataset:
        df = read_arff(d / file)
        feats = [c for c in df.columns if c != target]
        return _dataset(name, df, target, feats if categorical else (), notes)

    return load


_arff("breast-w", "breast-w.arff", "Class", False)
_arff("diabetes", "diabetes.arff", "class", False, ["zeros standing for missing values kept, as in OpenML 37"])
_arff("vote", "vote.arff", "Class", True)
_arff("mushroom", "mushroom.arff.gz", "class", True)


@register("privatree", "nursery", files=("nursery.arff.gz",))
def _nursery(d: Path) -> Dataset:
    df = read_arff(d / "nursery.arff.gz")
    df["class"] = np.where(df["class"] == "not_recom", "P", "N")
    feats = [c for c in df.columns if c != "class"]
    return _dataset("nursery", df, "class", feats,
                    ["binarised as OpenML 959: class not_recom = P, every other class = N (MANIFEST 2.1)"])


ADULT_COLUMNS = ("age", "workclass", "fnlwgt", "education", "education-num", "marital-status", "occupation",
                 "relationship", "race", "sex", "capital-gain", "capital-loss", "hours-per-week", "native-country",
                 "income")
ADULT_CATEGORICAL = ("workclass", "education", "marital-status", "occupation", "relationship", "race", "sex",
                     "native-country")


@register("privatree", "adult", files=("adult.data.gz", "adult.test.gz"))
def _adult(d: Path) -> Dataset:
    parts = [read_csv(d / f, header=None, names=list(ADULT_COLUMNS), comment="|") for f in ("adult.data.gz",
                                                                                           "adult.test.gz")]
    df = pd.concat(parts, ignore_index=True)
    df["income"] = df["income"].astype(str).str.strip().str.rstrip(".")
    return _dataset("adult", df, "income", ADULT_CATEGORICAL,
                    ["adult.data and adult.test concatenated (OpenML 1590), test labels' trailing '.' stripped"])


# ----------------------------------------------------------------------------- tabular benchmark
def _grinsztajn(name: str, file: str, categorical=()):
    @register("privatree", name, files=(file,))
    def load(d: Path) -> Dataset:
        df = read_csv(d / file)
        target = df.columns[-1]
        version = "suite 334 (numerical and categorical)" if categorical else "suite 337 (numerical)"
        return _dataset(name, df, target, categorical, [f"Grinsztajn et al. {version} file {file}; target {target}"])

    return load


for _name in NUMERICAL:
    _grinsztajn(_name, f"grinsztajn_clf_num_{_name}.csv.gz")
for _name, _cols in GRINSZTAJN_CAT_COLUMNS.items():
    _file = f"grinsztajn_clf_cat_{_name}.csv" + ("" if _name == "compas-two-years" else ".gz")
    _grinsztajn(_name if _name == "compas-two-years" else f"{_name}-cat", _file, _cols)


@register("privatree", "sklearn-breast-cancer", files=())
def _sklearn_breast_cancer(_d) -> Dataset:
    from reference.datasets import bundled

    X, y, feats = bundled("sklearn-breast-cancer")
    df = pd.DataFrame(X, columns=feats).assign(target=y)
    return _dataset("sklearn-breast-cancer", df, "target", (),
                    ["scikit-learn's bundled breast cancer set (Wisconsin diagnostic; ships with the package: the "
                     "offline smoke run's set, not one of the paper's)"])
