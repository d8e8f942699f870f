"""Every path of a call: the code run once per outcome of its randomness, depth first, and its release law.

:func:`explore` runs ``call()`` under :func:`~audit.engine.exact_code.intercept.intercepted` once per path
(:mod:`audit.engine.exact_code.symbolic`): the first run takes the first option of every decision and queues the
others; each later run replays a queued prefix of decisions and goes on with first options. A run's release (what
``call()`` returns: a mechanism's output, or the fitted model's state) is encoded by :func:`encode` as a
*skeleton* (every concrete part, exactly) and its *leaves* (the affine forms it keeps).

:meth:`Explored.law` turns the paths into an interval law of the release
(:class:`audit.engine.exact_law.laws.ReleaseLaw`): a release's lower end is the windowed probability of the
paths that give it (:func:`~audit.engine.exact_code.laws.path_probability`), and its upper end adds the *missing
mass*, one minus the sum of every followed path's lower end, which bounds all the probability no window and no
followed path holds. A path's kept forms' joint law is enumerated on the windows when it has at most
:data:`MAX_RELEASES` values; past that the pair is undecided. A release the reader cannot see whole (an object
with slots, a function with state, a structure deeper than 12 levels) is undecided too: two releases it could
not tell apart would make the upper end wrong.

A uniform draw the release keeps (a random threshold from public bounds) is a continuous coordinate of the
release: its density given the path is ``1 / |I|`` on the interval ``I`` the path's comparisons left it, so the
release's density is constant on each *cell* between the interval ends that the paths of the compared inputs
cut. :meth:`Explored.law` takes the cells as given (``cuts``): the release ``(r, U in cell)`` has probability
``P(path) |cell| / |I|``, and its log-ratio between two inputs is the log-ratio of their densities at every point
of the cell, so the cells' law has the same loss as the continuous release.
"""
from __future__ import annotations

import decimal
import enum
import fractions
import itertools
import math
import types
from dataclasses import dataclass, field

import numpy as np

from audit.engine.exact_code.intercept import TracingGenerator, TracingRandomState, intercepted
from audit.engine.exact_code.laws import merge, path_probability
from audit.engine.exact_code.symbolic import Affine, Path, Pruned, Undecided, Uniform
from audit.engine.exact_law.laws import ReleaseLaw, add_interval

__all__ = ["explore", "encode", "Explored", "PathRecord", "MAX_PATHS", "MAX_RELEASES"]

#: the most paths one call may have before the mode gives up (undecided, with the count)
MAX_PATHS = 200_000
#: the most joint values of a path's kept forms enumerated as releases of their own
MAX_RELEASES = 200_000


