"""Determinism evidence: a trace of the data that no noise covers, in anything a fit leaves behind.

A differentially private fit may keep public facts exactly (``n_features_in_``, the declared classes, the
record count under substitution), but any observable that is *the same on every fit of a dataset D and
different on its neighbour D'* is a deterministic function of the data: ``P(o | D) = 1`` and
``P(o | D') = 0``, an unbounded loss. Ordinary code leaks this way in many forms that a list of forms cannot
foresee: a constructor default ``random_state=42`` (every fit adds the same noise), a seed hashed from the
data, exact counts in a pandas ``Series``, a summary string, a warning that names a count, a hash of the
training data kept as provenance. :func:`probe_determinism` judges all of them by the one principle, on the
observations of :mod:`audit.gate.observe`, fitting the estimator *as it ships* (no injected seed, seeded mode
off).

The test, per audited pair:

1. **Screen.** Two fits on each dataset of the first :data:`SCREEN_PAIRS` pairs, the methods asked at the pair's
   own records (:func:`audit.gate.behaviour.query_points`). A path whose value is the same in both fits of one
   dataset and read by neither fit of the other is a candidate (at most :data:`MAX_PATHS` per pair, the least
   likely to repeat by chance first: strings, arrays and fractional numbers before counts, counts before
   flags). The other dataset's value may change from fit to fit (a memoriser: 1.0 at a training record, a noisy
   share where it was not one). A candidate constant on D' is confirmed with D and D' swapped. Paths include the
   *parts* of values (:mod:`audit.gate.parts`: number tokens of text by their context, decoded JSON, gzip, zlib,
   base64 and pickles, the items of a dict keyed by identifiers by position), so a count printed beside a
   duration, or kept in a model card beside a run id, is judged on its own; a part whose whole value is a
   candidate comes last, and one value's parts cannot take every place (:data:`PARTS_PER_VALUE`, :func:`_order`).
2. **Confirm** on fresh fits, D and D' in lockstep, looking at :data:`LOOKS` fits per side (capped by the
   budget). The event is "the path reads the value D gave in screening". A candidate is dropped at its
   first break (D gives another value, or D' gives D's). At each look a surviving candidate seen on all
   ``K`` fits of D and on none of D' gives the Clopper-Pearson lower bound
   ``epsilon_lower_bound(K, K, 0, K)`` (:mod:`audit.engine.estimation.bounds`); above the claim it is a violation.

The error level: ``alpha`` is split (Bonferroni) over the :data:`ROUNDS` pairs that may be confirmed, the
:data:`MAX_PATHS` candidates of each and the :data:`LOOKS`, so a claim that holds is refuted by this
evidence with probability at most ``alpha``, whatever the subject does. Dropping a candidate at a break only
removes alarms. The measured bound is finite; the reading is ε = ∞ when the value is a function of the data,
as every one of the ``K`` fits per side then suggests.
"""
from __future__ import annotations

import random
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import SimpleNamespace

import numpy as np

from audit.engine.estimation.bounds import epsilon_lower_bound
from audit.gate.behaviour import query_points
from audit.gate.observe import ABSENT, observe_fit, source_of
from audit.gate.parts import ancestors, whole_of

__all__ = ["probe_determinism", "DeterminismReport", "LOOKS", "MAX_PATHS", "SCREEN_PAIRS", "ROUNDS",
           "MAX_FITS", "REMEDY", "as_shipped"]

#: fits per side at which the confirmation looks (cut at the budget's :data:`MAX_FITS`)
LOOKS = (16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192)
#: candidates confirmed per pair, at most
MAX_PATHS = 16
#: parts of one whole value among a pair's first candidates, at most (the rest follow every other candidate)
PARTS_PER_VALUE = 4
#: pairs screened (two fits per dataset): every audited pair, as the adversary chooses among them (a dict whose
#: keys follow the ranking of the exact counts shows it on "no records vs one", not on the first eight)
SCREEN_PAIRS = 64
#: pairs whose candidates may be confirmed, at most (the error level's divisor: it does not depend on how many
#: pairs are screened)
ROUNDS = 8
#: fits per side at most, per budget
MAX_FITS = {"quick": 2048, "standard": 8192, "full": 8192}
#: what to do about a deterministic trace of the data
REMEDY = ("draw fresh entropy for every fit (no fixed default random_state, no seed derived from the data) and "
          "keep or print no exact statistic of the data: publish only noisy values and public facts")


