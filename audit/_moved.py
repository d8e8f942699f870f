"""Import paths of the auditor's modules that moved: the old path is the new module itself.

The engine went to :mod:`audit.engine`; each target's claims, theorems, mutants, reproduction and oracle cases
went to its own package (``audit.privatree``, ...); the gate to :mod:`audit.gate`; the front ends to
:mod:`audit.frontends` and what runs produce to :mod:`audit.results`. An old path stays while a committed file
(a test, a guide, a committed report) or an installed entry point still names it; the others were retired.
The finder is :func:`reference._moved.install`.
"""
from __future__ import annotations

__all__ = ["MOVED"]

#: old module -> the module that holds its code now (``None``: an old package that only holds old paths)
MOVED = {
    "audit.theorems": None,
    "audit.estimate": "audit.engine.estimation.estimate",
    "audit.events": "audit.engine.estimation.events",
    "audit.search": "audit.gate.search",
    "audit.neighbours": "audit.engine.estimation.neighbours",
    "audit.sampling": "audit.engine.estimation.sampling",
    "audit.exact": "audit.engine.exact_law.exact",
    "audit.compare": "audit.engine.comparison.compare",
    "audit.power": "audit.engine.estimation.power",
    "audit.release": "audit.gate.outputs",
    "audit.learner": "audit.engine.estimation.learner",
    "audit.checkpoint": "audit.engine.runs.checkpoint",
    "audit.budget": "audit.engine.runs.budget",
    "audit.render": "audit.engine.presentation.render",
    "audit.targets.privatree": "audit.privatree.claims",
    "audit.targets.diprime": "audit.diprime.claims",
    "audit.targets.lpdt": "audit.lpdt.claims",
    "audit.targets.random_trees": "audit.random_trees.claims",
    "audit.theorems.diprime": "audit.diprime.theorems",
    "audit.theorems.random_trees": "audit.random_trees.theorems",
    "audit.mutants.privatree": "audit.privatree.mutants",
    "audit.mutants.diprime": "audit.diprime.mutants",
    "audit.mutants.float_noise": "audit.mechanisms.float_noise",
    "audit.mutants.float_median": "audit.mechanisms.float_median",
    "audit.reproduce.privatree": "audit.privatree.reproduce",
    "audit.reproduce.privatree_tables": "audit.privatree.tables",
    "audit.reproduce.diprime": "audit.diprime.reproduce",
    "audit.reproduce.lpdt": "audit.lpdt.reproduce",
    "audit.reproduce.random_trees": "audit.random_trees.reproduce",
    "audit.oracle_cases": "audit.oracle.cases",
    "audit.oracle_learner_cases": "audit.oracle.learner_cases",
    # the gate as one package: its inputs, plan, verdicts and evidence kinds in audit/gate
    "audit.check": "audit.gate.run",
    "audit.check_inputs": "audit.gate.inputs",
    "audit.check_refusals": "audit.gate.refusals",
    "audit.engine.state_probe": "audit.gate.state.probe",
    "audit.engine.state_walk": "audit.gate.state.walk",
    "audit.engine.model_state": "audit.gate.state.model",
    "audit.engine.replay": "audit.gate.state.replay",
    "audit.engine.state_codec": "audit.gate.state.codec",
    "audit.engine.outcome": "audit.gate.outcome",
    "audit.engine.release": "audit.gate.outputs",
    "audit.engine.scale": "audit.gate.scale",
    "audit.engine.search": "audit.gate.search",
    # the engine by job: sampling and estimation, laws and certificates, comparison, runs, presentation
    "audit.engine.sampling": "audit.engine.estimation.sampling",
    "audit.engine.estimate": "audit.engine.estimation.estimate",
    "audit.engine.quoted": "audit.engine.exact_law.quoted",
    # the house by job: results (below the targets) and front ends (above everything) out of audit/'s top level
    "audit.report": "audit.results.report",
    "audit.findings": "audit.results.findings",
    "audit.exact_eps": "audit.results.exact_eps",
    "audit.exact_by_size": "audit.results.exact_by_size",
    "audit.certify": "audit.results.certify",
    "audit.certify_allsizes": "audit.results.certify_allsizes",
    "audit.learner_references": "audit.results.learner_references",
    "audit.extras": "audit.results.extras",
    "audit.data_fetch": "audit.results.data_fetch",
    "audit.fail_closed": "audit.frontends.fail_closed",
    "audit.doors": "audit.frontends.doors",
    "audit.claims_file": "audit.frontends.claims_file",
    "audit.compare_command": "audit.frontends.compare_command",
    "audit.pytest_plugin": "audit.frontends.pytest_plugin",
    "audit.samples": "audit.frontends.samples",
    "audit.cli_doc": "audit.frontends.cli_doc",
}
