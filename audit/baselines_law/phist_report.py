"""The exact law of a PHIST user's report, and the loss of every pair of user records (issue 29).

PHIST (Berrett, Györfi and Walk 2021, EJS 15:2430-2453; LPDT's baseline, Ma et al. 2023
Tables 1-3, spec/lpdt.md section 7.1) claims *local* differential privacy: each user privatises their
record's grid cell and label once, and everything the curator publishes is computed from the reports
alone (:class:`reference.baselines.phist.PHISTRegressor` sums them), so the report's loss bounds the
release's. A pair is any two user records (substitution of one user's record), as in LPDT's certificate.

* ``randomizer="lpdt"`` (default): LPDT's randomiser (mechanisms (3) and (4) of the LPDT paper) on the
  regular grid of ``n_bins`` bins per feature, indicator share 1/2: the law is LPDT's report law,
  :func:`audit.engine.exact_law.randomizer_law.report_pair_loss`, with PHIST's grid partition.
* ``randomizer="laplace"``: Berrett et al.'s own mechanism (section 2 of their paper, spec 7.1): per cell
  ``j``, ``Z_j = y 1{x in A_j} + noise`` and ``W_j = 1{x in A_j} + noise``, half of epsilon each. The
  implementation's noise is on lattices (issue 17): ``Z`` by the lattice Laplace of
  :class:`reference.mechanisms.Laplace` (sensitivity ``2A`` plus one grid step, ``A = max(|low|, |high|)``
  of ``target_bounds``), one scalar release per cell, and ``W`` by the two-sided geometric mechanism
  (sensitivity 2). Every coordinate is an independent discrete Laplace variable about its centre (the
  rounded ``y`` in the user's cell, 0 elsewhere; the indicator), so the report's law is a product and the
  loss of a pair is ``rate_Z sum_j |c_j - c'_j| + rate_W sum_j |u_j - u'_j|``, attained at the centres;
  its privacy profile composes the coordinates' loss distributions (:func:`audit.engine.exact_law.randomizer_law.lattice_hist`).
  The continuous Laplace of the paper is replaced by this lattice law in the implementation, which is
  what is certified here.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from audit.engine.exact_law.loss_histogram import LossHistogram
from audit.engine.exact_law.randomizer_law import ROUNDING, lattice_hist, report_pair_loss
from reference.baselines.phist import MAX_CELLS
from reference.lpdt.partition import GridPartition
from reference.mechanisms import Laplace, TwoSidedGeometric, default_grid, round_to_grid

__all__ = ["pair_loss", "lpdt_params", "laplace_mechanisms", "report_logpmf", "LaplaceReportLoss"]


def _check(params: dict) -> str:
    kind = params.get("randomizer", "lpdt")
    if kind not in ("lpdt", "laplace"):
        raise ValueError(f"randomizer={kind!r}: PHIST's report law covers randomizer 'lpdt' or 'laplace'")
    n_bins, d = int(params["n_bins"]), len(params["bounds"])
    if n_bins < 1 or n_bins ** d > MAX_CELLS:
        raise ValueError(f"n_bins={params['n_bins']!r}: PHIST's grid must have 1 to {MAX_CELLS} cells, "
                         f"got {n_bins} ** {d}")
    return kind


def lpdt_params(params: dict) -> dict:
    """The parameters of :func:`audit.engine.exact_law.randomizer_law.randomizer_of` for PHIST's ``randomizer="lpdt"``: LPDT's
    randomiser on PHIST's regular grid (:class:`reference.lpdt.partition.GridPartition`), share 1/2."""
    return dict(epsilon=params["epsilon"], bounds=params["bounds"], n_bins=params["n_bins"],
                target_bounds=params["target_bounds"])