@contextmanager
def as_shipped(seed: int | None = None):
    """A block in which fits run as the code ships: the project's seeded-fit mode is off
    (:func:`reference.randomness.seeded_fits` with ``enabled=False``).

    With ``seed``, numpy's and Python's global generators are seeded from it for the block and restored after
    it: the estimator is still built and fitted as it ships (no seed injected; each fit draws on from the
    global stream), but code that draws from the global generators (diffprivlib does) gives the same
    observations, so the same report, on every run of a seed. Code that draws fresh OS entropy cannot be
    made to repeat, and its noisy values are never the ones a violation reports as D's."""
    from reference.randomness import seeded_fits

    saved = (np.random.get_state(), random.getstate()) if seed is not None else None
    if seed is not None:
        words = np.random.SeedSequence([int(seed), 0xD37]).generate_state(4, dtype=np.uint32)
        np.random.seed(words[:2])
        random.seed(int.from_bytes(words.tobytes(), "little"))
    try:
        with seeded_fits(False):
            yield
    finally:
        if saved is not None:
            np.random.set_state(saved[0])
            random.setstate(saved[1])


@dataclass
class DeterminismReport:
    """What :func:`probe_determinism` found.

    Attributes
    ----------
    verdict : str
        ``"violation"`` (a deterministic trace confirmed above the claim), ``"clean"`` (no candidate, or
        every candidate broke), ``"inconclusive"`` (candidates the fit budget could not confirm above the
        claim) or ``"skipped"`` (no pair to screen, or every fit raised alike).
    pair : str
        The pair that decided (its description).
    paths : list of dict
        The confirmed paths: ``path``, ``on_d`` and ``on_d1`` (the values shown), ``record_count``.
    fits : int
        Fits per side at the deciding look.
    epsilon_lower : float
        The measured lower bound (0 unless a violation).
    deterministic_model : bool
        Every observable of the deciding pair's fits was the same from fit to fit: the release is deterministic.
    screened : int
        Fits made in screening.
    """

    verdict: str = "clean"
    pair: str = ""
    paths: list = field(default_factory=list)
    fits: int = 0
    epsilon_lower: float = 0.0
    deterministic_model: bool = False
    screened: int = 0
    record_count_only: bool = False
    notes: list = field(default_factory=list)
    relation: str = "add-remove"
    #: candidates sent to confirmation (not in ``to_json``: for a noisy subject it depends on its entropy)
    tried: int = 0

    @property
    def evidence(self) -> str:
        """One sentence: the paths, their values on D and D', the fits and the bound."""
        if self.verdict != "violation":
            return self.summary()
        shown = self.shown_paths()
        more = f" (and {len(self.paths) - 3} more paths)" if len(self.paths) > 3 else ""
        what = "the release is deterministic: every observable was the same on every fit; " \
            if self.deterministic_model else ""
        return (f"{what}{shown}{more}, the same on all {self.fits:,} fits of D and never D's value on {self.fits:,} "
                f"fits of D' (pair {self.pair}): ε ≥ {self.epsilon_lower:.3g} measured, ε = ∞ if it is a function "
                "of the data")

    def shown_paths(self, most: int = 3) -> str:
        """The first ``most`` paths with their values on D and D'."""
        return "; ".join(f"{p['path']} = {p['on_d']} on D, {p['on_d1']} on D'" for p in self.paths[:most])

    @property
    def lead(self) -> str:
        """The words that open a violation's line in a ``check`` row."""
        return ("violation through determinism (a value that no noise covers: the same on every fit of D, never on "
                "D'; --determinism warn reports it without failing): ")

    @property
    def remedy(self) -> str:
        if self.record_count_only and self.relation == "add-remove":
            return ("the value is the record count, which add/remove neighbours keep private; if the number of "
                    "records is public, declare neighbours = \"substitute\" (--neighbours substitute) instead")
        return REMEDY

    #: what a violation's summary opens with, and what the probe is called in the others
    kind, probe = "determinism", "determinism probe"

    def clean_text(self) -> str:
        """What a clean probe read."""
        return (f"no observable was the same on every fit of a dataset and different on its neighbour "
                f"({self.screened} fits as shipped, every public method, warning, log line, string and attribute "
                f"read)")

    def summary(self) -> str:
        if self.verdict == "violation":
            return f"{self.kind}: " + self.evidence + "; remedy: " + self.remedy
        if self.verdict == "skipped":
            return f"{self.probe} skipped: " + "; ".join(self.notes)
        extra = "".join(f"; {n}" for n in self.notes)
        if self.verdict == "inconclusive":
            return f"{self.probe} inconclusive" + extra
        return f"{self.probe}: {self.clean_text()}" + extra

    def to_json(self) -> dict:
        return {"verdict": self.verdict, "pair": self.pair, "paths": list(self.paths), "fits_per_side": self.fits,
                "epsilon_lower": self.epsilon_lower if self.verdict == "violation" else None,
                "deterministic_model": self.deterministic_model, "record_count_only": self.record_count_only,
                "screened_fits": self.screened, "summary": self.summary(),
                "remedy": self.remedy if self.verdict == "violation" else None}


