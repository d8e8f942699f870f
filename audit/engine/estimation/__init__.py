"""Sampling and estimation: reproducible draws, events, confidence bounds, epsilon lower bounds, power, neighbouring inputs, and a run's parts in worker processes."""
