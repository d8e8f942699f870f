"""The determinism evidence of ``audit check`` (:mod:`audit.gate.determinism`): every ordinary form of a trace of
the data that no noise covers is found by one principle, and correct code keeping only public facts is not.

The leak subjects are deterministic functions of the data, so their verdicts do not depend on chance. The
controls draw noise; the probe's false-alarm rate is at most its alpha (0.001, Bonferroni over pairs,
candidates and looks) per run, whatever the subject does, and the seeded control below bounds it over 40 runs
(a false alarm in any of them has probability at most 0.04).
"""
from __future__ import annotations

import json
import re

import numpy as np
import pytest

from audit.__main__ import main
from audit.gate.outputs import probe_grid
from audit.gate.search import candidate_pairs
from audit.gate.determinism import probe_determinism
from audit.gate.observe import canonical, observe_fit
from subjects import shipped_leaks as S

BOUNDS, CLASSES = [(0.0, 1.0)], [0, 1]
GRID = probe_grid(BOUNDS)


def _probe(cls, relation="add-remove", epsilon=1.0, **kw):
    pairs = candidate_pairs(BOUNDS, CLASSES, relation, seed=0)
    return probe_determinism(lambda: cls(epsilon=1.0), pairs, grid=GRID, classes=CLASSES, epsilon=epsilon,
                             relation=relation, **kw)


LEAKS = {
    "DefaultSeed42": "model.counts_",
    "HashedSeed": "model.counts_",
    "SeriesCounts": "model.class_counts_",
    "PartialDecision": "decision_function(grid)",
    "SummaryString": "model.summary_",
    "ReprCounts": "repr()",
    "Provenance": "model.data_sha256_",
    "DecimalCounts": "model.share_",
    "ComplexCounts": "model.packed_",
    "TimedeltaCounts": "model.elapsed_",
    "WarnsCount": "fit warning[0]",
    "LogsCount": "fit log[0]",
    "PrintsCount": "fit stdout",
    "ScoreSamples": "model.score_samples.__closure__[0]",
    "ClassAttribute": "type(model).last_counts[1]",
    "ModuleCache": "module subjects.shipped_leaks.LAST_FIT['class 1']",
    "PropertyCounts": "model.support_['1']",
    "FitReturnsSummary": "fit()['counts'][1]",
    "BatchIterator": "model.batches_.__reduce__()[1][0].__reduce__()[1][1]",
    "IdCounter": "model.ids_.__reduce__()[1][0]",
    "StdlibArray": "model.raw_.__reduce__()[1][3]",
    "BoundedHistory": "model.recent_.maxlen",
    "MaskedCounts": "model.masked_._mask",
    "LibraryLogger": "fit log[0]",
    "SummaryFile": f"fit file {S.SUMMARY_FILE}",
    "EnvironmentNote": "fit environ[SHIPPED_LEAKS_CLASS_1]",
    "HelperRegistry": "module subjects.registry.FITTED['HelperRegistry']['class 1']",
}


@pytest.mark.parametrize("name", sorted(LEAKS))
def test_every_form_of_a_deterministic_trace_is_found_and_named(name):
    path = LEAKS[name]
    report = _probe(getattr(S, name))
    assert report.verdict == "violation", report.summary()
    assert path in [p["path"] for p in report.paths]
    assert report.epsilon_lower > 1.0 and report.fits <= 64
    assert "remedy" in report.summary() and "fresh entropy" in report.remedy


@pytest.mark.parametrize("name", ["Correct", "CorrectWithPublicFacts", "DoubleSpend"])
def test_correct_code_keeping_public_facts_is_clean(name):
    report = _probe(getattr(S, name))
    assert report.verdict == "clean", report.summary()
    assert report.screened > 0


def test_the_record_count_is_private_under_add_remove_and_public_under_substitution():
    added = _probe(S.RecordCount)
    assert added.verdict == "violation" and added.record_count_only
    assert "substitute" in added.remedy
    assert _probe(S.RecordCount, relation="substitute").verdict == "clean"


@pytest.mark.slow  # 200 probes screening every audited pair: about 5 CPU-minutes
def test_a_seeded_control_with_repeating_outputs_raises_no_alarm_in_200_runs():
    """Predictions of two labels repeat by chance between fits, so candidates reach confirmation; it must see
    through them. 200 runs at alpha 0.001 each: the alarms are at most Binomial(200, 0.001) (mean 0.2);
    "refuted" means 3 or more, which a sound probe gives with probability about 0.001 (seed 7)."""
    S.SOURCE["rng"] = np.random.default_rng(7)
    reports = [_probe(S.SharedSource) for _ in range(200)]
    assert sum(r.verdict == "violation" for r in reports) < 3
    assert sum(r.tried > 0 for r in reports) >= 20  # the confirmation was exercised, not bypassed


