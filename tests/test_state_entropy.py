"""The entropy map (audit.gate.state.entropy): OS entropy fed to a fit, and found again bit by bit in the model.

The map is exact, not statistical, except for chance agreement of two 32-mask patterns (a model bit mistaken for
an entropy bit, or two entropy bits alike): probability at most ``bits**2 * 2**-32`` per map, below 1e-5 for the
sizes here; the tests fix the masks' seed, so they are deterministic.
"""
import os
import secrets
import uuid

import numpy as np
from hypothesis import given, settings, strategies as st

from audit.gate.state import entropy as en
from audit.gate.state.fingerprint import leaves


def _fitter(fit_model):
    """``fit(stream) -> (Leaves, drawn)`` for a function that builds the model's attributes."""
    def fit(stream):
        with en.fed(stream) as fed:
            model = fit_model()
        return leaves(model), fed.drawn
    return fit


class _Model:
    pass


def test_fed_feeds_every_os_entropy_reader_and_counts_what_was_drawn():
    data = bytes(range(64))
    with en.fed(data) as fed:
        u = uuid.uuid4()
        r = secrets.randbits(64)
        b = os.urandom(8)
        e = np.random.SeedSequence().entropy
    assert fed.drawn == 16 + 8 + 8 + 16
    assert u.bytes[:6] == data[:6] and b == data[24:32]
    assert r == int.from_bytes(data[16:24], "big") or r == int.from_bytes(data[16:24], "little")
    assert e == int.from_bytes(data[32:48], "little") or e == int.from_bytes(data[32:48], "big")
    assert os.urandom(8) != data[:8] or os.urandom(8) != data[:8]  # restored: fresh OS entropy again


@settings(max_examples=25, deadline=None)
@given(perm_seed=st.integers(0, 2 ** 32 - 1), split=st.integers(1, 63))
def test_any_bit_permutation_of_a_kept_seed_is_read_back(perm_seed, split):
    """A seed kept under any permutation of its 64 bits, cut into two integers anywhere, is read back whole."""
    perm = np.random.default_rng(perm_seed).permutation(64)

    def fit_model():
        seed = secrets.randbits(64)
        spread = sum(((seed >> j) & 1) << int(perm[j]) for j in range(64))
        m = _Model()
        m.parts_ = [spread & ((1 << split) - 1), spread >> split]
        m.noise_ = np.random.default_rng(seed).integers(0, 2 ** 31, size=3)
        return m

    fit = _fitter(fit_model)
    rng = np.random.default_rng(0)
    base = rng.bytes(en.MAX_BYTES)
    t = en.taint(fit, base, rng)
    assert t.drawn == 8 and t.noisy and t.bits == 64
    cand = en.KeptEntropy.of(t, base)
    other = bytes(np.random.default_rng(perm_seed + 1).bytes(8))
    published, _ = fit(other)
    assert cand.value(published)[:8] == other  # every bit read back from the published model


def test_entropy_not_kept_maps_to_nothing_and_a_kept_id_alone_is_not_noise():
    def unkept():
        m = _Model()
        m.run_id_ = uuid.uuid4().hex  # kept, but the noise draws its own entropy
        m.noise_ = np.random.default_rng().integers(0, 100, size=4)
        return m

    rng = np.random.default_rng(1)
    base = rng.bytes(en.MAX_BYTES)
    t = en.taint(_fitter(unkept), base, rng)
    assert t.drawn == 16 + 4 * en.GENERATOR_WORDS and t.noisy  # the uuid, then the generator's words
    assert 0 < t.bits <= 122  # the run id's 122 random bits are carried; the noise's are not
    assert {p for p, _ in t.carrier} == {"model.run_id_#hex"}

    def id_only():
        m = _Model()
        m.run_ = secrets.randbits(64)
        return m

    t = en.taint(_fitter(id_only), base, np.random.default_rng(2))
    assert t.bits == 64 and not t.noisy  # nothing but the id changes with the entropy: not a seed


def test_a_fit_that_draws_no_entropy_costs_one_fit():
    calls = []

    def seeded():
        calls.append(1)
        m = _Model()
        m.noise_ = np.random.default_rng(5).integers(0, 100, size=4)
        return m

    t = en.taint(_fitter(seeded), bytes(en.MAX_BYTES), np.random.default_rng(0))
    assert t.drawn == 0 and not t.carrier and len(calls) == 1


