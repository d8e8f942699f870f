"""DiPriMe's benchmark sets, preprocessed as the authors' experiment notebook does.

Consul and Williamson, V000 section 4 and V003 section 4 (spec/diprime.md
section 3.2; ``../shared/data/MANIFEST.md`` sections 1.2 and 2.3). Both papers
"scaled the target variable to lie in [0, 1]" over the whole data set before
the split: Parkinson's by ``y / max(y)``, the other regression sets by min-max.
Derived features follow the authors' code: Appliances gains ``Month``
(categorical) and ``Day`` (day of the month) from ``date``; Traffic gains
``weekday`` (categorical, Monday = 0) and ``hour`` from ``date_time``.
Robot is binarised (Move-Forward = 0, every other class = 1).

Public facts: feature ranges are ``[min, max]`` over the whole file and the
category sets its distinct values, as the authors' ``gen_attdict`` reads them
(``facts_from_data=True``); regression targets get the declared range
``[0, 1]`` (the papers' ``[B_L, B_U]``), which the scaling guarantees, itself
computed from the data.

The V000-only sets Abalone, Adult and Nursery have no DiPriMe table in the
seeds' text (spec section 3.4), so no loader is registered for them here.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from reference.datasets import Dataset, encode_categories, minmax_bounds, read_csv, register

__all__ = ["REGRESSION", "CLASSIFICATION", "TURBINE_FILES"]

#: the regression sets in V003 Table 1's order (V000 Table 1 uses the first two)
REGRESSION = ("parkinsons", "appliances", "traffic", "turbine")
#: the classification sets in V003 Table 2's order (V000 Table 2 uses all three)
CLASSIFICATION = ("banknote", "credit", "robot")
TURBINE_FILES = tuple(f"gas_turbine_gt_{year}.csv.gz" for year in range(2011, 2016))

_FACTS = ("feature ranges [min, max] and category sets read from the whole file (train and test), as the "
          "authors' gen_attdict does")


def _dataset(name: str, df: pd.DataFrame, target: str, categorical, task: str, notes, y: np.ndarray,
             target_note: str = "") -> Dataset:
    """Code ``categorical`` columns, read bounds from the data, attach ``y`` (already preprocessed)."""
    n_raw = len(df)
    keep = df.notna().all(axis=1).to_numpy()
    df, y = df.loc[keep].reset_index(drop=True), np.asarray(y)[keep]
    notes = list(notes)
    if n_raw != len(df):
        notes.append(f"{n_raw - len(df)} rows with missing values dropped")
    feats = [c for c in df.columns if c != target]
    df, levels = encode_categories(df, [c for c in categorical])
    X = df[feats].to_numpy(dtype=float)
    cat_idx = {feats.index(c): tuple(float(k) for k in range(len(levels[c]))) for c in levels}
    for c in levels:
        notes.append(f"{c} coded 0..{len(levels[c]) - 1} over {list(levels[c])}")
    ds = Dataset(name=name, X=X, y=y, task=task, feature_names=feats, categories=cat_idx,
                 bounds=minmax_bounds(X, [j for j in range(len(feats)) if j not in cat_idx]),
                 facts_from_data=True, notes=notes, facts_note=_FACTS + target_note)
    if task == "classification":
        ds.classes = tuple(range(int(y.max()) + 1))
    else:
        ds.target_bounds = (0.0, 1.0)
    return ds


def _minmax(y) -> np.ndarray:
    y = np.asarray(y, dtype=float)
    return (y - y.min()) / (y.max() - y.min())


_MINMAX_NOTE = "; target min-max scaled to [0, 1] over the whole file (declared target bounds [0, 1])"


@register("diprime", "parkinsons", files=("parkinsons_updrs.data.gz",))
def _parkinsons(d: Path) -> Dataset:
    df = read_csv(d / "parkinsons_updrs.data.gz").drop(columns=["subject#", "motor_UPDRS"])
    y = df["total_UPDRS"].to_numpy(dtype=float)
    return _dataset("parkinsons", df, "total_UPDRS", ["sex"], "regression",
                    ["subject# and motor_UPDRS dropped; target total_UPDRS divided by its maximum (authors' code)"],
                    y / y.max(), "; target divided by its maximum over the whole file (declared target bounds "
                    "[0, 1])")


@register("diprime", "appliances", files=("appliances_energydata_complete.csv.gz",))
def _appliances(d: Path) -> Dataset:
    df = read_csv(d / "appliances_energydata_complete.csv.gz")
    when = pd.to_datetime(df.pop("date"), format="%Y/%m/%d %H:%M")
    df["Month"], df["Day"] = when.dt.month, when.dt.day
    df = df.drop(columns=[c for c in ("rv1", "rv2") if c in df.columns])
    y = _minmax(df["Appliances"])
    return _dataset("appliances", df, "Appliances", ["Month"], "regression",
                    ["date dropped after deriving Month (categorical) and Day (day of month); rv1, rv2 absent "
                     "from this copy (DiPriMe drops them)"], y, _MINMAX_NOTE)


@register("diprime", "traffic", files=("metro_interstate_traffic_volume.csv.gz",))
def _traffic(d: Path) -> Dataset:
    df = read_csv(d / "metro_interstate_traffic_volume.csv.gz", keep_default_na=False, na_values=["?"])
    when = pd.to_datetime(df.pop("date_time"), format="%Y-%m-%d %H:%M:%S")
    df = df.drop(columns=["weather_description"])
    df["weekday"], df["hour"] = when.dt.day_of_week, when.dt.hour
    y = _minmax(df["traffic_volume"])
    return _dataset("traffic", df, "traffic_volume", ["holiday", "weather_main", "weekday"], "regression",
                    ["date_time and weather_description dropped; weekday (categorical) and hour derived from "
                     "date_time; holiday 'None' kept as a category"], y, _MINMAX_NOTE)


@register("diprime", "turbine", files=TURBINE_FILES)
def _turbine(d: Path) -> Dataset:
    df = pd.concat([read_csv(d / f) for f in TURBINE_FILES], ignore_index=True)
    y = _minmax(df["TEY"])
    return _dataset("turbine", df, "TEY", [], "regression",
                    ["the five yearly files 2011-2015 concatenated; target TEY"], y, _MINMAX_NOTE)


@register("diprime", "banknote", files=("banknote_authentication.txt",))
def _banknote(d: Path) -> Dataset:
    df = read_csv(d / "banknote_authentication.txt")
    return _dataset("banknote", df, "Class", [], "classification", ["four continuous features; class 0/1"],
                    df["Class"].to_numpy(dtype=int))


@register("diprime", "credit", files=("credit_card_default_UCI_Credit_Card.csv.gz",))
def _credit(d: Path) -> Dataset:
    df = read_csv(d / "credit_card_default_UCI_Credit_Card.csv.gz").drop(columns=["ID"])
    return _dataset("credit", df, "Y", ["X2", "X3", "X4"], "classification",
                    ["ID dropped; SEX (X2), EDUCATION (X3), MARRIAGE (X4) categorical; class Y = default next "
                     "month"], df["Y"].to_numpy(dtype=int))


@register("diprime", "robot", files=("wall_following_sensor_readings_24.data.gz",))
def _robot(d: Path) -> Dataset:
    df = read_csv(d / "wall_following_sensor_readings_24.data.gz", header=None)
    df.columns = [f"US{j + 1}" for j in range(24)] + ["move"]
    y = (df["move"] != "Move-Forward").to_numpy(dtype=int)
    return _dataset("robot", df, "move", [], "classification",
                    ["24 ultrasound sensors; binarised as the authors do: Move-Forward = 0, other moves = 1"], y)


def _bundled(name: str, task: str) -> Dataset:
    from reference.datasets import bundled

    X, y, feats = bundled(name)
    df = pd.DataFrame(X, columns=feats).assign(target=y)
    note = ("scikit-learn's bundled set, shipped with the package: the offline smoke run's set, not one of the "
            "papers'")
    if task == "regression":
        return _dataset(name, df, "target", [], task, [note], _minmax(y), _MINMAX_NOTE)
    return _dataset(name, df, "target", [], task, [note], np.asarray(y, dtype=int))


register("diprime", "sklearn-diabetes", files=())(lambda _d: _bundled("sklearn-diabetes", "regression"))
register("diprime", "sklearn-breast-cancer", files=())(lambda _d: _bundled("sklearn-breast-cancer", "classification"))
