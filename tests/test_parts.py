"""A run's parts side by side (audit.engine.estimation.parts): the same results, in the listed order, as one process gives;
a part's exception reaches the caller; finished estimates of every worker reach the checkpoint file; ``run``'s
default ``--jobs`` is the cores available. Deterministic: no false alarm possible."""
import json

import numpy as np
import pytest

from audit import checkpoint, sampling
from audit.__main__ import build_parser, available_cores
from audit.engine.estimation.estimate import Claim, audit_pairs
from audit.engine.estimation.parts import Part, run_parts


def _draws(seed: int):
    return np.random.default_rng(seed).integers(0, 1000, size=5).tolist()


def _fail():
    raise ValueError("part failed on purpose")


def _parts():
    # costs out of order: the queue takes the costliest first, the results come back as listed
    return [Part(f"p{k}", lambda k=k: _draws(k), cost) for k, cost in enumerate((1, 9, 3, 7))]


def test_parts_give_the_single_process_results_in_order():
    serial = list(run_parts(_parts()))
    assert serial == [_draws(k) for k in range(4)]
    with sampling.jobs(2):
        assert list(run_parts(_parts())) == serial


def test_a_failing_part_raises_in_the_caller():
    with sampling.jobs(2), pytest.raises(ValueError, match="on purpose"):
        list(run_parts([Part("ok", lambda: 1), Part("bad", _fail)]))


def _coin(data, rng):
    return int(rng.random() < (0.5 if data == "a" else 0.6))


def _audit_part(name: str):
    with checkpoint.scope(name):
        return audit_pairs(_coin, [("a", "b")], Claim(1.0), n_samples=2000, seed=1).epsilon_lower


def test_every_worker_saves_its_estimates_in_the_one_checkpoint(tmp_path):
    path = tmp_path / ".ck.json"
    parts = [Part(f"part{k}", lambda k=k: _audit_part(f"part{k}")) for k in range(3)]
    with checkpoint.active(path, resume=False), sampling.jobs(2):
        bounds = list(run_parts(parts))
    saved = json.loads(path.read_text())
    assert {key.split("|")[0] for key in saved} == {"part0", "part1", "part2"}
    assert bounds[0] == bounds[1] == bounds[2]  # the same seed in each part


def test_run_uses_every_available_core_by_default():
    assert build_parser().parse_args(["run", "privatree"]).jobs is None  # resolved to the cores when dispatched
    assert available_cores() >= 1


@pytest.mark.parametrize("jobs", [1, 2])
def test_each_part_is_announced_as_it_finishes_with_its_time_when_the_output_is_a_file(jobs):
    """A run whose output goes to a file (CI) prints a line per finished part, with the elapsed time and the part's
    own, whether it runs in one process or in workers; ``--quiet`` (no lines) prints none."""
    import io
    import re

    from audit.engine.runs import progress

    for lines in (True, False):
        out = io.StringIO()  # not a terminal
        with progress.listening(progress.Console(lines=lines, bar=False, stream=out)), sampling.jobs(jobs):
            assert list(run_parts(_parts())) == [_draws(k) for k in range(4)]
        said = out.getvalue().splitlines()
        if not lines:
            assert said == []
            continue
        assert len(said) == 4 and all(re.fullmatch(r"\[ +\d+ s\]   part \d/4 done: p\d \(\d+\.\d s\)", s) for s in said)
        assert sorted(re.search(r"done: (p\d)", s).group(1) for s in said) == ["p0", "p1", "p2", "p3"]
        assert [re.search(r"part (\d)/4", s).group(1) for s in said] == ["1", "2", "3", "4"]
