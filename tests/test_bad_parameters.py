"""Bad parameters fail loudly, with a message naming the parameter."""
import math

import numpy as np
import pytest

from reference.ledger import PrivacyLedger, Scope
from reference.mechanisms import (
    BitRandomizedResponse,
    ExponentialMechanism,
    IntervalExponential,
    Laplace,
    PermuteAndFlip,
    RandomizedResponse,
    TwoSidedGeometric,
)

ALL = [Laplace, TwoSidedGeometric, ExponentialMechanism, PermuteAndFlip, RandomizedResponse,
       BitRandomizedResponse, IntervalExponential]


@pytest.mark.parametrize("cls", ALL)
@pytest.mark.parametrize("eps", [0, -1.0, math.nan, math.inf, -math.inf])
def test_epsilon_must_be_positive_finite(cls, eps):
    with pytest.raises(ValueError, match="epsilon"):
        cls(eps)


@pytest.mark.parametrize("cls", ALL)
def test_epsilon_type(cls):
    with pytest.raises(TypeError, match="epsilon"):
        cls("1.0")


@pytest.mark.parametrize("cls", [Laplace, TwoSidedGeometric, ExponentialMechanism, PermuteAndFlip])
@pytest.mark.parametrize("sens", [0, -2.0, math.nan, math.inf])
def test_sensitivity_must_be_positive_finite(cls, sens):
    with pytest.raises(ValueError, match="sensitivity"):
        cls(1.0, sens)


@pytest.mark.parametrize("cls", [ExponentialMechanism, PermuteAndFlip])
def test_empty_candidate_set(cls):
    with pytest.raises(ValueError, match="utilities"):
        cls(1.0).sample([], np.random.default_rng(0))
    with pytest.raises(ValueError, match="utilities"):
        cls(1.0).pmf([1.0, math.nan])


def test_rng_must_be_a_generator():
    with pytest.raises(TypeError, match="rng"):
        Laplace(1.0).sample(0.0, 42)


def test_other_parameters():
    with pytest.raises(ValueError, match="k must"):
        RandomizedResponse(1.0, k=1)
    with pytest.raises(ValueError, match="data must"):
        RandomizedResponse(1.0, k=3).sample(3, np.random.default_rng(0))
    with pytest.raises(ValueError, match="data must"):
        BitRandomizedResponse(1.0).sample([0, 2], np.random.default_rng(0))
    with pytest.raises(ValueError, match="bounds"):
        IntervalExponential(1.0, bounds=(1.0, 0.0))
    with pytest.raises(ValueError, match="within bounds"):
        IntervalExponential(1.0, bounds=(0.0, 1.0)).sample([2.0], np.random.default_rng(0))
    with pytest.raises(ValueError, match="n must"):
        Laplace(1.0).batch(0.0, 0, np.random.default_rng(0))
    with pytest.raises(ValueError, match="integer-valued"):
        TwoSidedGeometric(1.0).sample(0.5, np.random.default_rng(0))


@pytest.mark.parametrize("delta", [-0.1, 1.0, 1.5, math.nan])
def test_ledger_delta_is_a_probability(delta):
    with pytest.raises(ValueError, match="delta"):
        PrivacyLedger().charge("leaf", "laplace", 1.0, scope=Scope.root(), delta=delta)


def test_ledger_rejects_bad_charges():
    led = PrivacyLedger("add-remove")
    with pytest.raises(ValueError, match="epsilon"):
        led.charge("leaf", "laplace", 0.0, scope=Scope.root())
    with pytest.raises(ValueError, match="neighbouring"):
        led.charge("leaf", "laplace", 1.0, scope=Scope.root(), neighbouring="substitute")
    with pytest.raises(ValueError, match="neighbouring"):
        PrivacyLedger("swap")
    with pytest.raises(TypeError, match="scope"):
        led.charge("leaf", "laplace", 1.0, scope="root")
