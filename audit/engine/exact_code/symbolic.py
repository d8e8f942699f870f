"""Values that stand for draws not yet made: affine forms over noise atoms, and the path that decides them.

A run of the user's code under :mod:`audit.engine.exact_code.explore` is one *path*: every choice the code
forces on its randomness is a *decision* the path records, and the explorer runs the code again once per
alternative (depth first), so the set of paths covers every outcome of the randomness.

* A draw of finite support (``integers``, ``choice``, ``permutation``, a ``binomial`` used as an index, a
  Bernoulli written ``random() < p``) is decided at once: the path takes one value and multiplies its
  probability by the value's exact probability.
* A draw of infinite support (``geometric``, ``poisson``) is an :class:`Atom`, a variable of known law, and the
  code receives an :class:`Affine` form ``c + sum a_j Z_j`` over atoms. Arithmetic with constants and with other
  forms keeps the value affine, so the law of ``counts + rng.geometric(p, k) - rng.geometric(p, k)`` is never
  enumerated value by value.
* Where the code needs more than an affine value, the path decides:

  - a comparison (``<``, ``<=``, ``==``, ``bool``, and everything built on them: ``max``, ``np.maximum``,
    ``np.argmax``, ``abs``) decides its truth value and records the *constraint* ``form op 0``;
  - a conversion (``int``, ``float``, ``round``, an index, a product or quotient of two forms, ``exp``, ...)
    decides the form's *value*, among the values it takes on its atoms' windows (:mod:`laws`), and records the
    equality. Values beyond the windows are not followed: their probability is the path set's missing mass.

The probability of a path's constraints is computed once the path ends (:func:`audit.engine.exact_code.laws.
path_probability`), from the atoms' laws.

A :class:`Uniform` (``random()``) may be shifted and scaled by constants and compared with constants: its
comparisons are decided at once, with the exact length of the interval as probability, and it may be released
(its law is then taken given the draw). Any other use of it, and any other continuous draw, raises
:class:`Undecided`, which names the call site: an exact answer is then impossible, and the mode says so.
"""
from __future__ import annotations

import math
import operator
import sys
from dataclasses import dataclass, field
from fractions import Fraction

from audit.engine.exact_code.undecided import Undecided

__all__ = ["Undecided", "Pruned", "PRUNE", "Atom", "Affine", "Uniform", "Path", "Constraint", "call_site",
           "active_path"]


def call_site() -> str:
    """``file:line`` of the innermost frame outside the auditor and NumPy: the user's line that drew or used the
    value."""
    frame = sys._getframe(1)
    while frame is not None:
        f = frame.f_code.co_filename.replace("\\", "/")
        if not ("/audit/engine/exact_code/" in f or "/numpy/" in f or f.startswith("<")):
            return f"{frame.f_code.co_filename}:{frame.f_lineno}"
        frame = frame.f_back
    return "<unknown>"


@dataclass(frozen=True)
class Atom:
    """One draw of infinite support: ``kind`` (``"geometric"``, ``"poisson"``, ``"two_sided_geometric"``) with
    its parameter, numbered in the order of the path's draws."""

    index: int
    kind: str
    param: float
    site: str = field(compare=False, default="")


@dataclass(frozen=True)
class Constraint:
    """``form op 0`` with ``op`` one of ``">=", ">", "==", "!="``: a decision the path made on a form."""

    form: "Affine"
    op: str


#: a path less likely than this is left out (:class:`Pruned`)
PRUNE = 1e-15


class Pruned(Exception):
    """A path whose finite decisions have probability below :data:`PRUNE`: not followed further; its probability
    is part of the mass the explored paths leave out."""

    def __init__(self, prob: float, site: str):
        super().__init__(f"a path of probability {prob:.2g} left out at {site}")
        self.prob, self.site = prob, site


_PATH = None  # the path being run (one at a time: the explorer runs the code in this thread)


def active_path() -> "Path":
    if _PATH is None:
        raise Undecided("a draw's value was used after the audited call returned", call_site(),
                        "keep the noisy values in the fitted model or the mechanism's output")
    return _PATH


