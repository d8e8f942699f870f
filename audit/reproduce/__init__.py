"""``python -m audit reproduce PAPER``: the papers' tables, side by side with ours.

One module per paper (``audit.privatree.reproduce``, ``.diprime``,
``.random_trees``, ``.lpdt``), each exposing

* ``TITLE``: one line;
* ``DATASETS``: the dataset names it runs by default (names of
  :mod:`reference.datasets` loaders for that paper);
* ``UNAVAILABLE``: datasets the paper used that the data directory does not
  provide (listed in the report);
* ``reproduce(datasets, *, data_dir, jobs, smoke, seed) -> Reproduction``.

Datasets whose files are absent are skipped with a line in the report
(``Reproduction.skipped``), never an error. ``smoke=True`` runs a reduced
protocol (one small dataset, one epsilon, few repetitions) that checks the
pipeline, not the numbers; CI runs it.
"""
from __future__ import annotations

import importlib
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

from audit.reproduce.cells import Cell, Reproduction, mean_se, write_reproduction
from reference.randomness import in_current_mode
from reference.validation import clipping_on_purpose

__all__ = ["PAPERS", "Cell", "Reproduction", "mean_se", "parallel_map", "reproduce", "write_reproduction"]

#: paper name -> module
PAPERS = {"privatree": "audit.privatree.reproduce", "diprime": "audit.diprime.reproduce",
          "random-trees": "audit.random_trees.reproduce", "lpdt": "audit.lpdt.reproduce"}


def load(paper: str):
    if paper not in PAPERS:
        raise ValueError(f"paper={paper!r}: choose one of {', '.join(PAPERS)}")
    return importlib.import_module(PAPERS[paper])


def parallel_map(fn, tasks, jobs: int = 1) -> list:
    """``[fn(t) for t in tasks]``, in ``jobs`` forked worker processes when ``jobs > 1`` (order kept).

    Each task must carry its own seed so that the result does not depend on
    ``jobs``. The workers fit in the caller's seeded mode (``reference.randomness.in_current_mode``): a
    forked worker does not inherit it.
    """
    tasks = list(tasks)
    if jobs <= 1 or len(tasks) <= 1:
        return [fn(t) for t in tasks]
    import multiprocessing

    ctx = get_context("fork") if "fork" in multiprocessing.get_all_start_methods() else get_context()
    with ProcessPoolExecutor(max_workers=jobs, mp_context=ctx) as pool:
        return list(pool.map(in_current_mode(fn), tasks))


def reproduce(paper: str, datasets=None, *, data_dir=None, jobs: int = 1, smoke: bool = False, seed: int = 0,
              out: str | os.PathLike | None = "reports", baseline: str | os.PathLike | None = None) -> Reproduction:
    """Run ``paper``'s protocol and (when ``out`` is not None) write ``out/reproductions/PAPER.{md,json}``.

    ``baseline``: an earlier ``PAPER.json``; the report then says how far each of our numbers moved from it
    (:mod:`audit.reproduce.baseline`). It is read before the run, so a bad file fails at once.
    """
    from reference import datasets as ds

    from audit.reproduce.baseline import compare_with_baseline, load_baseline

    mod = load(paper)
    if jobs < 1:
        raise ValueError(f"jobs={jobs!r}: must be a positive integer")
    base = load_baseline(baseline, paper) if baseline is not None else None
    if datasets is not None:
        known = set(ds.names(paper))
        bad = [d for d in datasets if d not in known]
        if bad:
            raise ValueError(f"datasets={','.join(bad)}: unknown for paper {paper!r}; known: {', '.join(sorted(known))}")
    d = ds.data_dir(data_dir)
    start = time.perf_counter()
    with clipping_on_purpose():  # the protocols clip on purpose (their protocol lines say where): no warning
        rep = mod.reproduce(datasets, data_dir=d, jobs=jobs, smoke=smoke, seed=seed)
    rep.elapsed_s = time.perf_counter() - start
    rep.data_dir = str(d) if d is not None else None
    rep.seed, rep.smoke = seed, smoke
    for name in getattr(mod, "UNAVAILABLE", ()):
        if name not in rep.unavailable:
            rep.unavailable.append(name)
    if base is not None:
        date = (base.get("machine") or {}).get("date", "an unknown date")
        rep.baseline = compare_with_baseline(rep.cells, base, f"`{Path(baseline).name}` (run on {date})")
    if out is not None:
        write_reproduction(rep, out)
    return rep


def load_datasets(paper: str, names, data_dir: Path | None, rep: Reproduction, *, smoke_rows: int | None = None):
    """Yield ``(name, Dataset)`` for each name whose files are present; absent ones go to ``rep.skipped``.

    With ``smoke_rows`` each dataset is subsampled to that many rows.
    """
    from reference import datasets as ds

    for name in names:
        try:
            data = ds.load(paper, name, data_dir)
        except ds.DatasetUnavailable as exc:
            rep.skipped.append(str(exc))
            continue
        if smoke_rows is not None:
            data = data.subsample(smoke_rows, seed=rep.seed)
        if sys.stderr.isatty():  # progress: one line per dataset as it starts
            print(f"reproduce {paper}: dataset {name} ({data.n:,} rows)", file=sys.stderr)
        rep.facts[name] = (("read from the data, as the paper did: " if data.facts_from_data else "declared: ")
                           + data.facts_note)
        yield name, data
