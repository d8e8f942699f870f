"""A mechanism that presses Ctrl-C for its user: after ``limit`` batches it raises ``KeyboardInterrupt``."""
import numpy as np

CALLS = [0]


class InterruptedLaplace:
    """Laplace noise on the sum of a query vector; raises ``KeyboardInterrupt`` at batch number ``limit``
    (counted over the process; ``limit=0`` never does)."""

    def __init__(self, limit=0, scale=1.0):
        self.limit, self.scale = limit, scale

    def batch(self, value, n, rng):
        CALLS[0] += 1
        if self.limit and CALLS[0] >= self.limit:
            raise KeyboardInterrupt
        return float(np.sum(value)) + rng.laplace(0.0, self.scale, size=n)

    def __call__(self, value, rng):
        return float(self.batch(value, 1, rng)[0])