class Path:
    """One run's decisions: the prefix to replay, the new alternatives found, the constraints and the
    probability of the finite decisions."""

    def __init__(self, prefix: list, windows):
        self.prefix, self.taken, self.pending, self.labels = list(prefix), [], [], []
        self.constraints: list[Constraint] = []
        self.atoms: list[Atom] = []
        self.finite_prob = 1.0  # product of the finite decisions' probabilities
        self.windows = windows
        self.uniform_intervals: dict[int, list] = {}
        self.uniform_decisions: list[int] = []  # the positions in ``labels`` of decisions on uniform draws
        self.uniforms: list = []
        self.concretised = ""  # where a form's value was first decided (its tails not followed), "" if nowhere

    def __enter__(self):
        global _PATH
        self._outer, _PATH = _PATH, self
        return self

    def __exit__(self, *exc):
        global _PATH
        _PATH = self._outer
        return False

    def decide(self, options: list) -> int:
        """The index of the option this path takes among ``options`` (the others are queued for later runs);
        the option itself is the path's label for it (a value, or a truth value)."""
        depth = len(self.taken)
        if depth < len(self.prefix):
            choice = self.prefix[depth]
            if choice >= len(options):
                raise Undecided("the code made different choices when run again with the same draws", call_site(),
                                "draw every random value through the generator the auditor hands the code")
        else:
            choice = 0
            self.pending.extend(self.taken + [i] for i in range(len(options) - 1, 0, -1))
        self.taken.append(choice)
        self.labels.append(_label(options[choice]))
        return choice

    def draw_finite(self, values: list, probs: list):
        """A draw of finite support decided at once: the value taken, its probability multiplied in. A path
        whose probability falls below :data:`PRUNE` is not followed further (:class:`Pruned`): a loop of draws
        (a sampler that retries) ends there, its mass left out like a window's."""
        keep = [(v, p) for v, p in zip(values, probs) if p > 0]
        i = self.decide([v for v, _ in keep])
        value, p = keep[i]
        self.finite_prob *= p
        if self.finite_prob < PRUNE:
            raise Pruned(self.finite_prob, call_site())
        return value

    def new_atom(self, kind: str, param: float) -> "Affine":
        atom = Atom(len(self.atoms), kind, float(param), call_site())
        self.atoms.append(atom)
        return Affine(0, {atom.index: 1})


def _const(x):
    """``x`` as an exact constant when it is a number, else ``None``."""
    if isinstance(x, bool):
        return int(x)
    if isinstance(x, (int, float, Fraction)):
        return x
    try:
        import numpy as np

        if isinstance(x, np.generic) and np.issubdtype(type(x), np.number):
            return x.item()
        if isinstance(x, np.bool_):
            return int(x)
    except ImportError:  # pragma: no cover
        pass
    return None


