"""The auditor's engine: sampling, events, bounds, estimation, the neighbour search, exact loss,
comparison and power. Nothing here knows a paper: the target packages use it, never the reverse."""
