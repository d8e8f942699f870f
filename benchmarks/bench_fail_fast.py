"""CPU seconds from the start of ``audit check`` to its first certain finding, on estimators whose fit takes
about 10 ms (target: within 10 s of CPU): a kept generator, a derived seed kept beside the noise (found by
replay), an OS-entropy seed (replay), and a refusal that separates a pair.

The one-fit probes run before any sampling (:func:`audit.check.audit_subject`): planning the subject (one
calibration fit per candidate dataset, the refusals among them) and the state probe (its walk and replays).
This measures exactly those two steps, through the functions ``check`` calls.

Run: ``PYTHONPATH=.:tests python benchmarks/bench_fail_fast.py``.
"""
from __future__ import annotations

import sys
import time

import numpy as np


def _burn(seconds: float) -> None:
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


class _Slow:
    def __init__(self, epsilon=1.0, random_state=None, work=10e-3):
        self.epsilon, self.random_state, self.work = epsilon, random_state, work

    def get_params(self, deep=True):
        return {"epsilon": self.epsilon, "random_state": self.random_state, "work": self.work}

    def set_params(self, **kw):
        for k, v in kw.items():
            setattr(self, k, v)
        return self

    def predict(self, X):
        return np.full(len(X), self.count_)


class KeptGenerator(_Slow):
    def fit(self, X, y):
        _burn(self.work)
        self.rng_ = np.random.default_rng(self.random_state)
        self.count_ = int(np.sum(np.asarray(y) == 1)) + int(self.rng_.integers(-3, 4))
        return self


class DerivedSeed(_Slow):
    def fit(self, X, y):
        _burn(self.work)
        self.tree_seed_ = int(np.random.default_rng(self.random_state).integers(2**31))
        noise = np.random.default_rng(self.tree_seed_).geometric(0.5) - 1
        self.count_ = int(np.sum(np.asarray(y) == 1)) + int(noise)
        return self


class EntropySeed(_Slow):
    def fit(self, X, y):
        _burn(self.work)
        self.seed_ = int(np.random.SeedSequence().entropy % 2**63)
        noise = np.random.default_rng(self.seed_).geometric(0.5) - 1
        self.count_ = int(np.sum(np.asarray(y) == 1)) + int(noise)
        return self


class OddRefusal(_Slow):
    def fit(self, X, y):
        _burn(self.work)
        if len(y) % 2:
            raise ValueError("odd")
        self.count_ = 0
        return self


def main() -> int:
    from audit.check import Subject, plan_subject
    from audit.gate.channels import state_probe

    sys.modules.setdefault("bench_fail_fast", sys.modules[__name__])
    print("subject            plan (calibration) CPU-s   state probe CPU-s   total   finding")
    for cls in (KeptGenerator, DerivedSeed, EntropySeed, OddRefusal):
        subject = Subject(cls.__name__, f"bench_fail_fast:{cls.__name__}", 1.0, bounds=[(0.0, 1.0)], classes=[0, 1])
        t0 = time.process_time()
        plan = plan_subject(subject)
        t1 = time.process_time()
        probe = state_probe(plan, subject)
        t2 = time.process_time()
        found = "crash: " + str(len(plan["crash_pairs"])) + " pair(s)" if plan["crash_pairs"] else \
            f"state {probe.verdict}"
        print(f"{cls.__name__:18s} {t1 - t0:26.2f} {t2 - t1:19.2f} {t2 - t0:7.2f}   {found}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
