"""A helper module beside the estimators of :mod:`subjects.shipped_leaks`: a registry of the fits made, where
:class:`subjects.shipped_leaks.HelperRegistry` leaves the exact count of its last fit."""
from __future__ import annotations

#: model name -> summary of its last fit
FITTED = {}
