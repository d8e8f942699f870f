"""Outside-style estimators whose ``fit`` refuses some datasets (issue 27 item 1).

* ``OddSizeCrash``: constant predictions; ``fit`` raises on datasets of odd size, so every add/remove
  pair is told apart by the refusal alone (with certainty);
* ``RefusesEmpty``: an epsilon-DP noisy count of class-1 records (two-sided geometric noise, predicted
  everywhere) that refuses an empty dataset, as diffprivlib's estimators do;
* ``RefusesEmptyLeaky``: the same refusal, but the count is released without noise (a real output leak).
"""
import numpy as np


class _Base:
    def __init__(self, epsilon=1.0, random_state=None, error="ValueError"):
        self.epsilon, self.random_state, self.error = epsilon, random_state, error

    def get_params(self, deep=True):
        return {"epsilon": self.epsilon, "random_state": self.random_state, "error": self.error}

    def set_params(self, **kw):
        for k, v in kw.items():
            setattr(self, k, v)
        return self

    def _raise(self, msg):
        raise {"ValueError": ValueError, "RuntimeError": RuntimeError}[self.error](msg)


class OddSizeCrash(_Base):
    def fit(self, X, y):
        if len(y) % 2:
            self._raise(f"an odd number of records ({len(y)}) is not supported")
        return self

    def predict(self, X):
        return np.zeros(len(X), dtype=int)


class RefusesEmpty(_Base):
    noisy = True

    def fit(self, X, y):
        if len(y) == 0:
            self._raise("cannot fit on an empty dataset")
        rng = np.random.default_rng(self.random_state)
        a = np.exp(-self.epsilon)
        noise = int(rng.geometric(1 - a) - rng.geometric(1 - a)) if self.noisy else 0
        self.count_ = int(np.sum(np.asarray(y) == 1)) + noise
        return self

    def predict(self, X):
        return np.full(len(X), min(max(self.count_, -3), 6))


class RefusesEmptyLeaky(RefusesEmpty):
    noisy = False


class ExitsInFit(_Base):
    """Calls ``sys.exit()`` inside ``fit`` on datasets of odd size (status 0: the old gate's silent pass)."""

    def fit(self, X, y):
        if len(y) % 2:
            import sys

            sys.exit()
        return self

    def predict(self, X):
        return np.zeros(len(X), dtype=int)


class HardExitInFit(_Base):
    """Ends the process with ``os._exit(0)`` inside ``fit`` (no exception, no cleanup): the old gate exited 0 after
    one console line, with no report."""

    def fit(self, X, y):
        import os

        os._exit(0)

    def predict(self, X):
        return np.zeros(len(X), dtype=int)


class CountInMessage(RefusesEmpty):
    """An epsilon-DP noisy count that refuses fewer than 4 records with a message carrying the exact count: the
    refusal's type is the same on both sides of a 2-vs-3 pair, its message is not."""

    def fit(self, X, y):
        if len(y) < 4:
            self._raise(f"too few records to fit: {len(y)}")
        return super().fit(X, y)


class RandomRefusal(RefusesEmpty):
    """The epsilon-DP noisy count, but ``fit`` gives up at random (probability 0.3 on every dataset, whatever it
    holds): a refusal with the same law on both datasets of every pair, so it separates nothing."""

    def fit(self, X, y):
        rng = np.random.default_rng(None if self.random_state is None else self.random_state + 1)
        if rng.random() < 0.3:
            raise RuntimeError("did not converge")
        return super().fit(X, y)


class RarelyAcceptsEmpty(RefusesEmpty):
    """Refuses an empty dataset, except with probability 0.02, when it publishes 6 (never published on data):
    five fits see only refusals with probability 0.98^5 = 0.90, so a judgement on five fits exempts it; on every
    draw the audit takes (2,000 here: 0.98^2000 < 1e-17) the refusal is not certain, so it is an outcome, and the
    rare release of 6 on the empty side tells the pair apart."""

    accept = 0.02

    def fit(self, X, y):
        if len(y) == 0:
            rng = np.random.default_rng(None if self.random_state is None else self.random_state + 2)
            if rng.random() < self.accept:
                self.count_ = 6
                return self
        return super().fit(X, y)


class VeryRarelyAcceptsEmpty(RarelyAcceptsEmpty):
    """As :class:`RarelyAcceptsEmpty`, accepting the empty dataset with probability 0.001: under the exemption's
    seeds it refuses the first 636 fits (so the first look, 64 fits, exempts it) and accepts the 637th, so only
    the settled judgement (2,000 fits) sees that the refusal is not certain."""

    accept = 0.001
