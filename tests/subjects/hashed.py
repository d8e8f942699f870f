"""A mechanism whose outputs are tuples of strings, like a released tree: their hashes change with
``PYTHONHASHSEED``, so any order the auditor took from a set of them would change from one process to the next."""
import numpy as np


class StringLeaves:
    """On input 1, a tenth of the outputs fall into leaf '0'; otherwise a leaf uniform over ``n_leaves``.

    Many outcomes tie in a pilot batch, which is where an order taken from hashing would show."""

    def __init__(self, n_leaves=3000):
        self.n_leaves = n_leaves

    def batch(self, value, n, rng):
        k = rng.integers(0, self.n_leaves, size=n)
        k[(rng.random(n) < 0.5) & (k < self.n_leaves // 10) & (value == 1)] = 0
        return [("leaf", str(int(v))) for v in k]

    def __call__(self, value, rng):
        return self.batch(value, 1, rng)[0]
