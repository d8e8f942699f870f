"""The benchmark sets of Bojarski et al.'s Table 1, preprocessed as spec/random_trees.md A11 recommends.

Bojarski, Choromanska, Choromanski and LeCun, arXiv:1410.6973, Section 6
(spec/random_trees.md sections 4.1 and A11; ``../shared/data/MANIFEST.md``
sections 1.3 and 2.4). The paper describes no preprocessing, and its Table 1
keeps every row (n = 435 for CVR, 961 for Mam_Mass, 8124 for Mushroom,
although these files hold missing values), so no row is dropped here:

* **Ban_Aut**, **BTSC**: four numerical features, class 0/1 as in the file.
* **CVR**: the 16 votes coded ``n = 0``, ``y = 1`` and ``? = 0.5`` (A11),
  which keeps n = 435 and m = 16; class democrat = 0, republican = 1.
* **Mam_Mass**: the 162 ``?`` cells imputed with the column's median
  (BI-RADS, Age, Density) or most frequent value (Shape, Margin, nominal) over
  the whole file; Shape and Margin coded ``0..c-1``. The out-of-range BI-RADS
  value 55 is kept, as in the original file.
* **Mushroom**: the 22 nominal attributes coded ``0..c-1`` in sorted order
  (A11: treated by the random trees as numbers in ``[0, c-1]``, which keeps
  m = 22); ``stalk-root``'s ``?`` is kept as a category of its own.
* **Adult**: the first 32561 rows of the a9a LIBSVM file (the a9a training
  set), 123 binary features, label ``+1`` = 1.

Public facts: the random trees need a ``(low, high)`` range per feature (spec
2.1, A8). The paper assumes them public; for Ban_Aut, BTSC, Mam_Mass and
Mushroom they are read from the whole file here, as the paper presumably did
(``facts_from_data=True``); for CVR and Adult they are the coding's declared
range ``[0, 1]``.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from reference.datasets import Dataset, encode_categories, minmax_bounds, read_arff, read_csv, read_libsvm, register

__all__ = ["TABLE1_SHAPES", "ADULT_ROWS"]

#: Table 1's n and m per dataset (spec 4.3); m counts the class for Ban_Aut, BTSC and Mam_Mass (spec E9)
TABLE1_SHAPES = {"Ban_Aut": (1372, 5), "BTSC": (748, 5), "CVR": (435, 16), "Mam_Mass": (961, 6),
                 "Mushroom": (8124, 22), "Adult": (32561, 123)}
#: rows of the a9a training set at the head of the concatenated LIBSVM file (MANIFEST 2.4)
ADULT_ROWS = 32561
_FROM_DATA = "feature ranges [min, max] read from the whole file (train and test), as the paper presumably did"


def _binary_classes(y, name) -> tuple[np.ndarray, tuple]:
    y = np.asarray(y)
    values = np.unique(y)
    if values.size != 2:
        raise ValueError(f"{name}: expected a binary target, found values {values.tolist()}")
    return (y == values[1]).astype(int), (0, 1)


def _numeric(name: str, df: pd.DataFrame, target: str, notes) -> Dataset:
    feats = [c for c in df.columns if c != target]
    X = df[feats].to_numpy(dtype=float)
    y, classes = _binary_classes(df[target].to_numpy(), name)
    return Dataset(name=name, X=X, y=y, task="classification", feature_names=feats,
                   bounds=minmax_bounds(X, range(len(feats))), classes=classes, facts_from_data=True,
                   facts_note=_FROM_DATA, notes=list(notes))


@register("random-trees", "Ban_Aut", files=("banknote_authentication.txt",))
def _banknote(d: Path) -> Dataset:
    df = read_csv(d / "banknote_authentication.txt")
    return _numeric("Ban_Aut", df, "Class", ["four continuous features; class as in the file (1 = 610 rows)"])


@register("random-trees", "BTSC", files=("blood_transfusion.data",))
def _blood(d: Path) -> Dataset:
    df = read_csv(d / "blood_transfusion.data")
    df = df.apply(pd.to_numeric)  # some cells carry trailing spaces ("2 ")
    return _numeric("BTSC", df, "donatedBlood",
                    ["Recency, Frequency, Monetary, Time; class donatedBlood (1 = 178 rows, 23.8%)"])


@register("random-trees", "CVR", files=("vote.arff",))
def _vote(d: Path) -> Dataset:
    df = read_arff(d / "vote.arff")
    feats = [c for c in df.columns if c != "Class"]
    n_missing = int(df[feats].isna().to_numpy().sum())
    X = df[feats].replace({"n": 0.0, "y": 1.0}).astype(float).fillna(0.5).to_numpy()
    y, classes = _binary_classes(df["Class"].to_numpy(), "CVR")
    return Dataset(name="CVR", X=X, y=y, task="classification", feature_names=feats,
                   bounds={j: (0.0, 1.0) for j in range(len(feats))}, classes=classes, facts_from_data=False,
                   facts_note="feature range [0, 1] declared by the coding n = 0, ? = 0.5, y = 1",
                   notes=[f"votes coded n = 0, y = 1, ? = 0.5 ({n_missing} '?' cells); "
                          "class democrat = 0, republican = 1"])


@register("random-trees", "Mam_Mass", files=("mammographic_masses.data",))
def _mammographic(d: Path) -> Dataset:
    df = read_csv(d / "mammographic_masses.data").astype(float)
    n_missing = int(df.isna().to_numpy().sum())
    nominal = ["Shape", "Margin"]
    for c in df.columns:
        if c == "Severity":
            continue
        fill = df[c].mode().iloc[0] if c in nominal else df[c].median()
        df[c] = df[c].fillna(fill)
    df, levels = encode_categories(df, nominal)
    feats = [c for c in df.columns if c != "Severity"]
    X = df[feats].to_numpy(dtype=float)
    cat_idx = {feats.index(c): tuple(float(k) for k in range(len(levels[c]))) for c in levels}
    y, classes = _binary_classes(df["Severity"].to_numpy(), "Mam_Mass")
    return Dataset(name="Mam_Mass", X=X, y=y, task="classification", feature_names=feats, categories=cat_idx,
                   bounds=minmax_bounds(X, [j for j in range(len(feats)) if j not in cat_idx]), classes=classes,
                   facts_from_data=True, facts_note=_FROM_DATA + "; Shape and Margin code sets from the file",
                   notes=[f"all 961 rows kept as in Table 1: {n_missing} '?' cells imputed with the column median "
                          "(BI-RADS, Age, Density) or mode (Shape, Margin) over the whole file",
                          "Shape and Margin coded 0..c-1; the out-of-range BI-RADS value 55 kept"])


@register("random-trees", "Mushroom", files=("mushroom.arff.gz",))
def _mushroom(d: Path) -> Dataset:
    df = read_arff(d / "mushroom.arff.gz")
    feats = [c for c in df.columns if c != "class"]
    n_missing = int(df[feats].isna().to_numpy().sum())
    df[feats] = df[feats].fillna("?")
    df, levels = encode_categories(df, feats)
    X = df[feats].to_numpy(dtype=float)
    cat_idx = {j: tuple(float(k) for k in range(len(levels[c]))) for j, c in enumerate(feats)}
    y, classes = _binary_classes(df["class"].to_numpy(), "Mushroom")
    ds = Dataset(name="Mushroom", X=X, y=y, task="classification", feature_names=feats, categories=cat_idx,
                 classes=classes, facts_from_data=True,
                 facts_note="category sets (hence code ranges [0, c-1]) read from the whole file",
                 notes=[f"22 nominal attributes coded 0..c-1 (sorted values), used as numbers in [0, c-1]; "
                        f"stalk-root's {n_missing} '?' kept as a category; class e = 0, p = 1"])
    ds.bounds = {j: (float(min(c)), float(max(c))) for j, c in cat_idx.items()}
    return ds


@register("random-trees", "Adult", files=("adult_a9a_libsvm.txt.gz",))
def _adult(d: Path) -> Dataset:
    X, y = read_libsvm(d / "adult_a9a_libsvm.txt.gz", n_features=123, n_rows=ADULT_ROWS)
    y, classes = _binary_classes(y, "Adult")
    return Dataset(name="Adult", X=X, y=y, task="classification",
                   feature_names=[f"f{j + 1}" for j in range(123)],
                   bounds={j: (0.0, 1.0) for j in range(123)}, classes=classes, facts_from_data=False,
                   facts_note="feature range [0, 1] declared (a9a's 123 features are binary)",
                   notes=[f"the first {ADULT_ROWS} rows of the a9a LIBSVM file (the a9a training set); label "
                          "+1 (>50K) = 1"])


@register("random-trees", "sklearn-breast-cancer", files=())
def _sklearn_breast_cancer(_d) -> Dataset:
    from reference.datasets import bundled

    X, y, feats = bundled("sklearn-breast-cancer")
    df = pd.DataFrame(X, columns=feats).assign(target=y)
    return _numeric("sklearn-breast-cancer", df, "target",
                    ["scikit-learn's bundled breast cancer set (Wisconsin diagnostic, 569 rows, 30 features; ships "
                     "with the package: the offline smoke run's set, not one of the paper's)"])
