"""Known-flawed variants ("mutants") the auditor must catch, and correct mechanisms it must pass.

Each mutant names where its flaw comes from. One module per subject:

* :mod:`audit.mechanisms.mutants`: query mechanisms (noisy max, histograms, the sparse vector
  technique and its published flawed variants) and scaled Laplace;
* :mod:`audit.privatree.mutants`: the flaws fixed in PrivaTree's later code, and others;
* :mod:`audit.diprime.mutants`: DiPriMe's flawed medians and leaf noise;
* :mod:`audit.mechanisms.float_noise`: the pre-lattice Laplace (float noise added to a raw float, Mironov
  2012) and a check of which outputs a neighbouring input can reach.
"""
from audit.mechanisms.mutants import (Case, NoisyHistogram, NoisyMaxWithValue, ReportNoisyMax, SparseVector, correct_cases,
                         mutant_cases)

__all__ = ["Case", "ReportNoisyMax", "NoisyMaxWithValue", "NoisyHistogram", "SparseVector", "correct_cases",
           "mutant_cases"]
from audit.mechanisms.float_median import FloatIntervalMedian  # noqa: E402  (issue 17: the pre-fix float median)

__all__ += ["FloatIntervalMedian"]