def test_an_unreachable_claim_reads_inconclusive_not_clean():
    """A deterministic leak against a claim of 50 that no fit budget can refute: inconclusive, with the reason."""
    report = _probe(S.SummaryString, epsilon=50.0, max_fits=64)
    assert report.verdict == "inconclusive" and "at most" in report.summary()


def test_canonical_values_cover_the_types_the_walk_used_to_skip():
    import datetime
    import decimal

    import pandas as pd

    for value in ("a string", b"bytes", decimal.Decimal("1.5"), 1 + 2j, np.timedelta64(3, "s"),
                  datetime.timedelta(seconds=3), pd.Series([1, 2]), np.arange(3)):
        key, shown = canonical(value)
        assert key and shown
    assert canonical("at 0x7f3a2b1c4d50") == canonical("at 0x7f00deadbeef")  # addresses masked
    assert canonical(pd.Series([1, 2]))[0] != canonical(pd.Series([1, 3]))[0]


def test_observe_fit_reads_warnings_logs_prints_and_exceptions():
    X, y = np.array([[0.5], [0.6]]), np.array([0, 1])
    obs = observe_fit(lambda: S.WarnsCount(), (X, y), GRID, CLASSES)
    assert "records of class 1" in obs["fit warning[0]"][0][1]
    obs = observe_fit(lambda: S.Correct(epsilon="not a number"), (X, y), GRID, CLASSES)
    assert list(obs) == ["fit raised"]


def test_observe_fit_puts_the_environment_back_so_every_fit_shows_what_it_sets():
    """A fit that sets an environment variable shows it on every observation (each fit starts from the same
    environment), and the variable is gone again afterwards."""
    import os

    X, y = np.array([[0.5], [0.6]]), np.array([0, 1])
    seen = [observe_fit(lambda: S.EnvironmentNote(), (X, y), GRID, CLASSES) for _ in range(2)]
    assert [o["fit environ[SHIPPED_LEAKS_CLASS_1]"][0] for o in seen] == [("str", "1")] * 2
    assert "SHIPPED_LEAKS_CLASS_1" not in os.environ


def _row(tmp_path, name):
    return json.loads((tmp_path / f"check-subjects.shipped_leaks-{name}" / "report.json").read_text())["claims"][0]


CHEAP = ["--epsilon", "1", "--quiet", "--n-samples", "2000", "--no-search", "--no-grow", "--bounds", "[[0, 1]]",
         "--classes", "0,1"]


def test_check_fails_a_leak_that_sampling_cannot_see_and_names_it(tmp_path):
    """The exact counts in a Series change no release the sampling reads; the determinism evidence decides."""
    assert main(["check", "subjects.shipped_leaks:SeriesCounts", *CHEAP, "--out", str(tmp_path)]) == 1
    row = _row(tmp_path, "SeriesCounts")
    assert row["verdict"] == "violation" and "determinism" in row["decided_by"]
    assert row["determinism"]["paths"][0]["path"] == "model.class_counts_"
    assert "violation through determinism" in row["detail"] and "remedy" in row["detail"]


def test_check_passes_the_control_that_keeps_public_facts(tmp_path):
    """Sampling at alpha 0.05 with seed 0 (a false alarm of this correct control: probability at most 0.05)."""
    assert main(["check", "subjects.shipped_leaks:CorrectWithPublicFacts", *CHEAP, "--out", str(tmp_path)]) == 0
    row = _row(tmp_path, "CorrectWithPublicFacts")
    assert row["verdict"] == "pass" and row["determinism"]["verdict"] == "clean"


def test_warn_reports_the_trace_without_failing(tmp_path):
    assert main(["check", "subjects.shipped_leaks:WarnsCount", *CHEAP, "--determinism", "warn",
                 "--out", str(tmp_path)]) == 0
    row = _row(tmp_path, "WarnsCount")
    assert row["determinism"]["verdict"] == "violation" and "determinism" not in row.get("decided_by", [])


