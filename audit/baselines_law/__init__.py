"""Exact laws of PrivaTree's and LPDT's baselines on tiny inputs (issue 29): one module per learner.

* :mod:`.random_tree_pf`: the DiffPrivLib-style random tree with permute-and-flip leaves (strict);
* :mod:`.phist_report`: PHIST's user report, LPDT's randomiser or Berrett et al.'s lattice Laplace (local);
* :mod:`.dpgdf_tree`, :mod:`.bdpt_tree`: DPGDF and BDPT as the PrivaTree authors run them (not DP).
"""
