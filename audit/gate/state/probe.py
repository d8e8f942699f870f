"""The state probe: random state and seeds that a fitted estimator keeps after ``fit``.

``audit check`` samples releases; a fitted model can also leak through what it *keeps*. A model
that holds its noise generator (or a seed, or a generator passed as ``random_state``) lets
whoever holds the model, or its pickle, replay the fit's random draws and subtract the noise:
the exact counts come back, an unbounded privacy loss that no sample of the releases shows
(issue 26 findings 2 and 3: our own random decision forest kept a sibling of its noise seed).

:func:`probe_estimator` fits a fresh estimator with a distinctive seed below ``2**31`` (every
scikit-learn-style estimator accepts it; on refusal other seeds, then none), walks the fitted
object and the object rebuilt from its pickle (:mod:`audit.gate.state.walk`: attributes, slots,
``__getstate__``, dict keys, containers, bound methods, partials, closures, pickled bytes) and
reports by attribute path every

* generator object (``Generator``, ``BitGenerator``, ``SeedSequence``, ``RandomState``,
  ``random.Random``; kind ``"generator"``),
* generator state in plain data (``bit_generator.state``, ``RandomState.get_state()`` in tuple or
  dict form, ``random.Random().getstate()``, any of these spelt as a JSON or ``repr`` string; kind
  ``"state"``),
* raw words of a bit generator (PCG64 and PCG64DXSM, MT19937, Philox, SFC64) kept as ints, lists, tuples,
  integer arrays or bytes, or as two to six large ints side by side in one object (kind ``"state"``,
  named with the encoding: ``"PCG64 state as a list of 2 ints"``): words that change with the seed are
  read every way :func:`audit.gate.state.codec.views` knows and named only when they are the state of a
  generator seeded with the probe's seed after the fit's draws (:func:`audit.gate.state.codec.identify`;
  numbers that merely look large, such as a hash of public parameters, never match),
* copy of the seed (an int, a float, a string containing it, two 32-bit words; kind ``"seed"``),
* integer that changes from fit to fit and whose *replay* reproduces the published model
  (kind ``"replay"``, :mod:`audit.gate.state.replay`): the replay is measured on fresh fits from D and
  D' and gives an epsilon lower bound.

Every finding ends with its remedy: drop the attribute that keeps the state or seed, and draw fresh entropy
per fit. A copy of the probe's own seed, wherever it lands (the constructor parameter ``random_state``, the
scikit-learn convention, or a sub-estimator it was forwarded to, as pipelines and meta-estimators do), is the
gate's secret, not the model's: as the code ships, no seed is injected, so it is reported as a *note*, never
replayed (``parameter`` marks the constructor's own). A generator or generator state the model keeps stays a
finding whatever seeded it: as shipped it is seeded from entropy and still replays the fit; the one exception is
randomness the fit drew from fresh OS entropy and on which nothing else the model holds depends, shown by
replacing each source of entropy alone (:mod:`audit.gate.state.idle`: a generator kept for ``predict``'s
tie-breaking, or a checkpoint of its state). Anything else is a
*finding*:
``check`` counts a finding as a violation by default (``--state warn`` reports it without failing
the gate, ``--state off`` skips the probe). A probe that could not run, or whose walk hit its node
limit, is *inconclusive*, never clean.
"""
from __future__ import annotations

import math
import pickle
import re
import time
import warnings
from dataclasses import dataclass, field

import numpy as np

from audit.gate.emissions import captured
from audit.gate.state import replay as rp
from audit.gate.state import entropy as en
from audit.gate.state.fingerprint import beside, served
from audit.gate.state.derived import traced
from audit.gate.state.idle import idle_generators
from audit.gate.state.reseed import recorded
from audit.gate.state.words import identified_words, inside as _inside, replay_words, unseeded_words
from audit.gate.state.walk import MAX_NODES, long_plain_data, long_seed, recognise, walk

__all__ = ["StateFinding", "StateReport", "probe_estimator", "find_state", "find_state_walk", "PROBE_SEED", "ATTACK"]

