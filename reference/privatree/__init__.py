"""PrivaTree (Vos et al. 2023): the learner and its budget rules (``learner``), the batched
sampler of its releases (``batch``) and the paper's dataset loaders (``data``).

The names below are this package's public interface (``reference.privatree.NAME``).
"""
from reference.privatree.batch import PrivaTreeBatch, Trees, joint_exp_batch
from reference.privatree.learner import (
    PrivaTreeClassifier,
    budget_split,
    charge_exact_quantiles,
    charge_stopping,
    edge_cells,
    leaf_epsilon_bound,
    phi_K,
)

__all__ = ['PrivaTreeClassifier', 'phi_K', 'leaf_epsilon_bound', 'budget_split', 'charge_exact_quantiles',
    'charge_stopping', 'edge_cells', 'PrivaTreeBatch', 'Trees', 'joint_exp_batch']
