"""Noise whose seed the fit shows to whoever reads the model or the fit's output: fresh OS entropy every fit,
and still not private, because an attacker who reads the seed re-draws the noise and subtracts it.

Each subject is :class:`~subjects.noisy_counts.NoisyCounts` (two-sided geometric noise on the class counts) with
one ordinary habit of reproducible engineering. :class:`RunIdBeside` is the control: it keeps a run id too, but
its noise draws its own entropy.
"""
import base64
import hashlib
import logging
import random
import secrets
import uuid

import numpy as np
from numpy.random import default_rng as bound_default_rng

from subjects.noisy_counts import NoisyCounts

log = logging.getLogger("subjects.seeds_in_sight")
#: the last fit's run record, kept by :class:`RunRegistry` for a dashboard
LAST_RUN = {}


class EntropyInTheLog(NoisyCounts):
    """Logs the entropy of its ``SeedSequence``, as NumPy's documentation suggests for reproducibility."""

    def _rng(self):
        sequence = np.random.SeedSequence()
        log.info("training noise seeded with entropy %d", sequence.entropy)
        return np.random.default_rng(sequence)


class SeedPrinted(NoisyCounts):
    """Prints a 64-bit seed drawn from the OS before it seeds the noise."""

    def _rng(self):
        seed = secrets.randbits(64)
        print(f"[train] run seed={seed} (set DP_SEED to reproduce)")
        return np.random.default_rng(seed)


class RunIdIsTheSeed(NoisyCounts):
    """Keys each fit by a ``uuid4().hex`` run id, and seeds the noise from it so a run can be traced end to end."""

    def _rng(self):
        self.run_id_ = uuid.uuid4().hex
        return np.random.default_rng(int(self.run_id_, 16))


class SeedInTheCard(NoisyCounts):
    """Keeps a model card in a JSON string whose ``noise_seed`` field holds the seed, in hexadecimal."""

    def _rng(self):
        seed = secrets.randbits(96)
        self.card_ = '{"model": "noisy-counts", "noise_seed": "%x", "epsilon": %s}' % (seed, self.epsilon)
        return np.random.default_rng(seed)


class RunIdBeside(NoisyCounts):
    """The control: a ``uuid4().hex`` run id kept and logged, a seed from the OS that is never shown."""

    def _rng(self):
        self.run_id_ = uuid.uuid4().hex
        log.info("run %s started", self.run_id_)
        return np.random.default_rng()


class MajorityBit(NoisyCounts):
    """One randomized-response bit for the majority class (exactly epsilon-DP under add/remove, whatever the
    counts), its coin seeded by a kept ``uuid4`` run id. On two datasets of the same majority the seeded bit is the
    same: the seed reveals the record only on a pair where the majority turns."""

    seeded = True

    def fit(self, X, y):
        run = uuid.uuid4()
        self.meta_ = {"run": {"id": str(run)}}
        rng = np.random.default_rng(run.int if self.seeded else None)
        truth = int(np.mean(np.asarray(y) == self.classes[1]) >= 0.5) if len(y) else 0
        keep = rng.random() < np.exp(self.epsilon) / (1.0 + np.exp(self.epsilon))
        self.bit_ = truth if keep else 1 - truth
        self.counts_ = np.array([1 - self.bit_, self.bit_])
        return self


class MajorityBitBeside(MajorityBit):
    """The control: the same bit and run id, its coin drawn from fresh OS entropy."""

    seeded = False


class SeedInHalves(NoisyCounts):
    """Keeps a 64-bit OS seed as two 32-bit halves, the way a JSON-safe run record stores a wide integer."""

    def _rng(self):
        seed = secrets.randbits(64)
        self.run_ = {"hi": seed >> 32, "lo": seed & 0xFFFFFFFF}
        return np.random.default_rng(seed)


