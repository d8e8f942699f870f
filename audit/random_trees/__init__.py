"""Audit target ``random-trees`` (Bojarski et al. 2014): claims, theorem checks and reproduction."""
