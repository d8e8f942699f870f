"""One engine behind every door (issue 43, item 3): the documented pytest recipe audits an estimator with the
gate of ``python -m audit check``.

The recipe, ``assert_private(learner_mechanism(partial(Est, epsilon=1), probe=P), add_remove_pairs(...),
epsilon=1)``, must fail a lattice-noise classifier that spends 2ε (``tests/subjects/lattice_counts.py``: noisy
per-class counts with two-sided geometric noise, its scale halved) and pass its correct twin. Integer noise, so
the floating-point probe has nothing to find: the loss itself decides.

Fixed seed 0, the quick budget, 2,000 outputs per input (the budget's 20,000 would cost about 90 CPU-s a
class); the scale family and the growth of an inconclusive pass, time-bounded and on by default, are off here
to keep the test's cost and result independent of the machine's speed (the command line runs them on these
classes: the twin is flagged at ε ≥ 1.95). False-alarm rate of the correct twin's pass: at most alpha = 0.05
(the gate's, shared over the audited pairs and both directions); the twin's true loss is 2, twice the claim.
"""
from __future__ import annotations

from functools import partial

import numpy as np
import pytest

from audit import assert_private, learner_mechanism
from audit.frontends.doors import EstimatorFactory, GateResult
from audit.engine.runs.budget import ENV_VAR
from audit.engine.estimation.neighbours import add_remove_pairs
from reference.mechanisms import Laplace
from subjects.lattice_counts import LatticeCounts, LatticeCountsTwice

BOUNDS, CLASSES = [(0.0, 1.0), (0.0, 1.0)], [0, 1]
X = np.array([[0.2, 0.3], [0.7, 0.8], [0.4, 0.9]])
Y = np.array([0, 1, 1])
PROBE = np.array([[0.25, 0.25], [0.75, 0.75]])
#: the test's cost limits (module docstring); everything else is the gate's default
LIGHT = dict(n_samples=2_000, scale=False, grow=False)


@pytest.fixture(autouse=True)
def quick_budget(monkeypatch):
    monkeypatch.setenv(ENV_VAR, "quick")  # what --dp-budget quick sets


def _recipe(cls, **kw):
    mechanism = learner_mechanism(partial(cls, epsilon=1.0), probe=PROBE)
    pairs = add_remove_pairs(X, Y, bounds=BOUNDS, classes=CLASSES)
    return assert_private(mechanism, pairs, epsilon=1.0, bounds=BOUNDS, classes=CLASSES, seed=0, **kw, **LIGHT)


def test_the_recipe_fails_the_estimator_that_spends_twice_epsilon():
    with pytest.raises(AssertionError) as info:
        _recipe(LatticeCountsTwice)
    msg = str(info.value)
    assert "(1, 0)-DP under add-remove is violated through outputs" in msg
    assert "search:" in msg and "state probe:" in msg  # the gate's evidence, not the probe points alone
    assert "what leaked: measured ε ≥" in msg and "remedy: the noise must cover" in msg  # audit.gate.diagnosis
    lower = float(msg.split("epsilon_lower = ")[1].split()[0])
    assert lower > 1.0  # true loss 2, refuted at the first look of the sequential confirmation that can show it


def test_the_recipe_passes_the_correct_twin_with_a_power_statement():
    result = _recipe(LatticeCounts)
    assert isinstance(result, GateResult)
    assert result.verdict == "pass" and not result.violation and result.epsilon_lower <= 1.0
    assert result.power in ("conclusive", "inconclusive")
    assert "with probability >= 0.9" in result.detail  # the power statement
    # the user's pairs were added to the search, not put in its place: both are audited
    users = {p.description for p in add_remove_pairs(X, Y, bounds=BOUNDS, classes=CLASSES)}
    audited = {p["pair"] for p in result.row["pairs_confirmed"]}
    assert users <= audited and audited - users


def test_bounds_read_from_the_pairs_are_said_to_be_data():
    mechanism = learner_mechanism(partial(LatticeCountsTwice, epsilon=1.0), probe=PROBE)
    pairs = add_remove_pairs(X, Y, bounds=BOUNDS, classes=CLASSES)
    with pytest.raises(AssertionError, match="(?s)read from the pairs' datasets .*not private"):
        assert_private(mechanism, pairs, epsilon=1.0, seed=0, search=False, **LIGHT)


def test_plain_mechanisms_get_the_float_probe_and_the_power_statement():
    result = assert_private(Laplace(1.0), [(0.0, 1.0)], epsilon=1.0, n_samples=20_000, seed=0)
    assert result.kind == "mechanism" and result.power in ("conclusive", "inconclusive")
    assert "floating-point probe on" in result.detail and "with probability >= 0.9" in result.detail


def test_bad_door_arguments_are_named():
    with pytest.raises(ValueError, match="bounds: only for an estimator"):
        assert_private(Laplace(1.0), [(0.0, 1.0)], epsilon=1.0, bounds=BOUNDS, n_samples=1_000)
    with pytest.raises(ValueError, match="alpha: an estimator is audited by the gate at its false-alarm rate"):
        assert_private(learner_mechanism(LatticeCounts), [], epsilon=1.0, alpha=0.01, bounds=BOUNDS,
                       classes=CLASSES)
    with pytest.raises(ValueError, match="strict_power must be True or False, got 'yes'"):
        assert_private(Laplace(1.0), [(0.0, 1.0)], strict_power="yes")
    assert str(EstimatorFactory(partial(LatticeCounts, epsilon=1.0))) == \
        "subjects.lattice_counts:LatticeCounts(epsilon=1.0)"


def test_the_failure_reads_a_verdict_line_then_one_clause_of_evidence_a_line():
    """A newcomer's pytest shows the message as it is: the verdict first, the evidence clause by clause below."""
    with pytest.raises(AssertionError) as info:
        assert_private(Laplace(2.0), [(0.0, 1.0)], epsilon=1.0, n_samples=20_000, seed=0)
    first, *rest = str(info.value).splitlines()
    assert first.startswith("privacy claim (1, 0)-DP") and "is violated" in first and first.endswith(".")
    assert rest[0] == "Evidence:" and len(rest) >= 3 and all(line.startswith("  - ") for line in rest[1:])
