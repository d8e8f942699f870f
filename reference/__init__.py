"""Reference implementations of differentially private decision-tree learners.

Simple, pure-NumPy code written to be read and trusted: the oracle against
which faster implementations and published claims are checked.

Layout: one package per paper (``privatree``, ``diprime``, ``random_trees``,
``lpdt``), ``mechanisms`` (one module per family, sampler, law and privacy map
side by side), ``ledger``, ``validation``, ``datasets`` and ``baselines``.
Modules that moved keep their old import paths (:mod:`reference._moved`).
"""
from reference._moved import MOVED, install

install(MOVED)

from reference.ledger import PrivacyLedger, Scope  # noqa: E402
from reference import mechanisms  # noqa: E402
from reference.validation import OutOfBoundsWarning  # noqa: E402

__all__ = ["PrivacyLedger", "Scope", "mechanisms", "OutOfBoundsWarning"]
__version__ = "0.1.0"
