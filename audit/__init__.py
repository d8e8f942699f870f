"""The statistical auditor: does a mechanism or learner keep its privacy claim?

The public interface (fixed in DESIGN.md)::

    from audit import Claim, estimate_epsilon, audit_pairs, assert_private, learner_mechanism

Layout, by job: :mod:`audit.engine` (sampling, events, bounds, estimation, exact loss, comparison, power;
no paper-specific code), :mod:`audit.results` (reports, findings, certificates, exact-ε tables), the gate
:mod:`audit.gate` (``check``), one package per target (``privatree``, ``diprime``, ``random_trees``, ``lpdt``,
``mechanisms``, ``oracle``) holding its claims, theorem checks, mutants, reproduction and oracle cases, the
registries ``targets`` and ``reproduce``, and the front ends: the command line (``__main__``) and
:mod:`audit.frontends` (``assert_private``, the pytest plugin, claims files, ``compare``). Old module paths are
the moved modules themselves (:mod:`audit._moved`).
"""
from audit.frontends.doors import assert_private
from audit.engine.estimation.estimate import AuditResult, Claim, EstimateResult, audit_pairs, estimate_epsilon
from audit.engine.exact_law.exact import exact_loss, privacy_loss
from audit.engine.estimation.learner import learner_mechanism
from audit.engine.estimation.sampling import MechanismOutputError
from reference._moved import install

from audit._moved import MOVED

install(MOVED)

__all__ = ["Claim", "estimate_epsilon", "audit_pairs", "assert_private", "learner_mechanism", "AuditResult",
           "EstimateResult", "MechanismOutputError", "exact_loss", "privacy_loss"]
