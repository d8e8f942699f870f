"""Fits as the code ships across the process boundary: where the noise comes from.

The gate's other fits all run in one process, whose global generators the gate seeds itself. An adversary who
holds a published model sees one fit of a fresh interpreter instead, and knows what that interpreter could not
hide: the code, the clock (to the minute a model card states, or better), the process id, the addresses a fresh
process allocates. Noise seeded from any of these is no noise to them: ``np.random.seed(1234)`` at import, a
module-level ``default_rng(2024)``, ``default_rng(int(time.time() * 1000))``, ``default_rng(os.getpid())``.

:func:`probe_fresh` fits the subject in *fresh processes*, each forked from a server interpreter that has
imported the gate but not the subject (:class:`Zygote`). In each child, before the subject's module is imported:

* numpy's and Python's global generators are seeded from OS entropy, as a new interpreter's are, and nothing
  is seeded after that (the gate injects no seed);
* everything an adversary can enumerate is held fixed, the same in every child: the clock (``time.time`` and
  its siblings, ``datetime.now``, ``date.today``; each read advances it by one millisecond from a fixed
  instant, so a deadline loop still ends), the process id, and the addresses ``id()`` reads (every child is
  forked from one template process whose memory never changes, so the same allocations give the same
  addresses);
* every seed handed to ``numpy.random.default_rng``, ``numpy.random.seed``, ``numpy.random.RandomState`` or
  ``random.seed`` is recorded with its call site (file:line).

Only OS entropy then differs between children. Three children fit the same sequence of neighbouring datasets
position by position: ``A`` and ``B`` the datasets ``d_k``, ``C`` their neighbours ``d'_k``. A value that noise
drawn from OS entropy covers differs between ``A`` and ``B``; one whose noise came from anything else is the
same in ``A`` and ``B`` at every position and differs in ``C``: a deterministic function of the data for
whoever knows the code and the clock.

The test. Screen on :data:`SCREEN_ROUNDS` rounds of the sequence: a path is a candidate when ``A`` and ``B``
agree on it at every position and ``C`` shows ``A``'s value at fewer than half of them (at most
:data:`MAX_PATHS`, whole values first; ``C`` may match by chance, below). Confirm on three new children over ``n`` positions: ``X`` positions where ``B`` shows ``A``'s value,
``Y`` where ``C`` does (``C`` may show it by chance where its noise is another, e.g. where its allocations,
hence an ``id()`` seed, went another way: ``n`` is the smallest of :data:`POSITIONS` whose bound exceeds the
claim even with ``Y = n / 8``). Given ``A``, the positions are independent fits, and an ε-DP release has
``P(C_k = a_k) >= exp(-ε) P(B_k = a_k) - δ`` at each, so ``epsilon_lower_bound(X, n, Y, n)`` is a valid lower
bound (the counts are sums of independent Bernoulli variables with unequal means; their tails are no heavier
than the binomial's, Hoeffding 1956, Theorem 4), at ``alpha`` split over the candidates. ``n`` is the smallest
of :data:`POSITIONS` so chosen.

What it cannot see: a seed read from a clock the child does not hold fixed (pandas' ``Timestamp.now``, C code
reading the clock directly), and randomness drawn before the gate's own imports (a module the gate itself
imports is imported once, in the server, before the fork). What it reads too strictly: a seed taken from
``hash()`` of a string is the same in every child (they share the server's hash secret), though a new
interpreter draws a new secret; such a seed is reported as not OS entropy.
"""
from __future__ import annotations

import datetime
import os
import pickle
import random
import struct
import subprocess
import sys
import time
from dataclasses import dataclass, field

import numpy as np

from audit.engine.estimation.bounds import epsilon_lower_bound
from audit.gate.determinism import DeterminismReport
from audit.gate.observe import ABSENT, observe_fit, source_of

