"""The state probe: random state and seeds that a fitted estimator keeps after ``fit``.

``audit check`` samples releases; a fitted model can also leak through what it *keeps*. A model
that holds its noise generator (or a seed, or a generator passed as ``random_state``) lets
whoever holds the model, or its pickle, replay the fit's random draws and subtract the noise:
the exact counts come back, an unbounded privacy loss that no sample of the releases shows
(issue 26 findings 2 and 3: our own random decision forest kept a sibling of its noise seed).

:func:`probe_estimator` fits one fresh estimator with a distinctive integer seed, walks the
fitted object (attributes, ``__slots__``, dicts, lists, tuples, sets and object arrays,
recursively) and the object rebuilt from its pickle, and reports every

* ``numpy.random.Generator``, ``BitGenerator``, ``SeedSequence``, ``RandomState`` or
  ``random.Random`` (kind ``"generator"``),
* integer (or integer array entry) equal to the seed the fit was given (kind ``"seed"``),

by attribute path. The constructor parameter ``random_state`` holding the seed the user passed
is the scikit-learn convention and is reported separately as a *note* (``parameter``): it is
the user's own secret, and publishing ``get_params()`` beside the model publishes it. Anything
else is a *finding*: by default ``check`` counts a finding as a violation (the loss is
unbounded, as certain as a crash that separates two datasets); ``--state warn`` reports it
without failing the gate, ``--state off`` skips the probe.
"""
from __future__ import annotations

import inspect
import pickle
import random
from collections import deque
from dataclasses import dataclass, field

import numpy as np

__all__ = ["StateFinding", "StateReport", "probe_estimator", "find_state", "PROBE_SEED", "ATTACK"]

#: the seed the probe fits with: large and distinctive, so an equal integer is not a coincidence
PROBE_SEED = 7_346_209_115_283

_GENERATORS = (np.random.Generator, np.random.BitGenerator, np.random.SeedSequence, np.random.RandomState,
               random.Random)

#: what an attacker holding the model can do with each kind of kept state
ATTACK = {
    "Generator": "copy its state and, for PCG64, rewind it (bit_generator.advance with a negative step) to its "
                 "state before the fit, then replay the fit's noise and subtract it: the exact counts come back",
    "BitGenerator": "rebuild a Generator on it, rewind it to its state before the fit and replay the fit's noise",
    "SeedSequence": "spawn the same child streams again, the fit's noise included, and subtract the noise",
    "RandomState": "restore its state, step it back to the fit and replay the fit's noise",
    "Random": "restore its state and replay the draws that follow it",
    "seed": "re-run the fit's random draws from the seed and subtract the noise from the released values",
}


@dataclass(frozen=True)
class StateFinding:
    """One piece of random state reachable from the fitted model."""

    path: str
    kind: str  # "generator" or "seed"
    type_name: str
    where: str  # "fitted object" or "pickle"
    parameter: bool = False  # the constructor's own random_state (a note, not a finding)

    @property
    def attack(self) -> str:
        return ATTACK["seed" if self.kind == "seed" else self.type_name]

    def describe(self) -> str:
        what = f"{self.type_name} at {self.path}" if self.kind == "generator" else f"the fit's seed at {self.path}"
        return f"{what} ({self.where}): an attacker can {self.attack}"


@dataclass
class StateReport:
    """What :func:`probe_estimator` found: ``findings`` (kept state) and ``notes`` (the parameter)."""

    findings: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    skipped: str = ""

    @property
    def clean(self) -> bool:
        return not self.findings

    def summary(self) -> str:
        if self.skipped:
            return f"state probe skipped: {self.skipped}"
        if self.clean:
            extra = "; note: " + self.notes[0].describe() if self.notes else ""
            return "state probe: no random generator or seed kept by the fitted model or its pickle" + extra
        return "state kept after fit: " + "; ".join(f.describe() for f in self.findings)

    def to_json(self) -> dict:
        def row(f):
            return {"path": f.path, "kind": f.kind, "type": f.type_name, "where": f.where, "attack": f.attack}

        return {"clean": self.clean, "skipped": self.skipped, "findings": [row(f) for f in self.findings],
                "notes": [row(f) for f in self.notes]}


