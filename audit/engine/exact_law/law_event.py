"""Claim rows with the truth beside the bound: the event chosen from the exact law, the bound from fresh samples.

Where a learner's release has an exact law on the audit's tiny inputs (issue 29 item 3), a sampled claim row
needs no pilot batch: the best distinguishing event is known. For each pair and each direction the cells of the
two laws are ranked by their likelihood ratio ``P0(c) / P1(c)`` (optimal by the Neyman-Pearson lemma), and the
event is the prefix of that ranking whose *expected* counts give the largest Clopper-Pearson bound at the row's
``n`` and ``alpha``: that value is the bound *attainable* at this sample size (:mod:`audit.engine.exact_law.tightness`
defines it the same way for single mechanisms). The event is then counted on ``n`` fresh draws of the
implementation from each input, and the bound is the usual one (:func:`audit.engine.estimation.bounds.epsilon_lower_bound`),
so it stays a valid lower bound for the code as it runs, whatever the law says: a wrong law can only choose a
poor event, never an invalid bound. The choice uses no sample, so every draw counts and no pilot is spent.

A row then carries three numbers for the same pairs: the sampled lower bound, the exact loss (the largest
``|ln P(r | D) - ln P(r | D')|`` over releases, an interval) and the *tightness*, the sampled bound over the
attainable one (1 means the sampler did as well as any event could at this ``n``; a ratio slightly above 1 is
sampling luck).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from audit.engine.runs import progress
from audit.engine.estimation.bounds import epsilon_lower_bound, point_estimate
from audit.engine.estimation.estimate import AuditResult, Claim, EstimateResult, confirm_pairs
from audit.engine.comparison.exact_oracle import OTHER, CellLaw
from audit.engine.presentation.render import compact
from audit.engine.estimation.sampling import draw_many
from reference.validation import check_probability

__all__ = ["LawEvent", "law_events", "PairLaw", "common_cells", "LawAuditResult", "audit_pairs_by_law", "beyond_law"]


@dataclass
class LawEvent:
    """A set of cells of a :class:`CellLaw`, chosen from the law: ``member(samples)`` is a boolean mask of
    the releases whose cell is in ``cells``. ``attainable`` is its bound from the expected counts."""

    description: str
    cells: frozenset
    cell: object
    attainable: float

    def member(self, samples) -> np.ndarray:
        values = samples.values.tolist() if isinstance(samples.values, np.ndarray) else samples.values
        return np.fromiter((self.cell(v) in self.cells for v in values), dtype=bool, count=len(values))

    def count(self, samples) -> int:
        return int(np.count_nonzero(self.member(samples)))


def _ranked(p_a: dict, p_b: dict) -> list:
    """The cells in decreasing ``ln p_a / p_b`` (``+inf`` first, cells of ``p_a = 0`` dropped), ties in the
    order of their ``repr`` (deterministic whatever the hash seed)."""
    def ratio(c):
        a, b = p_a.get(c, 0.0), p_b.get(c, 0.0)
        return math.inf if b <= 0 else math.log(a / b)

    cells = sorted((c for c in p_a if p_a[c] > 0), key=repr)
    return sorted(cells, key=ratio, reverse=True)


def _describe(cells: list, total: int) -> str:
    shown = ", ".join(compact(c) if c != OTHER else OTHER for c in cells[:3])
    more = f" and {len(cells) - 3} more" if len(cells) > 3 else ""
    return f"release in {len(cells)} of {total} cells of the exact law ({shown}{more})"


def law_events(law0: CellLaw, law1: CellLaw, n: int, alpha: float, delta: float = 0.0) -> dict:
    """``{"d0 vs d1": LawEvent, "d1 vs d0": LawEvent}``: per direction, the likelihood-ratio prefix of the
    laws' midpoints (:meth:`CellLaw.midpoints`) whose expected counts at ``n`` draws per side give the largest
    bound at level ``alpha`` (:func:`audit.engine.estimation.bounds.epsilon_lower_bound`), and that bound."""
    p0, p1 = law0.midpoints(), law1.midpoints()
    total = len(set(law0.upper) | set(law1.upper))
    out = {}
    for name, (a, b) in (("d0 vs d1", (p0, p1)), ("d1 vs d0", (p1, p0))):
        order = _ranked(a, b)
        if not order:
            out[name] = LawEvent("no release (empty law)", frozenset(), law0.cell, 0.0)
            continue
        ca = np.cumsum([a[c] for c in order])
        cb = np.cumsum([b.get(c, 0.0) for c in order])
        bounds = np.atleast_1d(epsilon_lower_bound(n * np.minimum(ca, 1.0), n, n * np.minimum(cb, 1.0), n,
                                                   delta=delta, alpha=alpha))
        k = int(np.argmax(bounds))
        chosen = order[:k + 1]
        out[name] = LawEvent(_describe(chosen, total), frozenset(chosen), law0.cell, float(bounds[k]))
    return out


@dataclass(frozen=True)
class PairLaw:
    """The exact laws of one pair's two releases on common cells, and the pair's exact loss ``(lower, upper)``
    (of the whole release: the cells may coarsen it, the loss is the learner's)."""

    law0: CellLaw
    law1: CellLaw
    exact_loss: tuple

    def __post_init__(self):
        if set(self.law0.upper) != set(self.law1.upper):
            raise ValueError("a PairLaw's two laws must name the same cells (see common_cells)")
        lo, hi = self.exact_loss
        if not 0.0 <= lo <= hi:
            raise ValueError(f"exact_loss must be an interval 0 <= lower <= upper, got {self.exact_loss!r}")


def common_cells(law0: CellLaw, law1: CellLaw) -> tuple[CellLaw, CellLaw]:
    """Both laws on the union of their cells: a release named by one law only lies, under the other, in that
    law's :data:`OTHER`, so it gets ``[0, upper of that OTHER]`` there (``[0, 0]`` without one)."""
    cells = set(law0.upper) | set(law1.upper)
    out = []
    for law in (law0, law1):
        other = law.upper.get(OTHER, 0.0)
        lower = {c: law.lower.get(c, 0.0) for c in cells}
        upper = {c: law.upper.get(c, other) for c in cells}
        out.append((lower, upper))

    def cell(release):
        c = law0.cell(release)
        return c if c != OTHER else law1.cell(release)

    return CellLaw(*out[0], cell), CellLaw(*out[1], cell)


@dataclass
class LawAuditResult(AuditResult):
    """:class:`audit.engine.estimation.estimate.AuditResult` with, per pair, the exact loss interval and the attainable
    bound; the row's exact loss and attainable bound are their maxima over the pairs."""

    exact_losses: list = field(default_factory=list)
    attainables: list = field(default_factory=list)

    @property
    def exact_loss(self) -> tuple:
        return (max(lo for lo, _ in self.exact_losses), max(hi for _, hi in self.exact_losses))

    @property
    def attainable(self) -> float:
        return max(self.attainables)

    @property
    def tightness(self) -> float | None:
        """The sampled bound over the attainable one (``None`` when nothing is attainable at this ``n``)."""
        return self.epsilon_lower / self.attainable if self.attainable > 0 else None

    def _truth(self, row: dict, text_key: str) -> dict:
        """``row`` with the exact loss, the attainable bound and the tightness, and their sentence appended to
        ``row[text_key]``."""
        lo, hi = self.exact_loss
        t = self.tightness
        text = (f"exact loss of the pairs {_interval(lo, hi)} (the largest |ln P(r|D) - ln P(r|D')| over releases, "
                f"from the exact laws); the best bound any event attains at n = {self.n_samples:,} and this alpha "
                f"is {self.attainable:.4g}, so the sampled bound's tightness is "
                f"{'undefined (nothing attainable)' if t is None else f'{t:.3g}'}; the event was chosen from the "
                "law (likelihood-ratio ranking), the counts are fresh draws of the implementation")
        row.update(method="sampled, law event", exact_loss=[lo, hi], attainable=self.attainable, tightness=t)
        row[text_key] = f"{row[text_key]}; {text}"
        return row

    def claim_row(self, *, announce: bool = True, **kw) -> dict:
        row = self._truth(super().claim_row(announce=False, **kw), "detail")
        if announce:
            progress.finished("claim", row)
        return row

    def mutant_row(self, case) -> dict:
        row = super().mutant_row(case, announce=False)
        row = self._truth(row, "evidence")
        progress.finished("mutant", row)
        return row


def beyond_law(row: dict, why: str) -> dict:
    """A claim or mutant row sampled without an exact law (the pilot chose its event): marks it out of reach
    and says why, in the row's text."""
    key = "detail" if "detail" in row else "evidence"
    row.update(exact_loss=None, law=f"out of reach: {why}")
    row[key] = f"{row[key]}; no exact loss: {why}"
    return row


def _interval(lo: float, hi: float) -> str:
    return f"{lo:.4g}" if hi - lo < 5e-5 * max(1.0, hi) else f"[{lo:.4g}, {hi:.4g}]"


def audit_pairs_by_law(mechanism, pairs: Sequence, laws: Sequence[PairLaw], claim: Claim, *,
                       n_samples: int, alpha: float, seed: int) -> LawAuditResult:
    """Audit ``claim`` on every pair with events chosen from the pairs' exact laws (module docstring).

    Parameters
    ----------
    mechanism : callable ``m(data, rng)`` with optionally ``m.batch(data, n, rng)``; discrete releases that
        ``laws[i].law0.cell`` maps to cells
    pairs : sequence of ``(d0, d1)`` or :class:`audit.engine.estimation.neighbours.NeighbourPair`
    laws : one :class:`PairLaw` per pair
    claim : Claim
    n_samples : int
        Draws per input (all of them counted: no pilot).
    alpha : float
        Error probability of the row, shared by Bonferroni over the pairs and both directions.
    seed : int

    Returns
    -------
    LawAuditResult
        ``violation`` at confidence ``1 - alpha``, as :func:`audit.engine.estimation.estimate.audit_pairs`.
    """
    if not isinstance(claim, Claim):
        raise TypeError(f"claim must be an audit.Claim, got {claim!r}")
    pairs, laws = list(pairs), list(laws)
    if not pairs or len(laws) != len(pairs):
        raise ValueError(f"audit_pairs_by_law needs one PairLaw per pair, got {len(laws)} law(s) for "
                         f"{len(pairs)} pair(s)")
    if isinstance(n_samples, bool) or not isinstance(n_samples, (int, np.integer)) or n_samples < 2:
        raise ValueError(f"n_samples must be an integer >= 2, got {n_samples!r}")
    check_probability("alpha", alpha, open_low=True, open_high=True)
    a_dir = alpha / len(pairs) / 2
    events = [law_events(law.law0, law.law1, int(n_samples), a_dir, claim.delta) for law in laws]
    attainables = [max(ev.attainable for ev in e.values()) for e in events]
    results, descriptions = confirm_pairs(
        pairs, seed, lambda i: f"law-pair{i}/{len(pairs)}:n={n_samples}:alpha={alpha}:delta={claim.delta}:seed={seed}",
        lambda i, d0, d1, s: _count(mechanism, d0, d1, events[i], int(n_samples), s, a_dir, alpha / len(pairs),
                                    claim.delta),
        f"at {n_samples:,} outputs per input, event from the exact law")
    worst = max(range(len(results)), key=lambda i: (results[i].epsilon_lower, results[i].epsilon_point))
    lower = results[worst].epsilon_lower
    return LawAuditResult(claim, lower, results[worst].epsilon_point, bool(lower > claim.epsilon), worst,
                          descriptions[worst], results, int(n_samples), alpha,
                          exact_losses=[tuple(law.exact_loss) for law in laws], attainables=attainables)


def _count(mechanism, d0, d1, events: dict, n: int, seed, a_dir: float, a_pair: float, delta: float):
    """Count both events on ``n`` fresh draws from each input; the better direction's bound (its
    ``directions`` hold both)."""
    k = {name: [0, 0] for name in events}
    s0, s1 = seed.spawn(2)
    for i, block in draw_many(mechanism, [(d0, n, s0), (d1, n, s1)]):
        for name, ev in events.items():
            k[name][i] += ev.count(block)
    results = []
    for name, ev in events.items():
        num, den = (k[name][0], k[name][1]) if name == "d0 vs d1" else (k[name][1], k[name][0])
        lower = epsilon_lower_bound(num, n, den, n, delta=delta, alpha=a_dir)
        results.append(EstimateResult(float(lower), point_estimate(num, n, den, n, delta=delta), ev.description,
                                      name, {"k0": num, "n0": n, "k1": den, "n1": n, "n_pilot": 0}, n, a_pair,
                                      delta))
    best = max(results, key=lambda r: (r.epsilon_lower, r.epsilon_point))
    best.directions = results
    return best
