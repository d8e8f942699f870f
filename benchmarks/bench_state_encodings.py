"""CPU seconds of the state probe on estimators whose fit takes about 1 ms and which keep their noise generator's
state in an encoding (issue 43 item 2), beside a correct control that keeps only public facts.

Each row is one :func:`audit.engine.state_probe.probe_estimator` call as ``check`` makes it (its walk, the three
probe fits, the identification of raw words against the seeded generators, the calibration and the replay
measurement up to its stopping rule). The control's row is the probe's cost on a model with nothing to find.

Run: ``PYTHONPATH=.:tests python benchmarks/bench_state_encodings.py``.
"""
from __future__ import annotations

import json
import sys
import time

import numpy as np

from subjects.kept_state_forms import _Noisy

_M64 = 2 ** 64 - 1


def _burn(seconds: float) -> None:
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


class _Timed(_Noisy):
    def _noise(self, y):
        _burn(1e-3)
        rng = np.random.default_rng(self.random_state)
        self.counts_ = self._counts(y, rng.laplace)
        return rng


class PublicFacts(_Timed):
    def fit(self, X, y):
        self._noise(y)
        self.n_features_in_, self.classes_ = np.asarray(X).shape[1], np.array([0, 1])
        return self


class StateAsJson(_Timed):
    def fit(self, X, y):
        self.rng_state_ = json.dumps(self._noise(y).bit_generator.state)
        return self


class PCG64Pair(_Timed):
    def fit(self, X, y):
        st = self._noise(y).bit_generator.state["state"]
        self.pcg_ = [st["state"], st["inc"]]
        return self


class MT19937Key(_Timed):
    def fit(self, X, y):
        _burn(1e-3)
        rs = np.random.RandomState(self.random_state)
        self.counts_ = self._counts(y, rs.laplace)
        self.mt_key_ = rs.get_state()[1].copy()
        return self


class SFC64Words(_Timed):
    def fit(self, X, y):
        _burn(1e-3)
        rs = self.random_state
        rng = rs if isinstance(rs, np.random.Generator) else np.random.Generator(np.random.SFC64(rs))
        self.counts_ = self._counts(y, rng.laplace)
        self.sfc_ = tuple(int(w) for w in rng.bit_generator.state["state"]["state"])
        return self


def main() -> int:
    from audit.engine.state_probe import probe_estimator

    X = np.array([[0.1], [0.4], [0.6], [0.9]])
    Y = np.array([0, 0, 1, 1])
    print("subject        probe CPU-s   verdict     findings")
    for cls in (PublicFacts, StateAsJson, PCG64Pair, MT19937Key, SFC64Words):
        t0 = time.process_time()
        rep = probe_estimator(cls, X, Y, epsilon=1.0)
        took = time.process_time() - t0
        print(f"{cls.__name__:14s} {took:11.2f}   {rep.verdict:11s} {[f.type_name for f in rep.findings][:1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
