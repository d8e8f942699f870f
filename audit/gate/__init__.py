"""The gate of ``python -m audit check``: its inputs, its plan, the evidence kinds it judges a subject by, and its
verdict. Data flows one way, from the inputs through the evidence to the verdict and the run:

* :mod:`audit.gate.inputs`: the subject's inputs (``MODULE:CALLABLE``, datasets, parameters, ``--pairs``).
* :mod:`audit.gate.search`, :mod:`audit.gate.scale`: the neighbour search and its scale family.
* :mod:`audit.gate.outputs`: what a fitted model publishes (:class:`~audit.gate.outputs.EstimatorRelease`).
* :mod:`audit.gate.outcome`, :mod:`audit.gate.refusals`: exceptions as outcomes; which refusals decide.
* :mod:`audit.gate.observe`: everything a fit lets its holder observe, as canonical values by path.
* :mod:`audit.gate.emissions`: what a call emits beside its result (warnings, log records, printed text, files
  written, environment variables set).
* :mod:`audit.gate.determinism`: values the same on every fit of a dataset and different on its neighbour.
* :mod:`audit.gate.state`: random state kept after ``fit``, decoded in any encoding and replayed.
* :mod:`audit.gate.verdict`: the gate's level and how a row's verdict reads.
* :mod:`audit.gate.run`: the subject, its plan, ``audit_subject`` and ``check_report`` (the old ``audit.check``).
"""