#: the seed the probe fits with: distinctive, so an equal integer is not a coincidence, and below 2**31,
#: so scikit-learn's check_random_state and RandomState accept it
PROBE_SEED = 1_904_270_361
#: seeds tried when the estimator refuses the first (then the probe fits unseeded)
OTHER_SEEDS = (1_377_040_417, 918_273_645)
#: at most this many changing integers are replayed
MAX_CANDIDATES = 16

#: what an attacker holding the model can do with each kind of kept state
ATTACK = {
    "Generator": "copy its state and, for PCG64, rewind it (bit_generator.advance with a negative step) to its "
                 "state before the fit, then replay the fit's noise and subtract it: the exact counts come back",
    "BitGenerator": "rebuild a Generator on it, rewind it to its state before the fit and replay the fit's noise",
    "SeedSequence": "spawn the same child streams again, the fit's noise included, and subtract the noise",
    "RandomState": "restore its state, step it back to the fit and replay the fit's noise",
    "Random": "restore its state and replay the draws that follow it",
    "seed": "re-run the fit's random draws from the seed and subtract the noise from the released values",
    "state": "load the state into a fresh generator, step it back to the fit and replay the fit's noise",
    "replay": "refit with it and obtain the published model, noise included: the exact statistics come back",
}


@dataclass(frozen=True)
class StateFinding:
    """One piece of random state reachable from the fitted model."""

    path: str
    kind: str  # "generator", "state", "seed" or "replay"
    type_name: str
    where: str  # "fitted object" or "pickle"
    parameter: bool = False  # the constructor's own random_state (a note, not a finding)

    @property
    def attack(self) -> str:
        return ATTACK[self.type_name if self.kind == "generator" else self.kind]

    @property
    def remedy(self) -> str:
        """What to change: drop the attribute (its path below the model), draw fresh entropy per fit."""
        return remedy(self.path)

    def describe(self) -> str:
        what = {"generator": f"{self.type_name} at {self.path}", "state": f"{self.type_name} at {self.path}",
                "seed": f"a copy of the seed the probe injected at {self.path}" if not self.parameter
                else f"the fit's seed at {self.path}",
                "replay": f"a seed that replays the fit at {self.path}"}[self.kind]
        if self.kind == "seed":  # a note: the seed is the one the probe injected, never the shipped model's
            return f"{what} ({self.where}): as shipped no seed is injected, so it is not the model's state"
        return f"{what} ({self.where}): an attacker can {self.attack}; remedy: {self.remedy}"


#: the suffix of a path whose integer a text spells (:mod:`audit.gate.state.spelling`)
_SPELT = r"#(hex|int|bin|b36|b32|b64)"


def remedy(path: str) -> str:
    """The remedy of a finding at ``path``: the attribute to drop (or, for ``emitted[...]``, the output to stop: a
    seed printed or logged by the fit; for ``model.NAME()`` or ``repr(model)``, the method that serves it; for
    ``module M.NAME``, the global to keep it out of) and fresh entropy per fit. A path's spelling suffix
    (``#hex``, ``#b64``, ``#int[i]``: :mod:`audit.gate.state.spelling`) is named as the text that spells it."""
    clock = re.search(r" in (s|ms|us|ns)$", path)  # a kept time read as the clock seed it gave
    path = path[:clock.start()] if clock else path
    paths = list(dict.fromkeys(re.sub(_SPELT + r"(\[\d+\])?$", "", p) for p in path.split(" + ")))
    said = [p for p in paths if p.startswith("emitted")]
    kept = [p.removeprefix("module ") for p in paths if p.startswith("module ")]
    served = list(dict.fromkeys(m.group(0).removeprefix("model.") for p in paths
                                if (m := re.match(r"repr\(model\)|model\.\w+\(\)", p))))
    names = [p.split(".", 1)[1] if "." in p else p for p in paths
             if not p.startswith(("emitted", "module ", "repr(model)")) and not re.match(r"model\.\w+\(\)", p)]
    parts = []
    if names:
        parts.append(f"drop the attribute{'s' if len(names) > 1 else ''} " + " and ".join(f"`{n}`" for n in names))
    if served:
        parts.append("stop " + " and ".join(f"`{n}`" for n in served) + " serving it")
    if kept:
        parts.append("keep it out of the module global" + ("s " if len(kept) > 1 else " ")
                     + " and ".join(f"`{n}`" for n in kept))
    if said:
        parts.append("stop the fit printing or logging its seed (" + ", ".join(f"`{p}`" for p in said) + ")")
    spelt = " (it spells the seed in its text)" if any(re.search(_SPELT, p) for p in path.split(" + ")) else ""
    spelt += f" (the clock read in {clock.group(1)} was the seed)" if clock else ""
    return "; ".join(parts) + spelt + "; draw fresh entropy per fit"


