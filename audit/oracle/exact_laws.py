"""The references ``python -m audit compare CANDIDATE --reference NAME --exact`` tests against, with their laws.

Each entry is a reference learner whose whole ``release()`` has an exact law on small public inputs
(issue 29), given as a :class:`audit.engine.comparison.exact_oracle.CellLaw`, with default parameters and inputs within
the law's reach:

* ``privatree``: :func:`audit.privatree.exact_law.release_law` (PrivaTree, Vos et al. 2023,
  Algorithm 1, strict accounting): every tree is a cell, the truncated tails one more. The oracle's learner
  cases (:mod:`audit.oracle.learner_cases`) at two bins per feature: the noisy histograms of four bins are
  out of the law's reach (6.9e9 states per feature), so the candidate that moves a threshold one bin (a no-op
  with two bins) is left to the two-sample compare;
* ``random-trees``: the random decision forest at depth 0 (Bojarski et al. 2014, Algorithm 2; the
  structure is drawn from public bounds alone): each tree's leaf releases ``theta = n / sum(n)`` of its noisy
  counts (:func:`audit.random_trees.exact_law.leaf_law`: atoms, and the uniform draw of an invalid leaf), the
  trees independent. A cell is the tuple of each tree's atom (those of probability at least
  :data:`ATOM_CELL`, the ends ``(0, 1)`` and ``(1, 0)`` included), every other value in the tree's ``OTHER``:
  a release is a product of its trees' values, so every release of probability at least :data:`ATOM_CELL` has a
  cell of its own (:attr:`ExactReference.floor`). Left in ``OTHER``, the end ``(0, 1)`` of a one-record leaf
  (probability 0.15 at the defaults) hid a candidate that never releases it (issue 57: ``<= 0`` for ``< 0`` in
  the invalid-leaf test, found at p = 2.6e-84 by the two-sample compare and "same" here);
* ``diprime-flip-classifier``: the strict DiPriMeFlip classifier (Consul and Williamson 2021, Algorithm 1 with
  the strict median on public thresholds), one tree of depth 1: the node's (feature, threshold) law with the
  hidden medians summed out, each leaf's clamped geometric counts summed into the atoms ``n / sum(n)``
  (:mod:`audit.diprime.exact_law`). A cell is the node with each leaf's atom of probability at least
  :data:`ATOM_CELL`, or the leaf's ``OTHER``.

Every entry states its floor (every release of at least that probability has a cell of its own: PrivaTree 0,
every tree; the others :data:`ATOM_CELL`) and what its reach leaves out (:attr:`ExactReference.not_exercised`,
printed by ``compare --exact``).

Limits: those of each law (an error names the parameter); deeper random forests release continuous
thresholds, which no finite cell law covers.
"""
from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass
from typing import Callable

import numpy as np

from audit.diprime.cell_law import ATOM_CELL, with_other as _with_other
from audit.engine.comparison.exact_oracle import OTHER, CellLaw
from audit.results.learner_references import BINARY_INPUTS, LEARNERS
from audit.oracle.learner_cases import PRIVATREE_INPUTS, PRIVATREE_PARAMS
from audit.privatree.cell_law import privatree_cell_law

__all__ = ["ExactReference", "EXACT_REFERENCES", "exact_reference", "privatree_cell_law", "forest_cell_law",
           "ATOM_CELL", "UNIFORM_ON_A_VALUE", "UNIFORM_ON_AN_END"]

_B2 = [(0.0, 1.0), (0.0, 1.0)]
#: the two-class inputs whose laws the committed benchmarks were measured on (the edge and one-per-bin inputs are
#: the two-sample compare's)
_EXACT_BINARY_INPUTS = [i for i in BINARY_INPUTS if "edges" not in i[0] and "per bin" not in i[0]]
#: bounds on the mass the rounded uniform ``theta`` of an invalid leaf (two classes) puts on one interior
#: 6-decimal value, per unit of invalid mass. Its first coordinate ``u`` is uniform on [0, 1] (the reference draws
#: Dirichlet(1, 1): two exponentials normalised, a law on doubles within about 1e-16 of the uniform's) and rounds
#: to ``v`` on ``[v - 5e-7, v + 5e-7)``, a mass of 1e-6; the other coordinate, ``1 - u`` to within two units in
#: the last place, rounds to ``1 - v`` except within about 1e-16 of a rounding boundary. The bounds leave 1e-9,
#: far more than those 1e-16: tighter than :data:`audit.engine.exact_law.count_leaf_law.UNIFORM_ON_ONE_VALUE`
#: (1e-8), since with the ends ``(0, 1)`` and ``(1, 0)`` as cells of their own the looser widths would take more
#: than half of alpha 0.01 at 8,000 draws
UNIFORM_ON_A_VALUE = (0.999e-6, 1.001e-6)
#: the same on an end ``(0, 1)`` or ``(1, 0)``: ``u`` rounds to 0 on ``[0, 5e-7)`` and to 1 on ``(1 - 5e-7, 1]``,
#: half a value's mass
UNIFORM_ON_AN_END = (0.4995e-6, 0.5005e-6)


@dataclass
class ExactReference:
    """A reference learner with an exact release law: its learner (a name of
    :data:`audit.results.learner_references.LEARNERS`), parameters, inputs and law."""

    name: str
    learner: str
    params: dict
    inputs: list
    law: Callable  # law(params, X, y) -> CellLaw
    description: str
    #: every release of at least this probability under the law has a cell of its own (0: every release the
    #: law enumerates); the rest share :data:`OTHER`
    floor: float = 0.0
    #: what the law's reach leaves out of the test (said on the console and in the report), "" when nothing
    not_exercised: str = ""

    def load(self):
        return LEARNERS[self.learner].load()

    def learner_reference(self):
        """The learner's oracle entry, releasing ``release()`` whole (the law's support)."""
        return dataclasses.replace(LEARNERS[self.learner], release_kwargs={})


