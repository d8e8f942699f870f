"""Other libraries' DP noise through the gate: a sum of records in [0, 1] (sensitivity 1 under add/remove)
released with epsilon 1 by OpenDP and diffprivlib mechanisms (install ``opendp`` and the ``diffprivlib`` extra).

Run from this folder, for example::

    python -m audit check outside_mechanisms:diffprivlib_laplace --epsilon 1 --bounds '[[0, 1]]' --classes 0,1

Measured at the quick budget (seed 0, 16,000 counted outputs per input, alpha 0.04 per direction): diffprivlib's
float ``Laplace`` fails through the floating-point probe (epsilon >= 4.98: a set of bit patterns occurs 4,786 times
from one input and 19 from the other, Mironov 2012); its ``Snapping`` (the fix) passes conclusively (0.93), as do
its ``Geometric`` (0.98) and OpenDP's integer Laplace (0.95); OpenDP's float Laplace passes (its exact sampler rounds
to floats without a lattice leak the probe can see): its first audit can read just inconclusive, and the growth,
which keeps the first audit's event, makes it conclusive at 80,000 outputs per input (measured on
``tests/subjects/opendp_float.py``, the same mechanism batched, seeds 0 to 6).
"""
import numpy as np


def _count(data):
    """A sum of records in [0, 1] (sensitivity 1 under add/remove); for (X, y), the count of label 1."""
    if isinstance(data, tuple):
        return float(np.sum(np.asarray(data[1]) == 1))
    return float(np.clip(np.asarray(data, dtype=float), 0, 1).sum())


def opendp_float_laplace(data, rng):
    import opendp.prelude as dp
    dp.enable_features("contrib")
    m = dp.m.make_laplace(dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float), scale=1.0)
    return m(_count(data))


def opendp_int_laplace(data, rng):
    import opendp.prelude as dp
    dp.enable_features("contrib")
    m = dp.m.make_laplace(dp.atom_domain(T=int), dp.absolute_distance(T=int), scale=1.0)
    return m(int(_count(data)))


def diffprivlib_laplace(data, rng):
    from diffprivlib.mechanisms import Laplace
    return Laplace(epsilon=1.0, sensitivity=1.0, random_state=int(rng.integers(2**31))).randomise(_count(data))


def diffprivlib_snapping(data, rng):
    from diffprivlib.mechanisms import Snapping
    return Snapping(epsilon=1.0, sensitivity=1.0, lower=-100.0, upper=100.0,
                    random_state=int(rng.integers(2**31))).randomise(_count(data))


def diffprivlib_geometric(data, rng):
    from diffprivlib.mechanisms import Geometric
    return Geometric(epsilon=1.0, sensitivity=1, random_state=int(rng.integers(2**31))).randomise(int(_count(data)))
