"""The vector event families of issue 18: a discrete part combined with a threshold on a scalar part, and
ratios / products of two coordinates. Fixed seeds; each assertion compares the family's bound with the bound
the other events reach on the same samples (the family switched off), so it fails if the family adds nothing.
"""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from audit import Claim, audit_pairs, events
from audit.mutants import SparseVector
from audit.neighbours import query_pairs
from audit.sampling import Samples


class RatioReport:
    """Reports ``(V, U)`` with ``V = (5 + y + Laplace(b)) U`` and ``U = ±10^W`` (a fair sign, W uniform on
    [-2, 2]): ``V / U`` is the noisy answer. The offset keeps the sign of ``V / U`` uninformative, and the sign of
    ``U`` makes ``V / U >= t`` a union of two half-planes, which no single linear score expresses. With ``b = 1 / (2 epsilon)`` (half the noise a sensitivity-1 answer needs) the true loss is
    ``2 epsilon``; ``V`` and ``U`` alone blur it."""

    def __init__(self, epsilon=1.0):
        self.scale = 1.0 / (2 * epsilon)

    def __call__(self, y, rng):
        u = rng.choice((-1.0, 1.0)) * 10.0 ** rng.uniform(-2.0, 2.0)
        return np.array([(5.0 + y + rng.laplace(0.0, self.scale)) * u, u])


def _without(monkeypatch, *names):
    for name in names:
        monkeypatch.setattr(events, name, lambda *a: iter(()))


def test_pattern_events_catch_svt_alg3_beyond_the_other_events(monkeypatch):
    # 100,000 outputs per input, alpha 0.05 over 8 pairs x 2 directions (seed 0); Alg. 3's true loss is
    # unbounded. Measured: 1.53 with the pattern events (the winning event names a pattern), 1.08 without.
    m, pairs = SparseVector(epsilon=1.0, variant="alg3"), query_pairs(5)
    with_patterns = audit_pairs(m, pairs, Claim(epsilon=1.0), n_samples=100_000, seed=0)
    assert with_patterns.violation and "pattern (" in str(with_patterns.evidence())
    _without(monkeypatch, "_pattern_candidates")
    without = audit_pairs(m, pairs, Claim(epsilon=1.0), n_samples=100_000, seed=0)
    assert with_patterns.epsilon_lower > without.epsilon_lower + 0.2


def test_ratio_events_catch_a_loss_hidden_in_a_quotient(monkeypatch):
    # 50,000 outputs per input (seed 0), one pair (0 vs 1), alpha 0.05: the true loss is 2 against a claim of 1
    pairs = [(0.0, 1.0)]
    found = audit_pairs(RatioReport(1.0), pairs, Claim(epsilon=1.0), n_samples=50_000, seed=0)
    assert found.violation and "x[0] / x[1]" in str(found.evidence())
    _without(monkeypatch, "_pair_candidates")
    blurred = audit_pairs(RatioReport(1.0), pairs, Claim(epsilon=1.0), n_samples=50_000, seed=0)
    assert found.epsilon_lower > blurred.epsilon_lower + 0.1  # measured 1.93 against 1.77


def test_a_private_ratio_report_passes():
    # the same report with the noise a sensitivity-1 answer needs: 1-DP (post-processing of y + Laplace(1));
    # alpha 0.05 is the false-alarm rate of this fixed-seed check
    pairs = [(0.0, 1.0)]
    m = RatioReport(0.5)  # scale 1: the loss is exactly 1
    assert not audit_pairs(m, pairs, Claim(epsilon=1.0), n_samples=50_000, seed=0).violation


@pytest.mark.parametrize("xa", [np.zeros((0, 2)), np.full((5, 2), -1000.0)])
def test_families_handle_empty_and_all_atom_pilots(xa):
    a = Samples("vector", np.vstack((xa, [[0.5, -1000.0]])), (2,))
    b = Samples("vector", np.vstack((xa, [[-1000.0, 0.25]])), (2,))
    cands = list(events._triples(events._pattern_candidates(a.values, b.values, [0, 1])))
    cands += list(events._triples(events._pair_candidates(a.values, b.values, [0, 1])))
    for ka, kb, make in cands:
        ev = make()
        assert ev.count(a) == ka and ev.count(b) == kb, ev.description


