"""Adapters that present outside libraries' mechanisms in the auditor's contract ``m(data, rng)``."""
