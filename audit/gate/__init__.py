"""The gate of ``python -m audit check``: the evidence kinds it judges a subject by.

* :mod:`audit.gate.observe`: everything a fit lets its holder observe, as canonical values by path.
* :mod:`audit.gate.determinism`: values the same on every fit of a dataset and different on its neighbour.
"""
