"""Float outputs on the integer lattice are read as the integers they are (``audit.engine.estimation.events``).

An integer mechanism that returns ``float(value + noise)`` is audited with an event per output value, as an integer
output is, and never credited to the floating-point probe. The subject (``tests/subjects/noise.py``,
``LatticeLeak``) doubles its two-sided geometric noise when broken, so the output's parity is the value's: the
thresholds of a scalar move little (the gate passed it with ``--no-float-probe``), one set of values separates
the two inputs entirely. The leak is found with certainty at the fixed seed 0 (ε ≥ 8 measured against 1); the
control is flagged with probability at most the gate's alpha (0.05) per run, at the fixed seed 0 here.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from audit.__main__ import main
from audit.engine.estimation import events
from audit.engine.estimation.sampling import Samples

HERE = Path(__file__).parent


@pytest.fixture(autouse=True)
def subjects_on_path(monkeypatch):
    monkeypatch.syspath_prepend(str(HERE))


def _check(tmp_path, broken: bool, *extra) -> tuple[int, dict]:
    code = main(["check", "subjects.noise:LatticeLeak", "--params", json.dumps({"epsilon": 1, "broken": broken}),
                 "--epsilon", "1", "--out", str(tmp_path), "--quiet", "--witnesses", "off", *extra])
    return code, json.loads(next(tmp_path.glob("check-*/report.json")).read_text())["claims"][0]


@pytest.mark.parametrize("extra", [(), ("--no-float-probe",)])
def test_a_parity_leak_of_integer_noise_returned_as_floats_is_refuted_through_the_outputs(tmp_path, extra):
    code, row = _check(tmp_path, True, *extra)
    assert code == 1 and row["epsilon_lower"] > 5
    assert "float probe" not in row.get("decided_by", []) and "event [output in {" in row["detail"]


def test_the_correct_integer_mechanism_passes_conclusively(tmp_path):
    code, row = _check(tmp_path, False)
    assert code == 0 and row["epsilon_lower"] <= 1 and "would be caught" in row["detail"]


def test_integer_valued_scalars_get_value_events_and_no_float_patterns():
    rng = np.random.default_rng(0)
    a = Samples("scalar", rng.integers(-5, 6, 400).astype(float))
    b = Samples("scalar", rng.integers(-5, 6, 400).astype(float))
    offered = [make().description for _, _, make in events.candidates(a, b)]
    assert any(d.startswith("output in {") for d in offered)
    assert not any("float pattern" in d for d in offered)
    with events.float_probe(True):  # a half-integer is off the lattice: the float probe reads it, no value events
        c = Samples("scalar", a.values + 0.5)
        offered = [make().description for _, _, make in events.candidates(c, b)]
    assert any("float pattern" in d for d in offered) and not any(d.startswith("output in {") for d in offered)


def test_the_lattice_test_is_exact():
    assert events.on_integers(np.array([0.0, -3.0, 2.0 ** 52]), np.array([7.0]))
    assert not events.on_integers(np.array([0.0, 0.5]))
    assert not events.on_integers(np.array([2.0 ** 60]))  # beyond 2**53 a float is not one integer's spelling