@dataclass
class StateReport:
    """What :func:`probe_estimator` found.

    Attributes
    ----------
    findings : list of StateFinding
        Kept random state, by attribute path (a violation).
    notes : list of StateFinding
        The constructor's own ``random_state`` holding the user's seed.
    skipped : str
        Why the probe could not run at all (then the verdict is ``"inconclusive"``).
    truncated : bool
        The walk hit its node limit: the verdict is at least ``"inconclusive"``.
    replays : list of audit.gate.state.replay.Replay
        Every candidate integer and what its replay measured.
    remarks : list of str
        Other facts (seed refused, model not picklable, candidate cap hit).
    cut : str
        What the safety cap on time left out (the replay measurement stopped before its counts were done):
        without a finding, the verdict is then ``"inconclusive"``.
    """

    findings: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    skipped: str = ""
    truncated: bool = False
    replays: list = field(default_factory=list)
    remarks: list = field(default_factory=list)
    elapsed_s: float = 0.0
    cut: str = ""

    @property
    def verdict(self) -> str:
        """``"violation"`` (findings), ``"inconclusive"`` (skipped, truncated or cut) or ``"clean"``."""
        if self.findings:
            return "violation"
        return "inconclusive" if self.skipped or self.truncated or self.cut else "clean"

    @property
    def clean(self) -> bool:
        return self.verdict == "clean"

    @property
    def epsilon_lower(self) -> float:
        """``inf`` for kept generators, states or seed copies; else the best measured replay bound."""
        if any(f.kind != "replay" for f in self.findings):
            return math.inf
        return max((r.epsilon_lower for r in self.replays if r.reproduced), default=0.0)

    @property
    def evidence(self) -> str:
        """One sentence naming the path, the replay and how often it matched on each side."""
        if self.skipped:
            return f"inconclusive: the state probe could not run ({self.skipped})"
        reproduced = sorted((r for r in self.replays if r.reproduced), key=lambda r: -r.epsilon_lower)
        if reproduced:
            return f"{reproduced[0].sentence()}; remedy: {remedy(reproduced[0].path)}"
        if self.findings:
            return "ε = ∞: " + self.findings[0].describe()
        if self.truncated:
            return "inconclusive: the walk of the fitted model hit its node limit before it ended"
        if self.cut:
            return f"inconclusive: {self.cut}"
        tried = f"; {len(self.replays)} changing integer(s) replayed without reproducing the model" \
            if self.replays else ""
        return "no random generator, generator state or seed kept by the fitted model or its pickle" + tried

    def summary(self) -> str:
        if self.skipped:
            return f"state probe inconclusive: {self.skipped}"
        extra = "".join(f"; {r}" for r in self.remarks)
        extra += "".join(f"; {r.sentence()}" for r in self.replays if not r.reproduced)
        if self.findings:
            measured = "".join(f"; {r.sentence()}" for r in self.replays if r.reproduced)
            return "state kept after fit: " + "; ".join(f.describe() for f in self.findings) + measured + extra
        if self.truncated:
            return "state probe inconclusive: the walk hit its node limit" + extra
        if self.cut:
            return f"state probe inconclusive: {self.cut}" + extra
        note = "; note: " + self.notes[0].describe() if self.notes else ""
        return "state probe: no random generator or seed kept by the fitted model or its pickle" + note + extra

    def to_json(self) -> dict:
        def row(f):
            return {"path": f.path, "kind": f.kind, "type": f.type_name, "where": f.where, "attack": f.attack,
                "remedy": f.remedy}

        eps = self.epsilon_lower
        return {"clean": self.clean, "verdict": self.verdict, "skipped": self.skipped, "truncated": self.truncated,
                "epsilon_lower": None if math.isinf(eps) else eps, "epsilon_lower_unbounded": math.isinf(eps),
                "evidence": self.evidence, "findings": [row(f) for f in self.findings],
                "notes": [row(f) for f in self.notes], "replays": [r.to_json() for r in self.replays],
                "remarks": list(self.remarks), **({"cut": self.cut} if self.cut else {})}


