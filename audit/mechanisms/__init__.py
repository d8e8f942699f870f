"""Audit target ``mechanisms``: the claims of the mechanism library, and the mutants every auditor must catch."""
