"""Drawing a mechanism's outputs reproducibly, in blocks, and checking them.

Samples are drawn in fixed-size blocks, each from its own generator spawned
from one ``numpy.random.SeedSequence``: the same seed gives the same samples
however the blocks are grouped in memory (and, later, across worker
processes). A mechanism with ``batch(data, n, rng)`` is sampled through it;
otherwise it is called once per sample.

Every output is normalised to one of three kinds and checked as it arrives:

* ``discrete``: int, bool, str or (nested) tuples of them (floats inside
  tuples are allowed and compared exactly); counted by value;
* ``scalar``: a float;
* ``vector``: a 1-D float array of fixed length.

A mechanism that raises, returns NaN, or changes kind or shape gets an error
naming the sample index and the output.
"""
from __future__ import annotations

import contextlib
import contextvars
import itertools
import math
import multiprocessing
import os
import random
import signal
from collections import Counter
from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np

from reference.randomness import seeded_fits

__all__ = ["BLOCK", "MechanismOutputError", "Samples", "block_generators", "current_jobs", "current_scheduler",
           "draw", "draw_many", "gather", "jobs", "reseed_globals", "scheduler", "worker_init"]

#: samples per independent stream; part of the definition of a seed's result
BLOCK = 4096


class MechanismOutputError(ValueError):
    """A mechanism raised, or returned an output the auditor cannot use."""


@dataclass
class Samples:
    """One block (or several concatenated) of normalised outputs.

    ``values`` is an ndarray for the ``scalar`` (n,) and ``vector`` (n, d)
    kinds, and an ndarray of ints (n,) or a list of hashables for ``discrete``.
    """

    kind: str
    values: object
    shape: tuple = ()
    #: number of samples, when ``values`` is a ``Counter`` of discrete outcomes
    n: int | None = None

    def __len__(self) -> int:
        return self.n if self.n is not None else len(self.values)

    def counts(self):
        """Discrete outcomes as a ``Counter`` (outcome -> draws), whether they were counted as they arrived
        (:func:`collect`) or kept in order."""
        if isinstance(self.values, Counter):
            return self.values
        return Counter(self.values.tolist() if isinstance(self.values, np.ndarray) else self.values)


def block_generators(seed_seq: np.random.SeedSequence, n: int):
    """Yield ``(start, size, rng)`` for consecutive blocks covering ``n`` samples."""
    children = seed_seq.spawn(math.ceil(n / BLOCK))
    for i, child in enumerate(children):
        start = i * BLOCK
        yield start, min(BLOCK, n - start), np.random.default_rng(child)


def _is_hashable_discrete(o) -> bool:
    if isinstance(o, (bool, np.bool_, Integral, str)):
        return True
    if isinstance(o, tuple):
        return all(_is_hashable_discrete(v) or (isinstance(v, Real) and not math.isnan(v)) for v in o)
    return False


def _known_discrete(o, seen: set) -> bool:
    """:func:`_is_hashable_discrete`, remembered in ``seen`` for outputs equal to one already checked (discrete
    outputs repeat: a block of thousands holds few distinct values). The caller still compares the top-level type
    (:func:`_signature`); inside a tuple, a value equal to an accepted one (an exotic number type equal to an
    int, say) is accepted as that value, which is how it is counted anyway."""
    try:
        if o in seen:
            return True
    except TypeError:  # unhashable: the full check says why it is refused
        return _is_hashable_discrete(o)
    if _is_hashable_discrete(o):
        seen.add(o)
        return True
    return False


def _signature(o) -> tuple:
    """The type a discrete output must keep from one sample to the next."""
    if isinstance(o, (bool, np.bool_)):
        return ("bool",)
    if isinstance(o, Integral):
        return ("int",)
    return (type(o).__name__,)


def _describe(o) -> str:
    text = repr(o)
    return text if len(text) <= 200 else text[:200] + "..."


