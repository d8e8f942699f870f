"""A run's independent parts, side by side in worker processes.

A target's run is a list of parts (a family of claims, the mutants, a theorem check), each drawing from its
own seeds. Under ``--jobs N`` (:func:`audit.engine.sampling.jobs`) with ``N > 1`` they are computed in ``N``
forked worker processes, the costliest first, and their results are handed back in the order the parts are
listed: the report is the one a single process writes, only sooner. Inside a worker the part runs with one
sampling job and one BLAS thread (the cores are already shared out), and announces nothing: its rows are
announced when they join the report in the parent (:mod:`audit.engine.progress`). Finished estimates still
reach the run's checkpoint file (:mod:`audit.engine.checkpoint` merges what each process writes), so an
interrupted run resumes as before.
"""
from __future__ import annotations

import multiprocessing
from dataclasses import dataclass
from typing import Any, Callable

from audit.engine import progress, sampling
from reference.randomness import in_current_mode

__all__ = ["Part", "run_parts", "single_thread"]


@dataclass(frozen=True)
class Part:
    """One independent piece of a run: ``call()`` gives its result; ``cost`` (seconds at the quick budget, say)
    orders the parts in the workers' queue, the costliest first, so the last part to finish is a short one."""

    name: str
    call: Callable[[], Any]
    cost: float = 1.0


_PARTS: list[Part] | None = None  # the parts, inherited by the forked workers


def single_thread():
    """A context in which BLAS and OpenMP use one thread: the audit's matrices are small, and a second
    BLAS thread on a shared core costs more than it gives (ten times the CPU time on a loaded machine)."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(1)


def _call(index: int):
    part = _PARTS[index]
    with sampling.jobs(1), progress.silent():
        return part.call()


def run_parts(parts: list[Part]):
    """Yield ``part.call()`` for each part, in the listed order, as soon as it and the parts before it are done,
    over the sampling jobs in force.

    With one job, or a Dask scheduler drawing the samples, the parts run here one after another. Otherwise a
    fork pool of ``min(jobs, len(parts))`` workers computes them, the costliest first; a part's exception is
    raised here, where its turn comes.
    """
    n_jobs = sampling.current_jobs()
    if n_jobs == 1 or len(parts) < 2 or sampling.current_scheduler() is not None:
        for p in parts:
            yield p.call()
        return
    global _PARTS
    _PARTS = list(parts)
    order = sorted(range(len(parts)), key=lambda i: -parts[i].cost)
    try:
        with multiprocessing.get_context("fork").Pool(min(n_jobs, len(parts)),
                                                      initializer=sampling.worker_init) as pool:
            call = in_current_mode(_call)  # a forked worker starts in the process default: carry the caller's mode
            pending = {i: pool.apply_async(call, (i,)) for i in order}
            for i in range(len(parts)):
                yield pending[i].get()
    finally:
        _PARTS = None
