"""A run's independent parts, side by side in worker processes.

A target's run is a list of parts (a family of claims, the mutants, a theorem check), each drawing from its
own seeds. Under ``--jobs N`` (:func:`audit.engine.estimation.sampling.jobs`) with ``N > 1`` they are computed in ``N``
forked worker processes, the costliest first, and their results are handed back in the order the parts are
listed: the report is the one a single process writes, only sooner. Inside a worker the part runs with one
sampling job and one BLAS thread (the cores are already shared out), and announces nothing: its rows are
announced when they join the report in the parent (:mod:`audit.engine.runs.progress`); each part is announced as it
finishes, in the order the parts finish, with its time (:func:`audit.engine.runs.progress.part`), so a run whose
output goes to a file (CI) says what it has done while the listed order waits. Finished estimates still
reach the run's checkpoint file (:mod:`audit.engine.runs.checkpoint` merges what each process writes), so an
interrupted run resumes as before.
"""
from __future__ import annotations

import multiprocessing
import time
from dataclasses import dataclass
from typing import Any, Callable

from audit.engine.runs import progress

from audit.engine.estimation import sampling
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
    start = time.perf_counter()
    with sampling.jobs(1), progress.silent():
        result = part.call()
    return time.perf_counter() - start, result


def _announce(parts, k: int, seconds: float, finished: int) -> None:
    progress.part(f"part {finished}/{len(parts)} done: {parts[k].name} ({seconds:.1f} s)")


def run_parts(parts: list[Part], announce: bool = True):
    """Yield ``part.call()`` for each part, in the listed order, as soon as it and the parts before it are done,
    over the sampling jobs in force.

    With one job, or a Dask scheduler drawing the samples, the parts run here one after another. Otherwise a
    fork pool of ``min(jobs, len(parts))`` workers computes them, the costliest first; a part's exception is
    raised here, where its turn comes. With ``announce``, each part is announced to the listening console as it
    finishes (:func:`audit.engine.runs.progress.part`: a line with its time, printed whether or not the output is a
    terminal; ``--quiet`` silences it).
    """
    n_jobs = sampling.current_jobs()
    if n_jobs == 1 or len(parts) < 2 or sampling.current_scheduler() is not None:
        for k, p in enumerate(parts):
            start = time.perf_counter()
            result = p.call()
            if announce:
                _announce(parts, k, time.perf_counter() - start, k + 1)
            yield result
        return
    global _PARTS
    _PARTS = list(parts)
    order = sorted(range(len(parts)), key=lambda i: -parts[i].cost)
    try:
        with multiprocessing.get_context("fork").Pool(min(n_jobs, len(parts)),
                                                      initializer=sampling.worker_init) as pool:
            call = in_current_mode(_call)  # a forked worker starts in the process default: carry the caller's mode
            pending = {i: pool.apply_async(call, (i,)) for i in order}
            told = set()

            def tell():  # every part finished since the last look, in the order they finished (roughly)
                for j in order:
                    if j not in told and pending[j].ready() and pending[j].successful():
                        told.add(j)
                        if announce:
                            _announce(parts, j, pending[j].get()[0], len(told))

            for i in range(len(parts)):
                while not pending[i].ready():
                    pending[i].wait(1.0)
                    tell()
                tell()
                yield pending[i].get()[1]
    finally:
        _PARTS = None
