"""The laws of noise atoms and of a path's constraints: windows, probabilities, and the loss of a shift.

An atom's law (:class:`audit.engine.exact_code.symbolic.Atom`) is known in closed form:

* ``geometric(p)``: ``P(k) = p (1 - p)^(k - 1)`` on ``k >= 1`` (NumPy's convention);
* ``poisson(lam)``: ``P(k) = e^-lam lam^k / k!`` on ``k >= 0``;
* ``two_sided_geometric(rate)``: ``P(k) = (1 - a)/(1 + a) a^|k|`` on all integers, ``a = e^-rate``;
* ``binomial(n, p)`` (kept symbolic when the code does arithmetic on it): its pmf on ``0..n``.

**Windows.** Each atom is enumerated on a *window* of its support holding all but at most :data:`TAIL` of its
mass. A path's probability (:func:`path_probability`) sums the atoms' joint pmf over the window points that meet
its constraints: a *lower* bound, short of the truth by at most the windows' left-out mass. The explorer adds the
mass no followed path holds to every release's upper end, so every interval it reports holds the true
probability.

**Variables.** Atoms that enter every form of a path in the same proportion (``G1 - G2`` of two-sided geometric
noise written as two NumPy draws) are merged into one *variable*, their sum, whose law is their convolution: the
constraints then act on one axis instead of two. The constraints' indicator tables and the variables' pmfs are
contracted by :func:`numpy.einsum`, which chooses the elimination order.

**The loss of a shift** (:func:`shift_loss`): for a variable ``W`` and an integer ``s``,
``L(s) = sup_w ln P(W = w) / P(W = w + s)`` over the support of ``W``. Every atom law above is log-concave on the
integers, and so is a sum of independent log-concave variables with coefficients ``+-1``; for a log-concave
pmf the ratio ``P(w) / P(w + s)`` (``s > 0``) is non-decreasing in ``w``, so its supremum is its limit at the top of
the support: infinite when the support is bounded above (a shift leaves it), else ``s ln(1 / rho)`` with ``rho``
the limit of ``P(w + 1) / P(w)``. For a convolution ``rho`` is the largest limit of its terms (the heavier tail
dominates), ``1 - p`` for a geometric term, ``a`` for a two-sided geometric one, and ``0`` for a Poisson or
finite one (an infinite loss). Shifts below mirror this with the bottom of the support.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from scipy import stats

from audit.engine.exact_code.undecided import Undecided

__all__ = ["TAIL", "AtomWindow", "atom_window", "form_values", "Variable", "merge", "holds", "path_probability",
           "shift_loss", "MAX_TABLE"]

#: mass of one atom's law left outside its window
TAIL = 1e-13
#: the largest indicator table one constraint may build (entries)
MAX_TABLE = 4_000_000
#: relative tolerance of an equality between a form and a decided value (floating constants)
EQ_TOL = 1e-9


@dataclass(frozen=True)
class AtomWindow:
    """An atom's window: ``values`` (integers), their probabilities ``pmf``, the mass ``tail`` left out, and the
    limits ``rho_up`` / ``rho_down`` of ``P(k + 1) / P(k)`` towards each infinite end (``None`` for a bounded
    end)."""

    values: np.ndarray
    pmf: np.ndarray
    tail: float
    rho_up: float | None
    rho_down: float | None


def atom_window(kind: str, param) -> AtomWindow:
    """The window of an atom's law (module docstring)."""
    if kind == "geometric":
        p = float(param)
        if not 0.0 < p <= 1.0:
            raise ValueError(f"geometric p must lie in (0, 1], got {p}")
        q = 1.0 - p
        k = 1 if q == 0 else max(1, math.ceil(math.log(TAIL) / math.log(q)))
        values = np.arange(1, k + 1)
        return AtomWindow(values, p * q ** (values - 1.0), q ** k, q, None)
    if kind == "two_sided_geometric":
        a = math.exp(-float(param))
        k = max(1, math.ceil(math.log(TAIL * (1 + a) / 2) / math.log(a)) if a > 0 else 0)
        values = np.arange(-k, k + 1)
        return AtomWindow(values, (1 - a) / (1 + a) * a ** np.abs(values), 2 * a ** (k + 1) / (1 + a), a, a)
    if kind == "poisson":
        lam = float(param)
        hi = int(stats.poisson.isf(TAIL, lam)) + 1
        values = np.arange(0, hi + 1)
        return AtomWindow(values, stats.poisson.pmf(values, lam), float(stats.poisson.sf(hi, lam)), 0.0, None)
    if kind.startswith("binomial"):
        n, p = param
        values = np.arange(0, int(n) + 1)
        return AtomWindow(values, stats.binom.pmf(values, int(n), float(p)), 0.0, None, None)
    raise ValueError(f"no law for atom kind {kind!r}")


