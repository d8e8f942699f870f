"""The exact law of a user's report by LPDT's local randomiser, and the loss of every pair of user records.

The randomiser (:class:`reference.lpdt.randomizer.LPDTRandomizer`, mechanisms (3) and (4) of LPDT) is
shared by LPDT (:mod:`audit.lpdt`) and by its baseline PHIST (:mod:`audit.baselines_law.phist_report`):
its law lives here, in the engine, and each composes it. The names stay importable from
:mod:`audit.lpdt.exact_law`.

LPDT's privacy claim is local (Theorem 3.1 of Ma, Zhang, Cai and Yang, NeurIPS 2023): each user releases
one report ``[Y~, bit_0, ..., bit_{L-1}]`` (mechanisms (3) and (4)), and the claim holds between *any* two
user records. Everything the curator publishes (the leaves' estimates) is computed from the reports alone,
so it is post-processing and the report's loss bounds it. The report's law is a product:

* the label ``Y~ = grid (round(y / grid) + Z)`` with ``Z`` discrete Laplace (the lattice Laplace of
  :class:`reference.mechanisms.Laplace`): ``P(k) = (1 - a)/(1 + a) a^|k - c|`` on grid units ``k``, one
  label (or, for the authors' per-leaf variant, ``L`` independent labels);
* the bits: randomized response on the one-hot leaf indicator, each coordinate kept with probability
  ``1 - q``; only the (zero or two) coordinates where the two users' indicators differ move the ratio.

The loss of a pair is attained at the label centres and the users' own indicators (each factor's
log-ratio is extreme there); its privacy profile is the composition of the label's and the bits'
loss distributions (:class:`audit.engine.exact_law.loss_histogram.LossHistogram`), the label's tails beyond
``TAIL`` at an infinite loss. Both are written from the laws above, not from the randomiser's sampler;
tests hold them against :func:`audit.exact.privacy_loss` (the randomiser's own ``log_law``) and its
samples.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from audit.engine.exact_law.loss_histogram import LossHistogram
from reference.lpdt.partition import GridPartition
from reference.lpdt.randomizer import LPDTRandomizer, PerLeafNoiseRandomizer
from reference.mechanisms import round_to_grid

__all__ = ["ReportPairLoss", "report_pair_loss", "report_logpmf", "randomizer_of", "lattice_hist", "TAIL"]

#: label mass left out of the profile on each side (at an infinite loss)
TAIL = 1e-14
#: relative slack of the computed loss (a few roundings of exp/log)
ROUNDING = 1e-12


def randomizer_of(params: dict) -> LPDTRandomizer:
    """The randomiser of ``params``: ``epsilon``, ``bounds`` and ``n_bins`` of the public grid partition,
    ``target_bounds``, ``indicator_share`` (default 1/2), ``per_leaf_noise`` (the authors' variant)."""
    part = GridPartition(np.asarray(params["bounds"], dtype=float), int(params["n_bins"]))
    cls = PerLeafNoiseRandomizer if params.get("per_leaf_noise") else LPDTRandomizer
    return cls(float(params["epsilon"]), part, params["target_bounds"], params.get("indicator_share", 0.5))


def _label_hist(r: LPDTRandomizer, y0: float, y1: float) -> LossHistogram:
    """The loss distribution of one label report: log-ratio ``rate (|k - c1| - |k - c0|)`` at grid unit ``k``
    (largest, ``rate |c0 - c1|``, at ``k = c0``), the mass beyond ``TAIL`` at an infinite loss."""
    c0, c1 = (int(round_to_grid(r.clip(v), r.label.grid)) for v in (y0, y1))
    return lattice_hist(r.label.law(1), c0, c1)


def lattice_hist(law, c0: int, c1: int) -> LossHistogram:
    """The loss distribution of one discrete-Laplace release (``law``: rate and log_norm) centred at grid
    unit ``c0`` against ``c1``, the mass beyond ``TAIL`` at an infinite loss (PHIST's per-cell reports reuse
    it, :mod:`audit.baselines_law.phist_report`)."""
    rate = law.rate
    d = abs(c0 - c1)
    t = d + math.ceil(-math.log(TAIL) / rate) + 1
    k = np.arange(min(c0, c1) - t, max(c0, c1) + t + 1)
    logp0 = law.log_norm - rate * np.abs(k - c0)
    loss = rate * (np.abs(k - c1) - np.abs(k - c0))
    p0 = np.exp(logp0)
    tail = max(0.0, 1.0 - math.fsum(p0.tolist()))
    return LossHistogram.of(p0, loss, tail)


def _bits_hist(r: LPDTRandomizer, x0, x1) -> LossHistogram:
    """The loss distribution of the indicator bits (only the coordinates where the two users differ move it)."""
    u0, u1 = r.one_hot(x0), r.one_hot(x1)
    n_diff = int(np.count_nonzero(u0 != u1))
    if n_diff == 0:
        return LossHistogram.point()
    e, q = r.bits.eps_bit, r.bits.p_flip
    one = LossHistogram.of([1 - q, q], [e, -e])  # a differing coordinate: kept (loss +e) or flipped (-e)
    hist = LossHistogram.point()
    for _ in range(n_diff):
        hist = hist.compose(one)
    return hist


def report_logpmf(params: dict, output, record) -> float:
    """``ln P(report = output | record)`` from the product law above (module docstring): ``output`` is
    ``[Y~ (one, or one per leaf), bit_0, ..., bit_{L-1}]``, ``record = (x, y)``."""
    r = randomizer_of(params)
    out = np.asarray(output, dtype=float)
    n_labels = out.size - r.n_leaves
    labels, bits = out[:n_labels], out[n_labels:]
    if not np.all((bits == 0) | (bits == 1)):
        return -math.inf
    law = r.label.law(1)
    units = labels / r.label.grid
    if not np.all(units == np.floor(units)):
        return -math.inf
    c = int(round_to_grid(r.clip(record[1]), r.label.grid))
    lab = float(np.sum(law.log_norm - law.rate * np.abs(units - c)))
    u = r.one_hot(record[0])
    n_flip = int(np.count_nonzero(bits != u))
    q = r.bits.p_flip
    return lab + n_flip * math.log(q) + (bits.size - n_flip) * math.log1p(-q)


@dataclass(eq=False)
class ReportPairLoss:
    """Exact loss of one user's report between two records, the output attaining it, and the profile."""

    lower: float
    upper: float
    release: str
    inputs: tuple
    _hists: tuple | None = None

    def delta(self, epsilon: float) -> float:
        """Upper bound on ``delta(epsilon)`` (both directions), from the composed loss distributions
        (computed on first use)."""
        if epsilon >= self.upper:
            return 0.0
        if self._hists is None:
            self._hists = _profile_hists(*self.inputs)
        return float(max(h.delta(epsilon) for h in self._hists))


def _profile_hists(r, x0, v0, x1, v1, n_labels) -> tuple:
    hists = []
    for a, b in (((x0, v0), (x1, v1)), ((x1, v1), (x0, v0))):
        hist = _bits_hist(r, a[0], b[0])
        lab_hist = _label_hist(r, a[1], b[1])
        for _ in range(n_labels):
            hist = hist.compose(lab_hist)
        hists.append(hist)
    return tuple(hists)


def report_pair_loss(params: dict, d0, d1, grid=None) -> ReportPairLoss:
    """:class:`ReportPairLoss` of the one-record datasets ``d0 = (X0, y0)`` and ``d1 = (X1, y1)`` (two users).

    ``grid`` is accepted for :class:`audit.engine.exact_law.domain.Domain` and unused (the law needs no enumeration).
    """
    (X0, y0), (X1, y1) = d0, d1
    if len(y0) != 1 or len(y1) != 1:
        raise ValueError(f"LPDT's claim is local: a pair is two user records, got datasets of {len(y0)} and "
                         f"{len(y1)} records")
    r = randomizer_of(params)
    x0, x1, v0, v1 = np.asarray(X0, dtype=float)[0], np.asarray(X1, dtype=float)[0], float(y0[0]), float(y1[0])
    n_labels = r.n_leaves if isinstance(r, PerLeafNoiseRandomizer) else 1
    law = r.label.law(1)
    c0, c1 = (int(round_to_grid(r.clip(v), r.label.grid)) for v in (v0, v1))
    u0, u1 = r.one_hot(x0), r.one_hot(x1)
    loss = n_labels * abs(c0 - c1) * law.rate + int(np.count_nonzero(u0 != u1)) * r.bits.eps_bit
    release = (f"label(s) at y = {v0:g} ({n_labels} of them), indicator bits equal to the leaf of x = "
               f"{[float(v) for v in x0]} (more likely under the first record)")
    return ReportPairLoss(loss * (1 - ROUNDING), loss * (1 + ROUNDING), release, (r, x0, v0, x1, v1, n_labels))
