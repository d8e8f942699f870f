"""What a run produces and what the targets report through: report assembly and rendering (``report``), the
findings table (``findings``), exact certificates and their front end (``certify``, ``certify_allsizes``), the
exact ε of a learner by data size (``exact_eps``, ``exact_by_size``), the oracle's reference learners
(``learner_references``), optional extras (``extras``) and the benchmark data loader (``data_fetch``).

It sits below the targets and the gate (they report through it) and above the engine."""