def find_state_walk(obj, seed: int | None, root: str = "model", where: str = "fitted object",
                    max_nodes: int = MAX_NODES):
    """``(findings, truncated)``: every piece of random state reachable from ``obj`` (breadth first)."""
    found = []
    w = walk(obj, root, max_nodes)
    for path, node in w:
        hit = recognise(node, seed)
        if hit is None and long_plain_data(node, strings=False):
            w.prune()  # read whole: a long log of numbers (a process-wide accountant) costs its length once
            hit = ("seed", type(node).__name__) if long_seed(node, seed) else None
        if hit is not None:
            w.prune()
            found.append(StateFinding(path, hit[0], hit[1], where, path == f"{root}.random_state"))
    return found, w.truncated


def find_state(obj, seed: int | None, root: str = "model", where: str = "fitted object",
               max_nodes: int = MAX_NODES) -> list[StateFinding]:
    """Every generator, generator state and copy of ``seed`` reachable from ``obj``, by path."""
    return find_state_walk(obj, seed, root, where, max_nodes)[0]


def _takes_seed(est) -> bool:
    try:
        return "random_state" in est.get_params() if hasattr(est, "get_params") else hasattr(est, "random_state")
    except Exception:  # noqa: BLE001 - outside code
        return hasattr(est, "random_state")


def _fit(make_estimator, D, seed):
    """``(fitted estimator, the integers its fit emitted, what it left beside the model)``: a seed printed or
    logged by the fit, or kept in a global of the model's module, is a candidate as much as one the model keeps
    (:func:`audit.gate.state.replay.emitted_integers`, :func:`audit.gate.state.fingerprint.beside`: read at once,
    before another fit overwrites it), and so is a seed the fit handed a generator that a digest of a text it
    keeps or emitted equals (:func:`audit.gate.state.derived.traced`)."""
    est = make_estimator()
    if seed is not None:
        rp.with_seed(est, seed)
    with captured() as emitted, recorded() as seeds:
        est.fit(*D)
    # a seed the fit derived from a text it keeps or emitted (a scratch file's name through CRC-32): a candidate
    # under the text's path and the derivation (audit.gate.state.derived)
    derived = traced([s for s in seeds if s != seed], est, emitted)
    return est, {**rp.emitted_integers(emitted), **derived}, beside(est)


def _fingerprint(fitted) -> rp.Leaves:
    """The fingerprint of a fit from :func:`_fit`: its model's (rebuilt from its pickle), what it emitted, and,
    for the entropy map, what it left beside the model and what the rebuilt copy serves
    (:func:`audit.gate.state.fingerprint.served`, read after the copy's own numbers: a method may change it)."""
    est, said, around = fitted
    back = rp.rebuilt(est)
    lv = rp.leaves(back)
    lv.digits.update(said)
    lv.around = around | served(back)
    return lv


