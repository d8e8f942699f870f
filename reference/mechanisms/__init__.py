"""Differential-privacy mechanisms with their exact output laws.

Each mechanism is a small object in the style of ``scipy.stats``: it samples
(``sample(data, rng)``, vectorised ``batch(data, n, rng)``) and it exposes the
law it samples from (``logpmf`` for discrete outputs, ``logpdf`` for continuous
ones), so the privacy loss on two inputs can be computed exactly
(:func:`audit.exact.privacy_loss`) instead of estimated.

Every mechanism also states its privacy as a map from input distance to output
loss (``privacy_map(d_in)``), the way OpenDP does: the claim sits beside the
sampler that has to keep it.

The mechanism contract of the auditor (``m(data, rng)`` returning one output,
optionally ``m.batch(data, n, rng)``) is met by every class here, so each can be
audited directly.

References
----------
Dwork, McSherry, Nissim, Smith (2006), the Laplace mechanism; here on a public
lattice with exact integer noise (Mironov 2012 on why; Canonne, Kamath, Steinke 2020
for the sampler, :mod:`reference.mechanisms.discrete_noise`).
Ghosh, Roughgarden, Sundararajan (2009), the two-sided geometric mechanism.
McSherry, Talwar (2007), the exponential mechanism.
McKenna, Sheldon (2020), permute-and-flip; Ding et al. (2021) show it equals
report-noisy-max with exponential noise, which :meth:`PermuteAndFlip.batch` uses.
Warner (1965), randomized response.
Consul and Williamson 2021 (V003), section 3.1, the private median
over a bounded interval (Theorem 3's form), here on a public grid.
"""
from __future__ import annotations

# the shared helpers are re-exported for the modules that imported them from here before the split
from reference.mechanisms.base import (  # noqa: F401
                                      MAX_UNITS,
                                      GRID_BITS,
                                      Mechanism,
                                      check_n,
                                      draw_index,
                                      log_normalise,
                                      check_lattice_step,
                                      default_grid,
                                      round_to_grid,
)
from reference.mechanisms.jointexp import JointExp
from reference.mechanisms.laplace import Laplace, TwoSidedGeometric
from reference.mechanisms.median import IntervalExponential, BoundedMedian  # noqa: F401
from reference.mechanisms.randomized_response import (
                                      BitRandomizedResponse,
                                      RandomizedResponse,
)
from reference.mechanisms.selection import (  # noqa: F401
                                      ExponentialMechanism,
                                      PermuteAndFlip,
                                      Selection,
)

__all__ = ["Mechanism", "Laplace", "TwoSidedGeometric", "ExponentialMechanism", "PermuteAndFlip",
           "RandomizedResponse", "BitRandomizedResponse", "IntervalExponential", "JointExp", "default_grid",
           "round_to_grid", "check_lattice_step", "GRID_BITS"]
