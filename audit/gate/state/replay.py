"""Replay: turn a suspicious integer kept by a fitted model into a measured privacy loss.

A fitted model that keeps the seed its noise was drawn from (a derived ``tree_seed_``, an OS-entropy ``seed_``, a
tree's ``random_state`` inside a forest) lets whoever holds the model refit with that seed and obtain the very same
model: the noise is known, the exact statistics come back. This module measures it.

* :func:`leaves` reads a model's *fingerprint*: every numeric value its pickle carries (ints, floats, numeric
  arrays, the fields of structured arrays, container lengths as ``path#len``, a long log of numbers as its length
  and content hash) by path, skipping generator states.
* :func:`find_candidates` compares two fits with different seeds (and one repeat of the first): an integer of the
  model's (or int-array entry, or digit string), changed and at least ``2**16`` in absolute value, is a candidate.
* :func:`calibrate` tries the replays of one candidate on the probe's own fit: refit the whole model with
  ``random_state=c``; refit it with the probe's known seed while every generator seeded with the candidate's value
  in that fit (``default_rng``, ``RandomState``, ``random.Random``) is seeded with ``c`` instead (*reseed*: a
  derived seed drawn from the generator and then used for the noise); or refit the sub-estimator holding the
  candidate (``type(sub)(**sub.get_params(deep=False))``) on the data or on its even share of it (the split
  diffprivlib's forest uses). Two replays with the same ``c`` tell which paths ``c`` does not determine (ledgers,
  timestamps): left out of the comparison. A replay must reproduce values that change from seed to seed besides
  the candidate itself, else it proves nothing (a noisy count alone is not a seed).
* :func:`measure` publishes fresh models from ``D`` and ``D'`` with secret seeds, replays each on ``D`` and counts
  exact reproductions: the event "the replay on D reproduces the published model" gives an epsilon lower bound
  (:func:`audit.engine.estimation.bounds.epsilon_lower_bound`), with alpha split (Bonferroni) over the candidates
  and the looks of the growing sample.
* Kept generators (:func:`consumption`, :func:`rewound`, :func:`calibrate_rewind`): the probe's fit with a known
  seed measures how many raw draws the fit consumed (PCG64 family: ``advance(1)`` steps from ``default_rng(seed)``;
  MT19937: the position in the first block of ``RandomState(seed)``); each published model's kept generator or
  state, rewound by that many, is passed as ``random_state`` to a fresh fit on D. ``random.Random`` states cannot be
  passed as ``random_state``: not replayed. A state kept as a JSON or ``repr`` string
  (:func:`audit.gate.state.codec.parse_text`) is read as the dict it spells; Philox is stepped back through its
  counter, SFC64 draw by draw (:func:`audit.gate.state.codec.sfc64_back`).
* Kept raw words (:mod:`audit.gate.state.words`): ints, lists, arrays or bytes that
  :func:`audit.gate.state.codec.identify` names as a bit generator's state seeded with the probe's known seed (mode
  ``start``: each published model's words, read the same way, give the generator at its fit's start,
  :meth:`audit.gate.state.codec.Match.start`, passed as ``random_state`` to a fresh fit on D), or that are the
  state of a ``PCG64`` the fit built without a seed (mode ``load``: loaded in its place,
  :mod:`audit.gate.state.unseeded`).
* A partial replay (``Mode.only``): kept OS entropy fed back reproduces some paths of the model, not all of it (a
  digest of the data keyed by a kept salt); those paths are compared (:func:`reproduces`).

Candidates come from the model's integers, from every integer a text of the model spells (:func:`text_integers`:
a decimal seed in a string, a ``uuid4().hex`` run id that seeds the noise) and from what the fit emitted
(:func:`emitted_integers`: a seed printed or logged). A *reseed* replay runs under
:func:`audit.gate.state.reseed.reseeded` (``default_rng``, ``RandomState``, ``random.Random`` and
``SeedSequence`` patched for one fit): do not run it beside other threads that seed generators.
"""
from __future__ import annotations