def probe_estimator(make_estimator, X, y, *, pair=None, others=(), epsilon: float = 1.0, delta: float = 0.0,
                    alpha: float = 0.05, seed: int = PROBE_SEED, max_seconds: float = 120.0,
                    fresh=None) -> StateReport:
    """Fit ``make_estimator()`` with a distinctive seed and report the random state it keeps.

    Parameters
    ----------
    make_estimator : callable
        Returns a fresh unfitted estimator.
    X, y : array-like
        The probe's dataset (``D`` unless ``pair`` is given).
    pair : tuple, optional
        ``((X0, y0), (X1, y1))``, the neighbouring datasets D and D' of the replay measurement
        (default: ``(X, y)`` and the same without its last record).
    others : sequence of (str, tuple), optional
        More neighbouring pairs ``(description, (D, D'))``: a candidate whose replay gives the same model on
        both datasets of ``pair`` is measured on the first of them where it does not
        (:func:`audit.gate.state.replay.distinguishing`).
    epsilon, delta, alpha : float
        The claim, and the error level of the replay's lower bound.
    seed : int
        The probe seed (below ``2**31``); other seeds, then none, when the estimator refuses it.
    max_seconds : float
        Safety cap (wall seconds, about ten times the probe's expected time): no new replay trial starts after
        it, and ``cut`` of the report says so (the probe is then inconclusive unless it found kept state). The
        replay's trials are counts (:data:`audit.engine.replay.LOOKS`), not a time budget.
    fresh : callable, optional
        ``fresh(inputs, base)``: fits in fresh processes (:func:`audit.gate.fresh.idle_readings`), with which kept
        randomness drawn before the fit (a module's generator built at import) can be cleared
        (:mod:`audit.gate.state.idle`); without it, such randomness stays a finding.

    Returns
    -------
    StateReport
    """
    start = time.perf_counter()
    D0, D1 = pair if pair is not None else ((X, y), (X[:-1], y[:-1]))
    report = StateReport()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _probe(report, make_estimator, D0, D1, epsilon, delta, alpha, seed, (start + max_seconds, max_seconds),
               list(others), fresh)
    report.elapsed_s = time.perf_counter() - start
    return report


def _probe(report, make_estimator, D0, D1, epsilon, delta, alpha, seed, cap, others, fresh=None):
    try:
        takes_seed = _takes_seed(make_estimator())
    except Exception as exc:  # noqa: BLE001
        report.skipped = f"the estimator could not be built ({type(exc).__name__})"
        return
    seeds = [seed, *(s for s in OTHER_SEEDS if s != seed)] if takes_seed else []
    est, refused = None, []
    for s in [*seeds, None]:
        try:
            (est, said, around), s1 = _fit(make_estimator, D0, s), s
            break
        except Exception as exc:  # noqa: BLE001 - any exception of outside code
            refused.append(f"{'unseeded' if s is None else f'seed {s:,}'}: {type(exc).__name__}")
    if est is None:
        report.skipped = "fit raised on the probe's dataset (" + "; ".join(refused) + ")"
        return
    if refused:
        report.remarks.append("fit refused " + "; ".join(refused))
    items, report.truncated = find_state_walk(est, s1, max_nodes=MAX_NODES)
    try:
        back = pickle.loads(pickle.dumps(est))
    except Exception as exc:  # noqa: BLE001
        back = est
        report.remarks.append(f"the fitted model cannot be pickled ({type(exc).__name__}); the live object was probed")
    else:
        more, cut = find_state_walk(back, s1, where="pickle", max_nodes=MAX_NODES)
        items, report.truncated = items + more, report.truncated or cut
    shipped = _shipped(make_estimator, D0) if any(f.kind == "seed" and not f.parameter for f in items) else None
    for f in items:  # a copy of the probe's seed is the gate's own secret (module docstring) ...
        own = f.kind == "seed" and not f.parameter and _holds_a_seed(shipped, f.path)
        (report.notes if f.kind == "seed" and not own else report.findings).append(f)  # ... unless shipped keeps one
    kept = sorted({f.path for f in report.findings if f.kind in ("generator", "state") and not f.parameter})
    if kept:  # fresh randomness kept for later use, on which nothing else the model holds depends, is not the noise
        idle, _ = idle_generators(make_estimator, D0, D1, kept, fresh=fresh)
        report.findings = [f for f in report.findings if f.path not in idle]
        report.remarks.extend(idle.values())
    _replay_candidates(report, make_estimator, (back, said, around), D0, D1, s1, takes_seed, epsilon, delta, alpha, seed,
                       cap, others)


def _shipped(make_estimator, D0):
    """The fingerprint (:func:`audit.gate.state.replay.leaves`) of one fit as the code ships (no seed injected),
    or None when that fit raises."""
    try:
        est = make_estimator()
        est.fit(*D0)
        return rp.leaves(est)
    except Exception:  # noqa: BLE001 - outside code
        return None


