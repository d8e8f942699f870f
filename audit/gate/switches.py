"""The switch scan: structure that changes with the exact record count, at any size.

Ordinary code switches what it does at a count of records: ``if n < 30`` fall back to a fixed prior, warn when
a class has fewer than 25 examples, store the counts in ``np.min_scalar_type(2 * n)``, take a vectorised float
noise path above 5,000 records. Each is a function of the exact count, so an adversary holding the published
model tells ``D`` from ``D'`` one record either side of the threshold, which may be *any* size: the ladder of
round sizes (:mod:`audit.gate.ladder`) looks only at round ones, and the scale family (:mod:`audit.gate.scale`)
only where the sampled law moves most from 1,000 records on.

:func:`switch_scan` searches for such thresholds by the structure of the fits, never by their noisy values:

1. **Grid.** The subject is fitted as it ships (:func:`audit.gate.determinism.as_shipped`: no injected seed)
   on ``D(n)`` of one scale pattern (:data:`PATTERN`: the classes alternate, so the total count and each
   class's count cross every value), :data:`GRID_FITS` fits at every size ``1 .. 32`` and then at sizes
   growing by :data:`FACTOR` up to the scale family's largest (16,000 records at quick).
2. **Signature.** Each fit is observed like the determinism probe's (:func:`audit.gate.observe.observe_fit`),
   except what objects in reach serve through their methods (a forked process per fit; the determinism probe
   reads it), and every observed path gives three *components* per size (:func:`signature`): its structure (present or
   absent, its type, an array's dtype and shape: one value when all fits agree, else ``"mixed"``), whether its
   value was the same on every fit (``fixed``), and that value when it was (strings with their digits masked,
   so a message that names the count does not change with it). The noisy values themselves never enter.
3. **Changes.** A component changes between two grid sizes when its values there differ and each is shared
   with a neighbouring grid size (:func:`_changes`: an isolated value is noise that repeated on the few fits
   there), the path being read on every fit or on none at both (a path some fits read and others do not comes
   and goes with the noise). The grid ends with ``n_max - 1`` and ``n_max``, so a change above its last step
   is seen too. An interval whose components have all been bisected :data:`PER_COMPONENT` times already is
   skipped (a value that tracks the count itself changes at every size: its first changes are enough, and the
   determinism probe reads it on the tiny pairs).
4. **Verification and bisection.** A side whose component claims a fixed value (or structure) against a
   varying one is fitted again, up to :data:`STRONG_FITS` fits in all, stopping at the first break: a noisy
   value that happened to repeat on three fits breaks at once, a deterministic one never does. The interval is
   then halved (:data:`GRID_FITS` fits per midpoint, verified the same way) down to consecutive sizes
   ``n, n + 1``, always following the first component still differing between the ends; when that component
   turns out to be noise (verified away at the end), the next one is followed, up to :data:`LEADS` in all. Where a fixed value
   faces a varying one there, the fixed side holds on :data:`FINAL_FITS` fits, the size beyond it gives the
   same value on as many, and the size beyond the varying side varies (:func:`_beyond`): a threshold is a
   step, and a noisy value that is nearly fixed at every other size (a prediction where one class leads by a
   record) is not.
5. **Pairs.** At a switch ``n``: ``D(n)`` and ``D(n)`` plus one record of each class (two add/remove pairs, so
   a threshold on one class's count is crossed too); under substitution the record count is public, and the
   pairs keep it: ``D(n)`` and ``D(n + 1)`` each against itself with the last record's class replaced.
   Pairs one of whose datasets ``fit`` refuses are left to the exceptions channel.

The pairs are then confirmed elsewhere (:mod:`audit.gate.channels`): by the determinism test at this channel's
own share of alpha (a deterministic switch is a violation with a bound) and as candidates of the sampled
neighbour search (a switch of the noise law is found by the outputs; screening is on separate pilot samples,
so candidates never raise the false-alarm rate). The scan only chooses pairs: nothing it sees decides.

The work is counted, never timed: the grid is fixed by the largest size, at most :data:`MAX_SWITCHES` switches
are bisected, and verification and bisection stop when the records fitted reach :data:`SWITCH_RECORDS` of the
budget (the summary names a switch the cap left unbisected). The pattern has no randomness; the subject's
global generators are seeded from the audit's seed, so the same seed gives the same scan for code that draws
from them.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from audit.engine.estimation.neighbours import NeighbourPair
from audit.gate.determinism import as_shipped
from audit.gate.observe import ABSENT, observe_fit
from audit.gate.scale import SCALE_PATTERNS, pattern_data
from reference.validation import shown

__all__ = ["PATTERN", "SMALL", "FACTOR", "GRID_FITS", "STRONG_FITS", "FINAL_FITS", "MAX_SWITCHES", "PER_COMPONENT",
           "SWITCH_RECORDS", "scan_sizes", "signature", "switch_pairs", "switch_scan", "Switch", "SwitchScan"]

#: the pattern of the scanned datasets: the classes alternate, five levels of each feature
PATTERN = SCALE_PATTERNS[2]
#: every size from 1 to this is scanned; above it the sizes grow by :data:`FACTOR`
SMALL = 32
FACTOR = 1.4
#: fits per grid size and per midpoint of a bisection
GRID_FITS = 3
#: fits in all at a size whose component claims a fixed value against a varying one (stopping at a break),
#: and at the switch a bisection ends on
STRONG_FITS = 8
FINAL_FITS = 64
#: components an interval's bisection follows in turn, at most, when the one before was verified away (a noisy
#: value that repeated on the grid's few fits, ranked before a real switch's part)
LEADS = 3
#: switches bisected, at most, and times one component may lead to a bisection
MAX_SWITCHES = 6
PER_COMPONENT = 2
#: records fitted by the whole scan (grid, verification, bisection) beyond which no more verification or
#: bisection is done, per budget; the grid itself is always fitted
SWITCH_RECORDS = {"quick": 2_000_000, "standard": 8_000_000, "full": 32_000_000}

#: the components of a path, in the order a bisection follows them
FEATURES = ("structure", "value", "fixed")
#: a component whose value changed from fit to fit
VARIES = "varies"
_DIGITS = re.compile(r"\d+")


def scan_sizes(n_max: int) -> list[int]:
    """The grid: every size ``1 .. SMALL``, then sizes growing by :data:`FACTOR` up to ``n_max - 1`` and
    ``n_max`` (two neighbours at the top, so a switch above the last factor step is seen, :func:`_changes`)."""
    sizes = list(range(1, min(SMALL, n_max) + 1))
    while sizes and sizes[-1] < n_max - 1:
        sizes.append(min(n_max - 1, max(sizes[-1] + 1, int(round(sizes[-1] * FACTOR)))))
    return sizes + [n_max] if sizes[-1] < n_max else sizes


def _structure(key) -> tuple:
    """What a value's key says about its structure: absent, its kind, an array's dtype and shape."""
    if key == ABSENT[0]:
        return ("absent",)
    kind = key[0]
    if kind == "array":
        return ("array", key[1], tuple(key[2]))
    if kind == "pandas":
        return ("pandas", key[1])
    return (kind,)


def _masked(key):
    """A fixed value as a component: a string with its digits masked, anything else as it is."""
    if isinstance(key, tuple) and len(key) == 2 and key[0] == "str" and isinstance(key[1], str):
        return ("str", _DIGITS.sub("#", key[1]))
    return key


def signature(fits: list, paths=None) -> dict:
    """The components of ``fits`` (observations of one dataset, :func:`audit.gate.observe.observe_fit`):
    ``(path, feature) -> value`` for the features of :data:`FEATURES` of every path (or of ``paths``).

    ``structure`` is :func:`_structure` when all fits agree, else ``"mixed"``; ``fixed`` whether the value was
    the same on every fit; ``value`` that value (:func:`_masked`) when it was, else :data:`VARIES`. A path no
    fit read is absent on all of them (fixed)."""
    if paths is None:
        paths = {}
        for obs in fits:
            paths.update(dict.fromkeys(obs))
    out = {}
    for path in paths:
        keys = [obs.get(path, ABSENT)[0] for obs in fits]
        shapes = {_structure(k) for k in keys}
        fixed = all(k == keys[0] for k in keys)
        out[(path, "structure")] = shapes.pop() if len(shapes) == 1 else "mixed"
        out[(path, "fixed")] = fixed
        out[(path, "value")] = _masked(keys[0]) if fixed else VARIES
    return out


def _claims_fixed(value) -> bool:
    """Whether a component's value is one that noise repeating by chance could fake (a fixed value or
    structure), as against a varying one."""
    return value is not VARIES and value != "mixed" and value is not False


def _text(value) -> str:
    """A component's value in words (``varies``, ``fixed``, ``absent``, a kind, an array's dtype and shape)."""
    if value is VARIES or value == "mixed":
        return "varies"
    if value is True:
        return "fixed"
    if value is False:
        return "varies"
    if isinstance(value, tuple) and value and value[0] == "absent":
        return "absent"
    if isinstance(value, tuple) and value and value[0] == "array" and len(value) == 3:
        return f"array {np.dtype(value[1]).name} {list(value[2])}"
    if isinstance(value, tuple) and len(value) == 1:
        return str(value[0])
    if isinstance(value, tuple) and len(value) >= 2 and value[0] == "str":
        text = str(value[1])
        return repr(text if len(text) <= 40 else text[:39] + "…")
    if isinstance(value, tuple) and value and value[0] == "array":
        return f"fixed array {np.dtype(value[1]).name} {list(value[2])}"
    if isinstance(value, tuple) and len(value) >= 2:
        return f"fixed {value[1]}"
    return str(value)


@dataclass
class Switch:
    """A switch between ``n`` and ``n + 1`` records: the components that differ and the pairs formed there."""

    n: int
    changes: list = field(default_factory=list)
    pairs: list = field(default_factory=list)
    refused: bool = False

    def text(self) -> str:
        """The switch in words: its sizes, its first two changes, and whether ``fit`` refused its pairs."""
        listed = "; ".join(self.changes[:2]) + (f" (and {len(self.changes) - 2} more)" if len(self.changes) > 2
                                                else "")
        what = ", fit refuses one side (left to the exceptions channel)" if self.refused else ""
        return f"{self.n:,} vs {self.n + 1:,} records: {listed}{what}"


@dataclass
class SwitchScan:
    """What :func:`switch_scan` found: the grid, the switches (their pairs) and what the record cap left out."""

    sizes: list = field(default_factory=list)
    switches: list = field(default_factory=list)
    relation: str = "add-remove"
    cut: list = field(default_factory=list)
    #: records fitted and fits made (for the console and the tests; they depend on the subject's noise, so the
    #: summary, which enters the report, leaves them out)
    records: int = 0
    fits: int = 0

    @property
    def pairs(self) -> list:
        """Every switch's pairs, in the order found."""
        return [p for s in self.switches for p in s.pairs]

    def summary(self) -> str:
        """The scan in words: the sizes covered, the switches found, what the cap left out."""
        grid = (f"switch scan: {len(self.sizes)} sizes from {self.sizes[0]:,} to {self.sizes[-1]:,} records "
                f"(every size to {min(SMALL, self.sizes[-1])}, then x{FACTOR:g})") if self.sizes else "switch scan"
        found = ("; switches at " + "; ".join(s.text() for s in self.switches)) if self.switches else \
            "; no structure switched with the record count"
        cut = ("; RECORD CAP: " + "; ".join(self.cut)) if self.cut else ""
        return grid + found + cut


