"""The papers' comparison methods (non-private histogram CART, DiffPrivLib-style tree, BDPT, DPGDF, DPA, ...).

Each lives in its own module (``reference.baselines.cart``, ``.bdpt``, ...). PrivaTree's poisoning comparison
(Vos et al. 2023 section VI-B) adds :class:`DeepPartitionAggregation` (not private; certified
predictions) and :class:`DPLogisticRegression` (output perturbation, substitution DP), exported here.
"""
from reference.baselines.dp_logistic import DPLogisticRegression
from reference.baselines.dpa import DeepPartitionAggregation

__all__ = ["DeepPartitionAggregation", "DPLogisticRegression"]