def _window(kind, param, windows: dict) -> AtomWindow:
    key = (kind, param)
    if key not in windows:
        windows[key] = atom_window(kind, param)
    return windows[key]


def _plain(x):
    """An exact coefficient as an ``int`` when it is one (a ``Fraction`` of denominator 1)."""
    if isinstance(x, Fraction) and x.denominator == 1:
        return int(x)
    return x


def form_values(form, atoms: list, windows: dict) -> list:
    """The values ``form`` takes on its atoms' windows, most probable first (the order the explorer follows)."""
    key = ("values",) + tuple((atoms[k].kind, atoms[k].param, c) for k, c in sorted(form.coef.items()))
    if key not in windows:
        values, probs, _ = _convolve(key[1:], windows, limit=MAX_TABLE)
        windows[key] = [float(values[i]) for i in np.argsort(-probs, kind="stable")]
    values = windows[key]
    const = form.const
    if isinstance(const, int) and all(isinstance(c, int) for c in form.coef.values()):
        return [const + int(round(v)) for v in values]
    return [float(const + v) for v in values]


def _convolve(terms, windows: dict, limit: int | None = None):
    """The law of ``sum c Z`` for independent atoms ``terms = ((kind, param, c), ...)`` on their windows: its
    values (sorted), their windowed probabilities, and the mass the windows leave out (at most the sum of the
    atoms' tails). More than ``limit`` values: :class:`Undecided`."""
    values, probs, tail = np.zeros(1), np.ones(1), 0.0
    for kind, param, c in terms:
        w = _window(kind, param, windows)
        values = np.add.outer(values, float(c) * w.values).ravel()
        probs = np.multiply.outer(probs, w.pmf).ravel()
        uniq, inv = np.unique(np.round(values, 9), return_inverse=True)
        probs = np.bincount(inv.ravel(), weights=probs, minlength=uniq.size)
        values, tail = uniq, tail + w.tail
        if limit is not None and values.size > limit:
            raise Undecided("a noisy value takes too many values to decide")
    return values, probs, tail


@dataclass
class Variable:
    """A sum ``sum r_a Z_a`` of atoms that every form of a path holds in the same proportion."""

    values: np.ndarray
    pmf: np.ndarray
    tail: float
    laws: tuple  # ((kind, param, r_a), ...)
    rho_up: float | None
    rho_down: float | None


def _signature(atom: int, forms: list):
    coefs = [f.coef.get(atom, 0) for f in forms]
    first = next((c for c in coefs if c != 0), None)
    if first is None:
        return None, None
    norm = tuple(Fraction(c) / Fraction(first) if not isinstance(c, float) and not isinstance(first, float)
                 else round(float(c) / float(first), 12) for c in coefs)
    return norm, first


def merge(forms: list, atoms: list, windows: dict):
    """The path's variables and every form rewritten over them: ``(variables, rows)``, ``rows[i]`` the
    ``{variable index: coefficient}`` of ``forms[i]`` (module docstring, "Variables")."""
    groups: dict = {}
    for k in sorted({k for f in forms for k in f.coef}):
        norm, first = _signature(k, forms)
        groups.setdefault(norm, []).append((k, first))
    variables, rows = [], [dict() for _ in forms]
    for norm, members in groups.items():
        base = members[0][1]
        laws = tuple((atoms[k].kind, atoms[k].param,
                      Fraction(first) / Fraction(base) if not isinstance(first, float) and not isinstance(base, float)
                      else float(first) / float(base)) for k, first in members)
        values, probs, tail = _convolve(laws, windows)
        ends = [(w.rho_up, w.rho_down) if r > 0 else (w.rho_down, w.rho_up)
                for w, r in ((_window(kind, param, windows), r) for kind, param, r in laws)]
        rho_up = max((u for u, _ in ends if u is not None), default=None)
        rho_down = max((d for _, d in ends if d is not None), default=None)
        j = len(variables)
        variables.append(Variable(values, probs, tail, laws, rho_up, rho_down))
        for i, n in enumerate(norm):
            if n != 0:
                rows[i][j] = _plain(n * base)
    return variables, rows


