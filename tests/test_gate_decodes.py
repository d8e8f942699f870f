"""The gate reads a seed wherever and however an adversary decodes it, and a count in the order of a dict's keys
(``tests/subjects/seeds_decoded.py``), without crying wolf on the same forms beside fresh noise or on a registry
keyed by the model's address.

Through ``python -m audit check`` at the quick budget, seed 0. The seeds come from OS entropy, so each run
differs: a leak is missed only if the state probe's exact replay fails by chance (an entropy bit read wrongly:
below ``2**-32`` per bit for the linear reading, ``2**-32`` for two entropy bits alike over 32 masks), and a
control's false alarm is bounded by the replay's and the determinism test's alpha (below 0.01).
"""
from __future__ import annotations

import json

import numpy as np
import pytest

from audit.__main__ import main
from audit.gate.addresses import is_address, refresh
from audit.gate.state import entropy as en

_DECODED = "subjects.seeds_decoded"


def _check(target: str, tmp_path, *extra) -> tuple[int, dict]:
    code = main(["check", target, "--bounds", "[[0, 1]]", "--classes", "0,1", "--epsilon", "1", "--out",
                 str(tmp_path), "--quiet", "--witnesses", "off", *extra])
    row = json.loads(next(tmp_path.glob("check-*/report.json")).read_text())["claims"][0]
    return code, row


@pytest.mark.parametrize("name,where", [
    ("XorshiftSession", "model.session_"), ("GrayTag", "model.tag_"),
    ("LastBuildOnTheClass", "type(model).last_build"), ("BuildRecord", "model.build_['key'][0]"),
    ("WordListCard", "model.card_#seq[0]"), ("Ascii85DebugLog", "emitted['logs']"),
    ("SeedInAConfigFile", "emitted['files']")])
def test_a_seed_an_adversary_decodes_is_replayed(name, where, tmp_path):
    code, row = _check(f"{_DECODED}:{name}", tmp_path)
    assert code == 1 and row["decided_by"][0] == "kept state", row["detail"][:600]
    assert where in row["detail"] and "reproduces the published model" in row["detail"], row["detail"][:600]


def test_a_dict_ordered_by_the_exact_counts_is_a_deterministic_trace(tmp_path):
    code, row = _check(f"{_DECODED}:RankedCounts", tmp_path)
    assert code == 1 and row["decided_by"][0] == "determinism", row["detail"][:600]
    assert "model.table_" in row["detail"]


@pytest.mark.parametrize("name", ["GrayRunIdBeside", "AddressRegistry", "NoisyRankBeside"])
def test_the_same_forms_beside_fresh_noise_pass(name, tmp_path):
    """Every channel runs as in a full check; the sampled stages on the default pairs at 1,000 outputs per input
    only (a false alarm here would come from a channel, not from sampling)."""
    code, row = _check(f"{_DECODED}:{name}", tmp_path, "--no-search", "--no-scale", "--n-samples", "1000")
    assert code == 0 and row["verdict"] == "pass", row["detail"][:600]


def test_an_address_is_masked_and_a_seed_is_not():
    refresh()
    objects = [object() for _ in range(100)]
    assert all(is_address(id(o)) for o in objects)
    rng = np.random.default_rng(0)
    seeds = [int(x) for x in rng.integers(0, 2**63, size=10_000, dtype=np.int64)]
    assert sum(map(is_address, seeds)) <= 1  # a 64-bit number lands in a mapping with probability about 2**-30
    assert not any(is_address(n) for n in range(0, 1 << 16, 16))  # counts never


@pytest.mark.parametrize("encode", [lambda s: s ^ (s >> 1), lambda s: s ^ 0x0F0F0F0F0F0F0F0F,
                                    lambda s: (s ^ (s << 21) & (1 << 64) - 1) ^ (s >> 35)])
def test_the_linear_reading_inverts_an_encoding_linear_over_bits(encode):
    """A fake fit that keeps ``encode(seed)`` beside noise hashed from the seed: every entropy bit of the seed is
    read back (as an exclusive or of the kept bits), and no bit of the stream it did not read."""
    from audit.gate.state.fingerprint import Leaves

    def fit(stream):
        seed = int.from_bytes(stream[:8], "little")
        noisy = int(np.random.default_rng(seed).integers(0, 2**40))
        return Leaves(numeric={"model.key_": encode(seed), "model.noisy_": noisy}), 8

    rng = np.random.default_rng(3)
    t = en.taint(fit, rng.bytes(en.MAX_BYTES), rng)
    read = set(t.carrier.values()) | set(t.combos)
    assert read == set(range(64)), sorted(set(range(64)) - read)
    for j, bits in t.combos.items():
        assert {p for p, _ in bits} == {"model.key_"}, (j, bits)