def _tree_cells(counts: tuple, rate: float, rule: str) -> tuple[dict, dict]:
    """``(lower, upper)`` per cell of one depth-0 tree's released leaf value (module docstring)."""
    from audit.engine.exact_law.count_leaf_law import leaf_law

    law = leaf_law(counts, rate, rule)
    lower, upper = {}, {}
    for v, p in law.atoms.items():
        if p >= ATOM_CELL:
            # the atoms rounding to v, the enumeration's tail, and the rounded uniform of an invalid leaf, which
            # puts between lo_u and hi_u of its mass on v (issue 57: the ends (0, 1) and (1, 0) were left in OTHER,
            # and with them a release of probability 0.15)
            lo_u, hi_u = UNIFORM_ON_A_VALUE if all(0.0 < t < 1.0 for t in v) else UNIFORM_ON_AN_END
            lower[(v,)] = p + lo_u * law.invalid
            upper[(v,)] = min(1.0, p + law.tail + hi_u * law.invalid)
    return _with_other(lower, upper)


def forest_cell_law(params: dict, X, y) -> CellLaw:
    """The depth-0 random forest's release law as cells (module docstring)."""
    from audit.random_trees.exact_law import forest_setup as _setup

    k, h, _bounds, _X, y_index, rate, rule = _setup(params, X, y)
    if h != 0:
        raise ValueError(f"compare --exact covers the random forest at max_depth=0 (deeper trees release continuous "
                         f"thresholds), got max_depth={h!r}")
    counts = (y_index.count(0), y_index.count(1))
    lo1, up1 = _tree_cells(counts, rate, rule)
    lower, upper = {}, {}
    for cells in itertools.product(list(up1), repeat=k):
        lower[cells] = float(np.prod([lo1[c] for c in cells]))
        upper[cells] = min(1.0, float(np.prod([up1[c] for c in cells])))
    named = {c[0] for c in up1 if c != OTHER}

    def cell(release):
        _, (_, leaves) = release
        return tuple((t[0],) if t[0] in named else OTHER for t in leaves)

    return CellLaw(lower, upper, cell)


def diprime_cell_law(params: dict, X, y) -> CellLaw:
    """The depth-1 strict DiPriMeFlip classifier's release law as cells (module docstring): the law of
    :func:`audit.diprime.cell_law.pair_cell_laws` with both datasets ``(X, y)``, the node's (feature, threshold)
    with each leaf's atoms of probability at least :data:`ATOM_CELL`, or the leaf's ``OTHER``."""
    from audit.diprime.cell_law import pair_cell_laws
    from audit.diprime.exact_law import forest_setup as _setup

    s = _setup(params)
    if s.variant != "flip" or s.regression or s.max_depth != 1:
        raise ValueError(f"compare --exact covers the strict DiPriMeFlip classifier at max_depth=1, got "
                         f"variant={params.get('variant')!r}, max_depth={params.get('max_depth')!r}")
    return pair_cell_laws(params, (X, y), (X, y))[0]


EXACT_REFERENCES: dict[str, ExactReference] = {r.name: r for r in [
    ExactReference("privatree", "privatree", dict(PRIVATREE_PARAMS, max_bins=2), PRIVATREE_INPUTS,
                   privatree_cell_law, "PrivaTree, Algorithm 1, strict accounting: depth 1, two features of two "
                   "uniform bins, two classes, epsilon 8 (the law of audit.privatree.exact_law)",
                   not_exercised="thresholds among more than two bins per feature (out of the law's reach): the "
                   "two-sample compare (4 bins by default) tests them"),
    ExactReference("random-trees", "random-trees", dict(LEARNERS["random-trees"].params, max_depth=0),
                   _EXACT_BINARY_INPUTS, forest_cell_law, "random decision forest, 2 trees of depth 0, epsilon 1 (the "
                   "leaf law of audit.random_trees.exact_law)", floor=ATOM_CELL,
                   not_exercised="routing: at depth 0 no record is routed (deeper trees release continuous "
                   "thresholds, out of the law's reach); the two-sample compare (depth 2 by default) routes them"),
    ExactReference("diprime-flip-classifier", "diprime-classifier",
                   dict(n_estimators=1, max_depth=1, max_features=2, epsilon=4.0, variant="flip", bounds=_B2,
                        classes=[0, 1]), _EXACT_BINARY_INPUTS, diprime_cell_law,
                   "strict DiPriMeFlip classifier, one tree of depth 1, two candidate attributes, epsilon 4 (the "
                   "node and leaf laws of audit.diprime.exact_law)", floor=ATOM_CELL,
                   not_exercised="the exp and base variants, more than one tree, trees deeper than 1 (out of the "
                   "law's reach): the two-sample compare (variant exp by default) tests the first"),
]}


def exact_reference(name: str) -> ExactReference:
    """The exact reference ``name``; a ``ValueError`` lists them."""
    if name not in EXACT_REFERENCES:
        raise ValueError(f"--exact: no exact law for the reference {name!r}; references with one: "
                         f"{', '.join(EXACT_REFERENCES)}")
    return EXACT_REFERENCES[name]
