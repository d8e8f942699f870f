"""The README's example package: a user's own DP code, audited by ``python -m audit check``."""