def switch_pairs(n: int, bounds, classes, relation: str = "add-remove") -> list[NeighbourPair]:
    """The neighbouring pairs at a switch between ``n`` and ``n + 1`` records of :data:`PATTERN`: ``D(n)``
    against ``D(n)`` plus the pattern's next record as each class (add/remove), or ``D(n)`` and ``D(n + 1)``
    each against itself with its last record's class replaced (substitution: the count is public)."""
    c0, c1 = classes[0], classes[-1]
    labels = list(dict.fromkeys((c0, c1)))
    X1, y1 = pattern_data(PATTERN, n + 1, bounds, classes)
    pairs = []
    if relation == "substitute":
        for m in (n, n + 1):
            if m < 1 or len(labels) < 2:
                continue
            X, y = X1[:m], y1[:m]
            other = c1 if y[-1] == c0 else c0
            y2 = np.append(y[:-1], np.asarray([other], dtype=y.dtype))
            pairs.append(NeighbourPair((X, y), (X.copy(), y2), f"[switch] {m:,} records, the last one's class "
                                       f"{shown(y[-1])} replaced by {shown(other)}", relation))
        return pairs
    X, y = X1[:n], y1[:n]
    for c in labels:
        Xc = np.vstack((X, X1[-1:]))
        yc = np.append(y, np.asarray([c], dtype=y1.dtype))
        pairs.append(NeighbourPair((X, y), (Xc, yc), f"[switch] {n:,} records vs {n + 1:,} (one more of class "
                                   f"{shown(c)})", relation))
    return pairs


