"""LPDT (002_5a21b2792a729c80.txt): the estimators (``learner``), the public partition (``partition``), the
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
