"""Parameter checks shared by the mechanisms, the ledger and the learners.

Every check raises an error whose message names the parameter and the
offending value, so a user can act on it without reading the source.
"""
from __future__ import annotations

import math
from numbers import Real

import numpy as np

__all__ = [
    "check_positive_finite",
    "check_probability",
    "check_generator",
    "check_nonempty",
    "check_neighbouring",
    "check_max_depth",
    "NEIGHBOURING_RELATIONS",
]

#: The two neighbouring relations every claim must name explicitly.
NEIGHBOURING_RELATIONS = ("add-remove", "substitute")


def check_positive_finite(name: str, value) -> float:
    """Return ``value`` as a float, or raise if it is not a positive finite number."""
    if isinstance(value, bool) or not isinstance(value, (Real, np.floating, np.integer)):
        raise TypeError(f"{name} must be a positive finite number, got {value!r}")
    value = float(value)
    if not math.isfinite(value) or value <= 0.0:
        raise ValueError(f"{name} must be a positive finite number, got {value!r}")
    return value


def check_probability(name: str, value, *, open_low: bool = False, open_high: bool = False) -> float:
    """Return ``value`` as a float in [0, 1] (optionally open at either end)."""
    if isinstance(value, bool) or not isinstance(value, (Real, np.floating, np.integer)):
        raise TypeError(f"{name} must be a probability in [0, 1], got {value!r}")
    value = float(value)
    low_ok = value > 0.0 if open_low else value >= 0.0
    high_ok = value < 1.0 if open_high else value <= 1.0
    if math.isnan(value) or not (low_ok and high_ok):
        lo = "(" if open_low else "["
        hi = ")" if open_high else "]"
        raise ValueError(f"{name} must be a probability in {lo}0, 1{hi}, got {value!r}")
    return value


def check_generator(rng) -> np.random.Generator:
    """Samplers take an explicit ``numpy.random.Generator``; nothing else."""
    if not isinstance(rng, np.random.Generator):
        raise TypeError(
            f"rng must be a numpy.random.Generator (e.g. numpy.random.default_rng(0)), got {type(rng).__name__}"
        )
    return rng


def check_nonempty(name: str, values) -> np.ndarray:
    """Return ``values`` as a 1-D float array with at least one finite entry each."""
    arr = np.asarray(values, dtype=float)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D sequence, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        bad = arr[~np.isfinite(arr)][0]
        raise ValueError(f"{name} must contain only finite numbers, found {bad!r}")
    return arr


def check_neighbouring(value: str) -> str:
    if value not in NEIGHBOURING_RELATIONS:
        raise ValueError(f"neighbouring must be one of {NEIGHBOURING_RELATIONS}, got {value!r}")
    return value


def check_max_depth(value) -> int:
    """A tree depth: a non-negative integer (bools refused)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < 0:
        raise ValueError(f"max_depth must be a non-negative integer, got {value!r}")
    return int(value)