def _holds_a_seed(shipped, path: str) -> bool:
    """Whether the shipped fit keeps, at ``path``, a number of seed size of its own (OS entropy drawn by the fit,
    ``SeedSequence(None).entropy`` say), where the probed fit kept a copy of the injected seed."""
    if shipped is None:
        return False
    value = shipped.numeric.get(path, shipped.digits.get(path))
    try:
        return value is not None and float(value).is_integer() and abs(int(value)) >= rp.MIN_MAGNITUDE
    except (TypeError, ValueError, OverflowError):
        return False


def _replay_candidates(report, make_estimator, first, D0, D1, s1, takes_seed, epsilon, delta, alpha, seed, cap,
                       others=()):
    """Fit twice more on D (another seed, the same seed), replay the integers that change, measure (``first``:
    the probe's fit, rebuilt from its pickle, and what it emitted)."""
    seeded = s1 is not None
    s2 = next(s for s in (*OTHER_SEEDS, PROBE_SEED) if s != s1) if seeded else None
    la = _fingerprint(first)  # before the next fits: what the model serves may read a global they overwrite
    try:
        lb = _fingerprint(_fit(make_estimator, D0, s2))
        la2 = _fingerprint(_fit(make_estimator, D0, s1))
    except Exception as exc:  # noqa: BLE001
        report.remarks.append(f"no replay: a second fit raised {type(exc).__name__}")
        return
    refits = rp.Refits(lb, lambda i: _fingerprint(_fit(make_estimator, D0, s2 + 1 + i if seeded else None)))
    report.truncated = report.truncated or la.truncated or lb.truncated
    words = identified_words(report, la, lb, s1) if seeded else []
    inside = [p for path, cand in words for p in (cand.parts or (path,))]
    cands, _ = rp.find_candidates(la, lb, la2, cap=10 ** 6)
    cands = [c for c in cands if not _inside(c.key, inside)]  # the words' own ints are read as a state instead
    copies = [f.path for f in report.notes]  # the injected seed where it landed: the gate's secret, not the model's
    cands = [c for c in cands if not _inside(c.key, copies)]
    capped, cands = len(cands) > MAX_CANDIDATES, cands[:MAX_CANDIDATES]
    if capped:
        report.remarks.append(f"more than {MAX_CANDIDATES} changing integers: only the first {MAX_CANDIDATES} "
                              "were replayed")
    plans = []
    for cand in cands:
        modes, reasons = rp.calibrate(cand, make_estimator, takes_seed, la, refits, D0, t=s1)
        rec = rp.Replay(cand.path, "digit string" if cand.digits else "integer", cand.origin, modes, alpha=alpha,
                        reason="; ".join(reasons) if not modes else "")
        if not modes and not reasons:
            rec.reason = "no way to replay it (no random_state parameter, no sub-estimator holding it)"
        report.replays.append(rec)
        if modes:
            plans.append((cand, modes, rec))

    kinds = {}  # the generators and states the model keeps itself: certain already (ε = ∞)
    for f in report.findings:
        if f.kind in ("generator", "state") and not f.parameter:
            kinds.setdefault(f.path, f.type_name)
    if seeded:
        for path, type_name in kinds.items():
            if path not in la.states or len(plans) >= MAX_CANDIDATES:
                continue
            kept = rp.KeptState(path)
            modes, reasons = rp.calibrate_rewind(kept, make_estimator, la, refits, D0, s1)
            rec = rp.Replay(path, type_name, "kept", modes, alpha=alpha, reason="; ".join(reasons))
            report.replays.append(rec)
            if modes:
                plans.append((kept, modes, rec))

    replay_words(report, words, plans, make_estimator, la, refits, D0, alpha, MAX_CANDIDATES, StateFinding)
    if not seeded:
        unseeded_words(report, plans, make_estimator, la, refits, D0, alpha, MAX_CANDIDATES)
    # always, not only when no other candidate calibrated: a half of a split seed replayed alone reproduces a
    # model of a few noisy values by chance (8% at ε = 1), and would stand in for the replay that holds; but not
    # when the model keeps a generator or its state itself (``kinds``), whatever else it keeps
    carrier = None if kinds else _replay_entropy(report, plans, make_estimator, la, refits, D0, s1, alpha, seed)

    stopped, rng = False, np.random.default_rng(seed)
    for pair, group in _by_pair(plans, make_estimator, la, refits.first, [("", (D0, D1)), *others]):
        def publish(side, secret, pair=pair):
            return _fingerprint(_fit(make_estimator, pair[side], secret if seeded else None))

        stopped = rp.measure(group, publish, make_estimator, pair[0], epsilon=epsilon, delta=delta, alpha=alpha,
                             deadline=cap[0], rng=rng, among=len(plans)) or stopped
    if stopped:
        report.cut = (f"the replay measurement stopped at its {cap[1]:.0f} s safety cap after "
                      f"{max(rec.n0 for _, _, rec in plans)} of {rp.LOOKS[-1]} trials per side")
    known = {f.path for f in report.findings}  # a kept generator stays a generator finding (epsilon infinite)
    for rec in report.replays:
        if rec.reproduced and rec.path not in known:
            if carrier and rec is carrier[0] and any(r is not rec and r.reproduced and r.path in carrier[1]
                                                     for r in report.replays):
                continue  # the same seed, replayed from where it is kept: one finding
            report.findings.append(StateFinding(rec.path, "replay", rec.kind, "pickle"))


