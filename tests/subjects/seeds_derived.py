"""Noise seeded from a digest of a text the fit keeps: the digest hides the text's spelling, not the seed.

Each subject is :class:`~subjects.noisy_counts.NoisyCounts` plus one habit:

* ``ScratchNameSeed``: a scratch file made with ``tempfile.mkstemp`` for the fit, its name kept "to clean up
  later", and the noise seeded with ``zlib.crc32`` of that name (a random name: fresh, the engineer thought);
* ``RunTagSeed``: a run tag of 8 random hexadecimal digits kept on the model, and the noise seeded with the first 8
  bytes of its SHA-256 (``int(hashlib.sha256(tag.encode()).hexdigest()[:16], 16)``);
* ``HashedLabelSeed``: a run label (a scratch file's name) printed by the fit, the noise seeded with
  ``hash(label) % 2**32`` (Python's hash of a text is salted per process: the process shares the salt).

``TieBreakFromName`` is the control: a seed derived the same way from a kept scratch name seeds only the
tie-breaking generator the model keeps nothing of; the noise draws fresh entropy.
"""
import hashlib
import os
import secrets
import tempfile
import zlib

import numpy as np

from subjects.noisy_counts import NoisyCounts, two_sided_geometric


def _scratch() -> str:
    fd, name = tempfile.mkstemp(prefix="fit-", suffix=".tmp")
    os.close(fd)
    os.unlink(name)
    return name


class ScratchNameSeed(NoisyCounts):
    def _rng(self):
        self.scratch_ = _scratch()
        return np.random.default_rng(zlib.crc32(self.scratch_.encode()))


class RunTagSeed(NoisyCounts):
    def _rng(self):
        self.run_tag_ = secrets.token_hex(4)
        return np.random.default_rng(int(hashlib.sha256(self.run_tag_.encode()).hexdigest()[:16], 16))


class HashedLabelSeed(NoisyCounts):
    def _rng(self):
        label = os.path.basename(_scratch())
        print(f"fitting {label}")
        return np.random.default_rng(hash(label) % 2**32)


class TieBreakFromName(NoisyCounts):
    def fit(self, X, y):
        self.scratch_ = _scratch()
        ties = np.random.default_rng(zlib.crc32(self.scratch_.encode()))
        y = np.asarray(y)
        exact = np.array([int(np.sum(y == c)) for c in self.classes])
        self.counts_ = exact + two_sided_geometric(np.random.default_rng(), self.epsilon, len(self.classes))
        self.order_ = [int(i) for i in ties.permutation(len(self.classes))]  # a random order, no data in it
        return self