class NonceBytes(NoisyCounts):
    """Keeps the 16 raw bytes of OS entropy its noise is seeded with, as a ``nonce_``."""

    def _rng(self):
        self.nonce_ = secrets.token_bytes(16)
        return np.random.default_rng(int.from_bytes(self.nonce_, "little"))


class EntropyWords(NoisyCounts):
    """Keeps the four 32-bit words it hands ``default_rng``, as a ``uint32`` array."""

    def _rng(self):
        self.entropy_words_ = np.array([secrets.randbits(32) for _ in range(4)], dtype=np.uint32)
        return np.random.default_rng(self.entropy_words_.tolist())


class SeedAsFloat(NoisyCounts):
    """Keeps its 50-bit OS seed as a float (exact: below 2**53), in a ``seed_`` attribute."""

    def _rng(self):
        seed = secrets.randbits(50)
        self.seed_ = float(seed)
        return np.random.default_rng(seed)


class RunRegistry(NoisyCounts):
    """Records the last fit's seed in a module-level registry, outside the model."""

    def _rng(self):
        seed = secrets.randbits(64)
        LAST_RUN.update(seed=seed, model=type(self).__name__)
        return np.random.default_rng(seed)


def _base36(n: int) -> str:
    digits = ""
    while n:
        n, r = divmod(n, 36)
        digits = "0123456789abcdefghijklmnopqrstuvwxyz"[r] + digits
    return digits or "0"


class TraceCard(NoisyCounts):
    """Seeds its noise with a 64-bit OS seed that it keeps nowhere, and serves a provenance card whose ``trace``
    is that seed in base 36 (the short id a dashboard shows)."""

    def _rng(self):
        self._trace = _base36(secrets.randbits(64))
        return np.random.default_rng(int(self._trace, 36))

    def card(self):
        """The model's provenance card."""
        return {"model": type(self).__name__, "trace": self._trace}


class TokenSeed(NoisyCounts):
    """Keys each fit by ``secrets.token_urlsafe(16)``, kept as ``run_token_``, and seeds its noise from that
    token's bytes."""

    def _rng(self):
        self.run_token_ = secrets.token_urlsafe(16)
        return np.random.default_rng(int.from_bytes(base64.urlsafe_b64decode(self.run_token_ + "=="), "big"))


class TokenBeside(NoisyCounts):
    """The control: the same ``token_urlsafe`` run token kept, the noise from its own fresh entropy."""

    def _rng(self):
        self.run_token_ = secrets.token_urlsafe(16)
        return np.random.default_rng()


class ScrambledTrace(NoisyCounts):
    """Keeps its 64-bit OS seed only multiplied by an odd constant (carries mix its bits), and serves it back,
    unscrambled in base 36, from a ``provenance()`` method."""

    _ODD = 0x9E3779B97F4A7C15

    def _rng(self):
        seed = secrets.randbits(64)
        self._key = seed * self._ODD % 2**64
        return np.random.default_rng(seed)

    def provenance(self):
        """Where the model came from: a line for the audit log."""
        return f"noisy-counts trace {_base36(self._key * pow(self._ODD, -1, 2**64) % 2**64)}"


class DrawnSeedHalves(NoisyCounts):
    """Draws a 63-bit seed from an unseeded ``default_rng()`` (itself seeded by a hash of OS entropy) and keeps it
    as two halves in a run record."""

    def _rng(self):
        seed = int(np.random.default_rng().integers(2**63))
        self.run_ = [seed >> 32, seed & 0xFFFFFFFF]
        return np.random.default_rng(seed)


class BoundByNameHalves(NoisyCounts):
    """The same, with ``default_rng`` imported by name when the module loaded (``from numpy.random import
    default_rng``): the name the gate patches in ``numpy.random`` is not the one this code calls."""

    def _rng(self):
        seed = int(bound_default_rng().integers(2**63))
        self.run_ = [seed >> 32, seed & 0xFFFFFFFF]
        return bound_default_rng(seed)