__all__ = ["probe_fresh", "idle_readings", "FreshReport", "Zygote", "FreshError", "serve", "POSITIONS", "SCREEN_ROUNDS",
           "MAX_PATHS", "FIXED_INSTANT", "FIXED_PID", "SOURCE_REMEDY"]

#: positions of the confirmation (the smallest whose bound can exceed the claim is used)
POSITIONS = (32, 64, 128, 256, 512)
#: rounds of the pair sequence in screening
SCREEN_ROUNDS = 2
#: candidates confirmed, at most
MAX_PATHS = 8
#: the instant the children's clock starts from (2026-01-01T00:00:00Z) and the process id they read
FIXED_INSTANT = 1_767_225_600.0
FIXED_PID = 4242
#: the remedy of noise whose source an adversary can enumerate
SOURCE_REMEDY = ("draw the noise from OS entropy on every fit (numpy.random.default_rng() with no seed, or the "
                 "random_state the user passes); never a constant, the clock, the process id, id() or a seed "
                 "set at import")


class FreshError(RuntimeError):
    """A fresh process could not run the subject (it ended, or the server could not start)."""


# --------------------------------------------------------------------------------------------------------------
# the child's environment: a clock and a process id held fixed, seeds recorded

class _Clock:
    reads = 0

    @classmethod
    def now(cls) -> float:
        cls.reads += 1
        return FIXED_INSTANT + cls.reads * 1e-3


def _hold_the_clock() -> None:
    """Replace the clock functions by :class:`_Clock` (each read one millisecond on) and the process id by
    :data:`FIXED_PID`, for the code imported after this call."""
    for name in ("time", "monotonic", "perf_counter", "process_time", "thread_time"):
        setattr(time, name, _Clock.now)
        setattr(time, name + "_ns", lambda: int(round(_Clock.now() * 1e9)))
    os.getpid = lambda: FIXED_PID
    os.getppid = lambda: 1

    class HeldDateTime(datetime.datetime):
        @classmethod
        def now(cls, tz=None):
            return cls.fromtimestamp(_Clock.now(), tz)

        @classmethod
        def utcnow(cls):
            return cls.fromtimestamp(_Clock.now(), datetime.timezone.utc).replace(tzinfo=None)

        @classmethod
        def today(cls):
            return cls.now()

    class HeldDate(datetime.date):
        @classmethod
        def today(cls):
            return cls.fromtimestamp(_Clock.now())

    datetime.datetime, datetime.date = HeldDateTime, HeldDate


_SEEDS: list = []
#: seeds recorded per child, at most
MAX_SEEDS = 64


def _site() -> str:
    """The first caller outside this module, numpy and ``random``: ``file:line``."""
    frame = sys._getframe(1)
    while frame is not None:
        name = frame.f_globals.get("__name__", "")
        if not (name == __name__ or name.startswith("numpy") or name == "random"):
            return f"{os.path.basename(frame.f_code.co_filename)}:{frame.f_lineno}"
        frame = frame.f_back
    return "?"


def _seed_text(seed) -> str | None:
    if seed is None:
        return None
    try:
        if isinstance(seed, (np.random.SeedSequence, np.random.BitGenerator, np.random.Generator)):
            return None  # a generator passed on: its own seed was recorded where it was made
        text = repr(seed.tolist() if isinstance(seed, np.ndarray) else seed)
    except Exception:  # noqa: BLE001 - an exotic seed object
        return None
    return text if len(text) <= 80 else text[:79] + "…"


def _record(what: str, seed) -> None:
    """Keep ``seed`` (handed to ``what``) with its call site, up to :data:`MAX_SEEDS`."""
    text = _seed_text(seed)
    if text is not None and len(_SEEDS) < MAX_SEEDS:
        _SEEDS.append((what, text, _site()))


def _recording(fn, what: str):
    def recorded(*args, **kwargs):
        _record(what, args[0] if args else next(iter(kwargs.values()), None))
        return fn(*args, **kwargs)

    recorded.__wrapped__ = fn
    return recorded