def encode(obj, leaves: list, depth: int = 0):
    """The skeleton of ``obj`` (hashable, exact), appending its affine forms to ``leaves`` in order."""
    if depth > 12:
        raise Undecided(f"the release nests deeper than 12 levels ({type(obj).__name__})", "",
                        "keep the fitted values in plain attributes, lists, dicts or arrays")
    if isinstance(obj, Affine):
        leaves.append(obj)
        return ("leaf", len(leaves) - 1)
    if isinstance(obj, Uniform):  # a released draw: its law is taken given the draw (cells, module docstring)
        return ("uniform", obj.index, _scalar(obj.low), _scalar(obj.high))
    if obj is None or isinstance(obj, (bool, int, str, bytes)):
        return obj
    if isinstance(obj, float):
        return _scalar(obj)
    if isinstance(obj, np.generic):
        return encode(obj.item(), leaves, depth + 1)
    if isinstance(obj, np.ndarray):
        if obj.dtype == object:
            return ("objarray", obj.shape, tuple(encode(v, leaves, depth + 1) for v in obj.ravel()))
        return ("array", obj.dtype.str, obj.shape, tuple(_scalar(v) for v in obj.ravel().tolist()))
    if isinstance(obj, (list, tuple)):
        return (type(obj).__name__, tuple(encode(v, leaves, depth + 1) for v in obj))
    if isinstance(obj, dict):
        return ("dict", tuple((encode(k, leaves, depth + 1), encode(v, leaves, depth + 1))
                              for k, v in sorted(obj.items(), key=lambda kv: repr(kv[0]))))
    if isinstance(obj, (set, frozenset)):
        return ("set", tuple(sorted((encode(v, leaves, depth + 1) for v in obj), key=repr)))
    if isinstance(obj, (TracingGenerator, TracingRandomState)):
        return ("generator",)
    if isinstance(obj, (np.dtype, range, slice, complex, fractions.Fraction, decimal.Decimal, enum.Enum)):
        return (type(obj).__name__, repr(obj))  # immutable values whose repr is their content
    if isinstance(obj, (types.FunctionType, types.MethodType)) or callable(obj) and not hasattr(obj, "__dict__"):
        cells = getattr(obj, "__closure__", None) or ()
        if cells or isinstance(obj, types.MethodType) and not isinstance(obj.__self__, type):
            raise Undecided(f"the release holds a function with state ({getattr(obj, '__qualname__', obj)!s})",
                            "", "keep the fitted values in plain attributes the exact mode can read")
        return ("callable", getattr(obj, "__qualname__", type(obj).__name__))
    if isinstance(obj, type):
        return ("class", obj.__qualname__)
    if hasattr(obj, "__dict__") and not hasattr(type(obj), "__slots__"):
        return (type(obj).__qualname__, tuple((k, encode(v, leaves, depth + 1))
                                             for k, v in sorted(vars(obj).items())))
    # an object whose content this reader cannot see (slots, C types): its release cannot be compared exactly
    raise Undecided(f"the release holds a {type(obj).__qualname__} whose content the exact mode cannot read", "",
                    "keep the fitted values in plain attributes, lists, dicts or NumPy arrays")


def _scalar(v):
    """A number as the release holds it: an ``int`` exactly, a ``float`` to 15 significant digits (a form's value
    computed here and the same value computed by the code may differ in the last bit of the double; merging them
    is a coarser event, which keeps every lower end a lower end)."""
    if isinstance(v, float):
        return ("float", repr(float(f"{v:.15g}")) if math.isfinite(v) else repr(v))
    return v


def fill(skeleton, values: tuple):
    """The release itself: the skeleton with its leaves' values put in; an object array of numbers reads as the
    ``int64`` or ``float64`` array NumPy would have made of them."""
    if isinstance(skeleton, tuple) and skeleton:
        if skeleton[0] == "leaf" and len(skeleton) == 2 and isinstance(skeleton[1], int):
            return values[skeleton[1]]
        if skeleton[0] == "objarray":
            items = tuple(fill(x, values) for x in skeleton[2])
            if all(isinstance(x, int) and not isinstance(x, bool) for x in items):
                return ("array", "<i8", skeleton[1], items)
            if all(isinstance(x, int) or (isinstance(x, tuple) and x[:1] == ("float",)) for x in items):
                return ("array", "<f8", skeleton[1],
                        tuple(_scalar(float(x)) if isinstance(x, int) else x for x in items))
            return ("objarray", skeleton[1], items)
        return tuple(fill(x, values) for x in skeleton)
    return skeleton


@dataclass
class PathRecord:
    """One followed path: its decision labels, finite probability, constraints, atoms, release."""

    labels: tuple
    finite_prob: float
    constraints: list
    atoms: list
    skeleton: object
    leaves: list
    concretised: str  # where a noisy value was first turned into a number ("" if nowhere)
    prob: float = 0.0  # windowed probability of the whole path (finite part times the constraints' mass)
    variables: list = field(default_factory=list)
    rows: list = field(default_factory=list)
    intervals: dict = field(default_factory=dict)  # each released uniform draw's interval on this path
    box: dict = field(default_factory=dict)  # every uniform draw's interval the path's decisions left
    plain_labels: tuple = ()  # the labels of the decisions on everything but uniform draws

    @property
    def volume(self) -> float:
        """The probability of the path's box of uniform draws (its part of ``finite_prob``)."""
        return math.prod(hi - lo for lo, hi in self.box.values())


