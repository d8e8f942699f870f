"""The ``quick`` subset of the suite: ``python -m pytest -m quick``.

A representative set of fast tests covering each package (the mechanisms, ledger and tree; every learner and
its scikit-learn conventions; the estimator, events, laws and reports of the engine; check, compare, certify,
the command line and the reproductions' framework), within five minutes on two cores (about 150 s on a loaded
machine). :data:`QUICK` names the modules, each whole or with its slower tests (3 s or more each, measured with
``--durations``) left out; ``tests/test_quick_subset.py`` holds the names to the files, so the list cannot rot.

The session fits in seeded mode (``reference.randomness``): the same seed gives the same fit, so every
statistical test here runs at a fixed seed. The session's main thread enters ``seeded_fits()`` here, for the
whole session (threads and worker processes the tests start get the mode only when it is handed to them, as
the auditor does); ``DPTREE_SEEDED_FITS=1`` is put in the environment so that the commands the tests start
(``python -m`` ..., a child ``pytest``) fit in seeded mode from their start. Tests of the privacy-first
default fit inside ``seeded_fits(False)``. The witness store is off (``DP_AUDIT_WITNESSES=off``) unless a test
names one.
"""
from __future__ import annotations

import os

import pytest

from reference.randomness import SEEDED_FITS_ENV, seeded_fits

os.environ[SEEDED_FITS_ENV] = "1"  # read by the processes the tests start (this one read it at its first import)
# No witness store unless a test names one (tests/test_witnesses.py uses a folder of its own): the default,
# .dp-audit in the working directory, would carry evidence from one test (or one CI run) to the next.
os.environ["DP_AUDIT_WITNESSES"] = "off"
_SESSION_MODE = seeded_fits()  # kept: a collected generator would leave the block
_SESSION_MODE.__enter__()  # the session's main thread, never left (module docstring)

#: test module -> the test functions it leaves out of the quick subset (empty: the whole module)
QUICK: dict[str, frozenset] = {
    # reference: mechanisms, ledger, tree, learners
    "test_ledger": frozenset(),
    "test_tree": frozenset(),
    "test_discrete_noise": frozenset(),
    "test_exact_sums": frozenset(),
    "test_mechanism_laws": frozenset(),
    "test_grid_selection": frozenset(),
    "test_exact_privacy": frozenset(),
    "test_jointexp": frozenset({"test_batched_backward_pass_has_the_exact_grid_law",
                                "test_sampled_interval_law_matches_enumeration"}),
    "test_privatree": frozenset({"test_strict_rows_within_the_law_show_the_exact_loss_and_a_tight_bound"}),
    "test_privatree_batch": frozenset({"test_joint_exp_batch_has_the_reference_law",
                                       "test_oracle_accepts_the_batched_path"}),
    "test_privatree_baselines": frozenset(),
    "test_diprime": frozenset({"test_paper_empty_leaf_fallback_is_caught", "test_strict_forest_passes_a_small_audit"}),
    "test_random_trees": frozenset({"test_audit_detects_the_flawed_scales_and_passes_the_correct_ones",
                                    "test_batched_forests_have_the_distribution_of_single_fits"}),
    "test_lpdt": frozenset({"test_dense_reports_and_summaries_agree_in_law"}),
    "test_sklearn_conventions": frozenset(),
    "test_bad_parameters": frozenset(),
    "test_out_of_bounds": frozenset({"test_the_privatree_audit_parts_raise_no_out_of_bounds_warning"}),
    # audit: engine, front ends, reports
    "test_estimate": frozenset({"test_mutants_are_detected"}),
    "test_law_event": frozenset(),
    "test_parts": frozenset(),
    "test_destination": frozenset(),
    "test_layout": frozenset(),
    "test_report_render": frozenset(),
    "test_figures": frozenset(),
    "test_theorem_readings": frozenset(),
    "test_check": frozenset({"test_check_an_estimator_under_substitution"}),
    "test_check_console": frozenset({"test_check_shows_each_pair_screened_and_confirmed_with_the_time_left_on_a_terminal",
                                     "test_params_accepts_a_python_literal_and_a_factory"}),
    "test_compare": frozenset(),
    "test_oracle_deterministic": frozenset(),
    "test_certify_map": frozenset(),
    "test_data_fetch": frozenset(),
    "test_reproduce_framework": frozenset(),
    "test_reproduce_offline": frozenset({"test_smoke_runs_offline_on_a_bundled_set",
                                         "test_smoke_command_leaves_the_working_tree_clean"}),
    "test_quick_subset": frozenset(),
}


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Mark the tests :data:`QUICK` chooses (before ``-m`` selects), never a slow or release one."""
    for item in items:
        left_out = QUICK.get(item.path.stem)
        if left_out is None or getattr(item, "originalname", item.name) in left_out:
            continue
        if item.get_closest_marker("slow") is None and item.get_closest_marker("release") is None:
            item.add_marker(pytest.mark.quick)


@pytest.fixture
def cli(tmp_path, monkeypatch):
    """``cli(*args, seed=1)``: ``python -m audit compare *args`` in-process, quiet, its reports in ``cli.out`` (a
    temporary folder); ``tests/`` on the path so that ``subjects.*`` candidates import."""
    from pathlib import Path

    from audit.__main__ import main

    monkeypatch.syspath_prepend(str(Path(__file__).parent))

    def run(*args, seed=1):
        return main(["compare", *args, "--out", str(tmp_path), "--quiet", "--seed", str(seed)])

    run.out = tmp_path
    return run