def holds(values, op: str, tol: float):
    """``values op 0`` elementwise, within ``tol`` (``op`` one of ``>=``, ``>``, ``==``, ``!=``): the truth of a
    path's decision on a noisy value at each point of its windows."""
    if op == ">=":
        return values >= -tol
    if op == ">":
        return values > tol
    if op == "==":
        return np.abs(values) <= tol
    return np.abs(values) > tol


def _indicator(row: dict, const, op: str, variables: list):
    """The table ``1[const + sum row[v] w_v  op  0]`` over the row's variables (axes in the order of ``row``)."""
    axes = sorted(row)
    size = math.prod(variables[v].values.size for v in axes)
    if size > MAX_TABLE:
        raise Undecided("a decision on a noisy value involves too many noise values at once (the table exceeds "
                        f"{MAX_TABLE:,} entries)")
    total = np.full((1,) * len(axes), float(const))
    for d, v in enumerate(axes):
        shape = [1] * len(axes)
        shape[d] = variables[v].values.size
        total = total + float(row[v]) * variables[v].values.reshape(shape)
    scale = 1.0 + abs(float(const)) + sum(abs(float(c)) * float(np.max(np.abs(variables[v].values)))
                                          for v, c in row.items())
    return axes, holds(total, op, EQ_TOL * scale).astype(float)


_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def path_probability(constraints: list, variables: list, rows: list, keep: tuple = ()):
    """The windowed probability that every constraint holds (a lower bound, module docstring): a float, or the
    table over the variables ``keep`` (their joint law on the path, within the windows)."""
    tables = []
    for c, row in zip(constraints, rows):
        if row:  # a constraint with no variable left was true when the path decided it
            tables.append(_indicator(row, c.form.const, c.op, variables))
    # variables joined by a constraint are contracted together; the others factorise
    parent = list(range(len(variables)))

    def root(j):
        while parent[j] != j:
            parent[j] = parent[parent[j]]
            j = parent[j]
        return j

    for axes, _ in tables:
        for a in axes[1:]:
            parent[root(a)] = root(axes[0])
    groups: dict = {}
    for j in range(len(variables)):
        groups.setdefault(root(j), []).append(j)
    total, kept = 1.0, {}
    for members in groups.values():
        mine = [(axes, t) for axes, t in tables if root(axes[0]) == root(members[0])]
        out = tuple(j for j in members if j in keep)
        if len(members) == 1 and not out:
            weight = variables[members[0]].pmf
            for _, t in mine:
                weight = weight * t
            total *= float(weight.sum())
            continue
        if len(members) > len(_LETTERS):
                raise Undecided(f"a decision joins more than {len(_LETTERS)} noise variables")
        letter = {j: _LETTERS[i] for i, j in enumerate(members)}
        operands, subs = [], []
        for j in members:
            operands.append(variables[j].pmf)
            subs.append(letter[j])
        for axes, t in mine:
            operands.append(t)
            subs.append("".join(letter[a] for a in axes))
        res = np.einsum(",".join(subs) + "->" + "".join(letter[j] for j in out), *operands,
                        optimize="greedy" if len(operands) > 3 else False)
        if out:
            kept[out] = res
        else:
            total *= float(res)
    if not keep:
        return total
    # the joint table over ``keep`` is the outer product of the groups' tables, in the order of ``keep``
    table, axes = np.asarray(total), []
    for out, res in kept.items():
        table = np.multiply.outer(table, res)
        axes.extend(out)
    return np.transpose(table, [axes.index(j) for j in keep]) if axes else table


def shift_loss(variable: Variable, s) -> float:
    """``sup_w ln P(W = w) / P(W = w + s)`` (module docstring, "The loss of a shift")."""
    if s == 0:
        return 0.0
    lattice = all(abs(float(r)) == 1.0 for _, _, r in variable.laws) and \
        all(kind in ("geometric", "poisson", "two_sided_geometric") or kind.startswith("binomial")
            for kind, _, _ in variable.laws)
    if not lattice or not float(s).is_integer():
        return math.inf
    rho = variable.rho_up if s > 0 else variable.rho_down
    if rho is None or rho <= 0.0:
        return math.inf
    return abs(float(s)) * -math.log(rho)