def _tier(key) -> int:
    """0: values unlikely to repeat by chance (strings, arrays, fractional numbers); 1: counts; 2: flags and
    absence (:data:`ABSENT`'s key is a bare string, not a tuple)."""
    if key == ABSENT[0]:
        return 2
    kind, value = key[0], key[1] if len(key) > 1 else None
    if kind in ("bool", "NoneType", "absent"):
        return 2
    if kind == "int":
        return 2 if value in (0, 1) else 1
    if kind == "float":
        v = float(value)
        return 1 if v.is_integer() and abs(v) > 1 else 2 if v in (0.0, 1.0) else 0
    return 0


def _n(data) -> int:
    return len(data[1])


def _is_count(pair, a, b) -> bool:
    """Whether the values D and D' give are their record counts."""
    try:
        return (a[0] in ("int", "float") and b[0] in ("int", "float") and float(a[1]) == _n(pair.d0)
                and float(b[1]) == _n(pair.d1) and _n(pair.d0) != _n(pair.d1))
    except (TypeError, ValueError, IndexError):
        return False


#: what a side's values read as when they changed between its fits
OTHER = (("other values",), "other values")


def _same(values) -> bool:
    return all(v[0] == values[0][0] for v in values)


def _candidates(pair, a, b) -> list:
    """``(path, side, value, other)``: paths constant within the fits of one dataset (``side`` 0: D, 1: D') whose
    value the other dataset's fits never read, in the order of :func:`_order`. The other side's value is
    :data:`OTHER` when it changed between fits (a memorising model: 1.0 at a training record, a noisy share where
    it was not one)."""
    keys = {}
    for obs in (*a, *b):
        keys.update(dict.fromkeys(obs))
    found = []
    for path in keys:
        va = [o.get(path, ABSENT) for o in a]
        vb = [o.get(path, ABSENT) for o in b]
        for side, own, other in ((0, va, vb), (1, vb, va)):
            if _same(own) and all(v[0] != own[0][0] for v in other):
                found.append((path, side, own[0], other[0] if _same(other) else OTHER))
                break
    return _order(found)


def _order(found: list) -> list:
    """Candidates in the order they are confirmed, judged by parts (:mod:`audit.gate.parts`) without letting the
    parts of one value crowd out a leak elsewhere.

    A value present on both datasets' fits before one absent on either (a path that appears as fits go by: the
    entries a registry gained between the fits of D and those of D', which screening observed at different
    times), then tier order (:func:`_tier`), a whole value before a part of the same tier. A part whose whole
    value (or an outer part) is a candidate too comes after all others: the whole carries the same evidence, and
    the part is kept only for a whole that breaks by chance (a duration that repeated in screening). At most
    :data:`PARTS_PER_VALUE` parts of one whole value come before the candidates of other values (a JSON card of
    many exact statistics is confirmed on a few of them)."""
    paths = {c[0] for c in found}

    def rank(c):
        path, _, own, other = c
        redundant = any(p in paths for p in ancestors(path))
        return redundant, own[0] == ABSENT[0] or other[0] == ABSENT[0], _tier(own[0]), whole_of(path) != path

    first, rest, per_value = [], [], {}
    for c in sorted(found, key=rank):
        whole = whole_of(c[0])
        if whole != c[0]:
            per_value[whole] = per_value.get(whole, 0) + 1
        (first if whole == c[0] or per_value[whole] <= PARTS_PER_VALUE else rest).append(c)
    return first + rest