class _Scanner:
    """The fits of one scan, by size, and the records they cost."""

    def __init__(self, make_estimator, bounds, classes, grid, limit: int):
        self.make, self.bounds, self.classes, self.grid, self.limit = make_estimator, bounds, classes, grid, limit
        self.fits: dict = {}
        self.records = self.made = 0

    def over(self) -> bool:
        return self.records >= self.limit

    def fit(self, n: int, k: int) -> list:
        """At least ``k`` fits of ``D(n)`` (more are made only as needed)."""
        have = self.fits.setdefault(n, [])
        if len(have) < k:
            data = pattern_data(PATTERN, n, self.bounds, self.classes)
            while len(have) < k:
                have.append(observe_fit(self.make, data, self.grid, self.classes, serve=False))
                self.records += n
                self.made += 1
        return have

    def components(self, n: int, keys) -> dict:
        return signature(self.fits[n], {path for path, _ in keys})

    def strengthen(self, n: int, keys, against: dict, limit: int = None, both: bool = False) -> dict:
        """Fit ``D(n)`` again, one fit at a time up to ``limit`` fits in all (:data:`STRONG_FITS`), while a
        component of ``keys`` claims a fixed value (or structure) where ``against`` (the other side's components)
        has a varying one, or with ``both`` any other value; the components after."""
        limit = STRONG_FITS if limit is None else limit
        comps = self.components(n, keys)

        def pending(c):
            return [key for key in keys if _claims_fixed(c.get(key)) and c.get(key) != against.get(key)
                    and (both or not _claims_fixed(against.get(key)))]

        while pending(comps) and len(self.fits[n]) < limit:
            self.fit(n, len(self.fits[n]) + 1)
            comps = self.components(n, keys)
        return comps


