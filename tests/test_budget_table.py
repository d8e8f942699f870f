"""The samples each budget really draws (audit.frontends.samples.samples_table) against what runs drew: every row of
the committed full privatree report, rows of a quick privatree run, and a quick check. Deterministic (fixed seeds):
no false alarm possible. Also: a run's sampled pass carries its power, and an inconclusive one says so."""
import json
from pathlib import Path

import pytest

from audit.__main__ import main
from audit.engine.runs.budget import SAMPLES
from audit.frontends.samples import family_of, samples_table, table_text

ROOT = Path(__file__).resolve().parents[1]


def test_every_committed_privatree_row_drew_what_the_table_states():
    data = json.loads((ROOT / "reports" / "privatree" / "report.json").read_text())
    assert data["budget"] == "full"
    for kind in ("claim", "mutant"):
        for row in data[kind + "s"]:
            fam = family_of("privatree", kind, row["id"])
            assert fam.sizes["full"] == row["n_samples"], (row["id"], fam.name)


@pytest.fixture(scope="module")
def quick_baselines():
    from audit.privatree.claims import baseline_claims

    return baseline_claims("quick", 0)


def test_quick_privatree_rows_drew_what_the_table_states(quick_baselines):
    from audit.privatree.claims import _mutant_part

    rows = [("claim", r) for r in quick_baselines]
    rows += [("mutant", r) for k in (0, 1) for r in _mutant_part(k, "quick", 0)]
    sizes = {r["n_samples"] for _, r in rows}
    assert len(sizes) >= 3  # three different families, none of them the check's 20,000
    for kind, row in rows:
        assert family_of("privatree", kind, row["id"]).sizes["quick"] == row["n_samples"], row["id"]


def test_a_quick_check_draws_the_tables_number(tmp_path):
    assert main(["check", "subjects.noise:MyLaplace", "--epsilon", "1", "--params", '{"epsilon": 1}',
                 "--no-float-probe", "--out", str(tmp_path), "--quiet"]) == 0
    (path,) = tmp_path.glob("*/report.json")
    (row,) = json.loads(path.read_text())["claims"]
    assert row["n_samples"] == family_of(None, "claim", row["id"]).sizes["quick"] == SAMPLES["quick"]


def test_the_table_text_and_bad_targets():
    text = "\n".join(table_text("privatree"))
    assert "| strict PrivaTree (batched path) | 10,000 | 60,000 | 1,000,000 |" in text
    names = [f.name for f in samples_table(None)]
    assert len(names) == 9 and "check: the first look of an estimator's group-sequential confirmation" in names
    first_look = next(f for f in samples_table(None) if f.name.startswith("check: the first look"))
    assert first_look.sizes["quick"] == 1_250 and first_look.sizes["full"] == 62_500
    with pytest.raises(ValueError, match="target must be one of"):
        samples_table("no-such-target")
    with pytest.raises(ValueError, match="no sample family"):
        family_of("privatree", "theorem", "corollary1/pf-worst/K=2@0.1")


def test_a_run_pass_states_its_power(quick_baselines):
    (tree, *_) = quick_baselines  # the random tree at 600 fits per input: a pass
    assert tree["verdict"] == "pass" and tree["power"] in ("conclusive", "inconclusive")
    assert ("inconclusive pass" in tree["detail"]) == (tree["power"] == "inconclusive")
    if tree["detectable_loss"] is not None:
        assert (tree["detectable_loss"] > 1.25 * tree["epsilon_claimed"]) == (tree["power"] == "inconclusive")
