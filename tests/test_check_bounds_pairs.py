"""The neighbour search builds one-vs-two-record pairs at the public bounds' corners, and the scale family keeps the
claim's neighbour relation.

Deterministic: the pairs generated (no sampling). Statistical: ``check`` at alpha 0.05 with fixed seeds and 2,000
outputs per input; the correct mean would be flagged with probability at most 0.05 under another seed.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from audit.__main__ import main
from audit.engine.scale import SCALE_PATTERNS, _pair
from audit.engine.search import FAMILIES, candidate_pairs

HERE = Path(__file__).parent


@pytest.fixture(autouse=True)
def subjects_on_path(monkeypatch):
    monkeypatch.syspath_prepend(str(HERE))


@pytest.mark.parametrize("d", [1, 2, 3])
def test_one_vs_two_records_at_the_corners_under_add_remove(d):
    bounds = [(-1.0, 3.0)] * d
    pairs = [p for p in candidate_pairs(bounds, ["a", "b"]) if p.description.startswith(f"[{FAMILIES[10]}]")]
    assert len(pairs) == 4
    for p in pairs:
        (X0, y0), (X1, y1) = p.d0, p.d1
        assert (len(y0), len(y1)) == (1, 2) and np.array_equal(X1[:1], X0)
        assert set(np.unique(X1)) <= {-1.0, 3.0} and set(y1) <= {"a", "b"}
    far = [p for p in pairs if not np.array_equal(p.d1[0][0], p.d1[0][1])]
    assert len(far) == 2  # the second record at the opposite corner, with the other label


def test_under_substitution_the_records_move_corner_to_corner_and_sizes_stay():
    pairs = [p for p in candidate_pairs([(0.0, 1.0)], [0, 1], "substitute")
             if p.description.startswith(f"[{FAMILIES[10]}]")]
    assert pairs and all(len(p.d0[1]) == len(p.d1[1]) for p in pairs)
    assert all(p.relation == "substitute" for p in pairs)


@pytest.mark.parametrize("pattern", SCALE_PATTERNS)
def test_the_scale_family_keeps_the_substitute_relation(pattern):
    p = _pair(pattern, 40, [(0.0, 1.0)], [0, 1], "substitute")
    assert len(p.d0[1]) == len(p.d1[1]) == 40 and "replaced" in p.description and "vs 41" not in p.description
    assert np.array_equal(p.d0[0][:-1], p.d1[0][:-1])


@pytest.mark.parametrize("fixed, code", [(False, 1), (True, 0)])
def test_a_mean_whose_noise_is_right_from_two_records_on_is_flagged_and_its_fix_passes(tmp_path, fixed, code):
    params = json.dumps({"fixed": fixed})
    assert main(["check", "subjects.bounded_mean:NoisyMean", "--epsilon", "1", "--params", params, "--no-scale",
                 "--n-samples", "2000", "--bounds", "[[0, 1]]", "--classes", "0,1", "--quiet",
                 "--out", str(tmp_path)]) == code
    row = json.loads((tmp_path / "check-subjects.bounded_mean-NoisyMean" / "report.json").read_text())["claims"][0]
    if code:  # the leak lives on one record vs two at opposite bounds (loss 2 there, at most 4/3 elsewhere)
        assert row["winning_pair"].startswith(f"[{FAMILIES[10]}]") and row["epsilon_lower"] > 1


def test_bounds_that_exclude_the_data_are_said_in_the_console_and_the_report(tmp_path, capsys):
    """Iris against the public domain [0, 1]^4: its records lie outside, which the old gate never said."""
    import json

    from audit.__main__ import main

    code = main(["check", "subjects.shipped_leaks:Correct", "--epsilon", "1", "--data", "builtin:iris", "--bounds",
                 "[[0, 1], [0, 1], [0, 1], [0, 1]]", "--classes", "0,1,2", "--n-samples", "2000", "--no-scale",
                 "--no-search", "--out", str(tmp_path)])
    assert code in (0, 1)
    assert "records of the dataset builtin:iris lie outside --bounds" in capsys.readouterr().out
    row = json.loads(next(tmp_path.rglob("report.json")).read_text())["claims"][0]
    assert "lie outside --bounds" in row["detail"]


@pytest.mark.parametrize("relation", ["add-remove", "substitute"])
def test_pair_names_write_records_without_float_noise(relation):
    """A record on the grid ``lo + (hi - lo) q`` is named as a reader writes it: the iris-like bounds of the
    claims-file example put 0.33999999999999997 in a name, which now reads 0.34 (the datasets keep their values)."""
    bounds = [(4.3, 7.9), (2.0, 4.4), (1.0, 6.9), (0.1, 2.5)]
    pairs = candidate_pairs(bounds, [0, 1, 2], relation)
    named = " ".join(p.description for p in pairs)
    assert "record at [" in named and not any(noise in named for noise in ("99999999", "00000001"))
    assert any(np.isclose(p.d0[0], 0.34).any() or np.isclose(p.d1[0], 0.34).any() for p in pairs)
