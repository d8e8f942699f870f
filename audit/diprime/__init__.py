"""Audit target ``diprime`` (000_3adb53c34ab1d76d.txt, 003_9d9c0c8370f39611.txt): claims, theorems, mutants,
reproduction."""