def _oriented(pair, side: int):
    """The pair read from the side whose value is constant: itself, or D and D' swapped."""
    if side == 0:
        return pair
    return SimpleNamespace(d0=pair.d1, d1=pair.d0, description=f"swapped: {pair.description}")


def probe_determinism(make_estimator, pairs, *, grid, classes, epsilon: float, delta: float = 0.0,
                      alpha: float = 0.001, relation: str = "add-remove", max_fits: int = MAX_FITS["quick"],
                      refusals: bool = True, progress=None, seed: int | None = 0,
                      screen_pairs: int = SCREEN_PAIRS) -> DeterminismReport:
    """Fit ``make_estimator()`` as it ships on neighbouring datasets and find deterministic traces of the data.

    Parameters
    ----------
    make_estimator : callable
        Returns a fresh unfitted estimator, built with the user's parameters exactly as given.
    pairs : list of NeighbourPair
        Neighbouring datasets (``d0``, ``d1``, ``description``), in the order to screen them.
    grid : ndarray
        The public probe points the methods are called on.
    classes : list
        The public classes (``score`` is called with them as labels).
    epsilon, delta : float
        The claim.
    alpha : float
        The error level of this evidence (module docstring).
    relation : str
        ``"add-remove"`` or ``"substitute"``: under add/remove the record count is private, and a violation
        carried by the count alone says how to declare substitution instead.
    max_fits : int
        Fits per side at most in confirmation.
    refusals : bool
        Whether ``fit`` raising on one dataset of a pair and not on the other may decide (``check``'s exceptions
        mode ``"fail"``); when False such pairs are not screened.
    progress : callable, optional
        ``progress(text)`` for a console line when a violation is found.
    seed : int or None
        Seeds the global generators for the probe's fits (:func:`as_shipped`; None leaves them as they are).
    screen_pairs : int
        Pairs screened, at most (the first ones); at most :data:`ROUNDS` of them are confirmed whatever this is,
        so the error level does not depend on it.

    Returns
    -------
    DeterminismReport
    """
    report = DeterminismReport(relation=relation)
    pairs = list(pairs)[:screen_pairs]
    if not pairs:
        report.verdict, report.notes = "skipped", ["no pair to screen"]
        return report
    level = alpha / (ROUNDS * MAX_PATHS * len(LOOKS))
    looks = [k for k in LOOKS if k <= max_fits] or [max_fits]
    reachable = epsilon_lower_bound(looks[-1], looks[-1], 0, looks[-1], delta=delta, alpha=level)
    with as_shipped(seed):
        seen = {}

        def fits(data, records):
            key = (np.asarray(data[0]).tobytes(), np.asarray(data[1]).tobytes(), np.shape(data[0]),
                   None if records is None else records.key())
            if key not in seen:
                seen[key] = [observe_fit(make_estimator, data, grid, classes, records=records) for _ in range(2)]
                report.screened += 2
            return seen[key]

        rounds = 0
        for pair in pairs:
            records = query_points(pair, np.shape(grid)[1] if np.ndim(grid) == 2 else None)
            a, b = fits(pair.d0, records), fits(pair.d1, records)
            if not refusals and any("fit raised" in o for o in (*a, *b)):
                continue  # refusals do not decide here (exceptions "report" or "off")
            cands = _candidates(pair, a, b)[:MAX_PATHS]
            if not cands or rounds >= ROUNDS:  # every pair is screened (the fits counted do not depend on the
                continue  # subject's entropy: the same seed, the same report); at most ROUNDS are confirmed
            rounds += 1
            report.tried += len(cands)
            if _confirm(report, make_estimator, pair, cands, a, b, grid, classes, epsilon, delta, level, looks,
                        records):
                if progress is not None:
                    progress("FOUND a deterministic trace of the data (as shipped): " + report.evidence)
                return report
        if report.verdict == "inconclusive" and reachable <= epsilon:
            report.notes.append(f"{looks[-1]:,} fits per side can show at most ε ≥ {reachable:.3g}, not above the "
                                f"claim {epsilon:g}")
    return report