def _record_seeds() -> None:
    """Record every seed handed to numpy's and Python's generator constructors from here on."""
    np.random.default_rng = _recording(np.random.default_rng, "numpy.random.default_rng")
    np.random.seed = _recording(np.random.seed, "numpy.random.seed")
    random.seed = _recording(random.seed, "random.seed")
    legacy = np.random.RandomState

    class RecordedRandomState(legacy):
        def __init__(self, seed=None):
            _record("numpy.random.RandomState", seed)
            super().__init__(seed)

    RecordedRandomState.__name__ = RecordedRandomState.__qualname__ = "RandomState"
    RecordedRandomState.__module__ = legacy.__module__
    np.random.RandomState = RecordedRandomState


# --------------------------------------------------------------------------------------------------------------
# the server (a fresh interpreter that forks a child per request) and its client

def _send(stream, obj) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(struct.pack("<Q", len(data)) + data)
    stream.flush()


def _receive(stream):
    head = stream.read(8)
    if len(head) < 8:
        raise EOFError
    (size,) = struct.unpack("<Q", head)
    data = stream.read(size)
    if len(data) < size:
        raise EOFError
    return pickle.loads(data)


def _child(request: dict, answer: str) -> None:
    """In a forked child: the fresh interpreter's entropy, the held clock, then the subject's fits; the answer
    is written to the file ``answer`` (whole, or not at all)."""
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    np.random.seed()  # a new interpreter's global generator: OS entropy
    random.seed()
    _hold_the_clock()
    _record_seeds()
    from audit.gate.inputs import resolve
    from reference.randomness import seeded_fits

    target = request["target"]
    obj = resolve(target) if isinstance(target, str) else pickle.loads(target)
    params = request["params"]
    if request.get("kind") == "idle":  # the idle test's fits (audit.gate.state.idle): each under the same fed bytes
        from audit.gate.state.entropy import fed
        from audit.gate.state.idle import reading

        readings = []
        for data in request["sequence"]:
            with fed(request["base"]):
                est = obj(**params)
                est.fit(*data)
            readings.append(reading(est))
        _write(answer, {"readings": readings})
        return
    observed = []
    with seeded_fits(False):
        for data in request["sequence"]:
            obs = observe_fit(lambda: obj(**params), data, request["grid"], request["classes"],
                              want=request["want"])
            observed.append(dict(obs))
    _write(answer, {"observations": observed, "seeds": list(_SEEDS)})


def _write(path: str, obj) -> None:
    with open(path + ".part", "wb") as out:
        _send(out, obj)
    os.replace(path + ".part", path)


def _template(folder: str, control: int, status: int) -> None:
    """The process every child is forked from, itself forked once before any request is read, so that every
    child starts from the same memory (the same addresses: ``id()`` repeats as it would for whoever replays a
    fresh process). On each byte of ``control`` it forks a child that answers ``folder/request`` in
    ``folder/answer``, waits for it and writes its wait status on ``status``."""
    request, answer = os.path.join(folder, "request"), os.path.join(folder, "answer")
    # One empty cycle first: the first fork, wait and status write leave objects behind in this process (the
    # struct module's format cache, among others), so the first child would otherwise start from other memory
    # than every later one, and an id() seed would differ between the first child and the second.
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    struct.pack("<i", 0)
    while os.read(control, 1):
        pid = os.fork()
        if pid == 0:  # the child
            code = 0
            try:
                with open(request, "rb") as source:
                    _child(_receive(source), answer)
            except BaseException as exc:  # noqa: BLE001 - reported to the server as the child's failure
                try:
                    _write(answer, {"error": f"{type(exc).__name__}: {exc}"[:500]})
                except Exception:  # noqa: BLE001
                    pass
                code = 1
            os._exit(code)
        _, code = os.waitpid(pid, 0)
        os.write(status, struct.pack("<i", code))
    os._exit(0)


