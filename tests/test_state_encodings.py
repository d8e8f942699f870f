"""Kept randomness in any encoding (issue 43 item 2): strings spelling a state, a bit generator's raw words.

Deterministic parts: parsing, the readings of words, their identification against generators seeded with a known
seed, the stepping back of Philox and SFC64, the findings' names and remedies. Statistical parts: every probe below
draws its secret seeds from ``default_rng(PROBE_SEED)`` (seed 1,904,270,361), so each count is fixed; the epsilon
lower bounds are Clopper-Pearson bounds at alpha 0.05 split (Bonferroni) over the replays and the six looks, so a
claim that holds is flagged with probability at most 0.05 for another seed. The controls are clean by construction
(no generator seeded with the probe's seed holds their numbers), not by chance. ``check`` runs at alpha 0.05 with seed
0, so its verdicts are fixed; the correct control would raise a false alarm with probability at most 0.05 for
another seed.
"""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

from audit.__main__ import main
from audit.engine import replay as rp
from audit.engine import state_codec as codec
from audit.engine.state_probe import PROBE_SEED, probe_estimator
from audit.engine.state_walk import recognise
from subjects import kept_state_encodings as enc
from subjects import kept_state_forms as forms

X = np.array([[0.1], [0.4], [0.6], [0.9]])
Y = np.array([0, 0, 1, 1])


@pytest.mark.parametrize("cls, path, name", [
    (enc.StateAsJson, "model.rng_state_", "PCG64 state as JSON string"),
    (enc.StateAsRepr, "model.rng_state_", "PCG64 state as repr string"),
    (enc.PCG64Pair, "model.pcg_", "PCG64 state as a list of 2 ints"),
    (enc.PCG64TwoAttributes, "model.stream_pos_ + model.stream_id_", "PCG64 state as two ints side by side"),
    (enc.PCG64Words, "model.words_", "PCG64 state as a uint64 array of 4 words"),
    (enc.PCG64Bytes, "model.checkpoint_", "PCG64 state as bytes (little-endian 64-bit words)"),
    (enc.MT19937KeyPos, "model.mt_key_", "MT19937 key as a uint32 array of 624 words"),
    (enc.PhiloxWords, "model.philox_", "Philox key as a uint64 array of 6 words"),
    (enc.SFC64Words, "model.sfc_", "SFC64 state as a tuple of 4 ints"),
])
def test_each_encoding_is_a_finding_named_by_path_and_encoding_and_its_replay_reproduces(cls, path, name):
    """The kept words are the state of the generator seeded with the probe's seed after the fit's draws; loading
    each published model's words into a fresh generator at its fit's start and refitting on D reproduces that model
    20/20 times from D and 0/20 from D' (seeded as the module docstring says)."""
    rep = probe_estimator(cls, X, Y, epsilon=1.0)
    assert rep.verdict == "violation" and math.isinf(rep.epsilon_lower)
    assert {(f.path, f.kind, f.type_name) for f in rep.findings} == {(path, "state", name)}
    r = next(r for r in rep.replays if r.path == path)
    assert r.origin == "kept" and (r.k0, r.n0, r.k1, r.n1) == (20, 20, 0, 20) and r.epsilon_lower > 1.0
    assert f"{name} at {path}" in rep.evidence and "20/20 fits from D" in rep.evidence
    assert not [q for q in rep.replays if q.path != path]  # the words' own ints are not replayed as seeds
    attr = path.split(".", 1)[1].split(" + ")[0]
    drop = f"drop the attribute{'s' if '+' in path else ''} `{attr}`"
    assert rep.evidence.endswith("draw fresh entropy per fit") and drop in rep.evidence
    assert all(f.remedy in f.describe() for f in rep.findings)


@pytest.mark.parametrize("cls", [enc.RunIdentifier, enc.PublicFacts, forms.NoisyBigCounts, forms.CleanLocal])
def test_numbers_that_look_like_a_state_are_not_one(cls):
    """Two odd 128-bit ints drawn from the generator (they change from fit to fit), a hash of public parameters (odd,
    at least 2**64), large noisy counts: no generator seeded with the probe's seed holds them, so nothing is named."""
    rep = probe_estimator(cls, X, Y, epsilon=1.0)
    assert rep.verdict == "clean" and not rep.findings and rep.epsilon_lower == 0.0


@pytest.mark.parametrize("cls, path, kind, found", [
    (forms.SeedAsString, "model.tag_", "seed", False),  # the injected seed: a note (tests/test_state_probe.py)
    (forms.SeedAsWords, "model.words_", "seed", False),
    (forms.KeepsBitGeneratorState, "model.rng_state_", "state", True),
])
def test_plain_seeds_and_state_dicts_are_still_read(cls, path, kind, found):
    rep = probe_estimator(cls, X, Y, epsilon=1.0)
    assert ((path, kind) in {(f.path, f.kind) for f in (rep.findings if found else rep.notes)})


def test_strings_spelling_a_state_are_parsed_safely_and_bounded():
    g = np.random.default_rng(5)
    st = g.bit_generator.state
    assert codec.parse_text(json.dumps(st)) == (st, "JSON")
    assert codec.parse_text(str(st)) == (st, "repr")
    assert codec.parse_text(json.dumps(st).encode()) == (st, "JSON")
    mt = np.random.MT19937(3).state  # repr holds array([...], dtype=uint32)
    parsed, how = codec.parse_text(repr(mt))
    assert how == "repr" and parsed["state"]["key"] == mt["state"]["key"].tolist()
    assert recognise(repr(mt), None) == ("state", "MT19937 state as repr string")
    assert codec.parse_text("__import__('os').system('true') # bit_generator") is None  # no calls evaluated
    assert codec.parse_text("{'bit_generator': 'PCG64'}") is None  # no state inside
    assert codec.parse_text(" " * codec.MAX_TEXT + json.dumps(st)) is None  # too long to parse
    assert codec.parse_text('{"bit_generator": "Nope", "state": {}}') is None
    assert recognise("fitted with PCG64, bit_generator state not kept", None) is None


