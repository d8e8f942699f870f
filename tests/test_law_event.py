"""Claim rows whose event comes from the exact law (audit.engine.exact_law.law_event, issue 29 item 3).

A toy mechanism with a known finite law (a categorical draw whose probabilities depend on the input) stands
for a learner: the law chooses the event, fresh draws bound the loss.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from audit.engine.estimation.estimate import Claim
from audit.engine.comparison.exact_oracle import OTHER, CellLaw
from audit.engine.exact_law.law_event import PairLaw, audit_pairs_by_law, common_cells, law_events
from audit.engine.exact_law.tightness import attainable_from_pmf
from audit.results.report import Report


class Categorical:
    """Draws an outcome index from ``laws[data]`` (a probability vector per input name)."""

    def __init__(self, laws):
        self.laws = {k: np.asarray(v, float) for k, v in laws.items()}

    def batch(self, data, n, rng):
        p = self.laws[data]
        return rng.choice(p.size, size=n, p=p)

    def __call__(self, data, rng):
        return int(self.batch(data, 1, rng)[0])


def _law(p) -> CellLaw:
    p = np.asarray(p, float)
    return CellLaw({i: float(v) for i, v in enumerate(p)}, {i: float(v) for i, v in enumerate(p)})


def _loss(p0, p1) -> float:
    return float(np.max(np.abs(np.log(np.asarray(p0)) - np.log(np.asarray(p1)))))


# eps-DP randomized response on 4 values at eps = ln 3: the loss is exactly ln 3 on the pair (a, b)
RR = {"a": [0.5, 1 / 6, 1 / 6, 1 / 6], "b": [1 / 6, 0.5, 1 / 6, 1 / 6]}
EPS_RR = math.log(3.0)


def _pair_law(p0, p1) -> PairLaw:
    loss = _loss(p0, p1)
    return PairLaw(_law(p0), _law(p1), (loss, loss))


def test_the_law_event_is_the_likelihood_ratio_prefix_with_the_attainable_bound():
    p0, p1 = [0.5, 0.3, 0.15, 0.05], [0.05, 0.15, 0.3, 0.5]
    n, alpha = 5000, 0.005
    events = law_events(_law(p0), _law(p1), n, alpha)
    best = max(ev.attainable for ev in events.values())
    # the attainable bound is the one of audit.engine.exact_law.tightness over the same ranking
    assert best == pytest.approx(attainable_from_pmf(p0, p1, n, alpha), rel=1e-12)
    # the chosen cells are a prefix of the ranking by ln p0 / p1 (cell 0 first)
    assert 0 in events["d0 vs d1"].cells and 3 not in events["d0 vs d1"].cells
    assert 3 in events["d1 vs d0"].cells and 0 not in events["d1 vs d0"].cells


def test_a_law_row_bounds_the_loss_from_fresh_draws_and_reports_truth_and_tightness():
    mech = Categorical(RR)
    res = audit_pairs_by_law(mech, [("a", "b")], [_pair_law(RR["a"], RR["b"])], Claim(EPS_RR), n_samples=20_000,
                             alpha=0.01, seed=3)
    assert not res.violation
    assert 0 < res.epsilon_lower <= EPS_RR
    assert res.exact_loss == pytest.approx((EPS_RR, EPS_RR))
    # the sampled bound sits at the attainable one up to sampling noise (20,000 draws per side)
    assert 0.85 < res.tightness < 1.15
    assert res.results[0].counts["n_pilot"] == 0 and res.results[0].counts["n0"] == 20_000
    row = res.claim_row(id="rr", subject="randomized response", expected="pass")
    assert row["method"] == "sampled, law event"
    assert row["exact_loss"] == pytest.approx([EPS_RR, EPS_RR]) and row["tightness"] == res.tightness
    assert "exact loss of the pairs 1.099" in row["detail"]


def test_a_leak_twice_the_claim_is_flagged():
    mech = Categorical(RR)
    res = audit_pairs_by_law(mech, [("a", "b")], [_pair_law(RR["a"], RR["b"])], Claim(EPS_RR / 2),
                             n_samples=20_000, alpha=0.01, seed=4)
    assert res.violation and res.exact_loss[0] > EPS_RR / 2


@pytest.mark.parametrize("law_is_wrong", [False, True])
def test_false_alarms_stay_within_alpha_even_when_the_law_is_wrong(law_is_wrong):
    """200 seeds at alpha = 0.05 with the claim equal to the true loss: the number of violations is binomial
    with p <= 0.05; the test fails above its 0.999 quantile (false-alarm rate of this test <= 1e-3). A wrong
    law (the inputs' laws swapped, so the events point the wrong way) can only weaken the bound: the counts
    come from the mechanism itself."""
    mech = Categorical(RR)
    law = _pair_law(RR["b"], RR["a"]) if law_is_wrong else _pair_law(RR["a"], RR["b"])
    flagged = sum(audit_pairs_by_law(mech, [("a", "b")], [law], Claim(EPS_RR), n_samples=2000, alpha=0.05,
                                     seed=s).violation for s in range(200))
    assert flagged <= stats.binom.ppf(0.999, 200, 0.05)


def test_common_cells_give_each_law_the_other_law_s_releases_within_its_rest():
    a = CellLaw({"x": 0.6, "y": 0.3, OTHER: 0.0}, {"x": 0.6, "y": 0.3, OTHER: 0.1}, lambda r: r if r in "xy" else OTHER)
    b = CellLaw({"x": 0.5, "z": 0.45, OTHER: 0.0}, {"x": 0.5, "z": 0.45, OTHER: 0.05},
                lambda r: r if r in "xz" else OTHER)
    c0, c1 = common_cells(a, b)
    assert set(c0.upper) == set(c1.upper) == {"x", "y", "z", OTHER}
    assert (c0.lower["z"], c0.upper["z"]) == (0.0, 0.1) and (c1.lower["y"], c1.upper["y"]) == (0.0, 0.05)
    assert c0.cell("z") == "z" and c0.cell("y") == "y" and c0.cell("w") == OTHER
    with pytest.raises(ValueError, match="same cells"):
        PairLaw(a, b, (0.0, 1.0))
    with pytest.raises(ValueError, match="exact_loss"):
        PairLaw(c0, c1, (1.0, 0.5))


def test_audit_pairs_by_law_needs_one_law_per_pair():
    with pytest.raises(ValueError, match="one PairLaw per pair"):
        audit_pairs_by_law(Categorical(RR), [("a", "b")], [], Claim(1.0), n_samples=100, alpha=0.05, seed=0)


def test_the_report_shows_the_exact_loss_and_tightness_beside_the_bound(tmp_path):
    res = audit_pairs_by_law(Categorical(RR), [("a", "b")], [_pair_law(RR["a"], RR["b"])], Claim(EPS_RR),
                             n_samples=5000, alpha=0.01, seed=5)
    report = Report("toy", "quick", 0)
    report.claims.append(res.claim_row(id="rr", subject="randomized response", expected="pass"))
    beyond = dict(report.claims[0], id="beyond", exact_loss=None, law="out of reach: too many states")
    beyond.pop("attainable")
    report.claims.append(beyond)
    text = report.to_markdown([])
    assert "| exact loss | tightness |" in text
    assert f"| {EPS_RR:.4g} | {res.tightness:.4g} |" in text
    assert "| out of reach | – |" in text
    assert f"(exact {EPS_RR:.4g}, tightness {res.tightness:.4g})" in text
    # the claims figure draws the exact loss as a diamond (it must render with one row beyond reach)
    from audit.engine.presentation.figures import claims_figure

    assert claims_figure("toy", report.claims, tmp_path / "claims.png")
    assert (tmp_path / "claims.png").stat().st_size > 0


def test_mutant_rows_show_the_exact_loss_too_and_rows_beyond_the_law_say_why(tmp_path):
    """A mutant row from a law audit carries the exact loss and tightness; :func:`beyond_law` marks a row without
    a law (claim or mutant) and appends its reason to the row's text."""
    from types import SimpleNamespace

    from audit.engine.presentation.figures import mutants_figure
    from audit.engine.exact_law.law_event import beyond_law

    half = {"a": [0.75, 0.25 / 3, 0.25 / 3, 0.25 / 3], "b": [0.25 / 3, 0.75, 0.25 / 3, 0.25 / 3]}  # loss ln 9
    res = audit_pairs_by_law(Categorical(half), [("a", "b")], [_pair_law(half["a"], half["b"])], Claim(1.0),
                             n_samples=4000, alpha=0.05, seed=2)
    case = SimpleNamespace(id="m", description="randomized response at twice its epsilon", source="toy")
    row = res.mutant_row(case)
    assert row["detected"] and row["exact_loss"] == [pytest.approx(math.log(9))] * 2
    assert row["tightness"] == pytest.approx(res.tightness) and "exact loss of the pairs" in row["evidence"]
    other = beyond_law(dict(row, id="m2", exact_loss=None), "categorical features")
    other.pop("attainable")
    assert other["law"] == "out of reach: categorical features" and other["evidence"].endswith("categorical features")
    report = Report("toy", "quick", 0)
    report.mutants += [row, other]
    text = report.to_markdown([])
    assert "| ε lower | exact loss | tightness | detected |" in text and "| out of reach | – |" in text
    assert f"(exact {math.log(9):.4g}, tightness {res.tightness:.4g})" in text
    assert mutants_figure("toy", report.mutants, tmp_path / "mutants.png")