def _replay_entropy(report, plans, make_estimator, la, refits, D0, t, alpha, seed):
    """The OS entropy the fit drew, found bit by bit in the model it published (:mod:`audit.gate.state.entropy`)
    and, when it is, replayed: the seed kept in a spelling no other reader knows (split, bytes, words). Returns
    ``(its Replay record, the paths that carry it)``, or None when no bit of the model carries the entropy."""
    def fit(stream):
        with en.fed(stream) as fed:  # what the model serves is read under the same stream as its fit
            lv = _fingerprint(_fit(make_estimator, D0, t))
        return lv, fed.drawn

    rng = np.random.default_rng(seed + 1)
    base = rng.bytes(en.MAX_BYTES)
    try:
        taint = en.taint(fit, base, rng)
    except Exception as exc:  # noqa: BLE001 - outside code
        report.remarks.append(f"no entropy map: a fit fed a known stream raised {type(exc).__name__}")
        return None
    if not taint.carrier and not taint.combos:  # no bit of the model carries the entropy the fit drew
        return None
    cand = en.KeptEntropy.of(taint, base)
    modes, reasons = rp.calibrate_entropy(cand, make_estimator, la, refits, D0, t)
    if not taint.noisy:
        modes, reasons = [], ["nothing else in the model changes with the entropy"]
    rec = rp.Replay(cand.path, f"entropy ({cand.bits} of {taint.drawn * 8} bits drawn)", "OS entropy", modes,
                    alpha=alpha, reason="; ".join(reasons))
    if taint.capped:
        report.remarks.append(f"the fit drew {taint.drawn} bytes of OS entropy: only the first {en.MAX_BYTES} "
                              "were mapped")
    report.replays.append(rec)
    if modes:
        plans.append((cand, modes, rec))
    return rec, {path for path, _, _ in cand.carrier}


def _by_pair(plans, make_estimator, la, lb, pairs):
    """``[(pair, plans)]``: each plan measured on the first of ``pairs`` (``(description, (d0, d1))``, the probe's
    own first) where its replay tells the two datasets apart (:func:`audit.gate.state.replay.distinguishing`), or
    on the probe's pair when none does; the record says which when it is not the probe's."""
    groups = {}
    for plan in plans:
        cand, modes, rec = plan
        i = rp.distinguishing(cand, modes, make_estimator, la, lb, [p for _, p in pairs])
        if i is None and len(pairs) > 1:
            rec.reason = (f"the replay gave the same model on both datasets of each of the {len(pairs)} pairs "
                          "tried: the seed it holds reveals no record there")
        rec.pair = pairs[i or 0][0]
        groups.setdefault(i or 0, []).append(plan)
    return [(pairs[i][1], group) for i, group in sorted(groups.items())]


