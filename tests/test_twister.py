"""A Mersenne twister's kept outputs are the generator (:mod:`audit.gate.state.twister`).

The cloning is exact (a property test over seeds, draws and the three twister classes); the probe's verdicts are
exact for the leaks (the replay reproduces the model in every fit, and 624 outputs match another stream with
probability 2**-19968) and for the control (no replay can reproduce noise drawn from another generator).
"""
from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from audit.gate.state import twister
from audit.gate.state.probe import probe_estimator
from subjects import twister_outputs as T

D0 = (np.array([[0.0], [0.0], [1.0]]), np.array([0, 0, 1]))
D1 = (np.array([[0.0], [0.0], [1.0], [1.0]]), np.array([0, 0, 1, 1]))


def _outputs(kind, g, n):
    if kind == "Random":
        return [g.getrandbits(32) for _ in range(n)]
    if kind == "MT19937":
        return g.random_raw(n).tolist()
    return g.randint(0, 2**32, size=n, dtype=np.uint32).tolist()


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), drawn=st.integers(0, 2000), kept=st.integers(624, 900),
       kind=st.sampled_from(["Random", "RandomState", "MT19937"]), rebuilt=st.sampled_from(["Random", "RandomState"]))
def test_kept_outputs_are_located_and_stepped_back_to_the_first_draw(seed, drawn, kept, kind, rebuilt):
    g = {"Random": random.Random, "RandomState": np.random.RandomState, "MT19937": np.random.MT19937}[kind](seed)
    start = twister.state_of(g)
    stream = _outputs(kind, g, drawn + kept)
    outputs = stream[drawn:]
    assert twister.locate(outputs, *start, 2500) == drawn
    clone = twister.generator_at(rebuilt, *twister.start_state(outputs, drawn))
    assert _outputs(rebuilt, clone, drawn + kept) == stream


def test_words_that_are_not_outputs_of_the_stream_are_not_located():
    g = random.Random(5)
    start = twister.state_of(g)
    other = [random.Random(6).getrandbits(32) for _ in range(624)]
    assert twister.locate(other, *start, 5000) is None
    assert twister.readings(list(range(623))) == []  # too few to clone


def test_64_bit_words_are_read_as_two_outputs_either_way():
    rs = np.random.RandomState(11)
    start = twister.state_of(rs)
    rs.random_sample(3)
    keys = rs.randint(0, 2**64, size=320, dtype=np.uint64).tolist()
    found = {order: twister.locate(out, *start, 100) for order, out in twister.readings(keys)}
    assert found == {"64-bit, high word first": 6, "64-bit, low word first": None}
    r = random.Random(11)
    start = twister.state_of(r)
    found = {order: twister.locate(out, *start, 100) for order, out in twister.readings([r.getrandbits(64)
                                                                                        for _ in range(320)])}
    assert found == {"64-bit, high word first": None, "64-bit, low word first": 0}


@pytest.mark.parametrize("name,path", [("HashSalts", "model.salts_"), ("FeatureHashKeys", "model.keys_"),
                                       ("SeededSalts", "model.salts_")])
def test_outputs_kept_after_the_noise_are_a_finding(name, path):
    report = probe_estimator(getattr(T, name), *D0, pair=(D0, D1))
    assert report.verdict == "violation", report.summary()
    assert path in report.summary() and "MT19937 outputs" in report.summary(), report.summary()


def test_salts_from_a_generator_of_their_own_are_not_a_finding():
    report = probe_estimator(T.SaltsOfTheirOwn, *D0, pair=(D0, D1))
    assert report.verdict == "clean", report.summary()