@dataclass
class Explored:
    """The paths of one call, the windows their atoms used, and the sites of the decisions on noisy values."""

    paths: list
    windows: dict
    pruned: str = ""  # where the first path too unlikely to follow was left out ("" if none was)
    _law: object = field(default=None, repr=False)

    @property
    def concretised(self) -> str:
        """Where a path first turned a noisy value into a number, or left a path out ("" if none did): the runs
        the exploration did not follow to their end."""
        return next((p.concretised for p in self.paths if p.concretised), self.pruned)

    @property
    def missing(self) -> float:
        """One minus the followed paths' windowed mass (clipped at 0): the mass no path holds."""
        return max(0.0, 1.0 - math.fsum(p.prob for p in self.paths))

    def cuts(self) -> dict:
        """The ends of every released uniform draw's intervals over the paths: ``{draw: {ends}}``."""
        out: dict = {}
        for p in self.paths:
            for k, (lo, hi) in p.intervals.items():
                out.setdefault(k, {0.0, 1.0}).update((lo, hi))
        return out

    def law(self, cuts: dict | None = None) -> ReleaseLaw:
        """The interval law of the release (module docstring), with released uniform draws read by the cells
        between ``cuts`` (default: this input's own); a copy, computed once per ``cuts``."""
        cuts = self.cuts() if cuts is None else cuts
        key = tuple(sorted((k, tuple(sorted(v))) for k, v in cuts.items()))
        if self._law is None or self._law[0] != key:
            self._law = (key, self._compute_law(cuts))
        law = self._law[1]
        return ReleaseLaw(dict(law.lower), dict(law.upper), law.truncated)

    def _compute_law(self, cuts: dict) -> ReleaseLaw:
        lows: dict = {}
        for p in self.paths:
            if p.prob <= 0.0:
                continue
            for release, mass in _release_masses(p):
                for cell, share in _cells(p.intervals, cuts):
                    add_interval(lows, _in_cells(release, cell), mass * share, mass * share)
        miss = self.missing
        law = ReleaseLaw.from_intervals({r: (lo, hi + miss) for r, (lo, hi) in lows.items()}, truncated=miss)
        return law


def _cells(intervals: dict, cuts: dict):
    """``(cell, share)`` for every box of cells inside a path's released draws' intervals: ``cell`` maps each
    draw to its cell's ends, ``share`` is the box's length over the intervals' (the path's mass given to it)."""
    if not intervals:
        yield {}, 1.0
        return
    keys = sorted(intervals)
    per = []
    for k in keys:
        lo, hi = intervals[k]
        ends = sorted(e for e in cuts.get(k, ()) if lo < e < hi)
        edges = [lo] + ends + [hi]
        per.append([((a, b), (b - a) / (hi - lo)) for a, b in zip(edges, edges[1:]) if b > a])
    if math.prod(len(x) for x in per) > MAX_RELEASES:
        raise Undecided(f"the released uniform draws fall into more than {MAX_RELEASES:,} cells", "",
                        "release fewer continuous draws, or compare them with fewer constants")
    for combo in itertools.product(*per):
        yield dict(zip(keys, (c for c, _ in combo))), math.prod(w for _, w in combo)


def _in_cells(release, cell: dict):
    """The release with each kept uniform draw ``("uniform", k, low, high)`` read as the cell it falls in."""
    if not cell:
        return release
    if isinstance(release, tuple):
        if len(release) == 4 and release[0] == "uniform" and isinstance(release[1], int):
            return release + cell[release[1]]
        return tuple(_in_cells(x, cell) for x in release)
    return release


def _released_draws(skeleton, out: set) -> set:
    """The indices of the uniform draws a release skeleton keeps."""
    if isinstance(skeleton, tuple):
        if len(skeleton) == 4 and skeleton[0] == "uniform" and isinstance(skeleton[1], int):
            out.add(skeleton[1])
        else:
            for x in skeleton:
                _released_draws(x, out)
    return out


