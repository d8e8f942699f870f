"""Reference implementations of differentially private decision-tree learners.

Simple, pure-NumPy code written to be read and trusted: the oracle against
which faster implementations and published claims are checked.
"""
from .ledger import PrivacyLedger, Scope
from . import mechanisms

__all__ = ["PrivacyLedger", "Scope", "mechanisms"]
__version__ = "0.1.0"
