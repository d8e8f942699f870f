"""OpenDP's float Laplace on a count (sensitivity 1 under add/remove), a correct float mechanism: its sampler is
exact and rounds to floats without a lattice leak the floating-point probe can see. The measurements are built
once (building one costs more than a release), and a batch of outputs is one release of OpenDP's vector Laplace
(independent noise on each copy of the count: the same law as that many scalar releases)."""
from __future__ import annotations

import functools

import numpy as np


@functools.lru_cache(maxsize=None)
def _laplace(scale: float, vector: bool):
    import opendp.prelude as dp

    dp.enable_features("contrib")
    if vector:
        return dp.m.make_laplace(dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.l1_distance(T=float),
                                 scale=scale)
    return dp.m.make_laplace(dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float), scale=scale)


def _count(data) -> float:
    return float(np.clip(np.asarray(data, dtype=float), 0, 1).sum())


class FloatLaplace:
    """``m(data, rng)``: the sum of ``data`` clipped to [0, 1] plus OpenDP's float Laplace noise of scale
    ``1 / epsilon``. OpenDP draws its own entropy; ``rng`` is unused."""

    def __init__(self, epsilon=1.0):
        self.scale = 1.0 / float(epsilon)

    def __call__(self, data, rng):
        return _laplace(self.scale, False)(_count(data))

    def batch(self, data, n, rng):
        return np.asarray(_laplace(self.scale, True)([_count(data)] * int(n)), dtype=float)
