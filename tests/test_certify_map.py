"""The certificate engine's ``_map`` (:mod:`audit.engine.exact_law.domain`): the same results in order whether the work
runs here or partly in a pool."""
from __future__ import annotations

import math

import audit.engine.exact_law.domain as certify


def test_small_work_stays_here_and_large_work_goes_to_a_pool_with_the_same_results(monkeypatch):
    work = list(range(40))
    want = [math.sqrt(w) for w in work]
    assert certify._map(math.sqrt, work, 2, None, "", "", 4) == want  # cheap: no pool started
    monkeypatch.setattr(certify, "POOL_PROBE_S", 0.0)
    monkeypatch.setattr(certify, "POOL_WORTH_S", -1.0)  # every rest is worth a pool
    assert certify._map(math.sqrt, work, 2, None, "", "", 4) == want
    assert certify._map(math.sqrt, [], 2, None, "", "", 4) == []