def _release_masses(p: PathRecord):
    """``(release, windowed probability)`` of a path's releases: the skeleton with its leaves' values."""
    if not p.leaves:
        yield fill(p.skeleton, ()), p.prob
        return
    n_forms = len(p.constraints)
    leaf_rows = p.rows[n_forms:]
    keep = tuple(sorted({v for row in leaf_rows for v in row}))
    size = math.prod(p.variables[v].values.size for v in keep)
    if size <= MAX_RELEASES:
        table = path_probability(p.constraints, p.variables, p.rows[:n_forms], keep) * p.finite_prob
        grids = [p.variables[v].values for v in keep]
        for idx in zip(*np.nonzero(table > 0)):
            point = {v: grids[j][i] for j, (v, i) in enumerate(zip(keep, idx))}
            values = tuple(_leaf_value(leaf, row, point) for leaf, row in zip(p.leaves, leaf_rows))
            yield fill(p.skeleton, values), float(table[idx])
        return
    raise Undecided(f"the release keeps noisy values whose joint law has {size:,} values on the windows (more "
                    f"than {MAX_RELEASES:,})", "", "release fewer noisy values at once, or keep them independent "
                    "of the decisions (a release of independent noisy values is decided as a product)")


def _leaf_value(leaf: Affine, row: dict, point: dict):
    """A kept form's value at a window point, as :func:`_scalar` writes numbers (an ``int`` when the form has
    integer constant and coefficients)."""
    if isinstance(leaf.const, int) and all(isinstance(c, int) for c in row.values()):
        return int(leaf.const) + sum(int(c) * int(round(float(point[j]))) for j, c in row.items())
    return _scalar(float(leaf.const) + sum(float(c) * float(point[j]) for j, c in row.items()))


def explore(call, *, max_paths: int = MAX_PATHS, windows: dict | None = None) -> Explored:
    """Every path of ``call()`` (module docstring); :class:`Undecided` when the code cannot be decided."""
    windows = {} if windows is None else windows
    pruned: list = []
    with intercepted():
        records = _follow(call, max_paths, windows, pruned)
    for r in records:
        forms = [c.form for c in r.constraints] + list(r.leaves)
        r.variables, r.rows = merge(forms, r.atoms, windows)
        r.prob = r.finite_prob * path_probability(r.constraints, r.variables, r.rows[:len(r.constraints)]) \
            if r.finite_prob > 0 else 0.0
    return Explored(records, windows, pruned[0] if pruned else "")


def _follow(call, max_paths: int, windows: dict, pruned: list) -> list:
    """The depth-first runs of ``call()`` (module docstring), inside an active interception."""
    stack, records = [[]], []
    first_release = None
    while stack:
        if len(records) >= max_paths:
            site = next((r.concretised for r in records if r.concretised), "")
            raise Undecided(f"the code has more than {max_paths:,} paths on one input (the cap)"
                            + (f"; it turns noisy values into numbers (int, float, an index) first at {site}, "
                               "and each such value is followed value by value" if site else ""), "",
                            "keep the noisy values as NumPy returns them, or lower --exact-records")
        prefix = stack.pop()
        path = Path(prefix, windows)
        with path:
            try:
                release = call()
            except Pruned as exc:
                stack.extend(path.pending)
                if not pruned:
                    pruned.append(exc.site)
                continue
            leaves: list = []
            skeleton = encode(release, leaves)
        if first_release is None:  # the same decisions must give the same release (no randomness unseen)
            again = Path(list(path.taken), windows)
            with again:
                leaves2: list = []
                skeleton2 = encode(call(), leaves2)
            if skeleton2 != skeleton or [x.describe() for x in leaves2] != [x.describe() for x in leaves]:
                raise Undecided("the code draws randomness the auditor cannot intercept (two runs with the same "
                                "draws gave different releases)", "",
                                "draw through numpy.random.default_rng(), the global numpy.random functions, or a "
                                "random_state the auditor can set")
            first_release = skeleton
        stack.extend(path.pending)
        intervals = {k: tuple(path.uniform_intervals.get(k, (0.0, 1.0))) for k in _released_draws(skeleton, set())}
        plain = tuple(x for i, x in enumerate(path.labels) if i not in set(path.uniform_decisions))
        records.append(PathRecord(tuple(path.labels), path.finite_prob, path.constraints,
                                  path.atoms, skeleton, leaves, path.concretised, intervals=intervals,
                                  box={k: tuple(v) for k, v in path.uniform_intervals.items()}, plain_labels=plain))
    return records
