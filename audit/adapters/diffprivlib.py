"""IBM diffprivlib's mechanisms in the auditor's contract (optional extra ``diffprivlib``).

diffprivlib draws from its own ``random_state``; each block of samples gets
one seeded from the auditor's generator, so audits stay reproducible. The
mechanisms are diffprivlib's own code: only the calling convention is adapted.

Subjects for ``python -m audit check`` (see ``examples/diffprivlib.toml``)::

    audit.adapters.diffprivlib:Laplace          data: scalar
    audit.adapters.diffprivlib:Geometric        data: scalar (integer answers)
    audit.adapters.diffprivlib:Exponential      data: query:N (utilities)
    audit.adapters.diffprivlib:PermuteAndFlip   data: query:N (utilities)
    audit.adapters.diffprivlib:decision_tree    diffprivlib.models.DecisionTreeClassifier, its bounds
                                                given as lists (TOML has no tuples)
"""
from __future__ import annotations

import numpy as np

__all__ = ["Laplace", "Geometric", "Exponential", "PermuteAndFlip", "decision_tree"]


def _seed(rng) -> int:
    return int(rng.integers(0, 2**31 - 1))


class _Adapter:
    def __init__(self, epsilon: float, sensitivity: float = 1.0):
        self.epsilon, self.sensitivity = epsilon, sensitivity

    def __call__(self, data, rng):
        out = self.batch(data, 1, rng)
        return out[0].item() if isinstance(out, np.ndarray) else out[0]

    def __repr__(self):
        return f"diffprivlib.{type(self).__name__}(epsilon={self.epsilon}, sensitivity={self.sensitivity})"


class Laplace(_Adapter):
    def batch(self, data, n, rng):
        from diffprivlib.mechanisms import Laplace as L

        mech = L(epsilon=self.epsilon, sensitivity=self.sensitivity, random_state=_seed(rng))
        return np.array([mech.randomise(float(data)) for _ in range(n)])


class Geometric(_Adapter):
    def batch(self, data, n, rng):
        from diffprivlib.mechanisms import Geometric as G

        mech = G(epsilon=self.epsilon, sensitivity=int(self.sensitivity), random_state=_seed(rng))
        return np.array([mech.randomise(int(round(float(data)))) for _ in range(n)], dtype=np.int64)


class Exponential(_Adapter):
    """Utilities are the data; the candidate's index is the output."""

    _cls = "Exponential"

    def batch(self, data, n, rng):
        import diffprivlib.mechanisms as mechanisms

        utility = [float(u) for u in np.ravel(data)]
        mech = getattr(mechanisms, self._cls)(epsilon=self.epsilon, sensitivity=self.sensitivity, utility=utility,
                                              random_state=_seed(rng))
        return np.array([mech.randomise() for _ in range(n)], dtype=np.int64)


class PermuteAndFlip(Exponential):
    _cls = "PermuteAndFlip"


def decision_tree(epsilon: float, max_depth: int, bounds, classes, random_state=None):
    """diffprivlib's ``DecisionTreeClassifier`` with ``bounds = [mins, maxs]`` turned into the tuple it wants."""
    from diffprivlib.models import DecisionTreeClassifier

    mins, maxs = bounds
    return DecisionTreeClassifier(max_depth=max_depth, epsilon=epsilon, bounds=(list(mins), list(maxs)),
                                  classes=list(classes), random_state=random_state)
