"""Raw words of a bit generator kept by a fitted model, named and replayed.

A model may keep its noise generator's state as plain numbers: PCG64's ``[state, inc]`` as two ints, a list, a
``uint64`` array or bytes; MT19937's key; Philox's key and counter; SFC64's four words; or two large ints side by
side in one object (:func:`sibling_words`). Whoever holds them rebuilds the generator, steps it back and replays
the fit. Two ways name them:

* :func:`identified_words`: against the generator seeded with the probe's seed after the fit's draws
  (:func:`audit.gate.state.codec.identify`, for a fit that takes ``random_state``); each is a finding, replayed
  from each published fit's start (:func:`replay_words`, mode ``start``);
* :func:`unseeded_words`: among the ``PCG64`` generators a fit built without a seed
  (:mod:`audit.gate.state.unseeded`), replayed by loading the words in place of the one they name (mode
  ``load``); only the replay makes it a finding (a generator kept for later use and never drawn from reproduces
  nothing).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from audit.gate.emissions import captured
from audit.gate.state import codec
from audit.gate.state import replay as rp
from audit.gate.state import unseeded
from audit.gate.state.fingerprint import BOUNDARY, Leaves
from audit.gate.state.replay import Mode, calibrated, DERIVED, is_int

__all__ = ["MIN_WORD", "sibling_words", "EncodedState", "calibrate_start", "calibrate_load", "identified_words",
           "replay_words", "unseeded_words"]


def inside(path: str, paths) -> bool:
    """Whether ``path`` is one of ``paths`` or lies below one."""
    return any(path == q or (path.startswith(q) and path[len(q)] in BOUNDARY) for q in paths)


def _unchanged(node, other) -> bool:
    va, vb = codec.views(node), codec.views(other) if other is not None else []
    return bool(va) and bool(vb) and va[0].words == vb[0].words

#: a scalar int is read beside its siblings as a generator's word when it is at least this large
MIN_WORD = 2 ** 32


def _parent(path: str):
    m = re.fullmatch(r"(.+?)(\.[A-Za-z_]\w*|\[[^\[\]]*\])", path)
    return m.group(1) if m else None


def sibling_words(lv: Leaves, most: int = 6) -> dict:
    """``{paths: words}``: the scalar ints of at least :data:`MIN_WORD` (and below ``2**128``) that one object,
    dict or container holds side by side (two to ``most`` of them), every pair in walk order."""
    groups = {}
    for path, v in lv.numeric.items():
        if path.endswith(DERIVED) or not is_int(v) or not MIN_WORD <= int(v) < 2 ** 128:
            continue
        parent = _parent(path)
        if parent is not None and parent not in lv.words:
            groups.setdefault(parent, []).append(path)
    out = {}
    for paths in groups.values():
        if 2 <= len(paths) <= most:
            for i, a in enumerate(paths):
                for b in paths[i + 1:]:
                    out[(a, b)] = (int(lv.numeric[a]), int(lv.numeric[b]))
    return out


@dataclass(frozen=True)
class EncodedState:
    """Raw words at ``key`` (or the scalar ints at ``parts``) that ``match`` names as a generator's state."""

    key: str
    match: codec.Match
    parts: tuple = ()

    @property
    def path(self) -> str:
        return self.key

    def value(self, lv: Leaves):
        """The words read the same way from another model's fingerprint (``None`` when absent)."""
        if self.parts:
            vals = [lv.numeric.get(p) for p in self.parts]
            return tuple(int(v) for v in vals) if all(is_int(v) for v in vals) else None
        node = lv.words.get(self.key)
        for view in codec.views(node) if node is not None else ():
            if view.encoding == self.match.encoding:
                return view.words
        return None


def calibrate_load(cand: EncodedState, built: int, make_estimator, la: Leaves, lb, D):
    """The *load* mode of kept words that are the state of the ``built``-th generator a fit made without a seed
    (:mod:`audit.gate.state.unseeded`), when loading fit ``a``'s words in its place reproduces fit ``a``."""
    mode = Mode("load", k=cand.match.k, match=cand.match, built=built)
    return calibrated(mode, cand.value(la), make_estimator, la, lb, D)