def switch_scan(make_estimator, bounds, classes, *, grid, relation: str = "add-remove", n_max: int = 16_000,
                budget: str = "quick", seed: int | None = 0, accepts=None, progress=None) -> SwitchScan:
    """Scan ``make_estimator()`` for structure that switches with the record count (module docstring).

    Parameters
    ----------
    make_estimator : callable
        Returns a fresh unfitted estimator, built with the user's parameters exactly as given.
    bounds, classes : sequence
        The public domain (the pattern's records lie in it; its labels are the first and last class).
    grid : ndarray
        The public probe points the methods are called on (as the determinism probe's).
    relation : str
        ``"add-remove"`` or ``"substitute"`` (the pairs formed at a switch, :func:`switch_pairs`).
    n_max : int
        The largest size scanned (the scale family's, :func:`audit.gate.budget.scale_records`).
    budget : str
        Sets :data:`SWITCH_RECORDS`, the records fitted beyond which verification and bisection stop.
    seed : int or None
        Seeds the global generators for the scan's fits (:func:`audit.gate.determinism.as_shipped`).
    accepts : callable, optional
        ``accepts(data)`` is False for a dataset ``fit`` refuses; a switch's pairs with such a dataset are left
        out (refusals are judged by the exceptions channel, with their exemptions).
    progress : callable, optional
        ``progress(text)`` for console lines.

    Returns
    -------
    SwitchScan
    """
    out = SwitchScan(sizes=scan_sizes(int(n_max)), relation=relation)
    scanner = _Scanner(make_estimator, bounds, classes, grid, SWITCH_RECORDS.get(budget, SWITCH_RECORDS["quick"]))
    with as_shipped(seed):
        sigs = [signature(scanner.fit(n, GRID_FITS)) for n in out.sizes]
        bisected: dict = {}
        for (i, j), keys in _changes(sigs):
            if sum(1 for s in out.switches if s.pairs) >= MAX_SWITCHES:
                break
            a, b = out.sizes[i], out.sizes[j]
            keys = [k for k in keys if bisected.get(k, 0) < PER_COMPONENT]
            if not keys:
                continue
            if scanner.over():
                out.cut.append(f"the changes from {a:,} records on not verified or bisected (the scan reached "
                               f"{scanner.limit:,} records fitted)")
                break
            switch = None
            for _ in range(LEADS):  # a lead that was noise repeating by chance leaves the next one to follow
                switch = _bisect(scanner, a, b, keys)
                if switch is not None or len(keys) < 2 or scanner.over():
                    break
                keys = keys[1:]
            if switch is None:
                continue
            for key in switch[1]:
                bisected[key] = bisected.get(key, 0) + 1
            if switch[0] is None:
                out.cut.append(f"a switch between {switch[2]:,} and {switch[3]:,} records not bisected further "
                               f"(the scan reached {scanner.limit:,} records fitted)")
                break
            same = next((s for s in out.switches if s.n == switch[0]), None)
            if same is None:
                out.switches.append(_switch(switch, bounds, classes, relation, accepts))
            else:
                same.changes += [c for c in _switch(switch, bounds, classes, relation, None).changes
                                 if c not in same.changes]
    out.records, out.fits = scanner.records, scanner.made
    if progress is not None:
        progress(out.summary() + f" ({out.fits:,} fits, {out.records:,} records fitted)")
    return out


