"""Audit target ``lpdt`` (Ma et al. 2023): claims, theorem checks and reproduction."""