def serve() -> None:
    """The server's loop: read a request from stdin, have the template fork a child that answers it
    (:func:`_template`), relay the answer (or why the child gave none) on the original stdout. Ends at the end of
    stdin."""
    import shutil
    import tempfile

    channel = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # anything printed here goes to stderr, never into the channel
    folder = tempfile.mkdtemp(prefix="dp-audit-fresh-")
    control_r, control_w = os.pipe()
    status_r, status_w = os.pipe()
    if os.fork() == 0:
        os.close(control_w)
        os.close(status_r)
        _template(folder, control_r, status_w)
    os.close(control_r)
    os.close(status_w)
    requests = sys.stdin.buffer
    try:
        while True:
            try:
                request = _receive(requests)
            except EOFError:
                return
            answer = os.path.join(folder, "answer")
            if os.path.exists(answer):
                os.remove(answer)
            _write(os.path.join(folder, "request"), request)
            os.write(control_w, b"f")
            (status,) = struct.unpack("<i", os.read(status_r, 4))
            got = None
            if os.path.exists(answer):
                with open(answer, "rb") as source:
                    got = _receive(source)
            if got is None:
                got = {"error": f"the fresh process ended without an answer (wait status {status}): the subject "
                                "ended it (os._exit, a crash)"}
            _send(channel, got)
    finally:
        os.close(control_w)
        shutil.rmtree(folder, ignore_errors=True)


class Zygote:
    """A server interpreter (:func:`serve`) that has imported the gate, not the subject; a context manager."""

    def __enter__(self):
        env = {k: v for k, v in os.environ.items() if k != "DPTREE_SEEDED_FITS"}
        env["PYTHONPATH"] = os.pathsep.join(p or os.getcwd() for p in sys.path)
        for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            env[name] = "1"  # one thread, so forking never copies a busy thread pool
        self.proc = subprocess.Popen([sys.executable, "-c", "from audit.gate.fresh import serve; serve()"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, cwd=os.getcwd())
        return self

    def run(self, target, params, sequence, grid, classes, want=None, **more) -> dict:
        """The observations of one fresh child fitting ``sequence`` in order, and the seeds it recorded (``more``:
        other fields of the request, e.g. the idle test's ``kind`` and ``base``)."""
        try:
            _send(self.proc.stdin, {"target": target, "params": params, "sequence": sequence, "grid": grid,
                                    "classes": classes, "want": want, **more})
            got = _receive(self.proc.stdout)
        except (EOFError, BrokenPipeError, OSError) as exc:
            raise FreshError(f"the fresh-process server stopped ({type(exc).__name__})") from exc
        if "error" in got:
            raise FreshError(got["error"])
        return got

    def __exit__(self, *exc):
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=30)
        except Exception:  # noqa: BLE001
            self.proc.kill()
            self.proc.wait()
        finally:
            self.proc.stdout.close()
        return False


# --------------------------------------------------------------------------------------------------------------
# the test

