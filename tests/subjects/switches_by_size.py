"""Classifiers whose structure switches at a record count that is not a round number (:mod:`audit.gate.switches`).

Each releases per-class counts with two-sided geometric noise from fresh OS entropy (exactly epsilon-DP for the
counts under add/remove, :mod:`subjects.noisy_counts`), and then does one ordinary thing that depends on the exact
number of records, so one record either side of the threshold tells the count:

* ``FallbackBelow37``: fewer than 37 records keep no counts at all (zeros, no noise: "too little data");
* ``WarnsFewPerClass``: a warning with a fixed text when some class has fewer than 23 records;
* ``FloatNoiseAbove3000``: more than 3,000 records take a "fast path" of continuous Laplace noise in floats (the
  noise law changes; no value becomes deterministic);
* ``NarrowDtype``: the counts are stored in the narrowest signed integer type holding ``3 n`` (int16 up to 85
  records, int32 from 86);
* ``PrecisionBySize``: prints its noisy positive share with three decimals from 300 records on, two below (no
  value repeats; the format does).

Correct controls (they must pass):

* ``PublicStructure``: the same at every size: a warning about the public epsilon, counts in a dtype chosen from
  the public classes, a fixed mode string, the noisy share printed with two decimals;
* ``BinsBySize``: finer bins from 500 records on (``n_bins_``): a leak under add/remove, where the count is
  private, and correct under substitution, where it is public.
"""
import warnings

import numpy as np

from .noisy_counts import NoisyCounts


class FallbackBelow37(NoisyCounts):
    def _keep(self, X, y, exact, noise):
        self.counts_ = np.zeros(len(self.classes), dtype=np.int64) if len(y) < 37 else exact + noise


class WarnsFewPerClass(NoisyCounts):
    def _keep(self, X, y, exact, noise):
        if exact.min() < 23:
            warnings.warn("a class has fewer than 23 records: its noisy count is unreliable", UserWarning,
                          stacklevel=2)
        self.counts_ = exact + noise


class FloatNoiseAbove3000(NoisyCounts):
    def _keep(self, X, y, exact, noise):
        if len(y) > 3000:
            noise = self._rng().laplace(0.0, 1.0 / self.epsilon, len(self.classes))
        self.counts_ = exact + noise


class NarrowDtype(NoisyCounts):
    def _keep(self, X, y, exact, noise):
        self.counts_ = (exact + noise).astype(np.promote_types(np.min_scalar_type(3 * len(y)), np.int8))


class PrecisionBySize(NoisyCounts):
    def _keep(self, X, y, exact, noise):
        self.counts_ = exact + noise
        share = max(self.counts_[-1], 0) / max(np.maximum(self.counts_, 0).sum(), 1)
        print(f"noisy positive share: {share:.{3 if len(y) >= 300 else 2}f}")


class PublicStructure(NoisyCounts):
    def _keep(self, X, y, exact, noise):
        share = max(exact[-1] + noise[-1], 0) / max(np.maximum(exact + noise, 0).sum(), 1)
        print(f"noisy positive share: {share:.2f}")
        if self.epsilon >= 1:
            warnings.warn("epsilon >= 1 is a weak guarantee", UserWarning, stacklevel=2)
        self.mode_ = "two-sided geometric"
        self.counts_ = (exact + noise).astype(np.int32 if len(self.classes) < 100 else np.int64)


class BinsBySize(NoisyCounts):
    def _keep(self, X, y, exact, noise):
        self.n_bins_ = 10 if len(y) < 500 else 20
        self.counts_ = exact + noise