def _confirm(report, make_estimator, pair, cands, a, b, grid, classes, epsilon, delta, level, looks,
             records=None) -> bool:
    """Confirm the candidates on fresh fits of both datasets in lockstep (module docstring); each candidate is
    read from its constant side (``_candidates``), the query ``records`` the same as in screening."""
    alive = {path: (side, va, vb) for path, side, va, vb in cands}
    varies = {path for path, side, va, vb in cands if vb is OTHER}  # changed between fits: "other values"
    k = 0
    for look in looks:
        while k < look and alive:
            want = {source_of(p) for p in alive}  # read only what the surviving candidates come from
            obs = (observe_fit(make_estimator, pair.d0, grid, classes, want=want, records=records),
                   observe_fit(make_estimator, pair.d1, grid, classes, want=want, records=records))
            k += 1
            for path, (side, va, vb) in list(alive.items()):
                got = obs[1 - side].get(path, ABSENT)[0]
                if obs[side].get(path, ABSENT)[0] != va[0] or got == va[0]:
                    del alive[path]
                elif got != vb[0]:
                    varies.add(path)
        if not alive:
            return False
        bound = float(epsilon_lower_bound(k, k, 0, k, delta=delta, alpha=level))
        if bound > epsilon:
            side = min(s for s, _, _ in alive.values())  # one orientation is reported: D's side first
            pair = _oriented(pair, side)
            report.verdict, report.pair, report.fits, report.epsilon_lower = "violation", pair.description, k, bound
            # a D' value that changed between fits is noise (it need not repeat on another run): not shown
            report.paths = [{"path": p, "on_d": va[1], "on_d1": "other values" if p in varies else vb[1],
                             "record_count": p not in varies and _is_count(pair, va[0], vb[0])}
                            for p, (s, va, vb) in alive.items() if s == side]
            report.record_count_only = all(p["record_count"] for p in report.paths)
            report.deterministic_model = all(dict(o) == dict(a[0]) for o in a) and \
                all(dict(o) == dict(b[0]) for o in b)
            return True
    if alive:
        report.verdict = "inconclusive"
        report.notes.append(f"{len(alive)} observable(s) stayed the same on {k:,} fits of D and different on D' "
                            f"(e.g. {next(iter(alive))}) without reaching the claim {epsilon:g} at this budget")
    return False




def join_verdict(row: dict, extra: list, report: DeterminismReport, mode: str = "fail") -> None:
    """The determinism evidence joins a ``check`` row.

    A violation fails the gate (``mode="fail"``): the row reads ``violation`` with ``"determinism"`` in
    ``decided_by`` after the sampled kinds, its bound the larger of the two and its reading ε = ∞; ``"warn"``
    reports it without failing. An inconclusive probe (a value that stayed deterministic on every fit the
    budget allows, without a bound above the claim) makes a pass inconclusive.
    """
    row["determinism"] = report.to_json()
    extra.append(report.summary())
    if report.verdict == "violation" and mode == "fail":
        sampled = row.get("decided_by", []) if row["verdict"] == "violation" else []
        row["verdict"] = "violation"
        row["decided_by"] = [k for k in sampled if k != "determinism"] + ["determinism"]
        row["epsilon_lower"] = max(float(row.get("epsilon_lower") or 0.0), report.epsilon_lower)
        row["epsilon_reading"] = "∞"
        for key in ("power", "detectable_loss", "n_conclusive"):
            row.pop(key, None)
        extra.insert(0 if not sampled else 1, report.lead + report.evidence + "; remedy: " + report.remedy)
    elif report.verdict == "inconclusive" and row["verdict"] == "pass":
        row["power"] = "inconclusive"
        extra.insert(0, "inconclusive: " + report.summary())
