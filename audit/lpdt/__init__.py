"""Audit target ``lpdt`` (002_5a21b2792a729c80.txt): claims, theorem checks and reproduction."""
