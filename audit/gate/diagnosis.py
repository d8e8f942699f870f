"""What carried a sampled violation, and what would remedy it.

A sampled violation is decided by one event on one pair (:mod:`audit.engine.estimation.events`), often a
learned score over every coordinate of the release. The event proves the claim false; it does not tell the
user *which* of the published numbers leaked, nor how much more noise the claim would need. This module
answers both, after the verdict:

* **what carried it.** The deciding pair is fitted again, :data:`OUTPUTS` times per dataset on fresh seeds
  (drawn exchangeably, :func:`audit.engine.estimation.sampling.draw_many`), and every coordinate is scored
  alone by its most separating threshold event (the point estimate of the loss that event shows, with half a
  count added to each side so an empty side reads finite). The best :data:`TOP` are named by what they are
  (an attribute path, a method at a probe point), with their means and spreads on both datasets.
* **the loss beside the claim**, as the verdict measured it (the lower bound, and its ratio to the claim).
* **the remedy.** The loss of additive noise (Laplace, Gaussian, two-sided geometric) at a fixed change of its
  input falls in proportion to the noise's scale, so a claim of ``epsilon`` met by a release whose loss is at
  least ``L`` needs the scale multiplied by at least ``L / epsilon``. On a fitted attribute whose mean moves by
  ``shift`` between the pair, Laplace noise for the claim needs a scale of at least ``shift / epsilon``
  (a standard deviation of ``sqrt(2) shift / epsilon``), stated beside the spread the fit has now.

The diagnosis is descriptive: its scores are point estimates on its own outputs, no bound, so it spends none
of the claim's alpha and never changes a verdict. Its outputs are drawn from the audit's seed, so the same
seed gives the same diagnosis.
"""
from __future__ import annotations

import math

import numpy as np

from audit.engine.estimation.sampling import concat, draw_many, gather
from audit.gate.outputs import is_state

__all__ = ["diagnose", "OUTPUTS", "TOP"]

#: fits per dataset of the deciding pair (twice this in all, only after a violation)
OUTPUTS = 400
#: coordinates named
TOP = 3
#: a coordinate that separates the pair by less than this (point loss) is not named as carrying it
MIN_SEPARATION = 0.1


def _separation(a: np.ndarray, b: np.ndarray) -> float:
    """The largest point loss ``|log((k_a + 1/2) / (k_b + 1/2))|`` of a threshold event ``x >= t`` or
    ``x <= t`` on one coordinate (``k``: the event's count on each side, ``n`` outputs each)."""
    values = np.unique(np.concatenate([a, b]))
    if len(values) < 2:
        return 0.0
    sa, sb = np.sort(a), np.sort(b)
    ge_a = len(a) - np.searchsorted(sa, values, side="left")
    ge_b = len(b) - np.searchsorted(sb, values, side="left")
    le_a = np.searchsorted(sa, values, side="right")
    le_b = np.searchsorted(sb, values, side="right")
    ratios = [np.log((ka + 0.5) / (kb + 0.5)) for ka, kb in ((ge_a, ge_b), (le_a, le_b))]
    return float(max(np.max(np.abs(r)) for r in ratios))


def _coordinates(xa: np.ndarray, xb: np.ndarray, names: list) -> list[dict]:
    """Every coordinate that varies, scored alone, best first."""
    rows = []
    for j in range(xa.shape[1]):
        a, b = xa[:, j], xb[:, j]
        score = _separation(a, b)
        if score < MIN_SEPARATION:
            continue
        name = names[j] if j < len(names) else f"x[{j}]"
        rows.append({"coordinate": name, "separation": round(score, 4),
                     "mean": [float(np.mean(a)), float(np.mean(b))], "sd": [float(np.std(a)), float(np.std(b))],
                     "state": bool(is_state(name))})
    rows.sort(key=lambda r: (-r["separation"], not r["state"], r["coordinate"]))
    return rows


def _remedy(top: list[dict], measured: float, epsilon: float) -> str:
    factor = measured / epsilon if epsilon > 0 else math.inf
    text = (f"remedy: the noise must cover the change one record makes; if it is additive (Laplace, Gaussian, "
            f"two-sided geometric), its scale must grow at least {factor:.3g} times (the measured loss over the "
            "claim: additive noise's loss falls in proportion to its scale)")
    state = [r for r in top if r["state"] and abs(r["mean"][1] - r["mean"][0]) > 0]
    if state and epsilon > 0:
        r = state[0]
        shift = abs(r["mean"][1] - r["mean"][0])
        scale = shift / epsilon
        now = max(r["sd"])
        text += (f"; on {r['coordinate']}, which one record moves by {shift:.3g}, Laplace noise for ε = "
                 f"{epsilon:g} needs a scale of at least {scale:.3g} (standard deviation {math.sqrt(2) * scale:.3g}; "
                 f"the fit's is {now:.3g} now)")
    return text


def diagnose(mechanism, pair, epsilon: float, measured: float, seed: int) -> dict | None:
    """The diagnosis of a sampled violation on ``pair`` (a :class:`audit.engine.estimation.neighbours.NeighbourPair`):
    a dict with ``carried_by`` (at most :data:`TOP` coordinates, each with its ``separation``, the ``mean``
    and ``sd`` on ``d0`` and ``d1``, and whether it is the model's ``state``), ``measured`` and ``claimed``
    (the loss and the claim), ``times_the_claim``, ``outputs`` (fits per dataset), ``remedy``, ``text`` (one
    line for the report, the remedy last) and ``lines`` (the same as two lines for the console). None when the release is not a vector or scalar of numbers.

    Parameters
    ----------
    mechanism : callable ``m(data, rng)``
        The release audited (an :class:`audit.gate.outputs.EstimatorRelease` names its coordinates).
    pair : Pair
        The pair that decided the violation.
    epsilon : float
        The claimed epsilon.
    measured : float
        The verdict's lower bound on the loss.
    seed : int
        The audit's seed (the diagnosis draws from its own stream of it).
    """
    first, second = np.random.SeedSequence([int(seed), 0xD1A6]).spawn(2)
    a, b = gather(draw_many(mechanism, [(pair.d0, OUTPUTS, first), (pair.d1, OUTPUTS, second)]), concat)
    if a.kind not in ("vector", "scalar"):
        return None
    xa = np.asarray(a.values, dtype=float).reshape(len(a), -1)
    xb = np.asarray(b.values, dtype=float).reshape(len(b), -1)
    names = list(getattr(mechanism, "names", None) or [])
    top = _coordinates(xa, xb, names)[:TOP]
    carried = "; ".join(
        f"{r['coordinate']} (mean {r['mean'][0]:.3g} on D vs {r['mean'][1]:.3g} on D', sd {r['sd'][0]:.3g} / "
        f"{r['sd'][1]:.3g}; alone it separates the pair at a point loss of {r['separation']:.3g})" for r in top)
    ratio = measured / epsilon if epsilon > 0 else math.inf
    text = (f"what leaked: measured ε ≥ {measured:.4g} against the claimed {epsilon:g} ({ratio:.3g} times the "
            f"claim); " + (f"carried most by {carried}" if top else "no single coordinate separates the pair alone "
                           "(the event reads several together)")
            + f" ({OUTPUTS:,} fresh fits per dataset of the deciding pair)")
    remedy = _remedy(top, measured, epsilon)
    return {"carried_by": top, "measured": float(measured), "claimed": float(epsilon),
            "times_the_claim": float(ratio), "outputs": OUTPUTS, "remedy": remedy, "text": text + "; " + remedy,
            "lines": [text, remedy]}
