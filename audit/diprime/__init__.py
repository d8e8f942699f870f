"""Audit target ``diprime`` (Consul and Williamson 2020, Consul and Williamson 2021): claims, theorems, mutants,
reproduction."""
