"""The oracle's engine: a candidate's releases against a reference's, by two-sample tests, with the noise off, or against an exact law."""