class Affine:
    """``const + sum coef[i] * Z_i`` over the path's atoms; arithmetic stays affine, everything else decides."""

    __slots__ = ("const", "coef")

    def __init__(self, const, coef: dict):
        self.const, self.coef = const, {k: v for k, v in coef.items() if v != 0}

    # -- affine arithmetic --------------------------------------------------------------------------------
    def _combine(self, other, sign):
        if isinstance(other, Affine):
            coef = dict(self.coef)
            for k, v in other.coef.items():
                coef[k] = coef.get(k, 0) + sign * v
            return _maybe(self.const + sign * other.const, coef)
        c = _const(other)
        if c is None:
            return NotImplemented
        return Affine(self.const + sign * c, self.coef)

    def __add__(self, other):
        return self._combine(other, 1)

    __radd__ = __add__

    def __sub__(self, other):
        return self._combine(other, -1)

    def __rsub__(self, other):
        res = self._combine(other, -1)
        return NotImplemented if res is NotImplemented else -res

    def __neg__(self):
        return Affine(-self.const, {k: -v for k, v in self.coef.items()})

    def __pos__(self):
        return self

    def __mul__(self, other):
        if isinstance(other, Affine):
            other = other.concrete()
        c = _const(other)
        if c is None:
            return NotImplemented
        return _maybe(self.const * c, {k: v * c for k, v in self.coef.items()})

    __rmul__ = __mul__

    def __truediv__(self, other):
        if isinstance(other, Affine):
            other = other.concrete()
        c = _const(other)
        if c is None:
            return NotImplemented
        if c == 0:
            raise ZeroDivisionError("division by zero")
        inv = Fraction(1, c) if isinstance(c, int) else 1.0 / c
        return _maybe(self.const * inv, {k: v * inv for k, v in self.coef.items()})

    def __rtruediv__(self, other):
        return other / self.concrete()

    # -- decisions ----------------------------------------------------------------------------------------
    def _compare(self, other, op: str):
        """Decide ``self op other`` (``op`` one of ``>=``, ``>``, ``==``, ``!=``) and record the constraint."""
        diff = self - other
        if diff is NotImplemented:
            return NotImplemented
        if not isinstance(diff, Affine):
            return sign_of(op)(diff, 0)
        path = active_path()
        truth = path.decide([True, False]) == 0
        if truth:
            path.constraints.append(Constraint(diff, op))
        elif op in ("==", "!="):
            path.constraints.append(Constraint(diff, "!=" if op == "==" else "=="))
        else:  # not (diff >= 0) is -diff > 0; not (diff > 0) is -diff >= 0
            path.constraints.append(Constraint(-diff, ">" if op == ">=" else ">="))
        return truth

    def __ge__(self, other):
        return self._compare(other, ">=")

    def __gt__(self, other):
        return self._compare(other, ">")

    def __le__(self, other):
        return (-self)._compare(-other if isinstance(other, Affine) else _neg(other), ">=")

    def __lt__(self, other):
        return (-self)._compare(-other if isinstance(other, Affine) else _neg(other), ">")

    def __eq__(self, other):
        if _const(other) is None and not isinstance(other, Affine):
            return NotImplemented
        return self._compare(other, "==")

    def __ne__(self, other):
        if _const(other) is None and not isinstance(other, Affine):
            return NotImplemented
        return self._compare(other, "!=")

    def __bool__(self):
        return self._compare(0, "!=")

    def __abs__(self):
        return self if self >= 0 else -self

    def concrete(self):
        """Decide this form's value (module docstring): an ``int`` or ``float`` the code goes on with."""
        from audit.engine.exact_code.laws import form_values

        path = active_path()
        values = form_values(self, path.atoms, path.windows)
        v = values[path.decide(values)]
        path.constraints.append(Constraint(self - v, "=="))
        path.concretised = path.concretised or call_site()
        return v

    def __int__(self):
        return int(self.concrete())

    def __index__(self):
        v = self.concrete()
        if not float(v).is_integer():
            raise TypeError("a non-integer noisy value used as an index")
        return int(v)

    def __float__(self):
        return float(self.concrete())

    def __round__(self, ndigits=None):
        return round(self.concrete(), ndigits)

    def __hash__(self):
        return hash(self.concrete())

    def __floordiv__(self, other):
        return self.concrete() // (other.concrete() if isinstance(other, Affine) else other)

    def __rfloordiv__(self, other):
        return other // self.concrete()

    def __mod__(self, other):
        return self.concrete() % (other.concrete() if isinstance(other, Affine) else other)

    def __pow__(self, other):
        return self.concrete() ** (other.concrete() if isinstance(other, Affine) else other)

    def __rpow__(self, other):
        return other ** self.concrete()

    # NumPy calls these methods on the elements of an object array (``np.exp(arr)``, ``np.sqrt(arr)``)
    def exp(self):
        return math.exp(self.concrete())

    def log(self):
        return math.log(self.concrete())

    def sqrt(self):
        return math.sqrt(self.concrete())

    def rint(self):
        return float(round(self.concrete()))

    def floor(self):
        return float(math.floor(self.concrete()))

    def ceil(self):
        return float(math.ceil(self.concrete()))

    def conjugate(self):
        return self

    def __str__(self):  # the code prints or formats the value: it needs the number
        return str(self.concrete())

    def __format__(self, spec):
        return format(self.concrete(), spec)

    __repr__ = __str__

    def describe(self) -> str:
        """The form itself, for the auditor's own messages (``repr`` is the code's, and decides the value)."""
        terms = " ".join(f"{'+' if v >= 0 else '-'} {abs(v)}*Z{k}" for k, v in sorted(self.coef.items()))
        return f"Affine({self.const} {terms})"


def _label(x):
    """A hashable, exact label of a decided option (arrays as tuples)."""
    try:
        import numpy as np

        if isinstance(x, np.ndarray):
            return ("array", x.shape, tuple(x.ravel().tolist()))
        if isinstance(x, np.generic):
            return x.item()
    except ImportError:  # pragma: no cover
        pass
    return x


#: NumPy scalars carry ``__array__`` but are constants
try:
    import numpy as _np

    _SCALARS = (_np.generic,)
except ImportError:  # pragma: no cover
    _SCALARS = ()


def _neg(x):
    c = _const(x)
    return NotImplemented if c is None else -c


def _maybe(const, coef):
    """An :class:`Affine` unless no atom is left (then the constant itself)."""
    coef = {k: v for k, v in coef.items() if v != 0}
    if not coef:
        return const
    return Affine(const, coef)