import re
import time
from dataclasses import dataclass, field

import numpy as np

from audit.gate.state import codec
from audit.engine.estimation.bounds import epsilon_lower_bound, point_estimate
from audit.gate.state.codec import MAX_STEPS, consumption, rewound  # noqa: F401 - MAX_STEPS: the old path
from audit.gate.state.entropy import fed
from audit.gate.state.spelling import UNITS, ticks
from audit.gate.state.reseed import reseeded
from audit.gate.state.unseeded import loaded
from audit.gate.state.fingerprint import (BOUNDARY as _BOUNDARY, MAX_TOKENS, Leaves, agree as _compare,
                                          differing as _diff, emitted_integers, excluded as _excluded, leaves,
                                          left_out as _prefixes, rebuilt, same, text_integers)

__all__ = ["Leaves", "leaves", "text_integers", "emitted_integers", "MAX_TOKENS", "rebuilt", "same", "Candidate", "find_candidates", "Mode", "calibrate", "Replay",
           "measure", "distinguishing", "LOOKS", "MIN_MAGNITUDE", "with_seed", "reseeded", "consumption", "rewound", "KeptState",
           "calibrate_rewind", "calibrate_entropy", "Mode", "calibrated", "DERIVED", "is_int", "reading",
           "reproduces"]

#: sample sizes per side at which :func:`measure` looks at its counts
LOOKS = (10, 20, 40, 80, 160, 200)
#: an integer that changes must be at least this large (in absolute value) to be a candidate seed
MIN_MAGNITUDE = 2 ** 16
@dataclass(frozen=True)
class Candidate:
    """An integer that changes from fit to fit: ``key`` (a leaf path), ``index`` into an int array,
    ``digits`` when it is kept as a string; ``origin`` says whether the first seed fixed it."""

    key: str
    index: int | None = None
    digits: bool = False
    origin: str = "derived from the seed"
    unit: str | None = None  # a kept time read as its count of these units since the epoch (a clock seed)

    @property
    def path(self) -> str:
        where = self.key if self.index is None else f"{self.key}[{self.index}]"
        return where if self.unit is None else f"{where} in {self.unit}"

    def value(self, lv: Leaves):
        """The candidate's value in another model's fingerprint (``None`` when absent)."""
        try:
            if self.digits:
                return lv.digits[self.key]
            if self.unit is not None:
                return ticks(lv.numeric[self.key], self.unit)
            v = lv.numeric[self.key]
            v = np.asarray(v).ravel()[self.index] if self.index is not None else v
            if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
                return None
            return int(v)
        except (KeyError, IndexError):
            return None


DERIVED = ("#len", "#content")  # numbers the walk derives (a length, a long log's hash): never a seed candidate


def is_int(v):
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def find_candidates(la: Leaves, lb: Leaves, la2: Leaves, root: str = "model", cap: int = 16):
    """Candidates (integers that differ between fits ``a`` and ``b``, at least :data:`MIN_MAGNITUDE`)
    in walk order, at most ``cap`` of them; returns ``(candidates, capped)``."""
    found = []
    skip = {f"{root}.random_state"}

    def origin(c):
        return "derived from the seed" if c.value(la) == c.value(la2) else "changes with the same seed (OS entropy)"

    for key, v in la.numeric.items():
        if key in skip or key.endswith(DERIVED) or key not in lb.numeric:
            continue
        w = lb.numeric[key]
        if is_int(v) and is_int(w):
            if int(v) != int(w) and abs(int(v)) >= MIN_MAGNITUDE:
                found.append(Candidate(key))
        elif ticks(v, "ns") is not None and ticks(w, "ns") is not None:
            if ticks(v, "ns") != ticks(w, "ns"):  # a time kept that differs: the clock may be the seed
                found.extend(Candidate(key, unit=u) for u in UNITS if abs(ticks(v, u)) >= MIN_MAGNITUDE)
        elif isinstance(v, np.ndarray) and v.dtype.kind in "iu" and isinstance(w, np.ndarray) \
                and w.shape == v.shape and v.size <= 10 ** 5:
            a, b = v.ravel().astype(object), w.ravel().astype(object)
            found.extend(Candidate(key, int(i)) for i in range(a.size) if a[i] != b[i] and abs(a[i]) >= MIN_MAGNITUDE)
    for key, v in la.digits.items():
        if key not in skip and key in lb.digits and lb.digits[key] != v and abs(v) >= MIN_MAGNITUDE:
            found.append(Candidate(key, digits=True))
    capped = len(found) > cap
    return [Candidate(c.key, c.index, c.digits, origin(c), c.unit) for c in found[:cap]], capped


