"""Known-flawed variants ("mutants") the auditor must catch, and correct mechanisms it must pass.

Each mutant names where its flaw comes from. One module per subject:

* :mod:`audit.mutants.mechanisms`: query mechanisms (noisy max, histograms, the sparse vector
  technique and its published flawed variants) and scaled Laplace;
* :mod:`audit.mutants.privatree`: the flaws fixed in PrivaTree's later code, and others;
* :mod:`audit.mutants.diprime`: DiPriMe's flawed medians and leaf noise.
"""
from .mechanisms import (Case, NoisyHistogram, NoisyMaxWithValue, ReportNoisyMax, SparseVector, correct_cases,
                         mutant_cases)

__all__ = ["Case", "ReportNoisyMax", "NoisyMaxWithValue", "NoisyHistogram", "SparseVector", "correct_cases",
           "mutant_cases"]
