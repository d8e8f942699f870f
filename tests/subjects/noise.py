"""A user's own Laplace mechanism, correct or with its noise halved, and a tiny estimator."""
import numpy as np


class MyLaplace:
    def __init__(self, epsilon, broken=False):
        self.scale = (0.5 if broken else 1.0) / epsilon

    def __call__(self, value, rng):
        return float(value + rng.laplace(0, self.scale))

    def batch(self, value, n, rng):
        return value + rng.laplace(0, self.scale, size=n)


def fails_to_build(epsilon):
    raise RuntimeError("cannot build")


class NoisyMajority:
    """Majority label by randomized response: epsilon-DP under substitution."""

    def __init__(self, epsilon=1.0, random_state=None, broken=False):
        self.epsilon, self.random_state, self.broken = epsilon, random_state, broken

    def get_params(self, deep=False):
        return {"epsilon": self.epsilon, "random_state": self.random_state, "broken": self.broken}

    def set_params(self, **params):
        for k, v in params.items():
            setattr(self, k, v)
        return self

    def fit(self, X, y):
        rng = np.random.default_rng(self.random_state)
        truth = int(np.mean(y) > 0.5)
        eps = self.epsilon * (3 if self.broken else 1)
        keep = rng.random() < np.exp(eps) / (1 + np.exp(eps))
        self.label_ = truth if keep else 1 - truth
        return self

    def release(self):
        return (self.label_,)


class RaisesInFit(NoisyMajority):
    def fit(self, X, y):
        raise ValueError("X has the wrong shape for me")


class FastLaplace:
    """A user's 'faster' Laplace: correct, or with its scale 10% off."""

    def __init__(self, epsilon, sensitivity=1.0, off=False):
        self.scale = sensitivity / epsilon * (1.1 if off else 1.0)

    def batch(self, value, n, rng):
        return value + rng.exponential(self.scale, n) - rng.exponential(self.scale, n)

    def __call__(self, value, rng):
        return float(self.batch(value, 1, rng)[0])


class FastLaplaceOff(FastLaplace):
    def __init__(self, epsilon, sensitivity=1.0):
        super().__init__(epsilon, sensitivity, off=True)


class NarrowSignature:
    def __init__(self, eps):
        self.eps = eps


class GeometricCount:
    """A correct epsilon-DP count under add/remove: the number of records (clipped to [0, 1]) plus two-sided
    geometric noise (the discrete Laplace law, P(k) proportional to exp(-epsilon |k|)), drawn from ``rng``, so a
    seeded audit is reproducible (unlike OpenDP's samplers, which draw their own entropy)."""

    def __init__(self, epsilon=1.0):
        self.p = 1.0 - np.exp(-float(epsilon))

    def _count(self, data):
        return int(np.clip(np.asarray(data, dtype=float), 0, 1).sum())

    def __call__(self, data, rng):
        return self._count(data) + int(rng.geometric(self.p) - rng.geometric(self.p))

    def batch(self, data, n, rng):
        return self._count(data) + rng.geometric(self.p, int(n)) - rng.geometric(self.p, int(n))


class LatticeLeak:
    """Integer noise returned as a float, as integer mechanisms often are (``float(value + noise)``). Correct: two-sided
    geometric noise at ``epsilon``. Broken: the noise is doubled before it is added, so the output's parity is the
    value's (epsilon infinite), while its thresholds move little."""

    def __init__(self, epsilon, broken=False):
        self.p, self.step = 1.0 - np.exp(-epsilon / (1 if not broken else 2)), 2 if broken else 1

    def batch(self, value, n, rng):
        noise = rng.geometric(self.p, n) - rng.geometric(self.p, n)
        return (np.round(value) + self.step * noise).astype(float)

    def __call__(self, value, rng):
        return float(self.batch(value, 1, rng)[0])