def _normalise(outputs, start: int) -> Samples:
    """Check one block of raw outputs and return them as :class:`Samples`."""
    if isinstance(outputs, np.ndarray) and outputs.dtype != object:
        if outputs.ndim == 0 or outputs.ndim > 2:
            raise MechanismOutputError(f"batch returned an array of shape {outputs.shape} at sample {start}; "
                                       "expected (n,) or (n, d)")
        if np.issubdtype(outputs.dtype, np.integer) or outputs.dtype == bool:
            if outputs.ndim == 1:
                return Samples("discrete", outputs.astype(np.int64), ("int",))
            return Samples("discrete", [tuple(int(v) for v in row) for row in outputs], ("tuple",))
        if np.issubdtype(outputs.dtype, np.floating):
            bad = np.flatnonzero(~np.all(np.isfinite(outputs.reshape(len(outputs), -1)), axis=1))
            if bad.size:
                i = int(bad[0])
                raise MechanismOutputError(f"sample {start + i} is not finite: {_describe(outputs[i])}")
            if outputs.ndim == 1:
                return Samples("scalar", outputs.astype(float))
            return Samples("vector", outputs.astype(float), (outputs.shape[1],))
        raise MechanismOutputError(f"unsupported output dtype {outputs.dtype} at sample {start}")
    outputs = list(outputs)
    first = outputs[0]
    if isinstance(first, np.ndarray) and first.ndim == 1 and np.issubdtype(first.dtype, np.number):
        kind = "vector"
    elif isinstance(first, (float, np.floating)):
        kind = "scalar"
    elif _is_hashable_discrete(first):
        kind = "discrete"
    else:
        raise MechanismOutputError(
            f"sample {start} has an unsupported output {_describe(first)} of type {type(first).__name__}: "
            "return an int, str, bool, a tuple of them, a float, or a 1-D float array")
    sig = _signature(first)
    seen = set()  # discrete outputs already checked: a repeated value (hash and ==) needs no second walk
    for i, o in enumerate(outputs):
        ok = (kind == "discrete" and _known_discrete(o, seen) and _signature(o) == sig) or \
             (kind == "scalar" and isinstance(o, (float, np.floating))) or \
             (kind == "vector" and isinstance(o, np.ndarray) and o.shape == first.shape)
        if not ok:
            raise MechanismOutputError(
                f"sample {start + i} changed type or shape: {_describe(o)} after {kind} outputs like {_describe(first)}")
    if kind == "discrete":
        if sig == ("int",):
            return Samples("discrete", np.asarray(outputs, dtype=np.int64), sig)
        return Samples("discrete", outputs, sig)
    arr = np.asarray(outputs, dtype=float)
    bad = np.flatnonzero(~np.all(np.isfinite(arr.reshape(len(arr), -1)), axis=1))
    if bad.size:
        raise MechanismOutputError(f"sample {start + int(bad[0])} is not finite: {_describe(outputs[int(bad[0])])}")
    return Samples(kind, arr, first.shape if kind == "vector" else ())


def reseed_globals(rng) -> None:
    """Seed numpy's and Python's global generators from the block generator's own seed.

    Outside code often draws from ``np.random.*`` or ``random.*`` instead of the
    generator it is given. Seeding both from a child of the block's
    ``SeedSequence`` (without touching ``rng``'s own stream) makes such code's
    blocks independent across blocks and worker processes, and reproducible for
    a seed: forked workers would otherwise inherit one global state and repeat
    each other's draws.
    """
    ss = getattr(rng.bit_generator, "seed_seq", None)
    if not isinstance(ss, np.random.SeedSequence):
        return
    child = np.random.SeedSequence(ss.entropy, spawn_key=tuple(ss.spawn_key) + (0x5EED,))
    words = child.generate_state(4, dtype=np.uint32)
    np.random.seed(words[:2])
    random.seed(int.from_bytes(words.tobytes(), "little"))


def _raw_block(mechanism, data, size: int, rng, start: int):
    with seeded_fits():  # reference learners honour the seeds the mechanism passes (same seed, same samples)
        return _raw_block_seeded(mechanism, data, size, rng, start)


def _raw_block_seeded(mechanism, data, size: int, rng, start: int):
    reseed_globals(rng)
    batch = getattr(mechanism, "batch", None)
    try:
        if callable(batch):
            out = batch(data, size, rng)
            if len(out) != size:
                raise MechanismOutputError(f"batch returned {len(out)} outputs for {size} requested at sample {start}")
            return out
    except MechanismOutputError:
        raise
    except Exception as exc:
        raise MechanismOutputError(f"mechanism.batch raised at samples {start}..{start + size - 1}: "
                                   f"{type(exc).__name__}: {exc}") from exc
    out = []
    for i in range(size):
        try:
            out.append(mechanism(data, rng))
        except Exception as exc:
            raise MechanismOutputError(f"mechanism raised at sample {start + i}: {type(exc).__name__}: {exc}") from exc
    return out


# ----------------------------------------------------------------------------- worker processes
_JOBS: contextvars.ContextVar[int] = contextvars.ContextVar("jobs", default=1)
_WORK: tuple | None = None  # (mechanism, data) inherited by forked workers
_SCHEDULER: contextvars.ContextVar[str | None] = contextvars.ContextVar("scheduler", default=None)


@contextlib.contextmanager
def scheduler(address: str | None):
    """Draw sample blocks on a Dask distributed cluster inside this block (extra ``distributed``).

    ``address`` is the scheduler's address (``tcp://host:8786``), or a
    ``distributed.Client`` / ``LocalCluster`` object. Blocks keep their own
    seeds, so the result is the one a single process gives.
    """
    token = _SCHEDULER.set(address)
    try:
        yield
    finally:
        _SCHEDULER.reset(token)


