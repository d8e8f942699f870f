"""Kept randomness that the release does not depend on: a fresh generator kept for later use is not the noise.

A model that keeps the generator its fit drew the noise from, or that generator's state in any spelling,
publishes that noise: rewound to its start, the generator replays the fit (:mod:`audit.gate.state.probe`). A
model may also keep a generator that it built from fresh OS entropy and never used for the fit (for random
tie-breaking in ``predict``), or a checkpoint of such a generator's state. Whoever holds it learns only that
generator's own state, on which nothing the fit released depends: no privacy loss.

:func:`idle_generators` tells the two apart by experiment, with every source of OS entropy fed a chosen byte stream
(:func:`audit.gate.state.entropy.fed`, which records the *sources* that drew from it, one call of ``os.urandom``,
one generator or ``random.Random()`` built without a seed, and can give one of them bytes or a whole state of
its own):

1. The model is fitted on D and on D' with one base stream; two more fits on D give the paths that change without
   any change of randomness (a time stamp, a duration), which are left out of every comparison below.
2. For each source ``j``, :data:`TRIALS` fits on D and as many on D' (with the same replacements) give source
   ``j`` bytes of its own. The *kept* paths (the generators and states found) that move are the ones source ``j``
   decides.
3. The kept randomness is cleared when every kept path moves with some source, everything else a source that
   moves a kept path moves (the model's numbers, the integers its texts spell) reads the same on D, on D', on their
   union D + D' and on D and D' with every label turned to the next one present, under each replacement (it is not
   data-bound: hashing salts drawn from a kept tie-breaking generator), and the kept paths read the same on D and D'
   under every stream.

Then the kept values, and whatever else their sources decide, are a function of sources that the data-bound part of
the release does not read, the same function on every input tried: their law is the same on D and D', and they
are independent of the rest of the release, so they add no loss. The union changes the count of every class either
input holds, so noise drawn from a kept generator for a class the pair does not differ in still shows; the turned
labels move a majority or an argmax that one record does not (a randomized-response bit of the majority). A kept
value that no source of the fit moves is either randomness drawn before the fit (a module's generator built at
import, kept by reference for tie-breaking) or none (a seed the user passed, a hash of the data). Fitted in
:data:`FRESH` fresh processes (:func:`audit.gate.fresh.idle_readings`), each with the fit's own draws fed the same
bytes, the first differs from process to process and the second does not: it is cleared when it differs and
everything else that differs between the processes reads alike on D, D' and the inputs beside them within each
process (the pool's entropy, not the noise); otherwise, or without fresh processes, it stays a finding.

Whatever way the release depends on a source (its draws, a child it spawned, a jumped copy, a seed drawn from
it), replacing it changes the release in some trial, unless the dependence is hidden by coarse noise in every
trial: one randomized-response bit at ε = 1 stays the same with probability at most 0.731 per trial, so a source
it depends on is missed with probability at most ``0.731 ** (2 * TRIALS)`` (about 3e-7). A dependence that shows
only on datasets other than the probe's pair and the three beside it is not seen. A fit that draws from more than :data:`MAX_SOURCES`
sources is not tested: its kept randomness stays a finding.
"""
from __future__ import annotations

import hashlib
import pickle

import numpy as np

from audit.gate.emissions import captured
from audit.gate.state import replay as rp
from audit.gate.state.entropy import fed
from audit.gate.state.fingerprint import differing, excluded

__all__ = ["idle_generators", "reading", "TRIALS", "STREAM_BYTES", "MAX_SOURCES", "FRESH"]

#: fits on each side of the pair with one source's bytes replaced
TRIALS = 24
#: bytes of the base stream
STREAM_BYTES = 512
#: sources of entropy tested at most (a fit drawing from more keeps its findings)
MAX_SOURCES = 8
#: fresh processes that test kept randomness drawn before the fit
FRESH = 3


