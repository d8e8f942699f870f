"""Classifiers judged as they ship: where their noise comes from, and what correct code keeps beside it.

Each releases per-class counts with two-sided geometric noise (exactly epsilon-DP for counts under add/remove
when the noise is fresh OS entropy) and predicts the noisy majority.

Leaks (the noise's seed is something an adversary can enumerate):

* ``ClockSeeded``: seeded from the clock in milliseconds, and keeps the minute it was trained (a model card's
  timestamp): every coordinate has the right law, only the seed space (60,000 values a minute) gives it away;
* ``PidSeeded``: seeded from the process id;
* ``AddressSeeded``: seeded from ``id(self)``, the model's address (a fresh process allocates it alike);
* ``FinerAtAThousand``: fresh noise, but twice as many histogram bins from 1,000 records on (the structure
  switches at an exact record count: 999 records against 1,000 tells the count).

Correct controls (they must pass):

* ``KeepsFitTime``: fresh noise, and ``fitted_at_ = time.time()`` and the minute it was trained beside it;
* ``NumbersItsFits``: fresh noise, and the number of fits the process has made so far (``fit_number_``);
* ``ForwardsRandomState``: the scikit-learn way, ``random_state`` forwarded to an inner step that draws the
  noise (``None`` as shipped: fresh entropy);
* ``WithProvenance``: all of these at once, with a run id and a JSON model card of public parameters.
"""
import datetime
import itertools
import json
import os
import time
import uuid

import numpy as np

from .noisy_counts import NoisyCounts, two_sided_geometric


class ClockSeeded(NoisyCounts):
    def _rng(self):
        self.trained_at_ = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
        return np.random.default_rng(time.time_ns() // 1_000_000)


class PidSeeded(NoisyCounts):
    def _rng(self):
        return np.random.default_rng(os.getpid())


class AddressSeeded(NoisyCounts):
    def _rng(self):
        return np.random.default_rng(id(self))


class KeepsFitTime(NoisyCounts):
    def fit(self, X, y):
        super().fit(X, y)
        self.fitted_at_ = time.time()
        self.trained_at_ = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
        return self


_FITS = itertools.count(1)


class NumbersItsFits(NoisyCounts):
    def fit(self, X, y):
        super().fit(X, y)
        self.fit_number_ = next(_FITS)
        return self


class _NoisyCounts:
    """The inner step: noisy counts from ``random_state`` (None: fresh entropy)."""

    def __init__(self, epsilon, classes, random_state=None):
        self.epsilon, self.classes, self.random_state = epsilon, classes, random_state

    def fit(self, y):
        rng = np.random.default_rng(self.random_state)
        exact = np.array([np.sum(np.asarray(y) == c) for c in self.classes])
        self.counts_ = exact + two_sided_geometric(rng, self.epsilon, len(self.classes))
        return self


class ForwardsRandomState(NoisyCounts):
    def __init__(self, epsilon=1.0, classes=(0, 1), random_state=None):
        super().__init__(epsilon, classes)
        self.random_state = random_state

    def get_params(self, deep=True):
        return {**super().get_params(deep), "random_state": self.random_state}

    def fit(self, X, y):
        self.step_ = _NoisyCounts(self.epsilon, self.classes, random_state=self.random_state).fit(y)
        self.counts_ = self.step_.counts_
        return self


class FinerAtAThousand(NoisyCounts):
    def fit(self, X, y):
        super().fit(X, y)
        self.n_bins_ = 10 if len(y) < 1_000 else 20
        return self


class WithProvenance(ForwardsRandomState):
    def fit(self, X, y):
        super().fit(X, y)
        self.fitted_at_, self.run_id_, self.fit_number_ = time.time(), uuid.uuid4().hex, next(_FITS)
        self.model_card_ = json.dumps({"trained_at": self.fitted_at_, "run_id": self.run_id_,
                                       "epsilon": self.epsilon, "classes": list(self.classes)})
        return self
