"""Random decision trees (Bojarski et al. 2014): the forest estimator (``forest``), its data-independent
structure, leaf counts and voting rules (``core``) and the dataset loaders (``data``).

The names below are this package's public interface (``reference.random_trees.NAME``).
"""
from reference.random_trees.core import (ACCOUNTINGS, INVALID_RULES, VOTING_RULES, Forests, aggregate, draw_structure,
                                         leaf_counts, leaf_values, logarithmic_n_estimators, noise_scale, route,
                                         theory_n_estimators)
from reference.random_trees.forest import RandomDecisionForestClassifier

__all__ = ["RandomDecisionForestClassifier", "Forests", "draw_structure", "route", "leaf_counts", "leaf_values",
           "aggregate", "noise_scale", "logarithmic_n_estimators", "theory_n_estimators", "VOTING_RULES",
           "INVALID_RULES", "ACCOUNTINGS"]
