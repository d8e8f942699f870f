"""LPDT's 14 UCI regression sets (Table 2), preprocessed as the authors' sister repository does.

Ma, Zhang, Cai and Yang, NeurIPS 2023, Section 5 and Table 2 (spec/lpdt.md
section 8.2; ``../shared/data/MANIFEST.md`` section 1.4). The files are the
first author's cleaned CSVs from ``Karlmyh/RTER`` ``data/real_data_cleaned/``:
no header, **column 0 is the target**, columns 1..d the features; the sister
repository reads them this way and min-max scales the features, which is done
here over the whole file. The target is left on its own scale (Table 2's MSEs
are on the raw scale: ABA's are near the variance of Rings, 10.4).

The abbreviation-to-file mapping is **inferred** (the 14 file names match the
14 abbreviations one to one; MANIFEST 1.4). Two targets are doubtful: ALG's
column 0 is the binary fire class, and CBM's is the lever position rather than
a decay coefficient (Table 2's non-private DT error of 4e-27 on CBM fits a
target that the features determine exactly, which the lever position is).

Public facts: the domain box is ``[0, 1]^d`` after the scaling, whose minima
and maxima were read from the whole file; the label range ``target_bounds`` is
``[min y, max y]`` over the whole file (the authors' code reads it from the
private labels, spec 9 D2). Both are ``facts_from_data=True``.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from reference.datasets import Dataset, register

__all__ = ["FILES", "SHAPES"]

#: Table 2's abbreviation -> file (MANIFEST 1.4, inferred mapping)
FILES = {"ABA": "lpdt_abalone.csv.gz", "AIR": "lpdt_airfoil.csv", "ALG": "lpdt_algerian.csv",
         "AQU": "lpdt_aquatic.csv", "BUI": "lpdt_building.csv", "CBM": "lpdt_cbm.csv.gz",
         "CCP": "lpdt_ccpp.csv.gz", "CON": "lpdt_concrete.csv", "CPU": "lpdt_cpusmall_scale.csv.gz",
         "FIS": "lpdt_fish.csv", "HOU": "lpdt_housing_scale.csv", "MUS": "lpdt_music.csv.gz",
         "RED": "lpdt_redwine.csv", "WHI": "lpdt_whitewine.csv"}
#: rows and features (MANIFEST 1.4: columns minus the target)
SHAPES = {"ABA": (4177, 8), "AIR": (1503, 5), "ALG": (243, 13), "AQU": (546, 8), "BUI": (372, 107),
          "CBM": (11934, 17), "CCP": (9568, 4), "CON": (1030, 8), "CPU": (8192, 12), "FIS": (908, 6),
          "HOU": (506, 13), "MUS": (1059, 68), "RED": (1599, 11), "WHI": (4898, 11)}
#: what column 0 holds, and doubts about it (MANIFEST 1.4)
TARGETS = {"ABA": "Rings", "AIR": "scaled sound pressure (dB)", "ALG": "fire class 0/1 (doubtful target)",
           "AQU": "LC50", "BUI": "V-9 actual sales price", "CBM": "lever position lp (doubtful target)",
           "CCP": "net energy output PE", "CON": "compressive strength (MPa)", "CPU": "usr (% CPU in user mode)",
           "FIS": "LC50", "HOU": "MEDV", "MUS": "latitude", "RED": "quality", "WHI": "quality"}
_FACTS = ("features min-max scaled to [0, 1] with the whole file's minima and maxima (domain box [0, 1]^d); "
          "label range [min y, max y] of the whole file (the authors' code reads it from the private labels)")


def _loader(name: str, file: str):
    def load(d: Path) -> Dataset:
        raw = pd.read_csv(d / file, header=None).to_numpy(dtype=float)
        n_raw = raw.shape[0]
        raw = raw[np.isfinite(raw).all(axis=1)]
        y, X = raw[:, 0], raw[:, 1:]
        low, high = X.min(axis=0), X.max(axis=0)
        span = np.where(high > low, high - low, 1.0)
        X = (X - low) / span
        notes = [f"target: column 0 = {TARGETS[name]}; {X.shape[1]} features min-max scaled over the whole file"]
        if n_raw != raw.shape[0]:
            notes.append(f"{n_raw - raw.shape[0]} rows with missing values dropped")
        constant = int(np.sum(high <= low))
        if constant:
            notes.append(f"{constant} constant feature(s) mapped to 0")
        return Dataset(name=name, X=X, y=y, task="regression", feature_names=[f"x{j + 1}" for j in range(X.shape[1])],
                       bounds={j: (0.0, 1.0) for j in range(X.shape[1])},
                       target_bounds=(float(y.min()), float(y.max())), facts_from_data=True, facts_note=_FACTS,
                       notes=notes)
    return load


for _name, _file in FILES.items():
    register("lpdt", _name, files=(_file,))(_loader(_name, _file))


@register("lpdt", "sklearn-diabetes", files=())
def _sklearn_diabetes(_d) -> Dataset:
    from reference.datasets import bundled

    X, y, feats = bundled("sklearn-diabetes")
    low, high = X.min(axis=0), X.max(axis=0)
    X = (X - low) / np.where(high > low, high - low, 1.0)
    return Dataset(name="sklearn-diabetes", X=X, y=y.astype(float), task="regression", feature_names=feats,
                   bounds={j: (0.0, 1.0) for j in range(X.shape[1])},
                   target_bounds=(float(y.min()), float(y.max())), facts_from_data=True, facts_note=_FACTS,
                   notes=["scikit-learn's bundled diabetes set (442 rows, 10 features; ships with the package: the "
                          "offline smoke run's set, not one of the paper's); features min-max scaled over the set"])