def _remote_block(mechanism, data, task):
    start, size, seed_seq = task
    return _normalise(_raw_block(mechanism, data, size, np.random.default_rng(seed_seq), start), start)


def _dask_blocks(address, mechanism, data, tasks):
    try:
        from distributed import Client
    except ImportError:  # pragma: no cover - depends on the extra
        raise RuntimeError("--scheduler needs the optional extra: pip install 'dptree-audit[distributed]'") from None
    client = address if isinstance(address, Client) else Client(address)
    try:
        futures = [client.submit(_remote_block, mechanism, data, t, pure=False) for t in tasks]
        for f in futures:  # in order: the same blocks, in the same order, as one process draws
            yield f.result()
    finally:
        if client is not address:
            client.close()


@contextlib.contextmanager
def jobs(n: int):
    """Draw sample blocks in ``n`` worker processes inside this block.

    Each block has its own seed, so the samples, and every count made from
    them, are the same for any ``n``. Workers are forked (POSIX): the mechanism
    need not be picklable, only its outputs.
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"jobs must be a positive integer, got {n!r}")
    token = _JOBS.set(n)
    try:
        yield
    finally:
        _JOBS.reset(token)


def _pin_threads() -> None:
    """One BLAS / OpenMP thread per worker: ``--jobs`` workers must not oversubscribe the cores."""
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = "1"
    try:
        from threadpoolctl import threadpool_limits

        threadpool_limits(1)
    except Exception:  # pragma: no cover - threadpoolctl ships with scikit-learn
        pass


def _work(task):
    index, start, size, seed_seq = task
    mechanism, datasets = _WORK
    return _normalise(_raw_block(mechanism, datasets[index], size, np.random.default_rng(seed_seq), start), start)


def _ignore_interrupt() -> None:
    """Workers leave Ctrl-C to the parent, which saves what finished and says how to resume."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _worker_init() -> None:
    """Every forked worker: one BLAS thread, and Ctrl-C left to the parent."""
    _pin_threads()
    _ignore_interrupt()


worker_init = _worker_init


def current_jobs() -> int:
    """The worker processes in force (:func:`jobs`; 1 outside it)."""
    return _JOBS.get()


def current_scheduler():
    """The Dask scheduler in force (:func:`scheduler`), or None."""
    return _SCHEDULER.get()


def _tasks(items) -> list:
    """``(index, start, size, seed)`` for every block of every ``(data, n, seed_seq)`` item, item by item."""
    tasks = []
    for index, (_, n, seed_seq) in enumerate(items):
        children = seed_seq.spawn(math.ceil(n / BLOCK))
        tasks += [(index, i * BLOCK, min(BLOCK, n - i * BLOCK), c) for i, c in enumerate(children)]
    return tasks


