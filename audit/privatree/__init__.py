"""Audit target ``privatree`` (Vos et al. 2023): its claims, theorem checks, mutants and reproduction."""