def test_words_are_read_every_way_and_identified_only_against_the_seeded_generator():
    g = np.random.default_rng(PROBE_SEED)
    g.random(7)
    s, inc = (g.bit_generator.state["state"][k] for k in ("state", "inc"))
    assert codec.identify(codec.View("x", (s, inc)), PROBE_SEED)[0].k == 7
    assert codec.identify(codec.View("x", (inc, s)), PROBE_SEED)[0].layout == ("2", 1)
    assert codec.identify(codec.View("x", (s, inc)), PROBE_SEED + 1) == []  # another seed's increment
    assert codec.identify(codec.View("x", (s, inc ^ 2)), PROBE_SEED) == []  # odd, large, not the increment
    assert codec.identify(codec.View("x", (s, inc)), None) == []
    raw = s.to_bytes(16, "big") + inc.to_bytes(16, "big")
    encodings = [v.encoding for v in codec.views(raw)]
    assert "bytes (big-endian 128-bit words)" in encodings and len(encodings) == 6
    hit = [m for v in codec.views(raw) for m in codec.identify(v, PROBE_SEED)]
    assert [m.name for m in hit] == ["PCG64 state as bytes (big-endian 64-bit words)",
                                     "PCG64 state as bytes (big-endian 128-bit words)"]
    assert codec.views(np.array([-1, 2], dtype=np.int8))[0].words == (255, 2)  # signed words read as unsigned
    assert codec.views([1.5, 2]) == [] and codec.views([True, 2]) == [] and codec.views(b"\x80\x04" * 8) == []


def test_dxsm_is_told_from_pcg64_by_its_multiplier():
    g = np.random.Generator(np.random.PCG64DXSM(PROBE_SEED))
    g.random(3)
    st = g.bit_generator.state["state"]
    (m,) = codec.identify(codec.View("x", (st["state"], st["inc"])), PROBE_SEED)
    assert (m.family, m.k) == ("PCG64DXSM", 3)
    assert m.start((st["state"], st["inc"])).random() == np.random.Generator(np.random.PCG64DXSM(PROBE_SEED)).random()


def test_philox_and_sfc64_are_stepped_back_exactly():
    p = np.random.Philox(11)
    first = p.random_raw(9)
    assert rp.consumption(p, 11) == 9
    assert np.array_equal(rp.rewound(p, 9).bit_generator.random_raw(9), first)
    assert np.array_equal(rp.rewound(p.state, 4).bit_generator.random_raw(4), first[5:])
    q = np.random.SFC64(11)
    first = q.random_raw(1000)
    assert rp.consumption(q, 11) == 1000
    assert np.array_equal(rp.rewound(json.dumps({**q.state, "state": {"state": q.state["state"]["state"].tolist()}}),
                                     1000).bit_generator.random_raw(1000), first)
    with pytest.raises(ValueError):
        codec.philox_at([1, 2], 3)


def test_a_mt19937_key_past_its_first_block_is_a_finding_without_a_replay():
    """The key after 700 draws of RandomState(seed) is its second block: named (epsilon infinite by the kept-generator
    argument), not stepped back."""
    class LongMT(forms._Noisy):
        def fit(self, X, y):
            rs = np.random.RandomState(self.random_state)
            rs.random_sample(350)  # 700 words
            self.counts_ = self._counts(y, rs.laplace)
            self.key_ = rs.get_state()[1].copy()
            return self

    rep = probe_estimator(LongMT, X, Y)
    assert [(f.path, f.type_name) for f in rep.findings] == [("model.key_",
                                                             "MT19937 key as a uint32 array of 624 words")]
    r = next(r for r in rep.replays if r.path == "model.key_")
    assert not r.reproduced and "block 2 of RandomState(seed)" in r.reason and math.isinf(rep.epsilon_lower)


BASE = ["--epsilon", "1", "--quiet", "--n-samples", "2000", "--no-search", "--bounds", "[[0, 1]]", "--classes", "0,1"]


@pytest.mark.parametrize("name, path, encoding", [
    ("StateAsJson", "model.rng_state_", "PCG64 state as JSON string"),
    ("PCG64Pair", "model.pcg_", "PCG64 state as a list of 2 ints"),
])
def test_check_fails_the_gate_naming_the_attribute_and_the_encoding(tmp_path, name, path, encoding):
    assert main(["check", f"subjects.kept_state_encodings:{name}", *BASE, "--out", str(tmp_path)]) == 1
    report = tmp_path / f"check-subjects.kept_state_encodings-{name}" / "report.json"
    row = json.loads(report.read_text())["claims"][0]
    assert row["verdict"] == "violation" and row["decided_by"][0] == "kept state"
    assert any(f["path"] == path and f["type"] == encoding for f in row["state"]["findings"])
    attr = path.split(".", 1)[1]
    assert f"{encoding} at {path}" in row["detail"] and f"drop the attribute `{attr}`" in row["detail"]


def test_check_passes_the_control_that_keeps_public_facts(tmp_path):
    assert main(["check", "subjects.kept_state_encodings:PublicFacts", *BASE, "--out", str(tmp_path)]) == 0