def laplace_mechanisms(params: dict):
    """``(Z mechanism, W mechanism)`` of ``randomizer="laplace"`` (module docstring), from the public facts."""
    eps = float(params["epsilon"])
    lo, hi = (float(v) for v in params["target_bounds"])
    A = max(abs(lo), abs(hi))
    grid = default_grid(eps / 2, 2 * A)
    return Laplace(eps / 2, sensitivity=2 * A + grid, grid=grid), TwoSidedGeometric(eps / 2, sensitivity=2.0)


@dataclass(eq=False)
class LaplaceReportLoss:
    """Exact loss of the Laplace report between two records, the report attaining it, and the profile."""

    lower: float
    upper: float
    release: str
    hists: tuple  # per direction, the list of the coordinates' (law, c0, c1)

    def delta(self, epsilon: float) -> float:
        """Upper bound on ``delta(epsilon)`` (both directions), the coordinates' loss distributions composed."""
        if epsilon >= self.upper:
            return 0.0
        best = 0.0
        for coords in self.hists:
            hist = LossHistogram.point()
            for law, c0, c1 in coords:
                hist = hist.compose(lattice_hist(law, c0, c1))
            best = max(best, float(hist.delta(epsilon)))
        return best


def _centres(params: dict, z_mech, x, y):
    part = GridPartition(np.asarray(params["bounds"], dtype=float), int(params["n_bins"]))
    u = np.zeros(part.n_leaves, dtype=np.int64)
    u[int(part.apply(np.asarray(x, dtype=float)[None, :])[0])] = 1
    lo, hi = (float(v) for v in params["target_bounds"])
    return round_to_grid(u * min(max(float(y), lo), hi), z_mech.grid), u


def pair_loss(params: dict, d0, d1, grid=None):
    """The exact loss of one user's report between the one-record datasets ``d0`` and ``d1`` (two users).

    ``params``: PHIST's ``epsilon``, ``bounds``, ``n_bins``, ``target_bounds`` and ``randomizer``; ``grid``
    is accepted for :class:`audit.engine.exact_law.domain.Domain` and unused.
    """
    if _check(params) == "lpdt":
        return report_pair_loss(lpdt_params(params), d0, d1)
    (X0, y0), (X1, y1) = d0, d1
    if len(y0) != 1 or len(y1) != 1:
        raise ValueError(f"PHIST's claim is local: a pair is two user records, got datasets of {len(y0)} and "
                         f"{len(y1)} records")
    z_mech, w_mech = laplace_mechanisms(params)
    (cz0, u0), (cz1, u1) = _centres(params, z_mech, X0[0], y0[0]), _centres(params, z_mech, X1[0], y1[0])
    lz, lw = z_mech.law(1), w_mech.noise_law
    loss = lz.rate * float(np.abs(cz0 - cz1).sum()) + lw.rate * float(np.abs(u0 - u1).sum())
    moved = [(lz, int(a), int(b)) for a, b in zip(cz0, cz1) if a != b]
    moved += [(lw, int(a), int(b)) for a, b in zip(u0, u1) if a != b]
    hists = ([c for c in moved], [(law, b, a) for law, a, b in moved])
    release = (f"Z at the first record's centres {[float(v) * z_mech.grid for v in cz0]}, W at its indicator "
               f"{u0.tolist()} (more likely under the first record)")
    return LaplaceReportLoss(loss * (1 - ROUNDING), loss * (1 + ROUNDING) if loss else 0.0, release, hists)


def report_logpmf(params: dict, Z, W, record) -> float:
    """``ln P(Z, W | record)`` of ``randomizer="laplace"``'s report (``Z`` in value units, ``W`` integers)."""
    z_mech, w_mech = laplace_mechanisms(params)
    cz, u = _centres(params, z_mech, *record)
    k = np.asarray(Z, dtype=float) / z_mech.grid
    if not np.all(k == np.floor(k)):
        return -math.inf
    return float(np.sum(z_mech.law(1).logpmf(k - cz)) + np.sum(w_mech.noise_law.logpmf(np.asarray(W) - u)))
