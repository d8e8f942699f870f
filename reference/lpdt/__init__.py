"""LPDT (Ma et al. 2023): the estimators (``learner``), the public partition (``partition``), the
local randomisers (``randomizer``) and the dataset loaders (``data``).

The names below are this package's public interface (``reference.lpdt.NAME``).
"""
from reference.lpdt.learner import (
    LPDTRegressor,
    PublicPartitionTreeRegressor,
    check_bounds,
    check_public,
    leaf_estimates,
)

__all__ = ['LPDTRegressor', 'PublicPartitionTreeRegressor', 'leaf_estimates', 'check_bounds', 'check_public']