def _comparable(a: dict, b: dict, key) -> bool:
    """Whether two sizes' values of a component may show a switch: its path was present on every fit or on
    none on both sides (a path that some fits read and others did not comes and goes with the noise)."""
    return a.get((key[0], "structure")) != "mixed" and b.get((key[0], "structure")) != "mixed"


def _changes(sigs: list) -> list:
    """``((i, j), keys)``: the grid intervals where components change, in order of size, ``i < j`` indices of
    the grid. A component's value at a grid size counts only when it equals its value at a neighbouring grid
    size (an isolated value is a noisy one that happened to repeat on the few fits there, or an isolated
    absence), and a change is between two such sizes with nothing but isolated values between them."""
    found: dict = {}
    keys = {}
    for sig in sigs:
        keys.update(dict.fromkeys(sig))
    last = len(sigs) - 1
    for key in keys:
        values = [sig.get(key) for sig in sigs]
        stable = [k for k in range(len(values)) if (k > 0 and values[k] == values[k - 1])
                  or (k < last and values[k] == values[k + 1])]
        for i, j in zip(stable, stable[1:]):
            if values[i] != values[j] and _comparable(sigs[i], sigs[j], key):
                found.setdefault((i, j), []).append(key)
    return [(ij, sorted(ks, key=_rank)) for ij, ks in sorted(found.items())]


def _rank(key) -> tuple:
    """The order a bisection follows components: structure, then fixed values, then whether the value was
    fixed; whole values before their parts; then by path."""
    return FEATURES.index(key[1]), "#" in key[0], key[0]