@dataclass
class Mode:
    """One way to replay a candidate: refit the ``model`` with it as seed, refit the model with the known
    seed ``t`` while seeds equal to ``old`` become the candidate (``reseed``), or refit the sub-estimator
    at ``sub_path`` on ``D`` or on the ``i``-th of ``m`` even shares of ``D`` (``share``)."""

    kind: str
    sub_path: str | None = None
    share: tuple | None = None
    prefixes: set = field(default_factory=set)
    t: int | None = None
    old: int | None = None
    k: int = 0
    match: codec.Match | None = None
    order: str = "be"  # a seed given as words: the candidate's words, most significant first ("be") or last
    built: int = 0  # load: which of the generators the fit builds without a seed the words are loaded into
    #: partial: the replay reproduces these paths of the published model (numbers and the integers texts spell),
    #: not the whole model (a digest of the data keyed by a kept salt, beside noise drawn from other entropy)
    only: frozenset = frozenset()

    def describe(self, seed: str = "the candidate") -> str:
        if self.kind == "model":
            return f"refitting the model with {seed} as random_state on D"
        if self.kind == "rewind":
            return (f"rewinding a copy of {seed} by the {self.k} draws a fit with a known seed consumed and "
                    "refitting the model with it as random_state on D")
        if self.kind == "start":
            back = f", stepped back the {self.k} draws a fit with a known seed consumed," if self.k else ""
            return (f"loading {seed} into a fresh {self.match.family}{back} and refitting the model with it as "
                    "random_state on D")
        if self.kind == "load":
            back = f", stepped back the {self.k} draws the fit made," if self.k else ""
            return (f"loading {seed} into a fresh {self.match.family}{back} in place of the generator the fit builds "
                    f"without a seed (number {self.built + 1} in the order built) and refitting on D")
        if self.kind == "entropy":
            return (f"reading the OS entropy kept at {seed} back ({self.k} bits: which model bits carry which were "
                    "found by flipping the entropy of known fits), feeding it to a fresh fit and refitting on D")
        if self.kind == "reseed" and self.old is None:
            part = "" if self.sub_path is None else f", then comparing {self.sub_path}:"
            words = "" if self.order == "be" else ", a seed of words given its 32-bit words least significant first"
            return (f"refitting the model on D with {seed} in place of every integer seed the fit makes "
                    f"(a seed drawn from OS entropy included{words}){part}")
        if self.kind == "reseed":
            part = "" if self.sub_path is None else f", then comparing {self.sub_path}:"
            return (f"refitting the model on D with the known seed {self.t} and {seed} in place of the seed "
                    f"{self.old} that fit derived{part}")
        data = "D" if self.share is None else f"share {self.share[0]} of {self.share[1]} of D"
        return f"refitting {self.sub_path} with {seed} as random_state on {data}"


def with_seed(est, c):
    if hasattr(est, "set_params"):
        est.set_params(random_state=c)
    else:
        est.random_state = c
    return est


