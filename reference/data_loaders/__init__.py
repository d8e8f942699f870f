"""Per-paper dataset loaders, registered into :mod:`reference.datasets` when imported.

One module per paper (``privatree``, ``diprime``, ``random_trees``, ``lpdt``):
each reads the benchmark files listed in ``../shared/data/MANIFEST.md`` with
that paper's preprocessing. Nothing here holds data.
"""
