"""The exact loss of a neighbouring pair as an interval, from the two inputs' explored paths.

**Lower end.** The interval laws of the two releases (:meth:`~audit.engine.exact_code.explore.Explored.law`)
give ``max_r ln(lower_0(r) / upper_1(r))`` (and the reverse), attained by a release: every probability lies in
its interval, so this is below the true loss (:func:`audit.engine.exact_law.laws.pair_interval`). When each
input has one path and its release keeps independent noisy values (noisy counts of any number of classes), the
law is a product and the factors' lower ends add (:func:`_product_lower`), without enumerating the joint law.

**Upper end.** Two arguments, whichever applies:

* *Complete law.* When no path decided a form's value and no release keeps a form, each path covers its whole
  region of the noise (its constraints were decided symbolically, tails included) and has a single release, so
  the paths' releases are all the releases the code can make; each one's probability lies in its interval,
  whose upper end adds the mass the windows left out. The law's own upper end then bounds the loss. This holds
  for every code of finite draws, and for decisions on noisy values such as report-noisy-max.
* *Coupling.* Otherwise the paths of ``D`` and ``D'`` are paired by their decisions. A pair must have the same
  release skeleton, the same atoms, and the same forms up to their constants; then one shift ``s`` of the path's
  variables, solving ``row_f . s = c_f(D) - c_f(D')`` for every form ``f`` (its constraints and the released
  forms), maps each outcome ``w`` of ``D``'s path to the outcome ``w + s`` of ``D'``'s that meets the same
  constraints and gives the same release. Hence, for every release ``r``,
  ``P(r | D) <= e^h P(r | D')`` with ``h`` the finite decisions' log-ratio plus ``sum_v L_v(s_v)``
  (:func:`~audit.engine.exact_code.laws.shift_loss`), and the upper end is the worst ``h`` over paths and both
  directions. When the decisions do not pair the paths (randomized response keeps a bit on one input where it
  flips it on the other, for the same release), the paths are paired by the concrete part of their release
  instead (:func:`_release_coupling`). A pair that cannot be matched either way leaves the upper end infinite,
  and the pair undecided.

When the code converted a noisy value to a number (a *decided value*), the paths beyond the windows were not
run: the coupling then holds for all but the missing mass ``delta`` (and the paths near the windows' edges
whose partner was not followed), which the result states. The mode then proves ``(hi, delta)``, never
``hi`` alone.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from audit.engine.exact_code.explore import Explored
from audit.engine.exact_code.laws import holds, shift_loss
from audit.engine.exact_law.laws import log_ratio, pair_interval

__all__ = ["PairExact", "pair_loss", "ROUNDING_SLACK"]

#: a loss above the claim by at most this relative amount is the float rounding of the noise's rate
ROUNDING_SLACK = 1e-9


@dataclass
class PairExact:
    """The exact loss of one pair: ``[lower, upper]``, the release attaining the lower end, the argument that
    gave the upper end, the mass ``delta`` it does not cover, and why it failed (``why``)."""

    lower: float
    upper: float
    release: object
    argument: str  # "complete law", "coupling" or "none"
    delta: float = 0.0
    why: str = ""


def pair_loss(ex0: Explored, ex1: Explored) -> PairExact:
    """The exact loss of the pair whose inputs gave ``ex0`` and ``ex1`` (module docstring)."""
    shared = _shared_cuts(ex0, ex1)
    if shared is None:
        return PairExact(0.0, math.inf, None, "none", 0.0, "the release keeps continuous draws that are not the "
                         "same draws on the two inputs (drawn in another order or from other bounds)")
    apart = _apart(ex0, ex1)
    if apart is not None:
        return PairExact(math.inf, math.inf, apart, "complete law")
    product = _product_lower(ex0, ex1)
    if product is not None:
        hi, delta, why = _coupling(ex0, ex1)
        lo, release = product
        return PairExact(lo, max(hi, lo), release, "coupling" if hi < math.inf else "none", delta, why)
    law0, law1 = ex0.law(shared), ex1.law(shared)
    for a, b, ex in ((law0, law1, ex0), (law1, law0, ex1)):  # a release only the other input showed: [0, missing]
        for r in b.upper:
            if r not in a.upper:
                a.lower[r], a.upper[r] = 0.0, ex.missing * (1 + 1e-12)
    lo, hi_law, release = pair_interval(law0, law1)
    lo_release = _lower_release(law0, law1) or release
    if _complete(ex0) and _complete(ex1):
        return PairExact(lo, hi_law, lo_release, "complete law")
    hi, delta, why = _coupling(ex0, ex1)
    if hi == math.inf:
        return PairExact(lo, math.inf, lo_release, "none", delta, why)
    return PairExact(lo, max(hi, lo), lo_release, "coupling", delta, why)


def _apart(ex0: Explored, ex1: Explored):
    """A release skeleton one input makes with positive probability and the other never can (no path of the
    other can give it, :func:`_may_meet`, and the other's paths are all its runs: none decided a value or was
    left out, so every outcome of its noise, tails included, lies on a followed path): the loss is infinite,
    whatever the kept noisy values. ``None`` when there is none."""
    for mine, theirs in ((ex0, ex1), (ex1, ex0)):
        if theirs.concretised:
            continue
        for p in mine.paths:
            if p.prob > 0.0 and not any(_may_meet(p.skeleton, q.skeleton) for q in theirs.paths if q.prob > 0.0):
                return p.skeleton
    return None


def _shared_cuts(ex0: Explored, ex1: Explored):
    """The cells' ends shared by the two inputs' released uniform draws, or ``None`` when the draws kept are not
    the same on both (:mod:`audit.engine.exact_code.explore`): their law given the draws is then not comparable
    point by point."""
    def maps(ex):
        return {x for p in ex.paths for x in _uniform_nodes(p.skeleton)}

    if maps(ex0) != maps(ex1):
        return None
    cuts = ex0.cuts()
    for k, ends in ex1.cuts().items():
        cuts.setdefault(k, set()).update(ends)
    return cuts


def _uniform_nodes(skeleton, out=None) -> set:
    out = set() if out is None else out
    if isinstance(skeleton, tuple):
        if len(skeleton) == 4 and skeleton[0] == "uniform" and isinstance(skeleton[1], int):
            out.add(skeleton)
        else:
            for x in skeleton:
                _uniform_nodes(x, out)
    return out


def _product_lower(ex0: Explored, ex1: Explored):
    """The lower end when every path's law is a product (:func:`_factors`), and the paths of the two inputs pair
    by their decisions with equal skeletons (else by their releases, one path per release on each side), no two of
    which can give the same release (:func:`_may_meet`): a
    release then comes from one path, its probability is the path's finite part times the mass of the decisions on noise variables the
    release does not keep, times each kept value's own mass, and ``sup_r ln P(r)/Q(r)`` over a path's releases
    is the sum of the factors' suprema (each factor's bounds hold its true mass). ``None`` when the case does not
    apply (the joint law is used)."""
    if len(ex0.paths) > 64 or len(ex1.paths) > 64:
        return None
    by0, by1 = {p.labels: p for p in ex0.paths}, {p.labels: p for p in ex1.paths}
    if set(by0) == set(by1) and all(by0[k].skeleton == by1[k].skeleton for k in by0):
        matched = [(by0[k], by1[k]) for k in by0]
    else:  # paired by release instead (randomized response: the same bits from other decisions); two paths of
        # one release on a side fail the _may_meet check below
        matched = _release_pairs(ex0, ex1)
        if matched is None:
            return None
    factors = {}
    for k, (p0, p1) in enumerate(matched):
        factors[k] = (_factors(p0), _factors(p1))
        if None in factors[k]:
            return None
    skeletons = [p.skeleton for p in ex0.paths]
    if any(_may_meet(a, b) for i, a in enumerate(skeletons) for b in skeletons[i + 1:]) or \
            not any(p.leaves for p in ex0.paths):
        return None
    best, arg = -math.inf, None
    for f0, f1 in factors.values():
        for a, b in ((f0, f1), (f1, f0)):
            if a[0][0] <= 0:  # the path cannot happen on this side
                continue
            total = log_ratio(a[0][0], b[0][1])  # the fixed part: lower on one side over upper on the other
            values = []
            for (xa, la, _, _), (xb, _, ub, tail_b) in zip(a[1], b[1]):
                # a kept value's mass on the path is a sub-probability (the path's decisions on it cut it), so its
                # supremum may be below 0: it starts at -inf, never at 0
                top, x_best = -math.inf, None
                if xa.size:
                    at = np.minimum(np.searchsorted(xb, xa), max(xb.size - 1, 0))
                    den = np.where(xb[at] == xa, ub[at], tail_b) if xb.size else np.full(xa.size, tail_b)
                    with np.errstate(divide="ignore", invalid="ignore"):
                        v = np.where(la <= 0, -math.inf, np.where(den <= 0, math.inf, np.log(la) - np.log(den)))
                    j = int(np.argmax(v))
                    top, x_best = float(v[j]), float(xa[j])
                total += top
                values.append("any" if x_best is None else x_best)
            if total > best:
                best, arg = total, tuple(values)
    return max(best, 0.0), (("values of the kept forms", arg) if arg else None)


def _may_meet(a, b) -> bool:
    """Whether two skeletons can give the same release: equal, except where one keeps a form and the other a
    number (a kept form may take that number) or a form too."""
    leaf_a = isinstance(a, tuple) and len(a) == 2 and a[0] == "leaf"
    leaf_b = isinstance(b, tuple) and len(b) == 2 and b[0] == "leaf"
    if leaf_a or leaf_b:
        number = (lambda x: isinstance(x, int) and not isinstance(x, bool) or
                  isinstance(x, tuple) and len(x) == 2 and x[0] in ("float", "leaf"))
        return number(a) and number(b)
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(_may_meet(x, y) for x, y in zip(a, b))
    return a == b


def _factors(p):
    """A path's law as a product, or ``None``: every decision on noise concerns one variable, every kept form is
    one variable of its own. Returns ``((fixed_lower, fixed_upper), [(values, lower, upper, tail), ...])``: the
    finite part times the decided variables' masses (windowed below, plus their tails above), and for each kept
    form its values on the path (sorted) with their masses' bounds, and ``tail`` the bound of a value not in the
    window. Computed once per path (an input's paths serve every pair it is in)."""
    cached = p.__dict__.get("_product")
    if cached is None:
        cached = p.__dict__["_product"] = (_product_of(p),)
    return cached[0]


def _product_of(p):
    n = len(p.constraints)
    rows, leaf_rows = p.rows[:n], p.rows[n:]
    if any(len(r) != 1 for r in rows + leaf_rows):
        return None
    kept = [next(iter(r)) for r in leaf_rows]
    if len(set(kept)) != len(kept):
        return None
    masks = {}
    for c, row in zip(p.constraints, rows):
        (v, coef), = row.items()
        values = float(c.form.const) + float(coef) * p.variables[v].values.astype(float)
        ok = holds(values, c.op, 1e-9 * (1.0 + np.max(np.abs(values))))
        masks[v] = masks.get(v, True) & ok
    lo = hi = p.finite_prob
    for v, var in enumerate(p.variables):
        if v in kept:
            continue
        mass = float(np.sum(var.pmf[masks[v]])) if v in masks else float(np.sum(var.pmf))
        lo, hi = lo * mass * (1 - 1e-12), hi * min(1.0, (mass + var.tail) * (1 + 1e-12))
    leaves = []
    for leaf, v in zip(p.leaves, kept):
        var, coef = p.variables[v], leaf_rows[kept.index(v)][v]
        mask = masks.get(v, np.ones(var.values.size, dtype=bool))
        # one atom: a value in its window has its exact mass, and the tail lies on other values; a sum of atoms
        # (a convolution on windows) may still gain mass from the tails at any value
        spill = 0.0 if len(var.laws) == 1 else var.tail
        x = np.round(float(leaf.const) + float(coef) * var.values.astype(float), 9)[mask]
        xs, inv = np.unique(x, return_inverse=True)
        mass = np.bincount(inv.ravel(), weights=np.asarray(var.pmf, dtype=float)[mask], minlength=xs.size)
        leaves.append((xs, mass * (1 - 1e-12), (mass + spill) * (1 + 1e-12), var.tail * (1 + 1e-12)))
    return (lo, hi), leaves


def _complete(ex: Explored) -> bool:
    """Whether the followed paths give every release the code can make: no value was decided (every path covers
    its whole region of the noise, tails included) and no release keeps a form (so a path has one release)."""
    return not ex.concretised and not any(p.leaves for p in ex.paths)


def _lower_release(law0, law1):
    """The release attaining the lower end; among releases within 1e-9 of it, the most probable one."""
    scored = []
    for r in set(law0.upper) | set(law1.upper):
        l0, u0 = law0.lower.get(r, 0.0), law0.upper.get(r, 0.0)
        l1, u1 = law1.lower.get(r, 0.0), law1.upper.get(r, 0.0)
        v = max(log_ratio(l0, u1), log_ratio(l1, u0))
        scored.append((v, l0 + l1, repr(r), r))
    if not scored:
        return None
    best = max(v for v, *_ in scored)
    near = [s for s in scored if s[0] == best or (math.isfinite(best) and s[0] >= best - 1e-9 * max(1.0, best))]
    return max(near, key=lambda s: (s[1], s[2]))[3]


def _coupling(ex0: Explored, ex1: Explored):
    """``(upper end, uncovered mass, why it failed)`` of the coupling argument (module docstring): the paths
    paired by their decisions, else by their releases (:func:`_release_coupling`)."""
    hi, left, why = _decision_coupling(ex0, ex1)
    if hi == math.inf:
        alt = _release_coupling(ex0, ex1)
        if alt is not None:
            return alt, 0.0, ""
    return hi, left, why


def _decision_coupling(ex0: Explored, ex1: Explored):
    if any(p.box for p in ex0.paths + ex1.paths):
        return _box_coupling(ex0, ex1)
    by0 = {p.labels: p for p in ex0.paths}
    by1 = {p.labels: p for p in ex1.paths}
    hi, left = 0.0, [ex0.missing, ex1.missing]
    for side, (mine, theirs) in enumerate(((by0, by1), (by1, by0))):
        for labels, p in mine.items():
            if labels in theirs or p.prob <= 0.0:
                continue
            if p.concretised:  # its partner decided a value beyond the other input's windows
                left[side] += p.prob
                continue
            return math.inf, max(left), "the code takes a path on one input that it never takes on the other"
    for labels, p0 in by0.items():
        p1 = by1.get(labels)
        if p1 is None or (p0.prob <= 0.0 and p1.prob <= 0.0):
            continue
        h, why = _path_coupling(p0, p1)
        if h is None:
            return math.inf, max(left), why
        hi = max(hi, h)
    concretised = ex0.concretised or ex1.concretised
    return hi, (max(left) if concretised else 0.0), ""


def _release_coupling(ex0: Explored, ex1: Explored):
    """The coupling with the paths paired by the concrete part of their release instead of by their decisions,
    or ``None`` when it does not apply.

    Randomized response on one input keeps a bit that it flips on the other: the same release comes from
    different decisions. Any one-to-one pairing of the paths that give a release's concrete part ``c`` bounds it:
    ``P(c, noisy values in A | D) = sum_p P_p(A) <= max_p e^(h_p) sum_p P_pi(p)(A) = e^(max h) P(c, A | D')``,
    with ``h_p`` the pair's shift-coupling bound (:func:`_path_coupling`, both directions). So every release's
    paths must be as many on both inputs (paired in the order of their decisions), and no path may have turned a
    noisy value into a number (its partner's values beyond the windows were not run), nor keep a uniform draw in
    its release. Uniform draws decided by comparisons are part of a path's finite probability."""
    if ex0.concretised or ex1.concretised or any(p.intervals for p in ex0.paths + ex1.paths):
        return None
    pairs = _release_pairs(ex0, ex1)
    if pairs is None:
        return None
    hi = 0.0
    for p0, p1 in pairs:
        h, _ = _path_coupling(p0, p1)
        if h is None:
            return None
        hi = max(hi, h)
    return hi


def _release_pairs(ex0: Explored, ex1: Explored):
    """The paths of positive probability of the two inputs paired one to one by the concrete part of their
    release, in the order of their decisions; ``None`` when some release has not as many paths on both sides."""
    groups = ({}, {})
    for side, ex in enumerate((ex0, ex1)):
        for p in sorted(ex.paths, key=lambda q: repr(q.labels)):
            if p.finite_prob > 0.0:
                groups[side].setdefault(p.skeleton, []).append(p)
    if set(groups[0]) != set(groups[1]) or any(len(groups[0][c]) != len(groups[1][c]) for c in groups[0]):
        return None
    return [pair for c, paths0 in groups[0].items() for pair in zip(paths0, groups[1][c])]


def _overlap(a: dict, b: dict) -> float:
    """The probability of the intersection of two boxes of uniform draws (a draw a box does not cut is
    ``[0, 1)``)."""
    vol = 1.0
    for k in set(a) | set(b):
        lo0, hi0 = a.get(k, (0.0, 1.0))
        lo1, hi1 = b.get(k, (0.0, 1.0))
        vol *= max(0.0, min(hi0, hi1) - max(lo0, lo1))
    return vol


def _box_coupling(ex0: Explored, ex1: Explored):
    """The coupling when the code decides on uniform draws: the draws are coupled as they are (the same ``U`` on
    both inputs), so on each box where both inputs' paths are fixed the two paths are compared as matched paths,
    their finite parts taken given the draws (``finite_prob / volume``: a uniform draw's density is 1). Every
    path's box must be covered by paths of the other input with the same decisions on everything else."""
    hi, left = 0.0, [ex0.missing, ex1.missing]
    groups = ({}, {})
    for side, ex in enumerate((ex0, ex1)):
        for p in ex.paths:
            groups[side].setdefault(p.plain_labels, []).append(p)
    for side in (0, 1):
        for plain, paths in groups[side].items():
            partners = groups[1 - side].get(plain, [])
            for p in paths:
                if p.prob <= 0.0 or p.volume <= 0.0:
                    continue
                covered = math.fsum(_overlap(p.box, q.box) for q in partners)
                if covered >= p.volume * (1 - 1e-9):
                    continue
                if p.concretised:
                    left[side] += p.prob * (1 - covered / p.volume)
                    continue
                return math.inf, max(left), "the code takes a path on one input that it never takes on the other"
    for plain, paths0 in groups[0].items():
        for p0 in paths0:
            for p1 in groups[1].get(plain, []):
                if _overlap(p0.box, p1.box) <= 0.0 or (p0.prob <= 0.0 and p1.prob <= 0.0):
                    continue
                fin = _finite_ratio(p0, p1, p0.volume, p1.volume)
                h, why = _path_coupling(p0, p1, fin, boxes=True)
                if h is None:
                    return math.inf, max(left), why
                hi = max(hi, h)
    concretised = ex0.concretised or ex1.concretised
    return hi, (max(left) if concretised else 0.0), ""


def _forms(p):
    return [c.form for c in p.constraints] + list(p.leaves)


def _path_coupling(p0, p1, fin: float | None = None, boxes: bool = False):
    """The worst log-ratio of a pair of matched paths under the shift coupling, or ``(None, why)``; ``fin`` is the
    finite decisions' log-ratio (default: the paths' own), ``boxes`` says the paths were matched on a common box
    of their uniform draws (:func:`_box_coupling`)."""
    if p0.skeleton != p1.skeleton:
        return None, "the release's concrete part differs between the inputs on the same decisions"
    if not boxes and p0.intervals != p1.intervals:  # the coupling keeps a released draw as it is
        return None, "a released uniform draw is cut differently on the two inputs"
    if [(a.kind, a.param) for a in p0.atoms] != [(a.kind, a.param) for a in p1.atoms]:
        sites = sorted({a.site for a, b in zip(p0.atoms, p1.atoms) if (a.kind, a.param) != (b.kind, b.param)})
        return None, "the noise's law depends on the data" + (f" (drawn at {', '.join(sites)})" if sites else "")
    f0, f1 = _forms(p0), _forms(p1)
    if len(f0) != len(f1) or [c.op for c in p0.constraints] != [c.op for c in p1.constraints]:
        return None, "the code's decisions on noisy values differ between the inputs"
    for a, b in zip(f0, f1):
        if a.coef != b.coef:
            return None, "a noisy value mixes the noise differently on the two inputs"
    rows = p0.rows
    nvar = len(p0.variables)
    fin = _finite_ratio(p0, p1) if fin is None else fin
    if nvar == 0:
        return abs(fin), ""
    A = np.zeros((len(rows), nvar))
    b = np.zeros(len(rows))
    for i, (row, a, c) in enumerate(zip(rows, f0, f1)):
        for v, coef in row.items():
            A[i, v] = float(coef)
        b[i] = float(a.const) - float(c.const)
    s, *_ = np.linalg.lstsq(A, b, rcond=None)
    scale = 1.0 + float(np.max(np.abs(b)))
    if np.max(np.abs(A @ s - b), initial=0.0) > 1e-9 * scale:
        return None, "no shift of the noise turns one input's noisy values into the other's (the same noise is " \
                     "used for values that move differently)"
    s = np.where(np.abs(s - np.round(s)) <= 1e-9 * scale, np.round(s), s)
    up = fin + math.fsum(shift_loss(v, s[j]) for j, v in enumerate(p0.variables))
    down = -fin + math.fsum(shift_loss(v, -s[j]) for j, v in enumerate(p0.variables))
    return max(up, down), ""


def _finite_ratio(p0, p1, v0: float = 1.0, v1: float = 1.0) -> float:
    """``ln`` of the finite decisions' probability ratio (``inf`` when one side cannot take the path), each
    divided by its box's volume ``v`` when the paths are compared given their uniform draws."""
    a, b = p0.finite_prob / v0, p1.finite_prob / v1
    if a <= 0.0 and b <= 0.0:
        return 0.0
    if a <= 0.0 or b <= 0.0:
        return math.inf
    return math.log(a / b)