def _children(obj):
    """``(suffix, child)`` pairs of an object's contents (no descent into modules, classes, functions)."""
    if isinstance(obj, dict):
        return [(f"[{k!r}]", v) for k, v in obj.items()]
    if isinstance(obj, (list, tuple)):
        return [(f"[{i}]", v) for i, v in enumerate(obj)]
    if isinstance(obj, (set, frozenset)):
        return [(f"{{{i}}}", v) for i, v in enumerate(obj)]
    if isinstance(obj, np.ndarray):
        if obj.dtype == object:
            return [(f"[{i}]", v) for i, v in enumerate(obj.ravel().tolist())]
        return []
    if isinstance(obj, (str, bytes, int, float, complex, bool, type(None), np.generic)) or inspect.isroutine(obj) \
            or inspect.isclass(obj) or inspect.ismodule(obj):
        return []
    out = []
    d = getattr(obj, "__dict__", None)
    if isinstance(d, dict):
        out.extend((f".{k}", v) for k, v in d.items())
    for cls in type(obj).__mro__:
        for name in getattr(cls, "__slots__", ()) if isinstance(getattr(cls, "__slots__", ()), (tuple, list)) else ():
            if hasattr(obj, name):
                out.append((f".{name}", getattr(obj, name)))
    return out


def _is_seed(value, seed: int) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, (int, np.integer)):
        return int(value) == seed
    if isinstance(value, np.ndarray) and value.dtype.kind in "iu" and 0 < value.size <= 10 ** 6:
        return bool(np.any(value == seed)) if seed <= np.iinfo(value.dtype).max else False
    return False


def find_state(obj, seed: int | None, root: str = "model", where: str = "fitted object",
               max_nodes: int = 200_000) -> list[StateFinding]:
    """Every generator object and every copy of ``seed`` reachable from ``obj`` (breadth first)."""
    found, seen = [], set()
    queue = deque([(root, obj)])
    while queue and len(seen) < max_nodes:
        path, cur = queue.popleft()
        if not isinstance(cur, (int, float, str, bytes, bool, type(None), np.generic)):  # scalars are shared
            if id(cur) in seen:
                continue
            seen.add(id(cur))
        param = path == f"{root}.random_state"
        if isinstance(cur, _GENERATORS):
            kind = next(t for t in ("Generator", "BitGenerator", "SeedSequence", "RandomState", "Random")
                        if isinstance(cur, getattr(np.random, t, random.Random)))
            found.append(StateFinding(path, "generator", kind, where, param))
            continue
        if seed is not None and _is_seed(cur, seed):
            found.append(StateFinding(path, "seed", type(cur).__name__, where, param))
            continue
        queue.extend((path + suffix, child) for suffix, child in _children(cur))
    return found


def probe_estimator(make_estimator, X, y, seed: int = PROBE_SEED) -> StateReport:
    """Fit ``make_estimator()`` on ``(X, y)`` with ``random_state=seed`` (when it takes one) and
    report the random state it keeps, in the fitted object and in the object rebuilt from its pickle.

    A ``fit`` that raises, or a model that cannot be pickled, is reported in ``skipped`` (the
    outputs' audit covers the exception); a model whose constructor takes no ``random_state`` is
    probed for generator objects only.
    """
    est = make_estimator()
    takes_seed = "random_state" in getattr(est, "get_params", lambda: {})() or hasattr(est, "random_state")
    if takes_seed:
        try:
            est.set_params(random_state=seed) if hasattr(est, "set_params") else setattr(est, "random_state", seed)
        except Exception:  # noqa: BLE001 - a constructor that refuses an int seed: probe objects only
            takes_seed = False
    try:
        est.fit(X, y)
    except Exception as exc:  # noqa: BLE001 - any exception of outside code
        return StateReport(skipped=f"fit raised {type(exc).__name__} on the probe's dataset")
    s = seed if takes_seed else None
    report = StateReport()
    items = find_state(est, s)
    try:
        payload = pickle.dumps(est)
    except Exception as exc:  # noqa: BLE001
        report.skipped = f"the fitted model cannot be pickled ({type(exc).__name__}); the live object was probed"
    else:
        items += find_state(pickle.loads(payload), s, where="pickle")
    for f in items:
        (report.notes if f.parameter and f.kind == "seed" else report.findings).append(f)
    return report
