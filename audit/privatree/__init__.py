"""Audit target ``privatree`` (004_2521a6732a5af66c.txt): its claims, theorem checks, mutants and reproduction."""