def calibrate_start(cand: EncodedState, make_estimator, la: Leaves, lb, D):
    """The *start* mode of kept words when the generator they give for fit ``a`` reproduces fit ``a``."""
    return calibrated(Mode("start", k=cand.match.k, match=cand.match), cand.value(la), make_estimator, la, lb, D)


def identified_words(report, la, lb, s1):
    """``[(path, EncodedState)]``: raw words that change with the seed and are the state of a generator seeded
    with ``s1`` (the fit's seed)."""
    known = {f.path for f in report.findings} | set(la.states)
    found = []
    for path, node in la.words.items():
        if inside(path, known) or any(inside(path, [p]) for p, _ in found):
            continue
        if _unchanged(node, lb.words.get(path)):
            continue  # a generator's state changes with the seed
        for view in codec.views(node):
            matches = codec.identify(view, s1)
            if matches:
                found.append((path, EncodedState(path, matches[0])))
                break
    for (a, b), words in sibling_words(la).items():
        if inside(a, known) or inside(b, known) or (lb.numeric.get(a), lb.numeric.get(b)) == words:
            continue
        matches = codec.identify(codec.View("two ints side by side", words), s1)
        if matches:
            found.append((f"{a} + {b}", EncodedState(f"{a} + {b}", matches[0], parts=(a, b))))
    return found


def replay_words(report, found, plans, make_estimator, la, lb, D0, alpha, max_candidates: int, finding):
    """Each identified state (:func:`_identified_words`) is a finding named by path and encoding, replayed from
    each published fit's start where it can be (``finding(path, kind, type name, where)`` makes the finding)."""
    for path, cand in found:
        name = cand.match.name
        report.findings.append(finding(path, "state", name, "pickle"))
        if cand.match.rewind:
            report.replays.append(rp.Replay(path, name, "kept", [], alpha=alpha,
                                            reason=f"not replayed: {cand.match.rewind}"))
            continue
        if len(plans) >= max_candidates:
            report.replays.append(rp.Replay(path, name, "kept", [], alpha=alpha,
                                            reason=f"not replayed: {max_candidates} replays already planned"))
            continue
        modes, reasons = calibrate_start(cand, make_estimator, la, lb, D0)
        rec = rp.Replay(path, name, "kept", modes, alpha=alpha, reason="; ".join(reasons))
        report.replays.append(rec)
        if modes:
            plans.append((cand, modes, rec))


def unseeded_words(report, plans, make_estimator, la, lb, D0, alpha, max_candidates: int):
    """Raw words that are the state of a ``PCG64`` the fit built without a seed (:mod:`audit.gate.state.unseeded`:
    found by the generators a fit on D builds, replayed by loading the words in place of the one they name)."""
    known = {f.path for f in report.findings} | set(la.states)
    try:
        with unseeded.recording() as built, captured():  # what the fit prints is not the console's
            est = make_estimator()
            est.fit(*D0)
    except Exception:  # noqa: BLE001 - outside code
        return
    if not built:
        return
    lv = rp.leaves(rp.rebuilt(est))
    nodes = [(path, codec.views(node), ()) for path, node in lv.words.items()] + \
        [(f"{a} + {b}", [codec.View("two ints side by side", words)], (a, b))
         for (a, b), words in sibling_words(lv).items()]
    for path, views, parts in nodes:
        if inside(path, known) or any(inside(p, known) for p in parts) or len(plans) >= max_candidates:
            continue
        found = unseeded.identify(views, built)
        if not found:
            continue
        _, match, index = found[0]
        cand = EncodedState(path, match, parts=parts)
        modes, reasons = calibrate_load(cand, index, make_estimator, la, lb, D0)
        rec = rp.Replay(path, match.name, "kept", modes, alpha=alpha, reason="; ".join(reasons))
        report.replays.append(rec)
        known.add(path)
        if modes:
            plans.append((cand, modes, rec))
