"""Import paths of the auditor's modules that moved (issue 20's layout, then the gate's package): the old path is the new module itself.

The engine went to :mod:`audit.engine`; each target's claims, theorems, mutants,
reproduction and oracle cases went to its own package (``audit.privatree``, ...).
The finder is :func:`reference._moved.install`.
"""
from __future__ import annotations

__all__ = ["MOVED"]

#: old module -> the module that holds its code now (``None``: an old package that only holds old paths)
MOVED = {
    "audit.theorems": None,
    "audit.estimate": "audit.engine.estimate",
    "audit.events": "audit.engine.events",
    "audit.search": "audit.gate.search",
    "audit.neighbours": "audit.engine.neighbours",
    "audit.sampling": "audit.engine.sampling",
    "audit.bounds": "audit.engine.bounds",
    "audit.exact": "audit.engine.exact",
    "audit.compare": "audit.engine.compare",
    "audit.compare_noise_off": "audit.engine.compare_noise_off",
    "audit.power": "audit.engine.power",
    "audit.tightness": "audit.engine.tightness",
    "audit.release": "audit.gate.outputs",
    "audit.learner": "audit.engine.learner",
    "audit.checkpoint": "audit.engine.checkpoint",
    "audit.progress": "audit.engine.progress",
    "audit.budget": "audit.engine.budget",
    "audit.render": "audit.engine.render",
    "audit.targets.privatree": "audit.privatree.claims",
    "audit.targets.diprime": "audit.diprime.claims",
    "audit.targets.lpdt": "audit.lpdt.claims",
    "audit.targets.random_trees": "audit.random_trees.claims",
    "audit.targets.mechanisms": "audit.mechanisms.claims",
    "audit.targets.oracle": "audit.oracle.claims",
    "audit.theorems.diprime": "audit.diprime.theorems",
    "audit.theorems.lpdt": "audit.lpdt.theorems",
    "audit.theorems.random_trees": "audit.random_trees.theorems",
    "audit.mutants.privatree": "audit.privatree.mutants",
    "audit.mutants.diprime": "audit.diprime.mutants",
    "audit.mutants.mechanisms": "audit.mechanisms.mutants",
    "audit.mutants.float_noise": "audit.mechanisms.float_noise",
    "audit.mutants.float_median": "audit.mechanisms.float_median",
    "audit.reproduce.privatree": "audit.privatree.reproduce",
    "audit.reproduce.privatree_tables": "audit.privatree.tables",
    "audit.reproduce.diprime": "audit.diprime.reproduce",
    "audit.reproduce.lpdt": "audit.lpdt.reproduce",
    "audit.reproduce.random_trees": "audit.random_trees.reproduce",
    "audit.oracle_cases": "audit.oracle.cases",
    "audit.oracle_learner_cases": "audit.oracle.learner_cases",
    # the gate as one package (issue 43 item 6): its inputs, plan, verdicts and evidence kinds in audit/gate
    "audit.check": "audit.gate.run",
    "audit.check_budget": "audit.gate.budget",
    "audit.check_inputs": "audit.gate.inputs",
    "audit.check_refusals": "audit.gate.refusals",
    "audit.check_verdicts": "audit.gate.verdict",
    "audit.engine.state_probe": "audit.gate.state.probe",
    "audit.engine.state_walk": "audit.gate.state.walk",
    "audit.engine.model_state": "audit.gate.state.model",
    "audit.engine.replay": "audit.gate.state.replay",
    "audit.engine.state_codec": "audit.gate.state.codec",
    "audit.engine.outcome": "audit.gate.outcome",
    "audit.engine.release": "audit.gate.outputs",
    "audit.engine.scale": "audit.gate.scale",
    "audit.engine.search": "audit.gate.search",
}
