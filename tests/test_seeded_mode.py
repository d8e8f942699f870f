"""Seeded mode stays where it was asked for (``reference.randomness``; issue 43, item 4).

The mode is a context variable: a ``seeded_fits()`` block holds in its own thread only, blocks that overlap in
threads cannot leave it on, ``audit.__main__.main`` gives back the mode it found, a worker process gets it only
when it is handed over (``in_current_mode``), and a fit that ignores an integer seed says so once per class.

Each test sets the process default to off (``_PROCESS_DEFAULT``, what a process started without
``DPTREE_SEEDED_FITS=1`` has) so that it does not depend on how the session was started. The order of events
across threads is forced with ``threading.Barrier`` and ``threading.Event``, and default-mode fits count their
draws of OS entropy instead of comparing random releases: every test is deterministic, no false-alarm rate to
state.
"""
from __future__ import annotations

import multiprocessing
import os
import threading
import warnings

import numpy as np
import pytest

import reference.randomness as randomness
from reference.randomness import (SEEDED_FITS_ENV, SeedIgnoredWarning, in_current_mode, seeded_fits,
                                  seeded_fits_enabled)

RNG = np.random.default_rng(0)
X = RNG.random((40, 2))
Y = (X[:, 0] > 0.5).astype(int)


@pytest.fixture(autouse=True)
def process_default_off(monkeypatch):
    monkeypatch.setattr(randomness, "_PROCESS_DEFAULT", False)


def _in_thread(target, *args):
    """Start ``target(*args)`` in a new thread; the caller joins it."""
    t = threading.Thread(target=target, args=args)
    t.start()
    return t


def _privatree(random_state):
    from reference.privatree import PrivaTreeClassifier

    return PrivaTreeClassifier(epsilon=1.0, max_depth=2, bounds=[(0, 1), (0, 1)], classes=[0, 1], n_public=40,
                               random_state=random_state)


def test_blocks_that_overlap_in_threads_leave_the_mode_off():
    """A enters, B enters while A is inside, A leaves first, then B: the order in which an environment
    variable saved and restored by each block stays on for good."""
    both_inside = threading.Barrier(2)
    a_left = threading.Event()
    a_inside = threading.Event()
    seen = {}

    def first():
        with seeded_fits():
            a_inside.set()
            both_inside.wait(timeout=30)
            seen["a inside"] = seeded_fits_enabled()
        a_left.set()
        seen["a after"] = seeded_fits_enabled()

    def second():
        a_inside.wait(timeout=30)
        with seeded_fits():
            both_inside.wait(timeout=30)
            a_left.wait(timeout=30)
            seen["b inside, a gone"] = seeded_fits_enabled()
        seen["b after"] = seeded_fits_enabled()

    for t in [_in_thread(first), _in_thread(second)]:
        t.join(timeout=60)
    later = {}
    _in_thread(lambda: later.setdefault("new thread", seeded_fits_enabled())).join(timeout=60)
    assert seen == {"a inside": True, "a after": False, "b inside, a gone": True, "b after": False}
    assert later == {"new thread": False}
    assert os.environ.get(SEEDED_FITS_ENV) == os.environ.get(SEEDED_FITS_ENV)  # untouched (read only)