def _share(X, y, i, m):
    n = len(X)
    idx = (np.arange(n) // (n / m)).astype(int) == i
    return np.asarray(X)[idx], np.asarray(y)[idx]


def _replay(mode: Mode, make_estimator, model_leaves: Leaves, c, D):
    """Fit the replay of ``mode`` with seed ``c``; its fingerprint (root ``model`` or ``sub``)."""
    X, y = D
    if mode.kind == "load":
        est = make_estimator()
        with loaded(mode.built, mode.match.start(c)):
            est.fit(X, y)
        return leaves(rebuilt(est), root="model").numeric
    if mode.kind in ("rewind", "start"):
        est = with_seed(make_estimator(), rewound(c, mode.k) if mode.kind == "rewind" else mode.match.start(c))
        est.fit(X, y)
        return leaves(rebuilt(est), root="model").numeric
    if mode.kind in ("entropy", "reseed"):  # the known seed t (if any), the candidate fed where the fit draws
        est = make_estimator() if mode.t is None else with_seed(make_estimator(), mode.t)
        with fed(c) if mode.kind == "entropy" else reseeded(mode.old, c, keep=mode.t, order=mode.order):
            est.fit(X, y)
        if mode.only:
            return reading(leaves(rebuilt(est), root="model"))
        if mode.sub_path is None:
            return leaves(rebuilt(est), root="model").numeric
        return leaves(leaves(rebuilt(est)).subs[mode.sub_path], root="sub").numeric
    if mode.kind == "model":
        est = with_seed(make_estimator(), c)
        root = "model"
    else:
        sub = model_leaves.subs[mode.sub_path]
        est = with_seed(type(sub)(**sub.get_params(deep=False)), c)
        root = "sub"
        if mode.share is not None:
            X, y = _share(X, y, *mode.share)
    est.fit(X, y)
    return leaves(rebuilt(est), root=root).numeric


def reading(lv: Leaves) -> dict:
    """A fingerprint's numbers and the integers its texts spell (``PATH#digits``), by path."""
    return {**lv.numeric, **{f"{k}#digits": v for k, v in lv.digits.items()}}


def reproduces(mode: Mode, replayed: dict, target: dict) -> bool:
    """Whether a replay of ``mode`` reproduces the published fingerprint: every path outside the mode's
    prefixes, or, for a partial replay, the paths it names."""
    if mode.only:
        return all(k in replayed and k in target and same(replayed[k], target[k]) for k in mode.only)
    return _compare(replayed, target, mode.prefixes)


def _target(mode: Mode, lv: Leaves):
    """The published fingerprint the replay of ``mode`` must reproduce."""
    if mode.only:
        return reading(lv)
    if mode.kind in ("model", "rewind", "start", "load") or mode.sub_path is None:
        return lv.numeric
    return leaves(lv.subs[mode.sub_path], root="sub").numeric


def _modes(cand: Candidate, la: Leaves, takes_seed: bool, t):
    out = [Mode("model")] if takes_seed else []
    if takes_seed and t is not None:
        out.append(Mode("reseed", t=t, old=cand.value(la)))
    owners = [p for p in la.subs if cand.key.startswith(p) and cand.key[len(p):len(p) + 1] in _BOUNDARY]
    if owners:
        sub_path = max(owners, key=len)
        out.append(Mode("sub", sub_path))
        m = re.fullmatch(r"(.*)\[(\d+)\]", sub_path)
        if m and f"{m.group(1)}#len" in la.numeric:
            out.append(Mode("sub", sub_path, (int(m.group(2)), int(la.numeric[f"{m.group(1)}#len"]))))
        if takes_seed and t is not None:  # last: it refits the whole model to compare one part
            out.append(Mode("reseed", sub_path, t=t, old=cand.value(la)))
    # last of all: every integer seed the fit makes becomes the candidate (an OS-entropy seed kept beside the
    # noise differs on every fit, so no seed of a known fit names it)
    out.append(Mode("reseed", t=t if takes_seed else None, old=None))
    value = cand.value(la)
    if isinstance(value, int) and abs(value) >= 2 ** 32:  # a seed of words, kept as one number read either way
        out.append(Mode("reseed", t=t if takes_seed else None, old=None, order="le"))
    return out


class Refits:
    """Fingerprints of fits on ``D`` with other seeds, for the question "does anything in the model change from
    seed to seed": fit ``b``, then up to ``most`` more, fitted only when the earlier ones all agree with fit ``a``
    (and kept for the next candidate). A model of a few noisy values repeats itself by chance: two noisy counts
    of two-sided geometric noise at ε = 1 coincide in about 8% of fit pairs, and one randomized-response bit at
    ε = 1 repeats in 61%, so one reference fit would drop a real seed that often; with 40 more the chance that
    every fit repeats fit ``a`` is 0.731**41, about 3e-6, for that bit (below 1e-40 for the counts). Only a model
    that never changes pays for all of them. The drop guards the finding's *name* (a seed, not determinism), not
    its validity: :func:`measure`'s bound holds whatever the replay is.

    Parameters
    ----------
    first : Leaves
        Fit ``b``.
    fit : callable, optional
        ``fit(i)`` returns the fingerprint of the ``i``-th further fit (it may raise: the search then stops).
    most : int
        Further fits at most.
    """

    def __init__(self, first: Leaves, fit=None, most: int = 40):
        self.first, self._fit, self.most, self._more = first, fit, most, []

    @classmethod
    def of(cls, lb) -> "Refits":
        """``lb`` itself when it is a :class:`Refits`, else the refits of fit ``b`` alone."""
        return lb if isinstance(lb, cls) else cls(lb)

    def __iter__(self):
        yield self.first
        for i in range(self.most):
            if i == len(self._more):
                if self._fit is None:
                    return
                try:
                    self._more.append(self._fit(i))
                except Exception:  # noqa: BLE001 - outside code: a fit that raises ends the search for good
                    self._fit = None
                    return
            yield self._more[i]


def _changes(mode: Mode, la: Leaves, refits: Refits) -> bool:
    """Whether some fit of ``refits`` differs from fit ``a`` outside ``mode.prefixes``, each read as the mode's
    replay must reproduce it (:func:`_target`; a fit without the mode's sub-estimator differs)."""
    def read(lv):
        return _target(mode, lv) if mode.sub_path is None or mode.sub_path in lv.subs else {}

    ta = read(la)
    return any(any(not _excluded(k, mode.prefixes) for k in _diff(ta, read(lv))) for lv in refits)


def calibrate(cand: Candidate, make_estimator, takes_seed: bool, la: Leaves, lb, D, t=None):
    """The modes whose replay reproduces a probe fit on ``D``: fit ``a`` (seed ``t``) from its own
    candidate, or, for *reseed*, fit ``b`` from its candidate (the known seed being ``t``). ``lb`` is fit ``b``'s
    :class:`Leaves`, or a :class:`Refits` whose further fits are asked too when fit ``b`` repeats fit ``a``.

    Returns ``(modes, reasons)``: ``reasons`` says why each other mode was dropped.
    """
    refits = Refits.of(lb)
    lb = refits.first
    kept, reasons = [], []
    for mode in _modes(cand, la, takes_seed, t):
        whole = mode.sub_path is None
        src = lb if mode.kind == "reseed" else la
        c = cand.value(src)
        rel = cand.key if whole else "sub" + cand.key[len(mode.sub_path):]
        fixed = {rel, ("model" if whole else "sub") + ".random_state"}
        try:
            if c is None or (mode.kind == "reseed" and mode.old is not None and c == mode.old):
                raise ValueError("no candidate value")
            r1 = _replay(mode, make_estimator, src, c, D)
            r2 = _replay(mode, make_estimator, src, c, D)
            ta = _target(mode, src)
        except Exception as exc:  # noqa: BLE001 - outside code refusing the seed
            reasons.append(f"{mode.describe()}: raised {type(exc).__name__}")
            continue
        mode.prefixes = fixed | _prefixes(_diff(r1, r2))
        if not _changes(mode, la, refits):
            reasons.append(f"{mode.describe()}: nothing else in the model changes from seed to seed")
        elif not _compare(r1, ta, mode.prefixes):
            reasons.append(f"{mode.describe()}: does not reproduce the probe's fit")
        else:
            kept.append(mode)
    return kept, reasons


def distinguishing(cand, modes, make_estimator, la: Leaves, lb: Leaves, pairs):
    """The index of the first pair ``(d0, d1)`` of ``pairs`` on which a calibrated replay gives two different
    models (outside the mode's left-out paths), with the value the probe's own fits hold; ``None`` when none does.

    A kept seed reveals the record only where the model it fixes changes with the record: a randomized-response
    bit for the majority class, seeded by a kept run id, is the same on two datasets of the same majority, and its
    replay then reproduces the models published from both. The adversary who holds the seed picks the pair where
    it tells them apart. The choice reads only the probe's fits (``la``; ``lb`` for a *reseed* mode, as
    :func:`calibrate` does), none of the models :func:`measure` publishes, so its bound stays valid on the pair
    chosen.
    """
    for i, (d0, d1) in enumerate(pairs):
        for mode in modes:
            src = lb if mode.kind == "reseed" else la
            c = cand.value(src)
            if c is None:
                continue
            try:
                r0 = _replay(mode, make_estimator, src, c, d0)
                r1 = _replay(mode, make_estimator, src, c, d1)
            except Exception:  # noqa: BLE001 - outside code refusing a dataset
                continue
            if not _compare(r0, r1, mode.prefixes):
                return i
    return None


@dataclass
class Replay:
    """A candidate and what its replay measured (``k0`` of ``n0`` published from D reproduced,
    ``k1`` of ``n1`` from D'). ``claim`` is the epsilon the measurement tested (set by :func:`measure`)."""

    path: str
    kind: str
    origin: str = ""
    modes: list = field(default_factory=list)
    k0: int = 0
    n0: int = 0
    k1: int = 0
    n1: int = 0
    epsilon_lower: float = 0.0
    alpha: float = 0.05
    reason: str = ""
    claim: float | None = None
    pair: str = ""

    @property
    def reproduced(self) -> bool:
        """The replay reproduces published models more often than the claim allows: its lower bound exceeds the
        claim. A model of a few noisy values is matched by chance by a replay that does not hold its seed (two
        noisy counts at ε = 1 coincide in about 8% of fits), and that chance is bounded by the claim itself: the
        event "the replay on D reproduces the published model" is post-processing of what was published, so
        for a private fit the bound exceeds the claim with probability at most ``alpha``."""
        return self.k0 > 0 and (self.claim is None or self.epsilon_lower > self.claim)

    def sentence(self) -> str:
        named = f"the {self.kind} at {self.path}" if self.origin == "kept" else self.path
        how = self.modes[0].describe(named) if self.modes else f"replaying the fit with {self.path}"
        part = self.modes[0].sub_path if self.modes and self.modes[0].sub_path else "model"
        if self.modes and self.modes[0].only:
            part = "model's " + ", ".join(sorted(p.removesuffix("#digits") for p in self.modes[0].only)[:3])
        on = f" (D, D': {self.pair})" if self.pair else ""
        counts = (f"reproduces the published {part} in {self.k0}/{self.n0} fits from D and {self.k1}/{self.n1} "
                  f"from D'{on} (lower bound {self.epsilon_lower:.3g} at alpha {self.alpha:.3g})")
        if not self.reproduced and self.modes and self.n0 == 0:
            return f"{self.path}: {self.origin} {self.kind}, replay calibrated but not measured (safety cap)"
        if not self.reproduced and self.origin == "kept":
            return f"{self.path}: kept {self.kind}, " + (self.reason or f"replay did not reproduce: {counts}")
        if not self.reproduced and self.k0 > 0:
            return (f"{self.path}: candidate ({self.origin}), replay matched no more often than the claim "
                    f"allows: {counts}" + (f" ({self.reason})" if self.reason else ""))
        if not self.reproduced:
            return f"{self.path}: candidate ({self.origin}), replay did not reproduce" + \
                (f" ({self.reason})" if self.reason else f": {counts}")
        head = "ε = ∞: " if self.k1 == 0 else ""
        return f"{head}{how} {counts}"

    def to_json(self) -> dict:
        return {"path": self.path, "kind": self.kind, "origin": self.origin, "reason": self.reason,
                "replay": [m.describe() for m in self.modes], "counts": [self.k0, self.n0, self.k1, self.n1],
                "epsilon_lower": self.epsilon_lower, "alpha": self.alpha, "reproduced": self.reproduced, "pair": self.pair}


def measure(plans, publish, make_estimator, D, *, epsilon, delta, alpha, deadline, rng, among=None):
    """Count replays that reproduce freshly published models; return whether the safety cap stopped the count.

    Parameters
    ----------
    plans : list of (Candidate, list of Mode, Replay)
        Candidates with at least one calibrated mode; their ``Replay`` records are filled in.
    publish : callable
        ``publish(side, secret) -> model`` fits a fresh model on D (side 0) or D' (side 1); or its
        :class:`Leaves`, when they carry more (what the fit emitted: :func:`emitted_integers`).
    D : tuple
        ``(X, y)``, the data every replay is fitted on.
    deadline : float
        Safety cap (a ``time.perf_counter()`` value far past the expected end): no new trial starts after it.
    rng : numpy.random.Generator
        Draws the secret seeds (below ``2**31``); the trials are counts (:data:`LOOKS`), alike on any machine.
    among : int, optional
        The number of candidates ``alpha`` is shared over (Bonferroni), when ``plans`` is one group of them
        measured on its own pair (default: ``len(plans)``).
    """
    if not plans:  # nothing to measure, nothing stopped
        return False
    each, active, stopped = alpha / ((among or len(plans)) * len(LOOKS)), list(plans), False
    for look in LOOKS:
        for _ in range(look - active[0][2].n0):
            if time.perf_counter() > deadline:
                stopped = True
                break
            for side in (0, 1):
                published = publish(side, int(rng.integers(2 ** 31)))
                lv = published if isinstance(published, Leaves) else leaves(rebuilt(published))
                for cand, modes, rep in active:
                    c, hit = cand.value(lv), False
                    for mode in modes if c is not None else ():
                        try:
                            hit = reproduces(mode, _replay(mode, make_estimator, lv, c, D), _target(mode, lv))
                        except Exception:  # noqa: BLE001 - a replay that fails does not reproduce
                            hit = False
                        if hit:
                            break
                    if side == 0:
                        rep.n0, rep.k0 = rep.n0 + 1, rep.k0 + hit
                    else:
                        rep.n1, rep.k1 = rep.n1 + 1, rep.k1 + hit
        for _, _, rep in active:
            rep.alpha, rep.claim = each, epsilon
            rep.epsilon_lower = epsilon_lower_bound(rep.k0, rep.n0, rep.k1, rep.n1, delta=delta, alpha=each)
        # stop a candidate once its bound exceeds the claim, when it never reproduced, or when its point
        # estimate is below half the claim (more trials would only sharpen a bound that stays below it)
        active = [p for p in active if p[2].epsilon_lower <= epsilon and p[2].k0 + p[2].k1 > 0
                  and point_estimate(p[2].k0, p[2].n0, p[2].k1, p[2].n1, delta=delta) >= epsilon / 2]
        if not active or stopped:
            return stopped
    return False


# --- kept generators: rewound by the consumption a fit with a known seed measured (audit.gate.state.codec) ------

@dataclass(frozen=True)
class KeptState:
    """A kept generator (or generator state) at ``key``, read from another model's fingerprint."""

    key: str

    @property
    def path(self) -> str:
        return self.key

    def value(self, lv: Leaves):
        return lv.states.get(self.key)


def calibrated(mode: Mode, value, make_estimator, la: Leaves, lb, D):
    """``([mode], [])`` when ``mode`` replaying fit ``a``'s ``value`` reproduces fit ``a``, else ``([], [why])``
    (``lb``: fit ``b``, or a :class:`Refits`)."""
    try:
        r1 = _replay(mode, make_estimator, la, value, D)
        r2 = _replay(mode, make_estimator, la, value, D)
    except Exception as exc:  # noqa: BLE001 - a state that cannot be stepped back or a fit that refuses it
        return [], [f"not replayed: {exc}" if isinstance(exc, ValueError) else f"not replayed: {type(exc).__name__}"]
    mode.prefixes = {"model.random_state"} | _prefixes(_diff(r1, r2))
    if not _changes(mode, la, Refits.of(lb)):
        return [], ["not replayed: nothing in the model changes from seed to seed"]
    if not _compare(r1, la.numeric, mode.prefixes):
        return [], [f"{mode.describe()}: does not reproduce the probe's fit"]
    return [mode], []


def calibrate_rewind(kept: KeptState, make_estimator, la: Leaves, lb, D, t: int):
    """The rewind mode of a kept generator when rewinding fit ``a``'s (seed ``t``) reproduces fit ``a``."""
    try:
        mode = Mode("rewind", k=consumption(kept.value(la), t))
    except Exception as exc:  # noqa: BLE001 - a state that cannot be rewound
        return [], [f"not replayed: {exc}" if isinstance(exc, ValueError) else f"not replayed: {type(exc).__name__}"]
    return calibrated(mode, kept.value(la), make_estimator, la, lb, D)


def calibrate_entropy(cand, make_estimator, la: Leaves, lb, D, t=None):
    """The *entropy* mode of a :class:`audit.gate.state.entropy.KeptEntropy` when feeding a fresh fit the
    entropy read back from fit ``a`` (the probe's own, drawn from the OS) reproduces fit ``a``."""
    value = cand.value(la)
    if value is None:
        return [], ["not replayed: the probe's fit lacks a path that carried the entropy"]
    modes, reasons = calibrated(Mode("entropy", t=t, k=cand.bits), value, make_estimator, la, lb, D)
    if modes or not reasons[0].endswith("does not reproduce the probe's fit"):
        return modes, reasons
    return _partial(cand, value, make_estimator, la, lb, D, t) or (modes, reasons)


def _partial(cand, value, make_estimator, la: Leaves, lb, D, t):
    """The *partial* entropy mode: the paths of fit ``a`` that the replay reproduces, in two replays, though they
    change from fit to fit and are not the entropy's own carriers (a digest of the data keyed by a kept salt:
    whoever holds the salt recomputes it for a dataset they suspect). An event of the published model alone, so
    its measurement bounds the loss as a whole replay's does. None when there are none."""
    mode = Mode("entropy", t=t, k=cand.bits, only=frozenset({"(all)"}))
    try:
        r1, r2 = (_replay(mode, make_estimator, la, value, D) for _ in range(2))
    except Exception:  # noqa: BLE001 - outside code
        return None
    ta, tb = reading(la), reading(Refits.of(lb).first)
    carriers = {p.split("#")[0] for p, _, _ in cand.carrier}
    only = {k for k in ta if k in r1 and k in r2 and same(r1[k], ta[k]) and same(r2[k], ta[k])
            and (k not in tb or not same(ta[k], tb[k])) and k.split("#")[0] not in carriers}
    if not only:
        return None
    mode.only = frozenset(only)
    return [mode], []