def _shares(data, rng):
    """A noisy count over the exact size: multiples of 1/3 on input 0 and of 1/4 on input 1."""
    return np.array([(data + rng.geometric(0.5) - rng.geometric(0.5)) / (3.0 + data)])


def _float_laplace(data, rng):
    return np.array([data + rng.laplace(0.0, 1.0)])


@pytest.mark.parametrize("mechanism,first", [(_shares, ["outputs", "float probe"]), (_float_laplace, ["float probe"])])
def test_the_float_probe_is_credited_only_where_supports_overlap_in_exact_arithmetic(mechanism, first):
    """A row a float-pattern event decided is audited again in real arithmetic (seed fixed, alpha 0.05): shares
    k/3 against k/4 are told apart there too (outputs first), float Laplace noise is not (float probe, with the
    lattice mechanisms as its remedy). A wrong reading of the Laplace case has probability at most 0.05."""
    from audit.gate.run import float_or_outputs
    from audit.engine.estimation.estimate import Claim
    from audit.gate.inputs import mechanism_pairs

    row, extra = {"decided_by": ["float probe"]}, ["violation through the floating-point probe on x"]
    pair = mechanism_pairs("scalar")[0]
    float_or_outputs(row, extra, mechanism, pair, Claim(1.0), 8000, 0, None)
    assert row["decided_by"] == first
    text = "; ".join(extra)
    assert ("violation through the outputs" in text) == (first[0] == "outputs")
    assert "remedy" in text and (first[0] == "outputs" or "reference.mechanisms.Laplace" in text)


from hypothesis import given, strategies as st  # noqa: E402

_LEAVES = st.one_of(st.integers(), st.floats(allow_nan=False), st.text(max_size=40), st.binary(max_size=40),
                    st.complex_numbers(allow_nan=False), st.booleans(), st.none(),
                    st.lists(st.integers(-5, 5), max_size=6).map(np.array))


@given(_LEAVES, _LEAVES)
def test_canonical_keys_are_equal_exactly_when_the_values_are(a, b):
    """Two leaves read the same key if and only if they are the same value of the same type (arrays by content,
    dtype and shape): a value that differs between fits can never hide behind an equal key."""
    ka, kb = canonical(a)[0], canonical(b)[0]
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        same = isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.dtype == b.dtype \
            and a.shape == b.shape and np.array_equal(a, b)
    else:  # the same type and the same repr (0.0 and -0.0 differ), memory addresses in strings masked
        mask = (lambda v: re.sub(r"0x[0-9a-fA-F]{6,}", "0x", v)) if isinstance(a, str) else (lambda v: v)
        same = type(a) is type(b) and repr(mask(a)) == repr(mask(b))
    assert (ka == kb) == same


#: a process-wide log that every fit appends to (as diffprivlib's default budget accountant does)
_SHARED_LOG = [(0.5, 0.0)] * 5_000


class _LogsToSharedAccountant:
    """Keeps a reference to a long process-wide log, plus an exact count hidden at item 3,000 of a long list of
    its own (a trace of the data the digest of the whole list must carry)."""

    def __init__(self, hide=True):
        self.hide = hide

    def fit(self, X, y):
        _SHARED_LOG.append((1.0, 0.0))
        self.log_ = _SHARED_LOG
        self.history_ = [0.0] * 4_000
        if self.hide:
            self.history_[3_000] = float(len(y))
        return self


def test_a_long_plain_list_is_read_whole_by_one_digest_whatever_the_process_fitted_before():
    """Cost and paths do not grow with the process's history, and a value deep in a long list still separates."""
    d0, d1 = (np.zeros((3, 1)), np.zeros(3)), (np.zeros((4, 1)), np.zeros(4))
    a = [observe_fit(_LogsToSharedAccountant, d0, GRID, CLASSES) for _ in range(2)]
    b = observe_fit(_LogsToSharedAccountant, d1, GRID, CLASSES)
    # one path per long list, not one per item (9,000 items here, 5,000 more in the module's log)
    assert not a[0].truncated and not any("history_[" in p or "log_[" in p for p in a[0]) and len(a[0]) < 1_000
    assert a[0]["model.history_#content"] == a[1]["model.history_#content"] != b["model.history_#content"]
    assert a[0]["model.log_#content"] != a[1]["model.log_#content"]  # the shared log grew between the fits
    clean = [observe_fit(lambda: _LogsToSharedAccountant(hide=False), d, GRID, CLASSES) for d in (d0, d1)]
    assert clean[0]["model.history_#content"] == clean[1]["model.history_#content"]
