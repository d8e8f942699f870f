"""Noise seeded from the OS, its seed kept inside a *part* of a value, or served by a property: the parts an
attacker reads as easily as a plain attribute.

Each subject is :class:`~subjects.noisy_counts.NoisyCounts` seeded from a 48-bit OS seed (``secrets``), with the
seed kept in one more place. :class:`MetaBeside` is the control: the same float metadata array holds a random
number, and the noise draws its own entropy.
"""
import secrets
import uuid

import numpy as np

from subjects.noisy_counts import NoisyCounts, SeededFromTheOS

_ODD = 0x9E3779B97F4A7C15


class _SeededFromTheOS(SeededFromTheOS):
    SEED_BITS = 48


class SeedInFloatMeta(_SeededFromTheOS):
    """Packs ``[epsilon, classes, seed]`` into one float64 metadata array (exact: the seed is below 2**53)."""

    def _keep_seed(self, seed):
        self.meta_ = np.array([self.epsilon, len(self.classes), float(seed)])


class SeedInFloat32Halves(_SeededFromTheOS):
    """Keeps the seed as two 24-bit halves in a float32 array (each exact)."""

    def _keep_seed(self, seed):
        self.meta_ = np.array([seed & 0xFFFFFF, seed >> 24], dtype=np.float32)


class SeedInImaginaryPart(_SeededFromTheOS):
    """Tags the model with a complex number whose imaginary part is the seed."""

    def _keep_seed(self, seed):
        self.tag_ = complex(self.epsilon, float(seed))


class SeedInASet(_SeededFromTheOS):
    """Keeps the seed as two tagged halves in a frozenset (whose iteration order follows hashing)."""

    def _keep_seed(self, seed):
        self.parts_ = frozenset({(0, seed & 0xFFFFFF), (1, seed >> 24)})


class SeedServedByAProperty(_SeededFromTheOS):
    """Keeps the seed only scrambled (multiplied by an odd constant plus an offset: carries mix its bits), and
    unscrambles it in a public property."""

    def _keep_seed(self, seed):
        self._key = (seed * _ODD + 12345) % 2**64

    @property
    def run_seed(self):
        """The run's seed, for the audit log."""
        return (self._key - 12345) * pow(_ODD, -1, 2**64) % 2**64


class SeedInUuid1Time(NoisyCounts):
    """A time-ordered ``uuid1`` run id, kept as text; the noise seeded by its 60-bit time field "so a run can be
    replayed from its id" (the text spells the field's parts out of order)."""

    def _rng(self):
        run = uuid.uuid1()
        self.run_id_ = str(run)
        return np.random.default_rng(run.time)


class Uuid1Beside(NoisyCounts):
    """The control: the same ``uuid1`` run id kept as text, the noise from fresh entropy."""

    def _rng(self):
        self.run_id_ = str(uuid.uuid1())
        return np.random.default_rng()


class MetaBeside(NoisyCounts):
    """The control: the same float metadata array holding a random 48-bit number, the noise from fresh entropy."""

    def _rng(self):
        self.meta_ = np.array([self.epsilon, len(self.classes), float(secrets.randbits(48))])
        return np.random.default_rng()