def _bisect(scanner: _Scanner, a: int, b: int, keys: list):
    """Verify the change ``keys`` between grid sizes ``a`` and ``b`` and bisect it: ``(n, keys, lo, hi, ca, cb)``
    with the switch between ``n`` and ``n + 1`` and the components differing there, ``n`` None when the record
    cap stopped the bisection between ``lo`` and ``hi``; None when verification removed every difference.

    The ends are verified on both sides (:meth:`_Scanner.strengthen`, ``both``), each midpoint where it claims a
    fixed value against a varying end, and the switch found where a fixed value faces a varying one on
    :data:`FINAL_FITS` fits (a noisy value that is nearly always the same, a prediction at a size where one
    class leads by a record, repeats on :data:`STRONG_FITS` fits now and then; never on that many)."""
    ca, cb = _verified(scanner, a, b, keys, STRONG_FITS)
    keys = _still(keys, ca, cb)
    if not keys:
        return None
    while b - a > 1:
        if scanner.over():
            return None, keys, a, b, ca, cb
        mid = (a + b) // 2
        scanner.fit(mid, GRID_FITS)
        cm = scanner.components(mid, keys)
        for side in (ca, cb):  # a fixed claim at the midpoint against a varying end is verified
            cm = scanner.strengthen(mid, keys, side)
        lead = keys[0]
        if cm.get(lead) == ca.get(lead):
            a, ca = mid, cm
        else:
            b, cb = mid, cm
        keys = _still(keys, ca, cb) or [lead]
    ca, cb = _verified(scanner, a, b, keys, FINAL_FITS, both=False)
    keys = [k for k in _still(keys, ca, cb) if _beyond(scanner, a, k, ca, cb)]
    return (a, keys, a, b, ca, cb) if keys else None


def _beyond(scanner: _Scanner, n: int, key, ca: dict, cb: dict) -> bool:
    """Whether a switch of ``key`` between ``n`` and ``n + 1`` holds one record further out on each side, when
    one side's value is fixed and the other's varies: the size beyond the fixed side gives the same fixed value
    on :data:`FINAL_FITS` fits, and the size beyond the varying side varies within :data:`STRONG_FITS`. A
    threshold is a step; a noisy value that is nearly fixed at every other size (a prediction where one class
    leads by a record, at odd sizes only) is not."""
    fixed_a, fixed_b = _claims_fixed(ca.get(key)), _claims_fixed(cb.get(key))
    if fixed_a == fixed_b:
        return True
    (f, cf), (v, cv) = ((n, ca), (n + 1, cb)) if fixed_a else ((n + 1, cb), (n, ca))
    far_f, far_v = (f - 1 if f == n else f + 1), (v + 1 if v == n + 1 else v - 1)
    if far_f >= 1:
        scanner.fit(far_f, GRID_FITS)
        if scanner.strengthen(far_f, [key], cv, FINAL_FITS).get(key) != cf.get(key):
            return False
    if far_v >= 1:
        scanner.fit(far_v, GRID_FITS)
        if _claims_fixed(scanner.strengthen(far_v, [key], {key: VARIES}, STRONG_FITS).get(key)):
            return False
    return True


def _verified(scanner: _Scanner, a: int, b: int, keys: list, limit: int, both: bool = True) -> tuple:
    """The components of sizes ``a`` and ``b`` after each side's fixed claims are verified against the other's
    (up to ``limit`` fits where they face a varying value, :data:`STRONG_FITS` where, with ``both``, they face
    another fixed one)."""
    cb = scanner.components(b, keys)
    ca = scanner.strengthen(a, keys, cb, limit)
    cb = scanner.strengthen(b, keys, ca, limit)
    ca = scanner.strengthen(a, keys, cb, limit)
    if both:
        ca = scanner.strengthen(a, keys, cb, STRONG_FITS, both=True)
        cb = scanner.strengthen(b, keys, ca, STRONG_FITS, both=True)
    return ca, cb


def _still(keys: list, ca: dict, cb: dict) -> list:
    """The components of ``keys`` that still differ between two sizes and may show a switch."""
    return [k for k in keys if ca.get(k) != cb.get(k) and _comparable(ca, cb, k)]


def _switch(found, bounds, classes, relation: str, accepts) -> Switch:
    n, keys, _, _, ca, cb = found
    changes = [f"{path} {feature} {_text(ca.get((path, feature)))} -> {_text(cb.get((path, feature)))}"
               for path, feature in keys]
    pairs = switch_pairs(n, bounds, classes, relation)
    kept = [p for p in pairs if accepts is None or (accepts(p.d0) and accepts(p.d1))]
    return Switch(n, changes, kept, refused=len(kept) < len(pairs) and not kept)
