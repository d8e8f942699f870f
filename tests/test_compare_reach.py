"""The oracle on bugs of real implementations: inputs that reach them, ties, and wiring.

Statistical checks use fixed seeds; each "same" verdict is a Holm-corrected family at alpha = 0.01 (its
false-alarm rate 0.01); the "different" verdicts are the power being checked. The noise-off tie-set check is
deterministic; its two-sample part is a Holm family at alpha 0.01.
"""
import json
from pathlib import Path

import numpy as np
import pytest

from audit.__main__ import main
from audit.frontends.compare_command import accounting_label, first_disagreement, params_suffix
from audit.engine.comparison.compare import compare_distributions
from audit.results.learner_references import LEARNERS, fitted_mechanism, resolve_reference
from audit.oracle.reach_cases import EdgeOffByOne, LabelsAsIndices
from reference.privatree import PrivaTreeClassifier

HERE = Path(__file__).parent
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
REF = LEARNERS["privatree"]


def _inputs(*names):
    return [i for i in REF.inputs if any(n in i[0] for n in names)]


def _compare(cls, inputs, n=500, seed=0):
    cand, refm, _ = resolve_reference(REF, cls, dict(REF.params), {})
    return compare_distributions(cand, refm, inputs, n_samples=n, alpha=0.01, seed=seed)


def test_the_built_in_inputs_reach_edges_bounds_single_records_and_labels_1_2():
    names = [name for name, _ in REF.inputs]
    assert any("bin edges and bounds" in n for n in names) and any("one per bin" in n for n in names)
    X, y = dict(REF.inputs)["8 records on bin edges and bounds"]
    assert {0.0, 0.25, 0.5, 0.75, 1.0} <= set(X[:, 0].tolist())  # the edges of 4 bins and both bounds
    assert set(dict(REF.inputs)["8 records, labels {1, 2}"][1].tolist()) == {1, 2}


def test_the_edge_off_by_one_and_the_labels_as_indices_bugs_read_different():
    # 500 draws per side on the input that reaches each bug (the whole family at quick is slower: see the guide)
    assert _compare(EdgeOffByOne, _inputs("bin edges")).rejected
    assert _compare(LabelsAsIndices, _inputs("labels {1, 2}")).rejected
    # the reference against itself on the same inputs: false-alarm rate <= 0.01
    assert not _compare(PrivaTreeClassifier, _inputs("bin edges", "labels {1, 2}")).rejected


def test_noise_off_accepts_any_release_in_the_tie_set_and_tests_its_split(cli, capsys):
    # the reference's class under another seed: in the tie set, the same split (deterministic + alpha 0.01)
    assert cli("subjects.oracle_learners:Same_privatree", "--reference", "privatree", "--noise", "off",
               "--samples", "60") == 0
    out = capsys.readouterr().out
    assert "tie set" in out and "tie split on generated dataset" in out
    # always the first class of most records: every release in the tie set, but the split differs
    assert cli("subjects.oracle_ties:FirstMaxLeaves", "--reference", "privatree", "--noise", "off",
               "--samples", "60") == 1
    assert "split within the reference's tie set differs" in capsys.readouterr().out


def test_noise_off_names_the_side_that_raised_and_refuses_a_candidate_without_release(cli, capsys):
    assert cli("subjects.oracle_ties:Crashing", "--reference", "privatree", "--noise", "off", "--samples", "60") == 1
    assert "candidate raised UnboundLocalError" in capsys.readouterr().out
    assert cli("subjects.oracle_ties:NoRelease", "--reference", "privatree", "--noise", "off") == 2
    assert "has no release()" in capsys.readouterr().err


def test_two_sample_errors_name_the_side(cli, capsys):
    # a candidate that raises where the reference fits is different (exit 1), and the message says so
    assert cli("subjects.oracle_ties:Crashing", "--reference", "privatree", "--samples", "20") == 1
    out = capsys.readouterr().out
    assert "DIFFERENT: candidate raised on input" in out and "UnboundLocalError" in out
    from audit.engine.comparison.compare import compare_distributions
    from audit.engine.estimation.sampling import MechanismOutputError

    def boom(data, rng):
        raise RuntimeError("no")

    with pytest.raises(MechanismOutputError, match="^reference raised on input 'x'"):
        compare_distributions(lambda d, r: 0.0, boom, [("x", 1.0)], n_samples=5)


def test_seeds_reach_an_estimator_that_reads_them_in_init(monkeypatch):
    monkeypatch.syspath_prepend(str(HERE))
    from subjects.oracle_ties import SeedInInit

    m = fitted_mechanism(SeedInInit, dict(REF.params), REF, True)
    data = dict(REF.inputs)["8 records, noisy labels"]
    draws = [[m(data, rng) for _ in range(20)] for rng in (np.random.default_rng(3), np.random.default_rng(3))]
    assert draws[0] == draws[1]  # the seed decided the fits: it reached __init__


def test_report_folders_carry_the_parameters_and_labels_the_accounting(cli, capsys):
    assert params_suffix(None) == "" and params_suffix('{"epsilon": 2}') != params_suffix('{"epsilon": 3}')
    for eps in ("2", "3"):
        assert cli("subjects.oracle_learners:Same_privatree", "--reference", "privatree", "--samples", "30",
                   "--params", f'{{"epsilon": {eps}}}', "--alpha", "1e-6") == 0
    folders = sorted(p.name for p in cli.out.iterdir() if p.name.startswith("compare-"))
    assert len(folders) == 2 and all("-pepsilon_" in f for f in folders), folders
    assert accounting_label("DiPriMe, strict accounting", {"accounting": "paper"}) == "DiPriMe, paper accounting"
    assert main(["compare", "--reference", "list", "--params", '{"accounting": "paper"}']) == 0
    out = capsys.readouterr().out
    line = next(ln for ln in out.splitlines() if ln.strip().startswith("diprime-classifier"))
    assert "paper accounting" in line and "strict" not in line


def test_user_and_generated_inputs_are_added(cli, tmp_path):
    csv = tmp_path / "mine.csv"
    csv.write_text("x0,x1,y\n0.25,0.5,0\n0.5,0.75,1\n1.0,0.0,1\n")
    assert cli("subjects.oracle_learners:Same_privatree", "--reference", "privatree", "--samples", "30",
               "--inputs", str(csv), "--inputs", "subjects.oracle_ties:extra_inputs", "--generated", "2",
               "--alpha", "1e-6") == 0
    folder = next(p for p in cli.out.iterdir() if p.name.startswith("compare-"))
    notes = " ".join(json.loads((folder / "report.json").read_text())["notes"])
    assert "mine.csv" in notes and "2 records at the corners" in notes and "generated #1" in notes
    assert f"{len(REF.inputs) + 5} public inputs" in notes


def test_a_different_verdict_names_the_first_probe_point_that_disagrees():
    probe = np.array([[0.1, 0.1], [0.1, 0.9], [0.9, 0.1]])
    diffs = [((0, 0, 1), 90, 10), ((0, 1, 1), 10, 90)]
    text = first_disagreement(diffs, probe)
    assert "#1 (0.1, 0.9)" in text and "reference 0, candidate 1" in text
    assert first_disagreement(diffs, None) == ""
