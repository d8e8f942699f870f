"""Exact laws and certificates: release laws, the exact loss of a pair, listed domains, all-sizes branch and bound, loss histograms and tightness."""