class Uniform:
    """A uniform draw (``random()``, ``uniform(low, high)``) seen through an affine map: the value
    ``low + (high - low) * U`` of a ``U`` uniform on ``[0, 1)`` that the path numbers ``index``.

    Arithmetic with public constants keeps it a :class:`Uniform` of the same draw (``low + u * (high - low)``, a
    threshold drawn from public bounds), and a comparison with a constant cuts ``U``'s interval: the path takes
    one side with the exact length of that side as its probability, and a cut outside the interval decides
    nothing (the other side has probability 0). The value itself may be *released* (a fitted model keeping its
    random thresholds): the law of the release is then taken given the draw (:mod:`audit.engine.exact_code.
    explore`, cells). Any other use (a sum of two draws, a comparison with a noisy value, ``float()``) raises
    :class:`Undecided`, which names the call site."""

    __slots__ = ("index", "site", "low", "high")

    def __init__(self, index: int, site: str, low: float = 0.0, high: float = 1.0):
        self.index, self.site, self.low, self.high = index, site, float(low), float(high)

    def _interval(self):
        return active_path().uniform_intervals.setdefault(self.index, [0.0, 1.0])

    def _map(self, scale, shift):
        """``scale * self + shift`` for public constants: the same draw, another affine map."""
        if isinstance(scale, (list, tuple)) or hasattr(scale, "__array__") and not isinstance(scale, _SCALARS) \
                or isinstance(shift, (list, tuple)) or hasattr(shift, "__array__") and not isinstance(shift, _SCALARS):
            return NotImplemented  # NumPy applies the operation element by element
        a, b = _const(scale), _const(shift)
        if a is None or b is None:
            return self._refuse()
        a, b = float(a), float(b)
        if a == 0.0:
            return b
        return Uniform(self.index, self.site, a * self.low + b, a * self.high + b)

    def __add__(self, c):
        return self._map(1.0, c)

    __radd__ = __add__

    def __sub__(self, c):
        return self._map(1.0, _neg(c) if _const(c) is not None else c)

    def __rsub__(self, c):
        return self._map(-1.0, c)

    def __mul__(self, c):
        return self._map(c, 0.0)

    __rmul__ = __mul__

    def __truediv__(self, c):
        k = _const(c)
        if k is None or k == 0:
            return self._map(c, 0.0) if k is None else self._refuse()
        return self._map(1.0 / float(k), 0.0)

    def __neg__(self):
        return self._map(-1.0, 0.0)

    def __pos__(self):
        return self

    def _split(self, c, below_is_true: bool):
        """Decide ``value < c`` (``below_is_true``) or ``value > c``: a cut of ``U``'s interval."""
        if isinstance(c, (list, tuple)) or hasattr(c, "__array__") and not isinstance(c, _SCALARS):
            return NotImplemented  # NumPy compares element by element
        c = _const(c)
        if c is None:
            raise Undecided("a uniform draw compared with a noisy or non-numeric value", self.site,
                            "compare uniform draws only with public constants")
        width0 = self.high - self.low
        if width0 == 0.0:
            return (self.low < c) if below_is_true else (self.low > c)
        lo, hi = self._interval()
        u_cut = (float(c) - self.low) / width0
        # value < c is U < u_cut when the map increases, U > u_cut when it decreases
        u_below_means_value_below = width0 > 0
        cut = min(max(u_cut, lo), hi)
        if cut <= lo or cut >= hi:  # one side of the cut has probability 0: nothing to decide
            u_below = cut >= hi
        else:
            path = active_path()
            u_below = path.decide([True, False]) == 0
            path.uniform_decisions.append(len(path.labels) - 1)
            path.finite_prob *= (cut - lo) / (hi - lo) if u_below else (hi - cut) / (hi - lo)
            if 0 < path.finite_prob < PRUNE:
                raise Pruned(path.finite_prob, self.site)
            path.uniform_intervals[self.index] = [lo, cut] if u_below else [cut, hi]
        value_below = u_below == u_below_means_value_below
        return value_below if below_is_true else not value_below

    def __lt__(self, c):
        return self._split(c, True)

    __le__ = __lt__  # P(U == c) = 0: < and <= have the same law

    def __gt__(self, c):
        return self._split(c, False)

    __ge__ = __gt__

    def _refuse(self, *args, **kw):
        raise Undecided("a uniform draw used as a number (not only shifted, scaled or compared with a constant)",
                        self.site, "draw a Bernoulli (rng.random() < p with a public p) or a discrete law instead")

    __float__ = __int__ = __index__ = __hash__ = __bool__ = __eq__ = __ne__ = _refuse

    def describe(self) -> str:
        return f"Uniform#{self.index}({self.low:g}, {self.high:g})"

    def __repr__(self):
        return f"Uniform#{self.index}"


def sign_of(op: str):
    return {">=": operator.ge, ">": operator.gt, "==": operator.eq, "!=": operator.ne}[op]



if sys.version_info < (3, 9):  # pragma: no cover
    raise ImportError("the exact mode needs Python 3.9 or newer")