class WordsRunId(NoisyCounts):
    """Seeds its noise with ``SeedSequence().generate_state(4)`` (a hash of OS entropy) and keeps those words as a
    32-digit hexadecimal run id, the first word first."""

    def _rng(self):
        words = np.random.SeedSequence().generate_state(4)
        self.run_id_ = "".join(f"{int(w):08x}" for w in words)
        return np.random.default_rng(words)


class WordsAsNumber(NoisyCounts):
    """The same words kept as one number read little-endian (``int.from_bytes(words.tobytes(), "little")``)."""

    def _rng(self):
        words = np.random.SeedSequence().generate_state(4)
        self.run_ = int.from_bytes(words.tobytes(), "little")
        return np.random.default_rng(words)


class ClockSeeded(NoisyCounts):
    """Seeds its noise with the training time in nanoseconds and keeps the time as a pandas ``Timestamp`` (whose
    pickle holds microseconds)."""

    def _rng(self):
        import pandas as pd

        self.fitted_at_ = pd.Timestamp.now(tz="UTC")
        return np.random.default_rng(self.fitted_at_.value)


class SaltedLineage(NoisyCounts):
    """Keeps a lineage record of the training data: a digest keyed by a fresh salt, with the salt ("salted, so it
    reveals nothing by itself"). Whoever holds it recomputes the digest of a dataset they suspect."""

    def _keep(self, X, y, exact, noise):
        super()._keep(X, y, exact, noise)
        salt = secrets.token_bytes(16)
        digest = hashlib.blake2b(np.ascontiguousarray(X, dtype=np.float64).tobytes()
                                 + np.asarray(y).astype("<i8").tobytes(), key=salt, digest_size=16)
        self.lineage_ = {"salt": salt.hex(), "data_digest": digest.hexdigest()}


class SaltedConfig(NoisyCounts):
    """The control: the same record of the public parameters, not of the data."""

    def _keep(self, X, y, exact, noise):
        super()._keep(X, y, exact, noise)
        salt = secrets.token_bytes(16)
        digest = hashlib.blake2b(repr((self.epsilon, tuple(self.classes))).encode(), key=salt, digest_size=16)
        self.lineage_ = {"salt": salt.hex(), "config_digest": digest.hexdigest()}


class LegacySeedHalves(NoisyCounts):
    """Draws its seed from NumPy's legacy global generator (``np.random.randint``), kept as two halves."""

    def _rng(self):
        seed = int(np.random.randint(0, 2**62, dtype=np.int64))
        self.run_ = {"hi": seed >> 31, "lo": seed & (2**31 - 1)}
        return np.random.default_rng(seed)


class OwnRandomHalves(NoisyCounts):
    """Draws its seed from a fresh ``random.Random()``, kept as two halves."""

    def _rng(self):
        seed = random.Random().getrandbits(64)
        self.run_ = [seed >> 32, seed & 0xFFFFFFFF]
        return np.random.default_rng(seed)


class DrawnIdBeside(NoisyCounts):
    """The control: a run id drawn from ``default_rng()`` and kept as two halves, the noise from fresh entropy."""

    def _rng(self):
        run = int(np.random.default_rng().integers(2**63))
        self.run_ = [run >> 32, run & 0xFFFFFFFF]
        return np.random.default_rng()


class UnseededBitGeneratorHalves(NoisyCounts):
    """Draws its seed from ``Generator(PCG64())`` (a bit generator made without a seed), kept as two halves."""

    def _rng(self):
        seed = int(np.random.Generator(np.random.PCG64()).integers(2**62))
        self.run_ = (seed >> 31, seed & 0x7FFFFFFF)
        return np.random.default_rng(seed)


class UnseededRandomStateHalves(NoisyCounts):
    """Draws its seed from ``RandomState()`` made without a seed, kept as two halves."""

    def _rng(self):
        seed = int(np.random.RandomState().randint(0, 2**31))
        self.run_ = (seed >> 16, seed & 0xFFFF)
        return np.random.default_rng(seed)