def _blocks_many(mechanism, items):
    """Yield ``(index, Samples)`` for the blocks of every item ``(data, n, seed_seq)``, in item order.

    The items' blocks share one pool of workers under :func:`jobs`, so two inputs of a
    pair (each one block at a small budget) are drawn side by side. Each block keeps its
    own seed: the samples are those of drawing the items one by one in one process.
    """
    n_jobs = _JOBS.get()
    tasks = _tasks(items)
    if _SCHEDULER.get() is not None:
        for index, group in itertools.groupby(tasks, key=lambda t: t[0]):
            data = items[index][0]
            for block in _dask_blocks(_SCHEDULER.get(), mechanism, data, [t[1:] for t in group]):
                yield index, block
        return
    if n_jobs == 1 and len(tasks) > 1 and not callable(getattr(mechanism, "batch", None)):
        yield from _interleaved(mechanism, items, tasks)
        return
    if n_jobs == 1 or len(tasks) == 1:
        for index, start, size, seed_seq in tasks:
            data = items[index][0]
            yield index, _normalise(_raw_block(mechanism, data, size, np.random.default_rng(seed_seq), start), start)
        return
    global _WORK
    _WORK = (mechanism, [item[0] for item in items])
    try:
        with multiprocessing.get_context("fork").Pool(n_jobs, initializer=_worker_init) as pool:
            chunk = max(1, len(tasks) // (8 * n_jobs))
            yield from zip((t[0] for t in tasks), pool.imap(_work, tasks, chunksize=chunk))
    finally:
        _WORK = None


class _Block:
    """One block's outputs drawn one call at a time, with its own generator and its own copy of the global
    generators' states (:func:`reseed_globals`), put aside while other blocks are drawn."""

    def __init__(self, mechanism, data, size: int, rng, start: int):
        self.mechanism, self.data, self.rng, self.start, self.out = mechanism, data, rng, start, []
        reseed_globals(rng)
        self.save()

    def save(self) -> None:
        self.states = (np.random.get_state(), random.getstate())

    def restore(self) -> None:
        np.random.set_state(self.states[0])
        random.setstate(self.states[1])

    def call(self) -> None:
        try:
            self.out.append(self.mechanism(self.data, self.rng))
        except Exception as exc:
            raise MechanismOutputError(f"mechanism raised at sample {self.start + len(self.out)}: "
                                       f"{type(exc).__name__}: {exc}") from exc


#: consecutive calls of one block in the exchangeable order (:func:`_interleaved`): a block's global generators'
#: states are put back once per run, not once per call
RUN = 16


def _interleaved(mechanism, items, tasks):
    """The blocks of :func:`_blocks_many` for a mechanism called once per output, drawn in an exchangeable order:
    the calls of all the blocks are made in runs of :data:`RUN` in one random order of the runs (seeded by the
    blocks' sizes), so whatever drifts
    with time or with the process's history (a clock, a counter, a cache) is shared by every input alike and
    cannot tell two inputs apart. Each block keeps its own generator and its own global generators' states
    between its calls, so a seed gives the samples :func:`draw` gives block by block; they are yielded in item
    order once all are drawn."""
    with seeded_fits():
        blocks = [_Block(mechanism, items[index][0], size, np.random.default_rng(ss), start)
                  for index, start, size, ss in tasks]
        runs = [(k, min(RUN, size - i)) for k, (_, _, size, _) in enumerate(tasks) for i in range(0, size, RUN)]
        order = np.random.default_rng([0x1E7, len(tasks), *(t[2] for t in tasks)]).permutation(len(runs))
        current = None
        for k, length in (runs[i] for i in order.tolist()):
            if k != current:  # the global generators' states follow their block
                if current is not None:
                    blocks[current].save()
                blocks[k].restore()
                current = k
            for _ in range(length):
                blocks[k].call()
    for (index, start, _, _), block in zip(tasks, blocks):
        yield index, _normalise(block.out, start)


def draw_many(mechanism, items, expect: Samples | None = None):
    """Yield ``(index, Samples)`` blocks for several inputs at once: ``items`` is a list of
    ``(data, n, seed_seq)``. Every block must share the kind and shape of ``expect`` (default: the
    first block drawn). The blocks of item ``i`` are those :func:`draw` gives for it alone.
    """
    starts = [0] * len(items)
    for index, block in _blocks_many(mechanism, list(items)):
        if expect is None:
            expect = block
        elif block.kind != expect.kind or block.shape != expect.shape:
            raise MechanismOutputError(
                f"sample {starts[index]} changed kind or shape: {block.kind}{block.shape} after "
                f"{expect.kind}{expect.shape}")
        starts[index] += len(block)
        yield index, block


def draw(mechanism, data, n: int, seed_seq: np.random.SeedSequence, expect: Samples | None = None):
    """Yield checked :class:`Samples` blocks of ``n`` outputs in total, in order.

    ``expect`` (a previous block) fixes the kind and shape every block must share.
    """
    for _, block in draw_many(mechanism, [(data, n, seed_seq)], expect):
        yield block


def gather(stream, combine):
    """``combine(blocks of item i)`` for each item of a :func:`draw_many` stream, in item order, lazily
    (``combine`` is :func:`collect` for a pilot batch, or joins the blocks: see :func:`concat`)."""
    for _, group in itertools.groupby(stream, key=lambda t: t[0]):
        yield combine(block for _, block in group)


def collect(blocks) -> Samples:
    """Gather a pilot batch: discrete outcomes are counted as they arrive (memory grows
    with the number of distinct outcomes), scalars and vectors are kept. A block may itself be a gathered batch,
    so ``collect([pilot, more])`` extends a pilot."""
    blocks = iter(blocks)
    first = next(blocks)
    if first.kind != "discrete":
        return concat([first, *blocks])
    counts, n = Counter(), 0
    for b in (first, *blocks):
        counts.update(b.values.tolist() if isinstance(b.values, np.ndarray) else b.values)
        n += len(b)
    return Samples("discrete", counts, first.shape, n)


def concat(blocks) -> Samples:
    """Join blocks of one kind."""
    blocks = list(blocks)
    first = blocks[0]
    if first.kind == "discrete" and not isinstance(first.values, np.ndarray):
        values = [v for b in blocks for v in b.values]
    elif first.kind == "discrete" and not all(isinstance(b.values, np.ndarray) for b in blocks):
        values = [v for b in blocks for v in (b.values.tolist() if isinstance(b.values, np.ndarray) else b.values)]
    else:
        values = np.concatenate([b.values for b in blocks])
    return Samples(first.kind, values, first.shape)
