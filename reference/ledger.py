"""The privacy ledger: every mechanism call a learner makes, with the records it read.

A learner charges each call (:meth:`PrivacyLedger.charge`) with its component,
mechanism, epsilon, delta, sensitivity, neighbouring relation and *record
scope*. :meth:`PrivacyLedger.total_epsilon` then composes the charges:

* sequentially (epsilons add) across charges whose scopes may share a record,
  which includes reading several features of the same records;
* in parallel (the maximum is taken) only across charges whose scopes are
  provably disjoint: different cells of one partition of the same records.

Record scopes
-------------
A :class:`Scope` is a path of partition steps from the whole dataset: each
step names a partition of the records in the scope so far and the cell taken
in it, for example ``Scope.root().child("tree0:split", "L")``. Two scopes are
disjoint exactly when, after a common prefix, they take different cells of the
*same* partition. Scopes that diverge on different partitions (two trees that
split the same data differently) are treated as overlapping, which is the
sound default.

A partition step has ``by_value=True`` (the default) when a record's cell
depends on its values (a split threshold), and ``by_value=False`` when it
depends only on the record's identity (a fixed random assignment of records
to trees). Under the substitute relation, replacing a record may move it
between by-value cells, so both cells see a change, or it may stay in one
cell and change its label there, which changes that cell twice (one count
down, one up). Both cases cost at most twice the largest cell total, so a
by-value partition is composed as ``2 x max`` under substitution. (Adding the
two largest cell totals is not enough when cells are charged unequally: a
flip inside the larger cell costs twice its charge.) Under add/remove, and
for by-identity partitions, the maximum is taken.

A charge's epsilon is the loss of that one call when the records of its scope
change as one neighbouring step of the learner's relation can change them.
Under substitution with by-value cells this means: charge each cell for what
a record entering or leaving it costs (a single count, sensitivity 1); the
``2 x max`` rule then covers both the move and a change inside one cell. Charging a cell's whole class
histogram at its in-cell substitution sensitivity 2 would count the move
twice. A call that is not differentially private at all (a paper-mode flaw)
is charged ``epsilon=inf``, and the total is then infinite.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from reference.validation import check_neighbouring, check_positive_finite
from reference.validation import shown

__all__ = ["Scope", "Charge", "PrivacyLedger"]


@dataclass(frozen=True)
class Scope:
    """A set of records, as a path of (partition, cell, by_value) steps from the whole dataset."""

    steps: tuple[tuple[str, str, bool], ...] = ()

    @classmethod
    def root(cls) -> "Scope":
        """All records of the dataset."""
        return cls(())

    def child(self, partition: str, cell: str, *, by_value: bool = True) -> "Scope":
        """The records of this scope that fall in ``cell`` of ``partition``."""
        if not partition or not isinstance(partition, str):
            raise ValueError(f"partition must be a non-empty string, got {shown(partition)}")
        return Scope(self.steps + ((partition, str(cell), bool(by_value)),))

    def disjoint(self, other: "Scope") -> bool:
        """True iff no record can lie in both scopes."""
        for (p1, c1, _), (p2, c2, _) in zip(self.steps, other.steps):
            if p1 != p2:
                return False
            if c1 != c2:
                return True
        return False

    def __str__(self) -> str:
        if not self.steps:
            return "*"
        return "/".join(f"{p}={c}" for p, c, _ in self.steps)


@dataclass(frozen=True)
class Charge:
    """One mechanism call, as charged to the ledger."""

    component: str
    mechanism: str
    epsilon: float
    delta: float
    sensitivity: float
    neighbouring: str
    scope: Scope
    note: str = ""


@dataclass
class _Node:
    epsilon: float = 0.0
    delta: float = 0.0
    # partition name -> (by_value, {cell: _Node})
    partitions: dict = field(default_factory=dict)


class PrivacyLedger:
    """Every mechanism call of one fit, and their composition.

    Parameters
    ----------
    neighbouring : {"add-remove", "substitute"}
        The relation the learner's claim is made under; every charge must use it.
    """

    def __init__(self, neighbouring: str = "add-remove"):
        self.neighbouring = check_neighbouring(neighbouring)
        self.charges: list[Charge] = []

    def charge(
        self,
        component: str,
        mechanism: str,
        epsilon: float,
        *,
        scope: Scope,
        sensitivity: float = 1.0,
        delta: float = 0.0,
        neighbouring: str | None = None,
        note: str = "",
    ) -> Charge:
        """Record one mechanism call and return its :class:`Charge`."""
        if epsilon == float("inf"):
            epsilon = float("inf")  # a call that is not DP at all (paper-mode flaws): the total becomes inf
        else:
            epsilon = check_positive_finite("epsilon", epsilon)
        sensitivity = check_positive_finite("sensitivity", sensitivity)
        delta = float(delta)
        if not (0.0 <= delta < 1.0):
            raise ValueError(f"delta must be in [0, 1), got {shown(delta)}")
        relation = check_neighbouring(neighbouring or self.neighbouring)
        if relation != self.neighbouring:
            raise ValueError(
                f"neighbouring {shown(relation)} of charge {shown(component)} differs from the ledger's {shown(self.neighbouring)}"
            )
        if not isinstance(scope, Scope):
            raise TypeError(f"scope must be a reference.ledger.Scope, got {shown(scope)}")
        c = Charge(component, mechanism, epsilon, delta, sensitivity, relation, scope, note)
        self.charges.append(c)
        return c

    def charge_not_private(self, component: str, reason: str, *, scope: Scope | None = None) -> Charge:
        """Record a step that is not differentially private (``epsilon = inf``): the total becomes inf.

        ``reason`` names the step, e.g. ``"data-dependent stopping"``; the default scope is every record.
        """
        return self.charge(component, f"{reason} (not DP)", float("inf"), scope=scope or Scope.root())

    def extend(self, other: "PrivacyLedger", *, under: Scope | None = None) -> None:
        """Add the charges of ``other``, their scopes nested under ``under``."""
        for c in other.charges:
            scope = Scope((under.steps if under else ()) + c.scope.steps)
            self.charge(c.component, c.mechanism, c.epsilon, scope=scope, sensitivity=c.sensitivity,
                        delta=c.delta, neighbouring=c.neighbouring, note=c.note)

    # ------------------------------------------------------------------ composition
    def _tree(self) -> _Node:
        root = _Node()
        for c in self.charges:
            node = root
            for partition, cell, by_value in c.scope.steps:
                flag, cells = node.partitions.setdefault(partition, (by_value, {}))
                if flag != by_value:
                    raise ValueError(f"partition {shown(partition)} is charged both by value and by identity")
                node = cells.setdefault(cell, _Node())
            node.epsilon += c.epsilon
            node.delta += c.delta
        return root

    def _compose(self, node: _Node, attr: str) -> float:
        total = getattr(node, attr)
        for by_value, cells in node.partitions.values():
            largest = max(self._compose(child, attr) for child in cells.values())
            if by_value and self.neighbouring == "substitute":
                # a replaced record leaves one cell and enters another (a + b <= 2 max), or
                # changes inside one cell: one count down, one up (2 x its charge)
                total += 2.0 * largest
            else:
                total += largest
        return total

    def total_epsilon(self) -> float:
        """The epsilon of the whole fit: sequential composition over overlapping
        scopes, parallel composition over disjoint cells (see the module docstring)."""
        return self._compose(self._tree(), "epsilon") if self.charges else 0.0

    def total_delta(self) -> float:
        """The delta of the whole fit, composed like epsilon (basic composition)."""
        return self._compose(self._tree(), "delta") if self.charges else 0.0

    def assert_within(self, epsilon: float, *, rtol: float = 1e-9) -> None:
        """Raise ``AssertionError`` when the composed total exceeds ``epsilon``."""
        total = self.total_epsilon()
        if total > epsilon * (1.0 + rtol):
            raise AssertionError(f"privacy ledger total epsilon {shown(total)} exceeds the budget {shown(epsilon)}")

    def to_frame(self) -> pd.DataFrame:
        """One row per charge."""
        cols = ["component", "mechanism", "epsilon", "delta", "sensitivity", "neighbouring", "scope", "note"]
        rows = [[c.component, c.mechanism, c.epsilon, c.delta, c.sensitivity, c.neighbouring, str(c.scope), c.note]
                for c in self.charges]
        return pd.DataFrame(rows, columns=cols)

    def __len__(self) -> int:
        return len(self.charges)

    def __repr__(self) -> str:
        total = self.total_epsilon()
        return f"PrivacyLedger({len(self.charges)} charges, total_epsilon={total:.6g}, {self.neighbouring})"

