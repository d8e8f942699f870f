"""Audit target ``random-trees`` (001_de51f67f43120a4b.txt): claims, theorem checks and reproduction."""
