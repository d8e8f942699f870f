"""Audit target ``oracle``: the reference learners and mechanisms as oracles for other implementations."""
