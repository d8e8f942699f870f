"""DiPriMe forests (Consul and Williamson 2020, Consul and Williamson 2021): the forests (``forest``), the tree
grower and its budget (``grower``), the papers' own median and leaf mechanisms (``mechanisms``), the batched
sampler (``batch``, ``batch_medians``) and the dataset loaders (``data``).

The names below are this package's public interface (``reference.diprime.NAME``).
"""
from reference.diprime.batch import TASKS, DiPriMeBatch, Forests
from reference.diprime.forest import (
    ACCOUNTINGS,
    MAX_DEPTH,
    VARIANTS,
    VERSIONS,
    DiPriMeForestClassifier,
    DiPriMeForestRegressor,
    charge_equal_parts,
)

__all__ = ['DiPriMeForestRegressor', 'DiPriMeForestClassifier', 'VARIANTS', 'VERSIONS', 'ACCOUNTINGS', 'MAX_DEPTH',
    'charge_equal_parts', 'DiPriMeBatch', 'Forests', 'TASKS']
