"""``python -m audit.privatree.write_laws``: write the committed law certificate of PrivaTree's strict rows whose
laws take seconds (:mod:`audit.privatree.committed_laws`; the rows: :func:`audit.privatree.claims.committed_law_rows`),
about 45 CPU seconds and 0.9 GB."""
from __future__ import annotations

import numpy as np

from audit.engine.exact_law.laws import laws_pair_loss
from audit.privatree.cell_law import privatree_cell_law
from audit.privatree.claims import committed_law_rows
from audit.privatree.committed_laws import config_key, write
from audit.privatree.exact_law import release_law

__all__ = ["write_committed_laws"]


def write_committed_laws(path=None):
    """Compute the laws of every row of :func:`audit.privatree.claims.committed_law_rows` as the run does (each
    distinct dataset's release law and cell law, each pair's exact loss) and write them to the committed law
    certificate (``path``: another file)."""
    configs = []
    for row, params, pairs, edges, tail in committed_law_rows():
        tags, laws, cells = [], [], []  # the distinct datasets, in the order the pairs name them
        index = []
        for p in pairs:
            for X, y in (p.d0, p.d1):
                tag = (np.asarray(X).shape, np.asarray(X).tobytes(), np.asarray(y).tobytes())
                if tag not in tags:
                    law = release_law(params, X, y, edges=edges, tail=tail)
                    tags.append(tag)
                    laws.append(law)
                    cells.append(privatree_cell_law(params, X, y, law=law))
                index.append(tags.index(tag))
        pair_index = list(zip(index[::2], index[1::2]))
        losses = [laws_pair_loss(laws[i], laws[j]) for i, j in pair_index]
        configs.append((row, config_key(params, pairs, edges, tail), cells,
                        [(i, j, (loss.lower, loss.upper)) for (i, j), loss in zip(pair_index, losses)]))
    return write(configs, path)


if __name__ == "__main__":
    print(f"wrote {write_committed_laws()}")