def test_fed_drives_the_random_modules_own_generator_and_restores_it():
    import random

    data = bytes(range(1, 65))
    with en.fed(data) as fed:
        a = random.getrandbits(64)
        b = random.randint(0, 9)
        u = random.random()
    assert a == int.from_bytes(data[:8], "little") and 0 <= b <= 9 and 0 <= u < 1 and fed.drawn >= 8 + 1 + 7
    assert "getrandbits" not in vars(random._inst)  # the instance's own method is back
    random.seed(3)
    first = random.getrandbits(64)
    random.seed(3)
    assert random.getrandbits(64) == first  # the module's generator is the Mersenne twister again


def test_fed_feeds_generators_that_seed_themselves_and_puts_them_back():
    """``default_rng()``, NumPy's legacy global generator and a ``random.Random()`` made without a seed output
    the stream's words (not a hash of them), built at first use; outside the block they are the originals."""
    import random

    data = bytes(range(1, 201))
    words = np.frombuffer(data[:8], dtype="<u4")
    with en.fed(data) as fed:
        g = np.random.default_rng().integers(0, 2 ** 32, size=2, dtype=np.uint64)
    assert g.tolist() == words.tolist() and fed.drawn == 4 * en.GENERATOR_WORDS
    with en.fed(data) as fed:
        assert fed.drawn == 0  # nothing is built before it is used
        legacy = np.random.randint(0, 2 ** 31)
        own = random.Random().getrandbits(64)
        assert np.random.mtrand._rand.randint(0, 2 ** 31) == int(np.frombuffer(data[4:8], dtype="<u4")[0]) & 0x7FFFFFFF
    assert legacy == int(words[0]) & 0x7FFFFFFF and own == int.from_bytes(data[64:72], "little")
    with en.fed(data) as fed:
        raw = os.getrandom(8)
        state = np.random.RandomState().randint(0, 2 ** 31)
        pcg = np.random.Generator(np.random.PCG64()).integers(0, 2 ** 32, dtype=np.uint64)
        seeded = np.random.PCG64(5)
        assert isinstance(seeded, np.random.PCG64) and isinstance(np.random.RandomState(1), np.random.RandomState)
    assert raw == data[:8] and state == int(np.frombuffer(data[8:12], dtype="<u4")[0]) & 0x7FFFFFFF
    # RandomState(1) draws 16 bytes too: NumPy builds an unseeded MT19937 first, then seeds it the legacy way
    assert pcg == int(np.frombuffer(data[8 + 64:8 + 68], dtype="<u4")[0]) and fed.drawn == 8 + 2 * 64 + 16
    assert type(np.random.mtrand._rand) is np.random.RandomState and random.Random.__module__ == "random"
    assert type(np.random.PCG64()) is np.random.PCG64 and np.random.RandomState.__module__ == "numpy.random.mtrand"
    np.random.seed(3)
    first = np.random.randint(0, 2 ** 31)
    np.random.seed(3)
    assert np.random.randint(0, 2 ** 31) == first  # the legacy functions draw from the global generator again


def test_every_part_of_a_value_is_read_as_an_integer():
    """Float and complex values of integer value, array entries of every numeric kind, dates and durations are
    read as the integers they hold (what the entropy map compares bit by bit)."""
    import datetime

    from audit.gate.state.fingerprint import Leaves

    lv = Leaves(numeric={"f": np.array([0.5, 3.0]), "g": np.array([7, 8], dtype=np.float32), "c": 2 + 5j,
                         "d": np.array(["1970-01-02"], dtype="datetime64[D]"), "t": np.timedelta64(9, "s"),
                         "w": datetime.datetime(1970, 1, 1, 0, 0, 1), "span": datetime.timedelta(microseconds=42),
                         "x": 1.5, "b": True})
    assert en.bits_of(lv) == {"f[1]": 3, "g[0]": 7, "g[1]": 8, "c.real": 2, "c.imag": 5, "d[0]": 1, "t": 9,
                              "w": 10 ** 6, "span": 42}


def test_a_set_is_walked_in_the_same_order_whatever_its_hashing():
    from audit.gate.state.fingerprint import leaves

    model = _Model()
    model.parts_ = frozenset({(1, 2 ** 40 + 3), (0, 17)})
    assert {p: v for p, v in leaves(model).numeric.items() if not p.endswith("#len")} == {
        "model.parts_{0}[0]": 0, "model.parts_{0}[1]": 17, "model.parts_{1}[0]": 1, "model.parts_{1}[1]": 2 ** 40 + 3}
