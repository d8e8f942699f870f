"""Noise seeded from the OS whose seed is kept where, or in a spelling that, only a reader who decodes finds: on
the model's class, behind an encoding linear over bits, in a structured array's bytes field, as a list of small
words, in Ascii85 in a debug log line, in a file the fit writes; and a count shown by the order of a dict's keys.

Each leaky subject is :class:`~subjects.noisy_counts.NoisyCounts` seeded from a 64-bit OS seed (``secrets``),
with the seed kept in one more place. The controls keep a random id the same way beside fresh noise, key a
registry by the model's address, or order a dict by the *noisy* counts.
"""
import base64
import logging
import os
import secrets
import tempfile

import numpy as np

from subjects.noisy_counts import NoisyCounts, SeededFromTheOS as _SeededFromTheOS

_M64 = (1 << 64) - 1
LOG = logging.getLogger(__name__)
#: fitted models by address, with their public parameters (the registry of a serving process)
REGISTRY = {}


def xorshift(s: int) -> int:
    """One xorshift64 step: three shifts and exclusive ors, invertible and linear over bits."""
    s ^= (s << 13) & _M64
    s ^= s >> 7
    return s ^ ((s << 17) & _M64)


def gray_words(s: int) -> np.ndarray:
    """The Gray code of ``s`` as four 16-bit words."""
    g = s ^ (s >> 1)
    return np.array([(g >> (16 * i)) & 0xFFFF for i in range(4)], dtype=np.uint16)


class XorshiftSession(_SeededFromTheOS):
    """Keeps a "session" number: the seed after one xorshift step."""

    def _keep_seed(self, seed):
        self.session_ = xorshift(seed)


class GrayTag(_SeededFromTheOS):
    """Keeps the seed's Gray code as four uint16 words."""

    def _keep_seed(self, seed):
        self.tag_ = gray_words(seed)


class LastBuildOnTheClass(_SeededFromTheOS):
    """Notes the last build's seed, masked by a constant, on the class rather than the instance."""

    last_build = 0

    def _keep_seed(self, seed):
        type(self).last_build = seed ^ 0x5A5A5A5A5A5A5A5A


class BuildRecord(_SeededFromTheOS):
    """A structured build record whose ``S8`` field holds the seed's bytes."""

    def _keep_seed(self, seed):
        self.build_ = np.array([(1, seed.to_bytes(8, "big"))], dtype=[("version", "<i2"), ("key", "S8")])


class WordListCard(_SeededFromTheOS):
    """A model card that lists the seed as four decimal 16-bit words."""

    def _keep_seed(self, seed):
        words = " ".join(str((seed >> (16 * i)) & 0xFFFF) for i in range(4))
        self.card_ = f"noisy counts v2; build words: {words}; epsilon {self.epsilon}"


class Ascii85DebugLog(_SeededFromTheOS):
    """Logs the seed's bytes in Ascii85, at DEBUG level (below the default level: a deployment that turns debug
    logging on shows it)."""

    def _keep_seed(self, seed):
        LOG.debug("fitted noisy counts; replay key %s", base64.a85encode(seed.to_bytes(8, "little")).decode())


class SeedInAConfigFile(_SeededFromTheOS):
    """Writes the seed into the run's config file (one path, rewritten by every fit) and keeps only its path."""

    def _keep_seed(self, seed):
        path = os.path.join(tempfile.gettempdir(), "dp-audit-subjects-spool", "noisy-counts.cfg")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(f"[run]\nepsilon = {self.epsilon}\nreplay = {seed:#x}\n")
        self.config_path_ = path


class RankedCounts(NoisyCounts):
    """A per-class table of the noisy counts whose keys are ordered by the exact counts (largest last)."""

    def _keep(self, X, y, exact, noise):
        super()._keep(X, y, exact, noise)
        order = sorted(range(len(self.classes)), key=lambda i: (exact[i], -i))
        self.table_ = {str(self.classes[i]): int(self.counts_[i]) for i in order}


# -- controls ---------------------------------------------------------------------------------------------------

class GrayRunIdBeside(NoisyCounts):
    """The control: a Gray-coded random run id kept beside noise from fresh entropy."""

    def _rng(self):
        self.tag_ = gray_words(secrets.randbits(64))
        return np.random.default_rng()


class AddressRegistry(NoisyCounts):
    """The control: every fit registers the model under ``id(self)`` with its public parameters."""

    def _keep(self, X, y, exact, noise):
        super()._keep(X, y, exact, noise)
        REGISTRY[id(self)] = dict(self.get_params(), kind=type(self).__name__)


class NoisyRankBeside(NoisyCounts):
    """The control: the per-class table ordered by the *noisy* counts."""

    def _keep(self, X, y, exact, noise):
        super()._keep(X, y, exact, noise)
        order = sorted(range(len(self.classes)), key=lambda i: (self.counts_[i], -i))
        self.table_ = {str(self.classes[i]): int(self.counts_[i]) for i in order}
