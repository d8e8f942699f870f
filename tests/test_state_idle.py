"""A kept generator is a finding unless nothing the model holds depends on it (:mod:`audit.gate.state.idle`).

A generator built from fresh OS entropy and kept for ``predict``'s tie-breaking passes the state probe; one that
drew the noise, or from which the noise generator was jumped, spawned or seeded, stays a finding, ε = ∞.

The verdicts of the leaks are chance events only through the idle test's trials: a generator the release depends
on is cleared with probability at most 0.731**48 (about 3e-7, :data:`audit.gate.state.idle.TRIALS` fits a side,
the coarsest release here, ``OneCoin``, repeating with probability 0.731 per fit); the controls' verdicts are
certain (their models do not depend on the kept generator at all).
"""
from __future__ import annotations

import numpy as np
import pytest

from audit.gate.state.idle import TRIALS, idle_generators
from audit.gate.state.probe import probe_estimator
from subjects import kept_generators as K

D0 = (np.array([[0.0], [0.0], [1.0]]), np.array([0, 0, 1]))
D1 = (np.array([[0.0], [0.0], [1.0], [1.0]]), np.array([0, 0, 1, 1]))


@pytest.mark.parametrize("name", ["TieBreaker", "TieBreakerStamped"])
def test_a_fresh_generator_kept_for_predict_is_not_a_finding(name):
    report = probe_estimator(getattr(K, name), *D0, pair=(D0, D1))
    assert report.verdict == "clean", report.summary()
    assert any("model._rng keeps randomness built from fresh OS entropy" in r for r in report.remarks)
    assert f"replaced in {TRIALS} fits on D" in report.summary()


@pytest.mark.parametrize("name", ["KeptNoiseSource", "JumpedNoise", "SpawnedNoise", "SeedFromKept", "OneCoin"])
def test_a_kept_generator_the_noise_comes_from_stays_a_finding(name):
    report = probe_estimator(getattr(K, name), *D0, pair=(D0, D1))
    assert report.verdict == "violation", report.summary()
    assert "model._rng" in [f.path for f in report.findings]
    assert report.epsilon_lower == np.inf


def test_values_drawn_from_a_kept_tie_breaker_alike_on_every_input_are_not_the_noise():
    """Salts drawn from the kept generator move with its source, but read the same on D, D' and the inputs beside
    them under each replacement: not data-bound, so the generator is cleared (a held-back control failed here)."""
    report = probe_estimator(K.SaltsFromTieBreaker, *D0, pair=(D0, D1))
    assert report.verdict == "clean", report.summary()
    assert any("model._ties keeps randomness built from fresh OS entropy" in r for r in report.remarks)


def test_the_idle_test_names_why_a_generator_stays():
    idle, why = idle_generators(K.JumpedNoise, D0, D1, ["model._rng"])
    assert idle == {} and "moved it and model.counts_" in why
    idle, why = idle_generators(K.TieBreaker, D0, D1, ["model._rng"])
    assert list(idle) == ["model._rng"] and why == ""


def test_a_generator_seeded_by_the_user_is_never_cleared():
    """Only a generator built without a seed can be shown independent of everything else the fit drew."""
    class Seeded(K.TieBreaker):
        def fit(self, X, y):
            super().fit(X, y)
            self._rng = np.random.default_rng(12345)
            return self

    idle, why = idle_generators(Seeded, D0, D1, ["model._rng"])
    assert idle == {} and "model._rng: no source of OS entropy moves it" in why


@pytest.mark.parametrize("name,path", [("CheckpointBeforeDraws", "model.checkpoint_['state'] + model.checkpoint_['inc']"),
                                       ("StateAfterDraws", "model.position_ + model.stream_")])
def test_the_raw_state_of_a_generator_built_without_a_seed_is_replayed(name, path):
    """PCG64's state and increment kept from ``default_rng()``: loaded in place of the generator the fit builds
    (stepped back by the draws after it), they reproduce the published model from D and not from D'."""
    report = probe_estimator(getattr(K, name), *D0, pair=(D0, D1))
    assert report.verdict == "violation", report.summary()
    replay = next(r for r in report.replays if r.path == path)
    assert replay.reproduced and "in place of the generator the fit builds without a seed" in report.summary()


def test_the_raw_state_of_an_idle_generator_is_not_a_finding():
    report = probe_estimator(K.IdleCheckpoint, *D0, pair=(D0, D1))
    assert report.verdict == "clean", report.summary()


@pytest.mark.parametrize("name", ["NoiseStateDict", "RandomCheckpoint"])
def test_a_kept_state_of_the_noise_generator_stays_a_finding(name):
    """A generator's state kept in plain data (a dict, or a pickled and compressed ``Random`` state) is tested as
    a kept generator is: the noise's source moves it, so it stays a finding, ε = ∞."""
    report = probe_estimator(getattr(K, name), *D0, pair=(D0, D1))
    assert report.verdict == "violation", report.summary()
    assert report.epsilon_lower == np.inf


@pytest.mark.parametrize("name,path", [("IdleStateDict", "model.tie_state_"),
                                       ("IdleRandomCheckpoint", "model._tie_blob#zlib.<unpickled>")])
def test_a_kept_state_of_an_idle_generator_is_not_a_finding(name, path):
    report = probe_estimator(getattr(K, name), *D0, pair=(D0, D1))
    assert report.verdict == "clean", report.summary()
    assert any(r.startswith(f"{path} keeps randomness built from fresh OS entropy") for r in report.remarks), \
        report.remarks


def _in_fresh_processes(name):
    from audit.gate.fresh import idle_readings

    return lambda inputs, base: idle_readings(f"subjects.kept_generators:{name}", {}, inputs, base)


@pytest.mark.parametrize("name", ["ModuleTieBreaker", "SpawnedTieBreaker"])
def test_a_tie_breaking_generator_built_at_import_is_cleared_in_fresh_processes(name):
    """Randomness drawn before the fit is new in each fresh process, where the fit's own draws are fed the same
    bytes: the kept generator moves there and nothing data-bound moves with it (a held-back control failed here).
    Without fresh processes it stays a finding, as before."""
    report = probe_estimator(getattr(K, name), *D0, pair=(D0, D1), fresh=_in_fresh_processes(name))
    assert report.verdict == "clean", report.summary()
    assert probe_estimator(getattr(K, name), *D0, pair=(D0, D1)).verdict == "violation"


def test_noise_from_a_generator_built_at_import_stays_a_finding_in_fresh_processes():
    idle, why = idle_generators(K.ModuleNoise, D0, D1, ["model._noise_source"],
                                fresh=_in_fresh_processes("ModuleNoise"))
    assert idle == {} and "which differs between the inputs" in why, why
    report = probe_estimator(K.ModuleNoise, *D0, pair=(D0, D1), fresh=_in_fresh_processes("ModuleNoise"))
    assert report.verdict == "violation" and report.epsilon_lower == np.inf
