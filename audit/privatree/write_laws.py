"""``python -m audit.privatree.write_laws``: write the committed law certificate of PrivaTree's strict rows with
private edges, three bins or categorical features (:mod:`audit.privatree.committed_laws`), about 40 CPU seconds."""
from __future__ import annotations

from audit.privatree.claims import write_committed_laws

if __name__ == "__main__":
    print(f"wrote {write_committed_laws()}")
