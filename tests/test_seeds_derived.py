"""Where a fit's seed came from (``audit.gate.state.derived``): every seed a fit hands a generator, traced back
through the standard digests to a text the model keeps or the fit emits. Exact tests: a derivation matches or
it does not."""
from __future__ import annotations

import hashlib
import zlib

import numpy as np
from hypothesis import assume, given, settings, strategies as st

from audit.gate.emissions import captured
from audit.gate.state.derived import derivations, traced
from audit.gate.state.reseed import recorded


def test_the_derivations_are_the_ones_engineers_write():
    d = derivations("fit-x1y2.tmp")
    b = b"fit-x1y2.tmp"
    assert d["#crc32"] == zlib.crc32(b) and d["#adler32"] == zlib.adler32(b)
    assert d["#sha256[:8]"] == int(hashlib.sha256(b).hexdigest()[:16], 16)
    assert d["#md5%2**32"] == int(hashlib.md5(b).hexdigest(), 16) % 2**32
    assert d["#hash%2**32"] == hash("fit-x1y2.tmp") % 2**32 and d["#abs(hash)"] == abs(hash("fit-x1y2.tmp"))


class _KeepsAndSeeds:
    """Keeps ``text`` and seeds its noise with one derivation of it (``how``)."""

    def __init__(self, text, how):
        self.text, self.how = text, how

    def fit(self, X, y):
        self.note_ = self.text
        self.counts_ = np.bincount(y, minlength=2) + np.random.default_rng(derivations(self.text)[self.how]).integers(9, size=2)
        return self


@settings(max_examples=60, deadline=None)
@given(text=st.text(min_size=1, max_size=40), how=st.sampled_from(sorted(derivations("x"))))
def test_any_derivation_of_any_kept_text_is_traced(text, how):
    assume(derivations(text)[how] >= 0)  # a negative hash() is no seed (numpy refuses it); its salt is the process's
    est = _KeepsAndSeeds(text, how)
    with captured() as emitted, recorded() as seeds:
        est.fit(np.zeros((3, 1)), np.array([0, 1, 1]))
    assert seeds == [derivations(text)[how]]
    found = traced(seeds, est, emitted)
    assert f"model.note_{how}" in found or any(k.startswith("model.note_#word[") for k in found), found


def test_a_word_of_a_printed_line_and_a_file_name_inside_a_path_are_read():
    class Prints:
        def fit(self, X, y):
            print("starting run alpha-7f3e on 3 rows")
            np.random.default_rng(zlib.crc32(b"alpha-7f3e"))
            np.random.default_rng(zlib.crc32(b"run-5.log"))
            self.where_ = "/var/tmp/runs/run-5.log"
            return self

    est = Prints()
    with captured() as emitted, recorded() as seeds:
        est.fit(None, None)
    found = traced(seeds, est, emitted)
    assert found["emitted['stdout']#word[1]#crc32"] == zlib.crc32(b"alpha-7f3e")
    assert found["model.where_#name#crc32"] == zlib.crc32(b"run-5.log")


def test_no_seed_handed_over_traces_nothing():
    class Fresh:
        def fit(self, X, y):
            self.note_ = "anything"
            np.random.default_rng()
            return self

    with captured() as emitted, recorded() as seeds:
        est = Fresh().fit(None, None)
    assert seeds == [] and traced(seeds, est, emitted) == {}