def _state_digest(node) -> str:
    """A digest of a generator's state, or of plain data spelling one (its pickle; a live generator by its state,
    which is what a copy of it replays)."""
    for read in ("get_state", "getstate"):
        if callable(getattr(node, read, None)):
            node = getattr(node, read)()
            break
    else:
        bg = getattr(node, "bit_generator", node)
        if isinstance(bg, np.random.BitGenerator):
            node = bg.state
        elif isinstance(node, np.random.SeedSequence):
            node = (node.entropy, node.spawn_key, node.n_children_spawned)
    try:
        return hashlib.sha256(pickle.dumps(node)).hexdigest()
    except Exception:  # noqa: BLE001 - outside code
        return repr(node)


def reading(est) -> dict:
    """What a fitted model holds, as the idle test compares it: its numbers, the integers its texts spell
    (``#digits``) and a digest of each generator or state it keeps (``#state``), read from its pickle and from the
    live object (a generator kept live only, in a suspended stream's frame, that its pickle drops)."""
    out = {}
    for lv in (rp.leaves(est), rp.leaves(rp.rebuilt(est))):
        out.update({**lv.numeric, **{f"{k}#digits": v for k, v in lv.digits.items()},
                    **{f"{k}#state": _state_digest(v) for k, v in lv.states.items()}})
    return out


def _fit(make_estimator, D, data: bytes, replace=None):
    """``(what the fitted model's pickle holds, the sources that drew)`` under ``fed(data, replace)``."""
    with fed(data, replace) as stream, captured():  # what the fit prints is not the console's
        est = make_estimator()
        est.fit(*D)
    return reading(est), len(stream.sources)


def _before_the_fit(fresh, inputs, base: bytes, still: list) -> str:
    """Why kept randomness that no source the fit draws moves stays a finding (``""``: it does not), from fits in
    fresh processes (``fresh(inputs, base)``: per process, the readings of ``inputs`` fitted in order, each under
    ``fed(base)``; or a text saying why there are none). In each fresh process the randomness drawn before the fit
    (a module's generator built at import) is new, and everything the fit draws is fed the same ``base``."""
    runs = fresh(inputs, base)
    if isinstance(runs, str):
        return runs
    across = set()  # paths that differ between processes at some input: moved by randomness drawn before the fit
    for i in range(len(inputs)):
        for a, b in zip(runs, runs[1:]):
            across |= differing(a[i], b[i])
    for p in still:
        if not any(_kept(k, [p]) for k in across):
            return f"{p}: no source of OS entropy moves it (a seed given, or the data)"
    between = set().union(*(differing(run[0], r) for run in runs for r in run[1:]))  # inputs told apart, per process
    bound = {k for k in across & between if not _kept(k, still)}
    if bound:
        return (f"randomness drawn before the fit moved it and {sorted(bound)[0]}, which differs between the inputs: "
                "the release depends on it")
    return ""


def _kept(path: str, paths) -> bool:
    return excluded(path.removesuffix("#state").removesuffix("#digits"), paths)


def _others(D0, D1) -> list:
    """Inputs beside the pair on which a data-bound value shows: the union of every record of ``D0`` and ``D1``
    (every class count either holds changes), and ``D0`` and ``D1`` with each label turned to the next label present
    (a majority, a ranking or an argmax turns)."""
    (X0, y0), (X1, y1) = D0, D1
    X0, X1, y0, y1 = np.asarray(X0), np.asarray(X1), np.asarray(y0), np.asarray(y1)
    width = max(X.shape[-1] if X.ndim == 2 else 1 for X in (X0, X1))
    labels = np.unique(np.concatenate((y0, y1)))

    def turned(y):
        return labels[(np.searchsorted(labels, y) + 1) % len(labels)] if len(labels) > 1 else y

    return [(np.concatenate((X0.reshape(-1, width), X1.reshape(-1, width))), np.concatenate((y0, y1))),
            (X0, turned(y0)), (X1, turned(y1))]


