"""Classifiers whose noise is seeded when their module is imported: the same noise in every fresh process.

Each releases per-class counts with two-sided geometric noise (exactly epsilon-DP for counts under add/remove,
were the noise fresh) and predicts the noisy majority. Inside one process every fit draws new noise, so every
coordinate has the right law there; only a new process shows that its first fit (and every later one) adds
the same noise as any other process's: whoever knows the code subtracts it.

* ``GlobalSeededAtImport``: ``np.random.seed(1234)`` at import, then numpy's global functions in ``fit``;
* ``ModuleGenerator``: a module-level ``np.random.default_rng(2024)`` shared by every fit.
"""
import numpy as np

from .noisy_counts import NoisyCounts

np.random.seed(1234)  # "reproducible results"
_RNG = np.random.default_rng(2024)


class GlobalSeededAtImport(NoisyCounts):
    def _rng(self):
        return np.random  # numpy's global functions


class ModuleGenerator(NoisyCounts):
    def _rng(self):
        return _RNG
