"""The test session fits in seeded mode (``reference.randomness``): the same seed gives the same fit, so every
statistical test here runs at a fixed seed. Set in the environment so that the commands the tests start
(``python -m audit ...``) inherit it; tests of the privacy-first default remove it with ``monkeypatch``."""
import os

from reference.randomness import SEEDED_FITS_ENV

os.environ[SEEDED_FITS_ENV] = "1"