def _reference_choice(a, b, *, delta, alpha):
    """The event choice made one candidate at a time (the definition ``choose_event`` computes in bulk)."""
    from audit.engine.estimation.bounds import epsilon_lower_bound

    cands = list(events.candidates(a, b))
    ka = np.array([c[0] for c in cands], dtype=float)
    kb = np.array([c[1] for c in cands], dtype=float)
    bound = epsilon_lower_bound(ka, len(a), kb, len(b), delta=delta, alpha=alpha)
    with np.errstate(divide="ignore", invalid="ignore"):
        point = np.log(np.maximum((ka + 0.5) / (len(a) + 1) - delta, 1e-300)) - np.log((kb + 0.5) / (len(b) + 1))
    return cands, cands[int(np.lexsort((-point, -bound))[0])][2]()


@settings(max_examples=30, deadline=None)
@given(kind=st.sampled_from(["scalar", "vector", "atoms"]), n=st.integers(1, 60), shift=st.floats(0, 2),
       seed=st.integers(0, 2 ** 16), delta=st.sampled_from([0.0, 1e-3]))
def test_the_bulk_choice_is_the_one_by_one_choice(kind, n, shift, seed, delta):
    """``choose_event`` builds thousands of threshold and interval candidates as arrays; its choice, and every
    candidate's pilot counts in order, are those of the candidates taken one at a time. A candidate's counts are
    its event's counts on the pilot (exact, the floating-point events being off)."""
    rng = np.random.default_rng(seed)
    if kind == "scalar":
        a, b = Samples("scalar", rng.laplace(0, 1, n), ()), Samples("scalar", shift + rng.laplace(0, 1, n), ())
    else:
        xa, xb = rng.laplace(0, 1, (n, 3)), shift + rng.laplace(0, 1, (n, 3))
        if kind == "atoms":  # a code at one coordinate (a stop mark) and a 0/1 coordinate
            xa[rng.random(n) < 0.4, 0] = -1.0
            xb[:, 2] = (xb[:, 2] > 0.5).astype(float)
        a, b = Samples("vector", xa, (3,)), Samples("vector", xb, (3,))
    cands, expected = _reference_choice(a, b, delta=delta, alpha=0.05)
    ka, kb, make = events._in_bulk(a, b)
    assert list(ka) == [float(c[0]) for c in cands] and list(kb) == [float(c[1]) for c in cands]
    for i in rng.choice(len(cands), size=min(len(cands), 25), replace=False):
        ev = make(int(i))
        assert ev.description == cands[int(i)][2]().description
        assert (ev.count(a), ev.count(b)) == (ka[i], kb[i]), ev.description
    assert events.choose_event(a, b, delta=delta, alpha=0.05).description == expected.description


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2 ** 16), d=st.integers(2, 6), n=st.integers(40, 300))
def test_an_event_never_splits_equal_outputs(seed, d, n):
    """Every candidate event, the learned logistic scores included, gives equal outputs the same answer wherever
    they sit in the batch (a matrix product rounds a row by its position: equal outputs got scores an ulp apart,
    and a threshold between them split an atom at random)."""
    rng = np.random.default_rng(seed)
    atoms = rng.normal(size=(2, d)) * 10.0 ** rng.integers(-3, 4, size=(2, d))
    a = Samples("vector", atoms[rng.integers(0, 2, n)], (d,))
    b = Samples("vector", atoms[(rng.random(n) < 0.3).astype(int)], (d,))
    for _, _, make in events.candidates(a, b):
        ev = make()
        for s in (a, b):
            mask = np.asarray(ev.member(s))
            for atom in atoms:
                hits = mask[np.all(s.values == atom, axis=1)]
                assert hits.all() or not hits.any(), ev.description
