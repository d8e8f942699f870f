"""The oracle: accepts second implementations, rejects subtly wrong ones.

Each comparison is a family of two-sample tests Holm-corrected at alpha =
0.01 with a fixed seed: a correct candidate is rejected with probability at
most 0.01; the wrong ones are caught by a wide margin at the sizes used
(see the sweep in reports/oracle).
"""
import json
from pathlib import Path

import numpy as np
import pytest

from audit.__main__ import main
from audit.compare import compare_distributions, map_parameters
from audit.oracle_cases import REFERENCES, oracle_cases
from reference.mechanisms import Laplace, RandomizedResponse

HERE = Path(__file__).parent


@pytest.mark.parametrize("case", oracle_cases(), ids=lambda c: c.id)
def test_oracle_cases(case):
    factory, params, inputs = REFERENCES[case.reference]
    res = compare_distributions(case.make(), factory(**params), inputs, n_samples=20_000, alpha=0.01, seed=0)
    assert res.rejected == (case.expected == "different"), res.summary()


@pytest.mark.slow
def test_false_alarm_rate_over_seeds():
    """An independent implementation (step-by-step permute-and-flip) against the
    vectorised one, 200 seeds at alpha = 0.05: alarms ~ at most Binomial(200, 0.05);
    more than binom.ppf(0.999, 200, 0.05) = 21 refutes the claimed size."""
    from scipy.stats import binom

    case = oracle_cases()[0]
    factory, params, inputs = REFERENCES[case.reference]
    alarms = sum(compare_distributions(case.make(), factory(**params), inputs, n_samples=2_000, alpha=0.05,
                                       seed=s).rejected for s in range(200))
    assert alarms <= binom.ppf(0.999, 200, 0.05)


def test_kind_mismatch_is_an_error():
    with pytest.raises(ValueError, match="candidate's outputs are discrete.*reference's are scalar"):
        compare_distributions(RandomizedResponse(1.0), Laplace(1.0), [("x", 0)], n_samples=500)


def test_parameters_that_do_not_map_are_listed():
    class Candidate:
        def __init__(self, epsilon):
            pass

    with pytest.raises(ValueError, match=r"\['bounds', 'sensitivity'\]"):
        map_parameters(Candidate, {"epsilon": 1.0, "bounds": (0, 1), "sensitivity": 1})


def test_compare_command(tmp_path, monkeypatch, capsys):
    monkeypatch.syspath_prepend(str(HERE))
    args = ["--reference", "laplace", "--out", str(tmp_path), "--quiet"]
    # A correct candidate is rejected with probability alpha = 0.01 (the false-alarm rate), so the seed is
    # fixed. The reference Laplace's stream changed twice (exact lattice noise, then the exact inversion
    # sampler); with the current one seed 1 is such a false alarm (Holm-adjusted p 0.0087 on 'answer 0') and
    # seeds 0 and 2-5 give p 0.11-0.93. Seed 2 is fixed here.
    assert main(["compare", "subjects.noise:FastLaplace", "--seed", "2"] + args) == 0
    assert main(["compare", "subjects.noise:FastLaplaceOff", "--budget", "standard"] + args) == 1
    data = json.loads((tmp_path / "compare-subjects.noise-FastLaplaceOff-vs-laplace" / "report.json").read_text())
    assert data["comparisons"][0]["verdict"] == "different"
    assert main(["compare", "subjects.noise:NarrowSignature"] + args) == 2
    assert "takes no parameter(s) ['epsilon']" in capsys.readouterr().err
    assert main(["compare", "subjects.noise:FastLaplace", "--reference", "nope", "--out", str(tmp_path)]) == 2


def test_detectable_difference_has_the_stated_power():
    """Simulation: two Bernoulli samples whose means differ by the stated difference around 1/2, tested
    two-sided at alpha = 0.01 by the normal test; 2,000 seeded trials; the rejection rate must be within
    0.9 +- 0.03 (about 4.5 binomial standard errors: a refutation is a formula off by more than that)."""
    from audit.compare import detectable_difference
    from scipy import stats

    n, alpha = 4000, 0.01
    d = detectable_difference(n, alpha)
    rng = np.random.default_rng(0)
    a = rng.binomial(n, 0.5 - d / 2, 2000) / n
    b = rng.binomial(n, 0.5 + d / 2, 2000) / n
    pooled = (a + b) / 2
    z = np.abs(a - b) / np.sqrt(2 * pooled * (1 - pooled) / n)
    rate = np.mean(z > stats.norm.ppf(1 - alpha / 2))
    assert abs(rate - 0.9) < 0.03, rate
    assert detectable_difference(n, alpha, k=4) > d
    with pytest.raises(ValueError, match="n=0"):
        detectable_difference(0, alpha)


def test_g_test_p_value_is_valid_on_sparse_tables():
    """The sequential Monte Carlo G-test p-value (Besag-Clifford) is valid where the chi-square approximation is
    not: 1,000 pairs of samples of one sparse law (60 outcomes, 300 draws per side, seed 0). Refuted if more than
    5% + 3 standard errors (8.9%) of them have p <= 0.05; a different law gives the smallest p-value."""
    from audit.compare import N_PERMUTATIONS, g_test_exact

    rng = np.random.default_rng(0)
    law = rng.dirichlet(np.full(60, 0.3))
    ps = [g_test_exact(rng.multinomial(300, law), rng.multinomial(300, law), seed=k)[1] for k in range(1000)]
    assert np.mean(np.array(ps) <= 0.05) <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / 1000)
    other = np.roll(law, 1)
    assert g_test_exact(rng.multinomial(3000, law), rng.multinomial(3000, other))[1] == 1 / (N_PERMUTATIONS + 1)