def idle_generators(make_estimator, D0, D1, paths, seed: int = 0, fresh=None) -> tuple[dict, str]:
    """``({path: sentence}, reason)``: the kept generators and states at ``paths`` (of a model fitted on ``D0`` as it
    ships) that the release does not depend on (module docstring), each with the sentence that says why; ``reason``
    says why they were kept as findings (empty when they were cleared). ``fresh`` (optional, ``fresh(inputs, base)``,
    :func:`audit.gate.fresh.idle_readings`) fits in fresh processes, where randomness drawn before the fit is new:
    kept randomness that no source of the fit moves is then tested there (module docstring)."""
    rng = np.random.default_rng(seed)
    base = rng.bytes(STREAM_BYTES)
    paths = sorted(paths)
    try:
        first, n_sources = _fit(make_estimator, D0, base)
        unstable = set().union(*(differing(first, _fit(make_estimator, D0, base)[0]) for _ in range(2)))
        other = _fit(make_estimator, D1, base)[0]
    except Exception as exc:  # noqa: BLE001 - outside code
        return {}, f"a fit under fed entropy raised {type(exc).__name__}"
    # kept randomness that changes with no change of the fit's entropy was drawn before the fit (a pool a module
    # built at import, spawned from at each fit) or counts fits: not compared here, it is tested in fresh processes
    volatile = {k for k in unstable if _kept(k, paths)}
    unstable = unstable - volatile
    if any(_kept(k, paths) for k in differing(first, other) - unstable - volatile):
        return {}, "it differs between D and D' under the same entropy"
    beside = _others(D0, D1)  # fitted only once the pair has not decided (a kept noise generator decides there)
    try:
        thirds = [_fit(make_estimator, D, base)[0] for D in beside]
    except Exception as exc:  # noqa: BLE001 - outside code
        return {}, f"a fit under fed entropy raised {type(exc).__name__}"
    if n_sources > MAX_SOURCES:
        return {}, f"the fit drew from {n_sources} sources of entropy (at most {MAX_SOURCES} are tested)"
    moved_by_some = set()
    for j in range(n_sources):
        mine, others = set(), set()
        for _ in range(TRIALS):
            replace = (j, int(rng.integers(2 ** 63)))
            try:
                r0, r1, *rs = (_fit(make_estimator, D, base, replace)[0] for D in (D0, D1, *beside))
            except Exception as exc:  # noqa: BLE001 - outside code
                return {}, f"a fit raised {type(exc).__name__}"
            moved = {k for k in set().union(differing(first, r0), differing(other, r1),
                                            *(differing(t, r) for t, r in zip(thirds, rs)))
                     if k not in unstable and k not in volatile}
            kept = {k for k in moved if _kept(k, paths)}
            if any(_kept(k, paths) for k in differing(r0, r1) - unstable - volatile):
                return {}, f"it differs between D and D' when source {j + 1} of entropy is replaced"
            bound = (moved - kept) & set().union(differing(r0, r1), *(differing(r0, r) for r in rs))  # not alike
            mine, others = mine | kept, others | bound
            if mine and others:
                return {}, (f"replacing source {j + 1} of entropy moved it and {sorted(others)[0]}, which differs "
                            "between the inputs: the release depends on it")
        moved_by_some |= {p for p in paths if any(_kept(k, [p]) for k in mine)}
    still = [p for p in paths if p not in moved_by_some]
    if still and fresh is None:
        return {}, f"{still[0]}: no source of OS entropy moves it (a seed given, or the data)"
    why = _before_the_fit(fresh, [D0, D1, *beside], base, still) if still else ""
    if why:
        return {}, why
    return ({p: f"{p} keeps randomness built from fresh OS entropy that nothing else the model holds depends on (each "
                f"of its {n_sources} source{'s' if n_sources != 1 else ''} of entropy replaced in {TRIALS} fits on D, "
                f"{TRIALS} on D' and {TRIALS} on each of 3 inputs beside them: what moved with the kept randomness read "
                "alike on every input): not the fit's noise, so not a finding" for p in paths}, "")
