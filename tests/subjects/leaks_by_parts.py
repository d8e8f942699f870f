"""Classifiers that leak an exact count inside a value that never repeats between fits.

Each releases per-class counts with two-sided geometric noise (exactly epsilon-DP for counts under add/remove)
drawn from a fresh ``np.random.default_rng()`` per fit, as in :mod:`subjects.shipped_leaks`, and then keeps or
emits an exact count next to something that changes on every fit: a duration, a timestamp, a run id, a memory
address (which may also repeat: then the whole value shows it), or an encoding (gzip, base64 of a pickle). The whole value never repeats, so only the determinism
probe's *parts* (:mod:`audit.gate.parts`) see the count. :class:`Correct` keeps nothing else;
:class:`TimestampedControl` is the control that keeps a timestamp, a run id, a JSON card of public parameters,
a registry entry of public parameters under a uuid key, and prints and logs its duration: nothing in it depends
on the data, and it must pass. :class:`PublicParts` is the control of the leaks read by position (a word of a
file name, a byte of a binary header) and of a pandas Series' order.
"""
from __future__ import annotations

import base64
import gzip
import json
import logging
import os
import pickle
import struct
import time
import uuid

import numpy as np
import pandas as pd

from .noisy_counts import NoisyCounts, two_sided_geometric

_LOG = logging.getLogger("leaks_by_parts")
#: every fit's entry, keyed by a fresh run id (what an experiment tracker keeps)
REGISTRY = {}


class Correct(NoisyCounts):
    """Noisy class counts, fresh entropy per fit; keeps nothing else."""

    def fit(self, X, y):
        started = time.perf_counter()
        rng = np.random.default_rng()
        y = np.asarray(y)
        exact = np.array([int(np.sum(y == c)) for c in self.classes])
        self.counts_ = exact + two_sided_geometric(rng, self.epsilon, len(self.classes))
        self._after(X, y, exact, time.perf_counter() - started)
        return self

    def _after(self, X, y, exact, elapsed):
        pass


class VerboseLine(Correct):
    """Prints a progress line with the record count, the exact positives and the fit's duration."""

    def _after(self, X, y, exact, elapsed):
        print(f"fitted on {len(y)} records ({int(exact[-1])} positive) in {elapsed * 1e3:.2f} ms")


class LoggedDuration(Correct):
    """Logs the exact positives with the fit's duration."""

    def _after(self, X, y, exact, elapsed):
        _LOG.info("fit done: %d positive in %.6f s", int(exact[-1]), elapsed)


class JsonModelCard(Correct):
    """Keeps a JSON model card with a timestamp, a run id and the number of training records."""

    def _after(self, X, y, exact, elapsed):
        self.model_card_ = json.dumps({"trained_at": time.time(), "run_id": uuid.uuid4().hex,
                                       "epsilon": self.epsilon, "n_train": len(y)})


class UuidRegistry(Correct):
    """Records every fit in a module registry under a fresh run id, with the exact positives."""

    def _after(self, X, y, exact, elapsed):
        REGISTRY[uuid.uuid4().hex] = {"model": type(self).__name__, "positives": int(exact[-1])}


class GzippedSummary(Correct):
    """Keeps a gzip-compressed JSON summary (with its time) of the exact counts."""

    def _after(self, X, y, exact, elapsed):
        summary = {"fitted_at": time.time(), "counts": exact.tolist()}
        self.summary_gz_ = gzip.compress(json.dumps(summary).encode())


class Base64Pickle(Correct):
    """Keeps its training state as base64 text of a pickle with a run id and the exact positives."""

    def _after(self, X, y, exact, elapsed):
        state = {"run": uuid.uuid4().hex, "positives": int(exact[-1])}
        self.state_b64_ = base64.b64encode(pickle.dumps(state)).decode("ascii")


class AddressedCachePath(Correct):
    """Names its cache file by its memory address in decimal and the exact positives."""

    def _after(self, X, y, exact, elapsed):
        self.cache_path_ = f"/tmp/models/{id(self)}/{int(exact[-1])}.npz"


