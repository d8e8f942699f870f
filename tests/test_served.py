"""What the objects within reach of a model serve through their methods, read in a forked sandbox
(``audit.gate.served``). Every test here is exact: the sandbox either let a side effect through or did not."""
from __future__ import annotations

import functools
import hashlib
import os
import sys

import numpy as np
import pytest

from audit.gate import served
from audit.gate.observe import _observed, observe_fit

pytestmark = pytest.mark.skipif(not hasattr(os, "fork") or sys.platform != "linux", reason="the sandbox forks (Linux)")


class _Acts:
    """An object whose methods act on the world, or spin, or count on being called alone."""

    def __init__(self, path, handle):
        self.path, self.handle, self.calls = path, handle, 0

    def delete(self):
        os.remove(self.path)

    def overwrite(self):
        with open(self.path, "w") as f:
            f.write("gone")

    def scribble(self):
        self.handle.write("scribbled\n")
        self.handle.flush()

    def spin(self):
        while True:
            pass

    def leave(self):
        sys.exit(3)

    def tick(self):
        self.calls += 1
        return self.calls


def _read(obj, path="model.thing"):
    got, complete = served.read([(path, obj)], _observed)
    return {k: v[1] for k, v in got.items()}, complete


def test_a_method_cannot_touch_a_file_the_process_can_reach(tmp_path, monkeypatch):
    monkeypatch.setattr(served, "CPU_SECONDS", 0.3)
    target, log = tmp_path / "kept.txt", tmp_path / "log.txt"
    target.write_text("the user's file")
    with open(log, "a") as handle:
        got, complete = _read(_Acts(str(target), handle))
    assert complete and target.read_text() == "the user's file" and log.read_text() == ""
    assert "PermissionError" in got["served model.thing.delete()"]
    assert "PermissionError" in got["served model.thing.overwrite()"]
    assert "TimeoutError" in got["served model.thing.spin()"]  # CPU, not wall: the machine's load decides nothing
    assert "SystemExit" in got["served model.thing.leave()"]
    # every call sees the object as the fit left it: tick() was not called before by another call's sandbox
    assert got["served model.thing.tick()"] == "1"


def test_a_command_does_not_empty_what_a_later_query_reads():
    memo = functools.lru_cache(maxsize=None)(lambda k: k)
    for k in (1, 1, 2, 1):
        memo(k)
    got, complete = _read(memo)
    assert complete and got["served model.thing.cache_clear()"] == "None"
    assert (got["served model.thing.cache_info()[0]"], got["served model.thing.cache_info()[1]"]) == ("2", "2")
    assert memo.cache_info().hits == 2  # and nothing changed here


def test_a_c_object_serves_what_no_attribute_shows():
    h = hashlib.sha256(b"labels 0 1 1")
    got, _ = _read(h)
    assert got["served model.thing.hexdigest()"].strip("'").startswith(hashlib.sha256(b"labels 0 1 1").hexdigest()[:20])


@pytest.mark.parametrize("value,expected", [(3, False), ("text", False), ([1, 2], False), (np.arange(3), False),
                                            (np.random.default_rng(0), False), (hashlib.sha256(), True),
                                            (functools.lru_cache()(len), True), (os, False), (len, False)])
def test_which_objects_are_asked(value, expected):
    assert served.eligible(value) is expected


def test_the_switch_scan_does_not_fork(monkeypatch):
    """Reading structure needs no served value: ``serve=False`` asks nothing (a forked process per fit)."""
    from subjects.served_in_reach import HelperSummary

    asked = []
    monkeypatch.setattr(served, "read", lambda targets, observe: asked.append(targets) or ({}, True))
    data, grid = (np.zeros((4, 1)), np.array([0, 1, 1, 0])), np.zeros((2, 1))
    observe_fit(HelperSummary, data, grid, classes=[0, 1], serve=False)
    assert asked == []
    observe_fit(HelperSummary, data, grid, classes=[0, 1])
    assert [path for path, _ in asked[0]] == ["model._summary"]
