"""What a sampled violation says leaked, and the remedy it names (audit.gate.diagnosis).

The diagnosis is descriptive (point estimates on 400 fresh fits per dataset of the deciding pair, seeded by the
audit's seed): it spends no alpha and decides nothing, so these tests hold its wording and its arithmetic, not a
false-alarm rate. The noise-scale bug is the twin that spends 2ε while claiming ε (``LatticeCountsTwice``:
two-sided geometric noise of parameter exp(-2) on each class count, a standard deviation of 0.60 where the claim
needs Laplace noise of scale at least 1 on a count one record moves by 1).
"""
import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from audit.__main__ import main
from audit.engine.estimation.neighbours import NeighbourPair
from audit.gate.diagnosis import OUTPUTS, TOP, _separation, diagnose  # noqa: F401 - the unit under test
from audit.gate.outputs import EstimatorRelease

HERE = Path(__file__).parent


@pytest.fixture(autouse=True)
def subjects_on_path(monkeypatch):
    monkeypatch.syspath_prepend(str(HERE))


def _release_and_pair():
    from subjects.lattice_counts import LatticeCountsTwice

    mech = EstimatorRelease(LatticeCountsTwice, {"epsilon": 1.0}, bounds=[[0, 1]], classes=[0, 1])
    d0 = (np.array([[0.2], [0.7]]), np.array([0, 0]))
    d1 = (np.array([[0.2], [0.7], [0.9]]), np.array([0, 0, 1]))
    mech.calibrate([d0, d1])
    return mech, NeighbourPair(d0, d1, "one record of class 1 added", "add-remove")


def test_a_wrong_noise_scale_is_named_by_its_attribute_with_the_noise_it_needs():
    mech, pair = _release_and_pair()
    found = diagnose(mech, pair, epsilon=1.0, measured=1.9, seed=0)
    top = found["carried_by"]
    assert 1 <= len(top) <= TOP and found["outputs"] == OUTPUTS
    assert top[0]["coordinate"] == "model.counts_[1]" and top[0]["state"]  # the count the added record moves
    shift = top[0]["mean"][1] - top[0]["mean"][0]
    assert 0.85 < shift < 1.15  # one record: 1 in expectation (400 fits a side: sd of the difference ~0.04)
    assert 0.5 < top[0]["sd"][0] < 0.7  # two-sided geometric at exp(-2): sd 0.60
    assert found["times_the_claim"] == pytest.approx(1.9)
    remedy = found["remedy"]
    assert "grow at least 1.9 times" in remedy and "model.counts_[1]" in remedy
    needed = float(remedy.split("needs a scale of at least ")[1].split()[0])
    assert needed == pytest.approx(shift, rel=1e-2)  # Laplace scale shift / epsilon at epsilon 1
    assert found["text"].startswith("what leaked: measured ε ≥ 1.9 against the claimed 1")


def test_the_diagnosis_is_the_same_for_the_same_seed():
    mech, pair = _release_and_pair()
    assert diagnose(mech, pair, 1.0, 1.9, seed=3) == diagnose(mech, pair, 1.0, 1.9, seed=3)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(-5, 5), min_size=1, max_size=40), st.lists(st.integers(-5, 5), min_size=1, max_size=40))
def test_separation_is_symmetric_and_zero_on_equal_samples(a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    assert _separation(a, b) == pytest.approx(_separation(b, a))
    assert _separation(a, a) == 0.0
    n = len(a)
    disjoint = _separation(np.zeros(n), np.ones(n))
    assert disjoint == pytest.approx(np.log((n + 0.5) / 0.5))  # the most one threshold can show at n a side


def test_the_console_and_the_report_say_what_leaked_and_the_remedy(tmp_path, capsys):
    code = main(["check", "subjects.lattice_counts:LatticeCountsTwice", "--bounds", "[[0, 1]]", "--classes", "0,1",
                 "--epsilon", "1", "--out", str(tmp_path), "--witnesses", "off"])
    assert code == 1
    err = capsys.readouterr().out
    assert "what leaked: measured ε ≥" in err and "carried most by model.counts_" in err
    assert "remedy: the noise must cover the change one record makes" in err
    row = json.loads(next(tmp_path.glob("check-*/report.json")).read_text())["claims"][0]
    assert row["diagnosis"]["carried_by"][0]["coordinate"].startswith("model.counts_[")
    assert row["diagnosis"]["times_the_claim"] == pytest.approx(row["epsilon_lower"])
    assert row["detail"].startswith("what leaked:")
