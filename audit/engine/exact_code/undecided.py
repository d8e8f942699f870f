"""Why the exact mode gives no proof: the one error every part of it raises (:class:`Undecided`)."""
from __future__ import annotations

__all__ = ["Undecided"]


class Undecided(Exception):
    """The exact mode cannot decide this code: ``reason`` says why, ``site`` where (``file:line``), ``fix`` what
    would make it decidable."""

    def __init__(self, reason: str, site: str = "", fix: str = ""):
        super().__init__(reason + (f" at {site}" if site else "") + (f"; {fix}" if fix else ""))
        self.reason, self.site, self.fix = reason, site, fix
