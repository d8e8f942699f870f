"""The statistical auditor: does a mechanism or learner keep its privacy claim?

The public interface (fixed in DESIGN.md)::

    from audit import Claim, estimate_epsilon, audit_pairs, assert_private, learner_mechanism
"""
from .estimate import AuditResult, Claim, EstimateResult, assert_private, audit_pairs, estimate_epsilon
from .exact import exact_loss, privacy_loss
from .learner import learner_mechanism
from .sampling import MechanismOutputError

__all__ = ["Claim", "estimate_epsilon", "audit_pairs", "assert_private", "learner_mechanism", "AuditResult",
           "EstimateResult", "MechanismOutputError", "exact_loss", "privacy_loss"]