class StampedCachePath(Correct):
    """Names its cache file by the time in nanoseconds and the exact positives."""

    def _after(self, X, y, exact, elapsed):
        self.cache_path_ = f"/tmp/models/model_{time.time_ns()}_{int(exact[-1])}.npz"


class FixedPointScores(Correct):
    """Scores: the noisy counts as floats, each with its exact count added at ``2**-32`` (below every noise step of
    an integer count, so the fractional part is the exact count on every fit)."""

    def _after(self, X, y, exact, elapsed):
        self.scores_ = self.counts_.astype(float) + exact * 2.0 ** -32


class StampedMantissa(Correct):
    """A noisy share (Laplace noise) whose last 8 significand bits were overwritten with the exact positive
    count: the value never repeats, its lowest bits do."""

    def _after(self, X, y, exact, elapsed):
        share = np.float64(0.5 + np.random.default_rng().laplace(0.0, 1.0 / self.epsilon))
        self.share_ = float(np.uint64((int(share.view(np.uint64)) & ~0xFF) | int(exact[-1]) & 0xFF).view(np.float64))


class NoisyFloats(Correct):
    """A control for the bits of floats: the noisy counts divided by 3 and as fixed-point floats, a Laplace draw
    that does not depend on the data, and a float32 copy of it (every low bit follows the noise)."""

    def _after(self, X, y, exact, elapsed):
        self.thirds_ = self.counts_ / 3.0
        self.fixed_ = self.counts_ * 2.0 ** -32
        self.jitter_ = float(np.random.default_rng().laplace())
        self.jitter32_ = np.float32(self.jitter_)


class ArtifactName(Correct):
    """Names its artefact with a fresh id and the exact positives glued to a letter: ``model-1a2b3c4d-n4.joblib``
    (the count is inside an identifier, so no number token holds it)."""

    def _after(self, X, y, exact, elapsed):
        self.artifact_ = f"model-{uuid.uuid4().hex[:8]}-n{int(exact[-1])}.joblib"


class PackedHeader(Correct):
    """Exports a binary blob: a magic word, a fresh salt, the exact positives at a fixed offset, then the noisy
    counts."""

    def _after(self, X, y, exact, elapsed):
        header = struct.pack("<4s8sI", b"NCM1", os.urandom(8), int(exact[-1]))
        self.blob_ = header + np.asarray(self.counts_, dtype="<i8").tobytes()


class RankedSeries(Correct):
    """Keeps its noisy counts as a pandas Series ordered by the exact counts (``value_counts`` order)."""

    def _after(self, X, y, exact, elapsed):
        order = np.argsort(-exact, kind="stable")
        self.support_ = pd.Series(self.counts_[order], index=np.asarray(self.classes)[order])


class PublicParts(Correct):
    """The control of the three above: an artefact name of a fresh id and public facts (``eps1``, ``v2``), a blob
    of a magic word, a salt, the public class count and the noisy counts, a Series of the noisy counts in the
    declared order of the classes."""

    def _after(self, X, y, exact, elapsed):
        self.artifact_ = f"model-{uuid.uuid4().hex[:8]}-eps{self.epsilon:g}-v2.joblib"
        header = struct.pack("<4s8sI", b"NCM1", os.urandom(8), len(self.classes))
        self.blob_ = header + np.asarray(self.counts_, dtype="<i8").tobytes()
        self.support_ = pd.Series(self.counts_, index=list(self.classes))


class TimestampedControl(Correct):
    """The control: a timestamp, a run id, a JSON card and a registry entry of public parameters, its duration
    printed and logged. None of it depends on the data."""

    def _after(self, X, y, exact, elapsed):
        self.fitted_at_ = time.time()
        self.run_id_ = uuid.uuid4().hex
        self.model_card_ = json.dumps({"trained_at": self.fitted_at_, "run_id": self.run_id_,
                                       "epsilon": self.epsilon, "classes": list(self.classes)})
        REGISTRY[self.run_id_] = {"model": type(self).__name__, "epsilon": self.epsilon}
        print(f"fitted in {elapsed * 1e3:.2f} ms")
        _LOG.info("fit done in %.6f s", elapsed)