@dataclass
class FreshReport(DeterminismReport):
    """What :func:`probe_fresh` found: a :class:`audit.gate.determinism.DeterminismReport` read across fresh
    processes, with the seeds the children were handed that were the same in every one of them."""

    seeds: list = field(default_factory=list)
    counts: tuple = (0, 0)
    channel: str = "fresh processes"

    @property
    def evidence(self) -> str:
        if self.verdict != "violation":
            return self.summary()
        shown = self.shown_paths()
        x, y = self.counts
        seeds = ("; seeds handed to a generator that were the same in every fresh process (not OS entropy): "
                 + ", ".join(f"{text} to {what} at {site}" for what, text, site in self.seeds[:4])) if self.seeds \
            else ""
        return (f"across fresh processes (nothing seeded by the gate; the clock, process id and addresses held "
                f"fixed, as an adversary enumerates them): {shown}, the same in two processes at {x} of {self.fits} fits and "
                f"the neighbour's process showing it at {y} (pair {self.pair}): ε ≥ {self.epsilon_lower:.3g} "
                f"measured, ε = ∞ if {'the noise is a function of what an adversary knows' if self.seeds else 'it is a function of the data'}{seeds}")

    @property
    def remedy(self) -> str:
        if self.seeds:
            return SOURCE_REMEDY
        return (SOURCE_REMEDY + "; and keep no trace of the data in what outlives the fit (a module's cache or "
                "memo, a registry): a fresh process that fitted one dataset shows it")

    @property
    def lead(self) -> str:
        if not self.seeds:
            return ("violation across fresh processes (a value the same in every fresh process that fitted one "
                    "dataset and never in the neighbour's: noise from a source an adversary can recompute, or state "
                    "the process keeps after the fit; --determinism warn reports it without failing): ")
        return ("violation through the randomness source (noise an adversary can recompute from the code, the clock "
                "or the process: the same in every fresh process; --determinism warn reports it without failing): ")

    kind, probe = "randomness source", "fresh-process probe"

    def clean_text(self) -> str:
        return (f"no value was the same in two fresh processes and different in the neighbour's ({self.screened} "
                f"fits in 3 processes, nothing seeded by the gate, the clock, process id and addresses held fixed)")

    def to_json(self) -> dict:
        out = super().to_json()
        out.update({"channel": self.channel, "agreeing": self.counts[0], "neighbour_agreeing": self.counts[1],
                    "constant_seeds": [{"call": w, "seed": t, "site": s} for w, t, s in self.seeds]})
        return out


def _units(pairs):
    """The sequences of one round: ``A`` fits ``d_k``, ``C`` its neighbour ``d'_k``."""
    a = [d for p in pairs for d in (p.d0, p.d1)]
    c = [d for p in pairs for d in (p.d1, p.d0)]
    return a, c


def _three(zygote, target, params, pairs, rounds, grid, classes, want):
    a, c = _units(pairs)
    runs = [zygote.run(target, params, seq * rounds, grid, classes, want) for seq in (a, a, c)]
    return [r["observations"] for r in runs], runs


def _screen(obs_a, obs_b, obs_c) -> list:
    paths = {}
    for o in obs_a:
        paths.update(dict.fromkeys(o))
    found = []
    for path in paths:  # present in every process: a path that only some have is keyed by an address, or is
        # structure, which the in-process probe judges (a child's addresses follow its allocations)
        if any(path not in o for o in (*obs_a, *obs_b, *obs_c)):
            continue
        va = [o[path][0] for o in obs_a]
        # C may show A's value by chance where its own allocations went another way (an id() seed: the
        # neighbour's datasets are another size): a candidate differs in C at most positions, not at every one
        if all(b[path][0] == v for b, v in zip(obs_b, va)) and \
                2 * sum(c[path][0] == v for c, v in zip(obs_c, va)) < len(va):
            found.append(path)
    return sorted(found, key=lambda p: (p.count("#"), len(p)))  # whole values before their parts


def _constant_seeds(runs) -> list:
    a, b = runs[0]["seeds"], runs[1]["seeds"]
    return [s for s, t in zip(a, b) if s == t]