def test_a_block_in_one_thread_does_not_seed_another_threads_fit(monkeypatch):
    """While thread A sits inside ``seeded_fits()``, thread B fits PrivaTree with ``random_state=0`` twice:
    each fit draws fresh OS entropy (counted), so the two fits differ; inside its own block B's fits draw
    none and give one release."""
    draws = []
    real = randomness._os_entropy
    monkeypatch.setattr(randomness, "_os_entropy", lambda: draws.append(threading.current_thread().name) or real())
    monkeypatch.setattr(randomness, "_WARNED", set())
    a_inside, b_done = threading.Event(), threading.Event()
    out = {}

    def auditing():
        with seeded_fits():
            a_inside.set()
            b_done.wait(timeout=60)
            out["a"] = seeded_fits_enabled()

    def production():
        a_inside.wait(timeout=30)
        out["b mode"] = seeded_fits_enabled()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SeedIgnoredWarning)
            _privatree(0).fit(X, Y), _privatree(0).fit(X, Y)
        out["b default draws"] = draws.count("production")
        with seeded_fits():
            out["b seeded same"] = _privatree(0).fit(X, Y).release() == _privatree(0).fit(X, Y).release()
        out["b seeded draws"] = draws.count("production") - out["b default draws"]
        b_done.set()

    threads = [threading.Thread(target=auditing, name="auditing"), threading.Thread(target=production,
                                                                                   name="production")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert out == {"a": True, "b mode": False, "b default draws": 2, "b seeded same": True, "b seeded draws": 0}


def test_main_in_process_gives_back_the_mode_it_found(monkeypatch, capsys):
    import audit.__main__ as cli

    env_before = os.environ.get(SEEDED_FITS_ENV)
    with seeded_fits(False):
        assert cli.main(["list"]) == 0
        assert not seeded_fits_enabled()
        inside = []
        monkeypatch.setattr(cli, "_dispatch", lambda args: inside.append(seeded_fits_enabled()) or 0)
        assert cli.main(["list"]) == 0
        assert inside == [True]  # the command itself ran seeded
        assert not seeded_fits_enabled()
        monkeypatch.setattr(cli, "_dispatch", lambda args: 1 / 0)
        with pytest.raises(ZeroDivisionError):
            cli.main(["list"])
        assert not seeded_fits_enabled()  # restored on an exception too
    assert os.environ.get(SEEDED_FITS_ENV) == env_before  # main() does not touch the environment
    assert "privatree" in capsys.readouterr().out


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_a_worker_process_gets_the_mode_only_when_handed_over(method, monkeypatch):
    """A pool started inside the block: its workers run in the process default (off: a forked child resets
    the block's mode; a spawned one, started without the variable, reads its own environment), unless the
    task carries the mode (``in_current_mode``)."""
    if method not in multiprocessing.get_all_start_methods():
        pytest.skip(f"no {method} start method here")
    monkeypatch.delenv(SEEDED_FITS_ENV, raising=False)
    with seeded_fits():
        with multiprocessing.get_context(method).Pool(1) as pool:
            plain = pool.apply(seeded_fits_enabled)
            carried = pool.apply(in_current_mode(seeded_fits_enabled))
    with seeded_fits(False):
        off = in_current_mode(seeded_fits_enabled)
    assert (plain, carried, off()) == (False, True, False)


def test_an_ignored_seed_warns_once_per_class_and_names_seeded_fits(monkeypatch):
    from reference.baselines.bdpt import BDPTClassifier

    monkeypatch.setattr(randomness, "_WARNED", set())
    with seeded_fits(False), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _privatree(0).fit(X, Y)
        _privatree(np.random.default_rng(1)).fit(X, Y)
        _privatree(None).fit(X, Y)  # nothing ignored: no warning
        for seed in (0, 1):
            BDPTClassifier(epsilon=1.0, max_depth=2, classes=[0, 1],
                           random_state=seed).fit(X, Y)
    with seeded_fits(), warnings.catch_warnings(record=True) as seeded:
        warnings.simplefilter("always")
        monkeypatch.setattr(randomness, "_WARNED", set())
        _privatree(0).fit(X, Y)
    ours = [w for w in caught if issubclass(w.category, SeedIgnoredWarning)]
    assert len(ours) == 2, [str(w.message) for w in ours]
    assert "PrivaTreeClassifier" in str(ours[0].message) and "BDPTClassifier" in str(ours[1].message)
    assert all("reference.randomness.seeded_fits()" in str(w.message) for w in ours)
    assert issubclass(SeedIgnoredWarning, UserWarning)
    assert not [w for w in seeded if issubclass(w.category, SeedIgnoredWarning)]
