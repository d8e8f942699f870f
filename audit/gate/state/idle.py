"""Kept generators that the release does not depend on: a fresh generator kept for later use is not the noise.

A model that keeps the generator its fit drew the noise from publishes that noise: rewound to its start, the
generator replays the fit (:mod:`audit.gate.state.probe`). A model may also keep a generator that it built from
fresh OS entropy and never used for the fit, for random tie-breaking in ``predict`` say. Whoever holds that
generator learns only its own state, on which nothing the fit released depends: no privacy loss.

:func:`idle_generators` tells the two apart by experiment, with every source of OS entropy fed a chosen byte stream
(:func:`audit.gate.state.entropy.fed`, which records the generators it builds and can give one of them a state of
its own):

1. The model is fitted on D as it ships; the kept generator must be one the fit built *without a seed* (the
   ``i``-th, found by identity). A generator seeded by anything else (a seed the user passed,
   a draw of another generator, a hash) may carry another generator's randomness and is never cleared.
2. Two more fits with the same stream give the paths that change without any change of randomness (a time
   stamp, a duration); they are left out of the comparisons below.
3. :data:`TRIALS` fits on D and on D' give the ``i``-th generator built a whole state of its own (every other one
   reads what it read before), and everything else the model's pickle holds (its numbers and the integers its texts
   spell) must stay as with the base stream.

Whatever way the release depends on the generator (its draws, a child it spawned, a jumped copy, a seed drawn
from it), changing its start changes the release in some trial, unless the dependence is hidden by coarse
noise in every trial: one randomized-response bit at ε = 1 stays the same with probability at most 0.731 per
trial, so a generator it depends on is cleared with probability at most ``0.731 ** (2 * TRIALS)`` (about 3e-7).
A dependence that shows only on other datasets than the probe's pair is not seen.
"""
from __future__ import annotations

import numpy as np

from audit.gate.emissions import captured
from audit.gate.state import replay as rp
from audit.gate.state.entropy import fed
from audit.gate.state.fingerprint import differing, excluded
from audit.gate.state.walk import MAX_NODES, walk

__all__ = ["idle_generators", "TRIALS", "STREAM_BYTES"]

#: fits on each side of the pair with the kept generator's bytes replaced
TRIALS = 24
#: bytes of the base stream
STREAM_BYTES = 512


def _bit_generator(node):
    """The bit generator a ``Generator``, ``RandomState`` or bit generator ``node`` draws from, else None."""
    if isinstance(node, np.random.BitGenerator):
        return node
    for name in ("bit_generator", "_bit_generator"):
        bg = getattr(node, name, None) if isinstance(node, (np.random.Generator, np.random.RandomState)) else None
        if isinstance(bg, np.random.BitGenerator):
            return bg
    return None


def _fit(make_estimator, D, data: bytes, reseed=None):
    """``(fitted model, the bit generators it built without a seed)`` under ``fed(data, reseed)``."""
    with fed(data, reseed) as stream, captured():  # what the fit prints is not the console's
        est = make_estimator()
        est.fit(*D)
    return est, stream.built


def _reading(est) -> dict:
    """What the model's pickle holds, numbers and the integers its texts spell, by path (generators apart)."""
    lv = rp.leaves(rp.rebuilt(est))
    return {**lv.numeric, **{f"{k}#digits": v for k, v in lv.digits.items()}}


def _kept(est, paths) -> dict:
    """``{path: bit generator}`` of the generators at ``paths`` of the live model."""
    wanted, out = set(paths), {}
    for path, node in walk(est, "model", MAX_NODES):
        if path in wanted and _bit_generator(node) is not None:
            out[path] = _bit_generator(node)
    return out


def idle_generators(make_estimator, D0, D1, paths, seed: int = 0) -> tuple[dict, str]:
    """``({path: sentence}, reason)``: the generators at ``paths`` (of a model fitted on ``D0`` as it ships) that the
    release does not depend on (module docstring), each with the sentence that says why; ``reason`` says why the
    others were kept as findings (empty when none was)."""
    rng = np.random.default_rng(seed)
    base = rng.bytes(STREAM_BYTES)
    try:
        est, built = _fit(make_estimator, D0, base)
        same = [_reading(_fit(make_estimator, D0, base)[0]) for _ in range(2)]
    except Exception as exc:  # noqa: BLE001 - outside code
        return {}, f"a fit under fed entropy raised {type(exc).__name__}"
    first = _reading(est)
    unstable = differing(first, same[0]) | differing(first, same[1])
    order = {id(bg): i for i, bg in enumerate(built)}
    out, reasons = {}, []
    for path, bg in _kept(est, paths).items():
        index = order.get(id(bg))
        if index is None:
            reasons.append(f"{path}: not built from the OS entropy without a seed")
            continue
        changed = None
        for D in (D0, D1):
            try:
                reference = first if D is D0 else _reading(_fit(make_estimator, D, base)[0])
                for _ in range(TRIALS):
                    other, other_built = _fit(make_estimator, D, base, (index, int(rng.integers(2 ** 63))))
                    moved = sorted(k for k in differing(reference, _reading(other))
                                   if not excluded(k, unstable | {path}))
                    if moved:
                        changed = f"replacing its start changed {moved[0]}"
                    elif index >= len(other_built):
                        changed = "the fit built its generators otherwise"
                    if changed:
                        break
            except Exception as exc:  # noqa: BLE001 - outside code
                changed = f"a fit raised {type(exc).__name__}"
            if changed:
                break
        if changed:
            reasons.append(f"{path}: {changed}")
        else:
            out[path] = (f"{path} keeps a generator built from fresh OS entropy that nothing the model holds depends "
                         f"on (its start replaced in {TRIALS} fits on D and {TRIALS} on D': the model stayed the same): "
                         "not the fit's noise, so not a finding")
    return out, "; ".join(reasons)