def probe_fresh(target, params, pairs, *, grid, classes, epsilon: float, delta: float = 0.0,
                alpha: float = 2.5e-4, max_positions: int = POSITIONS[-1]) -> FreshReport:
    """Fit the subject in fresh processes and find noise whose source an adversary can enumerate.

    Parameters
    ----------
    target : str or object
        ``MODULE:CALLABLE`` (imported in each child), or a picklable class or factory.
    params : dict
        The constructor's parameters, as the user gives them.
    pairs : list
        Neighbouring datasets (``d0``, ``d1``, ``description``) that ``fit`` accepts; the first two are used.
    grid, classes :
        The public probe points and classes (:func:`audit.gate.observe.observe_fit`).
    epsilon, delta : float
        The claim.
    alpha : float
        The error level of this evidence, split over the candidates (module docstring).
    max_positions : int
        The confirmation's positions at most.

    Returns
    -------
    FreshReport
    """
    report = FreshReport()
    pairs = list(pairs)[:2]
    if not pairs:
        report.verdict, report.notes = "skipped", ["no pair that fit accepts on both sides"]
        return report
    if not isinstance(target, str):
        try:
            target = pickle.dumps(target)
            pickle.dumps(params)
        except Exception as exc:  # noqa: BLE001 - a lambda, a local class
            report.verdict = "skipped"
            report.notes = [f"the subject cannot be re-imported in a fresh process ({type(exc).__name__}); give it "
                            "as MODULE:CALLABLE"]
            return report
    level = alpha / MAX_PATHS
    n = next((m for m in POSITIONS if m <= max_positions and
              epsilon_lower_bound(m, m, m // 8, m, delta=delta, alpha=level) > epsilon), None)
    try:
        with Zygote() as zygote:
            screened, runs = _three(zygote, target, params, pairs, SCREEN_ROUNDS, grid, classes, None)
            report.screened = 3 * len(screened[0])
            cands = _screen(*screened)[:MAX_PATHS]
            if not cands:
                return report
            if n is None:
                report.verdict = "inconclusive"
                report.notes.append(f"{len(cands)} value(s) were the same in two fresh processes and different in "
                                    f"the neighbour's (e.g. {cands[0]}); {max_positions} fits cannot show a loss "
                                    f"above the claim {epsilon:g}")
                return report
            rounds = -(-n // (2 * len(pairs)))
            want = {source_of(p) for p in cands}
            confirmed, again = _three(zygote, target, params, pairs, rounds, grid, classes, want)
    except FreshError as exc:
        report.verdict, report.notes = "skipped", [str(exc)]
        return report
    _confirm(report, cands, confirmed, pairs, n, delta, level, epsilon)
    report.seeds = _constant_seeds(runs) if report.verdict == "violation" else []
    return report


def idle_readings(target, params, inputs, base: bytes, processes: int = 3):
    """Per fresh process, the readings (:func:`audit.gate.state.idle.reading`) of ``inputs`` fitted in order, each
    fit's own draws fed ``base`` (:func:`audit.gate.state.entropy.fed`): randomness drawn before the fit (at import)
    is new in each process, everything the fit draws is the same. A text saying why there are none when the
    subject cannot be re-imported or a process failed."""
    if not isinstance(target, str):
        try:
            target = pickle.dumps(target)
            pickle.dumps(params)
        except Exception as exc:  # noqa: BLE001 - a lambda, a local class
            return f"the subject cannot be re-imported in a fresh process ({type(exc).__name__})"
    try:
        with Zygote() as zygote:
            return [zygote.run(target, params, list(inputs), None, None, kind="idle", base=base)["readings"]
                    for _ in range(processes)]
    except FreshError as exc:
        return f"a fresh process failed ({exc})"


def _confirm(report, cands, confirmed, pairs, n, delta, level, epsilon) -> None:
    obs_a, obs_b, obs_c = (o[:n] for o in confirmed)
    best = None
    for path in cands:
        va = [o.get(path, ABSENT) for o in obs_a]
        x = sum(b.get(path, ABSENT)[0] == v[0] for b, v in zip(obs_b, va))
        y = sum(c.get(path, ABSENT)[0] == v[0] for c, v in zip(obs_c, va))
        bound = float(epsilon_lower_bound(x, len(va), y, len(va), delta=delta, alpha=level))
        if bound > epsilon and (best is None or bound > best[0]):
            best = (bound, path, va[0][1], obs_c[0].get(path, ABSENT)[1], x, y)
    if best is None:
        return
    bound, path, on_d, on_d1, x, y = best
    report.verdict, report.pair, report.fits, report.epsilon_lower = "violation", pairs[0].description, n, bound
    report.paths = [{"path": path, "on_d": on_d, "on_d1": on_d1, "record_count": False}]
    report.counts = (x, y)
