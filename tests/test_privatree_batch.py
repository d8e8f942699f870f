"""The batched PrivaTree path (reference.privatree_batch) against the reference learner.

(a) Noise off: with a huge epsilon and fixed budget shares (as in
    ``tests/test_oracle_deterministic.py``) every mechanism is deterministic
    (geometric noise exactly 0, permute-and-flip the argmax), and the batched
    path releases exactly what ``PrivaTreeClassifier.fit(X, y).release(edges)``
    releases, on hypothesis-generated tiny datasets; leaves whose exact class
    counts tie are compared without their label (tied labels are uniform by
    design). The ledgers are equal charge for charge.
(b) Noise on: ``audit.compare.compare_distributions`` accepts the batched path
    against the audit target's wrapped reference on the target's tiny inputs
    (strict one-feature, several-feature, categorical, mixed; paper accounting
    G1; paper stopping G2). Each comparison has a fixed seed and is
    Holm/Bonferroni-corrected at ``alpha``: a correct path is rejected with
    probability at most ``alpha`` (written beside each).
(c) Deliberately wrong variants are rejected at the same sample size as the
    correct path is accepted: leaf permute-and-flip at twice its epsilon (G1
    and G2 at N_FAST; the strict one-feature claim at N_SLOW, @slow), and the
    batched JointExp at four times its epsilon.
(d) The ledger: every batched run charges what the reference charges for the
    same tree (strict: at most epsilon, exactly epsilon for a full-depth tree;
    G1's paper accounting: the reference's total).

The strict configurations have so many distinct releases that the G test on
whole releases pools nearly all of them into one cell; there both sides are
compared through :func:`summary`, a fixed public post-processing of the
release (every heap slot's feature and key or label, and per numerical
feature the number of edges in the lower half of its range), by a
Kolmogorov-Smirnov test per coordinate. Equal release laws give equal
summary laws, so a rejection is a real difference.
"""
from __future__ import annotations

from functools import partial

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from audit.compare import compare_distributions
from audit.mutants.privatree import ExactCandidateFilter, g1_pair, pure_pair
from audit.targets.privatree import CONFIGS, ReleaseMechanism, _pairs
from reference.jointexp import JointExp
from reference.privatree import PrivaTreeClassifier
from reference.privatree_batch import PrivaTreeBatch, joint_exp_batch

pytestmark = pytest.mark.filterwarnings("ignore:ks_2samp. Exact calculation unsuccessful:RuntimeWarning")

HUGE = 1e9
ALPHA = 0.01
N_FAST = 1000  # per side, default tests
N_SLOW = 6000  # per side, @slow


# --------------------------------------------------------------------------- helpers
def summary(release, depth: int, edges) -> np.ndarray:
    """A fixed public post-processing of a release: per heap slot of a depth-``depth`` tree, its
    feature (-1 a leaf, -2 no node) and its key (a boundary, a bitmask of left categories) or leaf
    label; then, per numerical feature, how many of its edges lie in cell 0 of the ``edges`` cells."""
    cells, tree = ((), release) if edges is None else release
    H = 2 ** (depth + 1) - 1
    out = np.full(2 * H, -2.0)

    def walk(node, h):
        if node[0] == "leaf":
            out[2 * h], out[2 * h + 1] = -1.0, node[1]
            return
        _, j, key, left, right = node
        out[2 * h] = j
        out[2 * h + 1] = sum(2 ** b for b in key) if isinstance(key, tuple) else key
        walk(left, 2 * h + 1)
        walk(right, 2 * h + 2)

    walk(tree, 0)
    return np.concatenate((out, [sum(c == 0 for c in cs) for _, cs in cells]))


class Summary:
    """``summary`` of another mechanism's release (its ``batch`` when it has one)."""

    def __init__(self, mech, depth, edges):
        self.mech, self.depth, self.edges = mech, depth, edges

    def __call__(self, data, rng):
        return summary(self.mech(data, rng), self.depth, self.edges)

    def batch(self, data, n, rng):
        b = getattr(self.mech, "batch", None)
        out = b(data, n, rng) if callable(b) else [self.mech(data, rng) for _ in range(n)]
        return np.stack([summary(o, self.depth, self.edges) for o in out])


#: the epsilon of the slow acceptance test on the strict configurations (where the report sampled them before
#: their rows moved to epsilons whose laws are in reach)
SLOW_EPSILON = 2.0


def strict_case(name, eps):
    """The target's strict claim ``name`` at ``eps``: parameters, its inputs (the dataset and its
    neighbours), the release form."""
    data, schema, corner = CONFIGS[name]
    X, y = data()
    params = dict(epsilon=eps, max_depth=2, classes=[0, 1], n_public=6, max_bins=3, **schema)
    pairs = _pairs(X, y, np.array(corner))
    inputs = [("D", pairs[0].d0)] + [(p.description, p.d1) for p in pairs]
    return params, inputs, 2


G1 = dict(epsilon=2.0, max_depth=1, bounds=[(0.0, 1.0)] * 4, classes=[0, 1], binning="uniform", max_bins=2,
          epsilon_shares=(0.0, 0.5, 0.5), accounting="paper", stopping="depth")
G2 = dict(epsilon=1.0, max_depth=1, bounds=[(0.0, 1.0)], classes=[0, 1], binning="uniform", max_bins=2,
          epsilon_shares=(0.0, 0.5, 0.5), accounting="paper")


def leak_case(which):
    pair = g1_pair(4) if which == "G1" else pure_pair()
    return (G1 if which == "G1" else G2), [(pair.description, pair.d1), ("D", pair.d0)], None


def mechanisms(params, edges, summarise, estimator=PrivaTreeClassifier, batch_cls=PrivaTreeBatch):
    """(batched, reference) as the oracle samples them; both summarised for the strict claims."""
    fast = batch_cls(edges=edges, estimator=estimator, **params)
    ref = ReleaseMechanism(partial(PrivaTreeClassifier, **params), edges=edges)
    if summarise:
        return Summary(fast, params["max_depth"], edges), Summary(ref, params["max_depth"], edges)
    return fast, ref


class DoubleLeafEpsilon(PrivaTreeClassifier):
    """Wrong: each leaf's permute-and-flip at twice the charged epsilon (vectorised: only the hook)."""

    def _leaf_mechanism_epsilon(self, eps_leaf):
        return 2.0 * eps_leaf


# --------------------------------------------------------------------------- (a) noise off
def _leaf_counts(est, X, y):
    """Path -> exact class counts of every leaf of a fitted reference tree."""
    bins = est._bins_for_predict(X)
    index = {c: k for k, c in enumerate(est.classes_.tolist())}
    yk = np.array([index[v] for v in y.tolist()])
    out = {}

    def walk(node, idx, path):
        if node[0] == "leaf":
            out[path] = np.bincount(yk[idx], minlength=est.classes_.size)
            return
        _, j, key, left, right = node
        b = bins[idx, j]
        go = np.isin(b, key) if isinstance(key, tuple) else (b <= key)
        walk(left, idx[go], path + "L")
        walk(right, idx[~go], path + "R")

    walk(est.release(), np.arange(len(y)), "")  # the tree as nested tuples
    return out


def _without_tied_labels(tree, tied, path=""):
    if tree[0] == "leaf":
        return ("leaf", "tie") if path in tied else tree
    return tree[:3] + (_without_tied_labels(tree[3], tied, path + "L"), _without_tied_labels(tree[4], tied, path + "R"))


def _check_same_as_reference(X, y, params, edges, seed, n_runs=4):
    est = PrivaTreeClassifier(random_state=seed, **params).fit(X, y)
    tied = {path for path, c in _leaf_counts(est, X, y).items() if np.sum(c == c.max()) > 1}
    expected = est.release() if edges is None else est.release(edges)
    fast = PrivaTreeBatch(edges=edges, **params)
    p = fast.prepare((X, y))
    trees = fast.fit_trees((X, y), n_runs, np.random.default_rng(seed), prepared=p)
    ref_ledger = est.privacy_ledger_.to_frame()
    for r, got in enumerate(fast.releases(trees, prepared=p)):
        if edges is None:
            assert _without_tied_labels(got, tied) == _without_tied_labels(expected, tied), (X.tolist(), y.tolist())
        else:
            assert got[0] == expected[0]
            assert _without_tied_labels(got[1], tied) == _without_tied_labels(expected[1], tied)
        assert fast.ledger(trees, r, prepared=p).to_frame().equals(ref_ledger)


@st.composite
def tiny_problems(draw):
    n = draw(st.integers(1, 14))
    n_num = draw(st.integers(0, 3))
    n_cat = draw(st.integers(0 if n_num else 1, 2))
    K = draw(st.sampled_from([2, 2, 3]))
    rng = np.random.default_rng(draw(st.integers(0, 2**31)))
    cols, bounds, cats = [], [], {}
    for j in range(n_num + n_cat):
        if j < n_num:
            lo = draw(st.sampled_from([-1.0, 0.0, 5.0]))
            w = draw(st.sampled_from([0.0, 1.0, 10.0]))
            cols.append(lo + w * rng.random(n) if draw(st.booleans()) else lo + w * rng.integers(0, 3, n) / 2)
            bounds.append((lo, lo + w))
        else:
            k = draw(st.integers(1, 4))
            cols.append(rng.integers(0, k, n).astype(float))
            cats[j] = [float(c) for c in range(k)]
            bounds.append(None)
    X = np.column_stack(cols)
    y = rng.integers(0, K, n)
    params = dict(epsilon=HUGE, max_depth=draw(st.integers(0, 3)), bounds=bounds, categories=cats,
                  classes=list(range(K)), use_private_quantiles=False, epsilon_shares=(0.0, 0.5, 0.5),
                  binning=draw(st.sampled_from(["quantile", "uniform"])), max_bins=draw(st.integers(2, 6)),
                  accounting=draw(st.sampled_from(["strict", "paper"])),
                  stopping=draw(st.sampled_from([None, "depth", "paper"])),
                  min_samples_leaf=draw(st.integers(0, 2)))
    if params["stopping"] == "paper" or params["binning"] == "quantile":
        params["accounting"] = "paper"  # strict accounting refuses steps that are not DP
    return X, y, params


@given(problem=tiny_problems(), edges=st.sampled_from([None, 2, 3, "exact"]), seed=st.integers(0, 2**16))
@settings(max_examples=60, deadline=None, derandomize=True)
def test_noise_off_same_release_as_reference(problem, edges, seed):
    """PrivaTree* and uniform bins at epsilon 1e9 with fixed shares: numerical, categorical (binary
    order by class-1 share, multiclass code order), mixed; strict and paper accounting; every
    stopping rule; ``release()``, ``release(G)`` and ``release("exact")``."""
    X, y, params = problem
    _check_same_as_reference(X, y, params, edges, seed)


@given(x=st.lists(st.floats(0.001, 0.999), min_size=8, max_size=8, unique=True),
       labels=st.lists(st.integers(0, 1), min_size=8, max_size=8), size=st.sampled_from([2, 4, 6, 8]),
       m=st.integers(1, 2), depth=st.integers(1, 2), seed=st.integers(0, 2**16))
@settings(max_examples=30, deadline=None, derandomize=True)
def test_noise_off_private_quantiles_same_tree_as_reference(x, labels, size, m, depth, seed):
    """Private quantiles at epsilon 1e9: with one level (``max_bins=2``) and an even number of
    distinct values, JointExp's only best interval sequence puts the edge between the two middle
    values, so every record's bin, and the tree over bin ids, is deterministic."""
    xs = np.array(x[:size])
    X = np.column_stack([xs if j == 0 else xs[::-1] for j in range(m)])
    params = dict(epsilon=HUGE, max_depth=depth, bounds=[(0.0, 1.0)] * m, classes=[0, 1], max_bins=2,
                  epsilon_shares=(1 / 3, 1 / 3, 1 / 3))
    _check_same_as_reference(X, np.array(labels[:size]), params, None, seed)


@pytest.mark.parametrize("edges", [None, 2, "exact"])
def test_equal_private_edges_are_merged_as_the_reference_merges_them(monkeypatch, edges):
    """JointExp outputs that coincide (probability ~0, but ``np.unique`` in the reference merges them)
    leave a run with fewer bins: both paths are given the same inner edges, one of them twice."""
    inner = np.array([0.3, 0.3, 0.7])
    monkeypatch.setattr(JointExp, "sample", lambda self, data, rng: inner.copy())
    monkeypatch.setattr("reference.privatree_batch.joint_exp_batch", lambda mech, data, n, rng: np.tile(inner, (n, 1)))
    X = np.array([[0.1, 0.2], [0.3, 0.9], [0.5, 0.4], [0.65, 0.1], [0.8, 0.8], [0.95, 0.6]])
    y = np.array([0, 0, 1, 0, 1, 1])
    params = dict(epsilon=HUGE, max_depth=2, bounds=[(0.0, 1.0)] * 2, classes=[0, 1], max_bins=4,
                  epsilon_shares=(1 / 3, 1 / 3, 1 / 3))
    _check_same_as_reference(X, y, params, edges, 0)
    fast = PrivaTreeBatch(**params)
    trees = fast.fit_trees((X, y), 2, np.random.default_rng(0))
    assert trees.n_bins.tolist() == [[3, 3], [3, 3]] and np.all(np.isinf(trees.edges[0][:, 3]))


def test_no_features_is_refused_by_both():
    """X with 0 columns is a clear ValueError in the reference and in the fast path alike (issue 21)."""
    X, y = np.empty((5, 0)), np.array([0, 1, 1, 0, 1])
    params = dict(epsilon=HUGE, max_depth=2, classes=[0, 1], epsilon_shares=(0, 0.5, 0.5))
    with pytest.raises(ValueError, match=r"0 feature\(s\)"):
        PrivaTreeClassifier(**params).fit(X, y)
    with pytest.raises(ValueError, match=r"0 feature\(s\)"):
        PrivaTreeBatch(edges=None, **params).prepare((X, y))


# --------------------------------------------------------------------------- JointExp over the run axis
class _BatchedJointExp:
    def __init__(self, mech):
        self.mech = mech

    def __call__(self, data, rng):
        return joint_exp_batch(self.mech, data, 1, rng)[0]

    def batch(self, data, n, rng):
        return joint_exp_batch(self.mech, data, n, rng)


JE_INPUTS = [("6 spread", np.array([0.1, 0.3, 0.45, 0.6, 0.8, 0.95])), ("ties", np.array([0.2, 0.2, 0.2, 0.9])),
             ("one value", np.array([0.5]))]


def test_joint_exp_batch_has_the_reference_law():
    """KS per quantile (Bonferroni over the levels, Holm over inputs): false-alarm rate <= 0.01."""
    levels = np.linspace(0, 1, 6)[1:-1]
    for eps in (0.5, 4.0):
        ref = JointExp(eps, levels, (0.0, 1.0))
        res = compare_distributions(_BatchedJointExp(ref), ref, JE_INPUTS, n_samples=2000, alpha=ALPHA, seed=11)
        assert not res.rejected, res.summary()


def test_joint_exp_batch_at_the_wrong_epsilon_is_rejected():
    """Power at the same sample size: JointExp at four times its epsilon."""
    levels = np.linspace(0, 1, 6)[1:-1]
    ref = JointExp(1.0, levels, (0.0, 1.0))
    res = compare_distributions(_BatchedJointExp(JointExp(4.0, levels, (0.0, 1.0))), ref, JE_INPUTS, n_samples=2000,
                                alpha=ALPHA, seed=11)
    assert res.rejected, res.summary()


def test_joint_exp_batch_degenerate_bounds():
    out = joint_exp_batch(JointExp(1.0, [0.5], (0.3, 0.3)), np.array([0.3, 0.3]), 5, np.random.default_rng(0))
    assert out.shape == (5, 1) and np.all(out == 0.3)


# --------------------------------------------------------------------------- (b) noise on: the oracle accepts
FAST_CASES = [("strict", name) for name in CONFIGS] + [("leak", "G1"), ("leak", "G2")]


def _case(kind, name, eps=1.0):
    if kind == "strict":
        params, inputs, edges = strict_case(name, eps)
        return params, inputs, edges, True
    params, inputs, edges = leak_case(name)
    return params, inputs, edges, False


@pytest.mark.parametrize("kind,name", FAST_CASES)
def test_oracle_accepts_the_batched_path(kind, name):
    """The target's dataset D (strict claims at epsilon 1) or the neighbour that exposes the leak (G1,
    G2), N_FAST per side. False-alarm rate <= ALPHA = 0.01 per case (fixed seed)."""
    params, inputs, edges, summarise = _case(kind, name)
    fast, ref = mechanisms(params, edges, summarise)
    res = compare_distributions(fast, ref, inputs[:1], n_samples=N_FAST, alpha=ALPHA, seed=2024)
    assert not res.rejected, res.summary()


@pytest.mark.release
@pytest.mark.parametrize("kind,name", FAST_CASES)
def test_oracle_accepts_the_batched_path_on_every_input(kind, name):
    """Every input of the target's pairs, N_SLOW per side, the strict configurations at depth 2 with three
    bins at SLOW_EPSILON (their laws are out of reach there, so only the reference's draws check the batched
    path; the report's rows with a law are checked against it, test_exact_oracle).
    False-alarm rate <= ALPHA = 0.01 per comparison (Holm over the inputs), fixed seeds."""
    eps = SLOW_EPSILON if kind == "strict" else None
    params, inputs, edges, summarise = _case(kind, name, eps)
    fast, ref = mechanisms(params, edges, summarise)
    res = compare_distributions(fast, ref, inputs, n_samples=N_SLOW, alpha=ALPHA, seed=77)
    assert not res.rejected, f"epsilon {eps}: {res.summary()}"


# --------------------------------------------------------------------------- (c) wrong variants are rejected
@pytest.mark.parametrize("kind,name", [("leak", "G1"), ("leak", "G2")])
def test_oracle_rejects_leaf_epsilon_doubled(kind, name):
    """Same input, N_FAST and seed as the acceptance test: the oracle sees a leaf permute-and-flip at
    twice its epsilon (measured power at N_FAST: 10 rejections in 10 seeds for each; the correct path:
    0 in 10)."""
    params, inputs, edges, summarise = _case(kind, name)
    assert PrivaTreeBatch(edges=edges, estimator=DoubleLeafEpsilon, **params).vectorised
    wrong, ref = mechanisms(params, edges, summarise, estimator=DoubleLeafEpsilon)
    res = compare_distributions(wrong, ref, inputs[:1], n_samples=N_FAST, alpha=ALPHA, seed=2024)
    assert res.rejected, res.summary()


@pytest.mark.release
def test_oracle_rejects_leaf_epsilon_doubled_on_a_strict_claim():
    """The strict one-feature claim at N_SLOW, the sample size of the slow acceptance test (at N_FAST
    the summary sees the doubled leaf epsilon in only 2 of 10 seeds; at N_SLOW in 3 of 3, p < 1e-14)."""
    params, inputs, edges, summarise = _case("strict", "one-numerical")
    wrong, ref = mechanisms(params, edges, summarise, estimator=DoubleLeafEpsilon)
    res = compare_distributions(wrong, ref, inputs[:1], n_samples=N_SLOW, alpha=ALPHA, seed=77)
    assert res.rejected, res.summary()


# --------------------------------------------------------------------------- (d) the ledger
@pytest.mark.parametrize("name", list(CONFIGS))
def test_ledger_of_every_batched_run_spends_the_reference_budget(name):
    """Strict: every run's ledger composes to at most epsilon, to exactly epsilon when some leaf is
    at depth d (a full branch), and it never charges more than the reference's fit on the same data."""
    params, inputs, edges = strict_case(name, 1.0)
    fast = PrivaTreeBatch(edges=edges, **params)
    data = inputs[0][1]
    p = fast.prepare(data)
    trees = fast.fit_trees(data, 200, np.random.default_rng(5), prepared=p)
    ref_total = PrivaTreeClassifier(random_state=0, **params).fit(*data).privacy_ledger_.total_epsilon()
    deep = (trees.kind[:, 3:] == 2).any(axis=1)  # a leaf at depth 2
    for r in range(len(trees)):
        total = fast.ledger(trees, r, prepared=p).total_epsilon()
        assert total <= params["epsilon"] * (1 + 1e-9)
        if deep[r]:
            assert total == pytest.approx(params["epsilon"], rel=1e-9) == pytest.approx(ref_total, rel=1e-9)
    assert deep.any()


def test_ledger_of_paper_accounting_is_the_references():
    """G1 (paper accounting, 4 features, depth 1): every run charges the reference's 4 eps_node + eps_leaf = 5."""
    pair = g1_pair(4)
    fast = PrivaTreeBatch(**G1)
    p = fast.prepare(pair.d1)
    trees = fast.fit_trees(pair.d1, 50, np.random.default_rng(1), prepared=p)
    ref = PrivaTreeClassifier(random_state=0, **G1).fit(*pair.d1).privacy_ledger_.total_epsilon()
    assert ref == pytest.approx(5.0)
    assert all(fast.ledger(trees, r, prepared=p).total_epsilon() == pytest.approx(ref) for r in range(len(trees)))


# --------------------------------------------------------------------------- format, fallback, errors
def test_release_format_is_the_targets():
    """Same nested-tuple shape and Python int types as the wrapped reference (the switch is safe)."""
    params, inputs, edges = strict_case("numerical+categorical", 1.0)
    fast = PrivaTreeBatch(edges=edges, **params)
    ref = ReleaseMechanism(partial(PrivaTreeClassifier, **params), edges=edges)
    data = inputs[0][1]
    got, want = fast(data, np.random.default_rng(0)), ref(data, np.random.default_rng(0))

    def shape(o):
        return tuple(shape(v) for v in o) if isinstance(o, tuple) else type(o).__name__

    assert isinstance(got, tuple) and shape(got[0]) == shape(want[0])  # ((0, (int, int, int)),)
    out = fast.batch(data, 300, np.random.default_rng(1))
    assert len(out) == 300 and all(isinstance(o, tuple) and shape(o[0]) == shape(want[0]) for o in out)

    def atoms(o):
        return [a for v in o for a in atoms(v)] if isinstance(o, tuple) else [o]

    assert {type(a) for a in atoms(want)} <= {type(a) for a in atoms(tuple(out))} <= {int, str}


def test_fallback_for_an_estimator_that_changes_the_algorithm():
    """A subclass overriding a step other than the leaf epsilon (an audit mutant) is fitted by the
    reference once per run, seeded as the target seeds it: the very releases of the wrapped estimator."""
    data = pure_pair().d0
    params = dict(epsilon=1.0, max_depth=1, bounds=[(0.0, 1.0)], classes=[0, 1], binning="uniform", max_bins=2,
                  epsilon_shares=(0.0, 0.5, 0.5))
    fast = PrivaTreeBatch(estimator=ExactCandidateFilter, **params)
    assert not fast.vectorised
    ref = ReleaseMechanism(partial(ExactCandidateFilter, **params))
    rng_a, rng_b = np.random.default_rng(9), np.random.default_rng(9)
    assert fast.batch(data, 20, rng_a) == [ref(data, rng_b) for _ in range(20)]
    with pytest.raises(ValueError, match="fallback"):
        fast.fit_trees(data, 2, np.random.default_rng(0))


def test_very_deep_trees_fall_back_to_the_reference():
    """Depth 16: the heap arrays would not fit one chunk, so every run is the reference's fit,
    seeded as the target seeds it."""
    X, y = np.array([[0.1], [0.4], [0.6], [0.9]]), np.array([0, 1, 0, 1])
    params = dict(epsilon=HUGE, max_depth=16, bounds=[(0.0, 1.0)], classes=[0, 1], epsilon_shares=(0, 0.5, 0.5),
                  use_private_quantiles=False, accounting="paper", stopping="paper")
    fast = PrivaTreeBatch(**params)
    ref = ReleaseMechanism(partial(PrivaTreeClassifier, **params))
    rng_a, rng_b = np.random.default_rng(4), np.random.default_rng(4)
    assert fast.batch((X, y), 3, rng_a) == [ref((X, y), rng_b) for _ in range(3)]


def test_large_batches_are_chunked_and_complete():
    X = np.random.default_rng(0).random((400, 3))
    y = (X[:, 0] > 0.5).astype(int)
    fast = PrivaTreeBatch(epsilon=1.0, max_depth=2, bounds=[(0, 1)] * 3, classes=[0, 1], n_public=400, edges=4)
    out = fast.batch((X, y), 2000, np.random.default_rng(0))
    assert len(out) == 2000 and len({o[0] for o in out}) > 1


@pytest.mark.parametrize("kwargs,match", [
    (dict(epsilon=-1.0), "epsilon"),
    (dict(epsilon=1.0, random_state=3), "random_state"),
    (dict(epsilon=1.0, depth=3), r"no parameter\(s\) \['depth'\]"),
    (dict(epsilon=1.0, edges=0), "edges must be"),
    (dict(epsilon=1.0, edges="half"), "edges must be"),
    (dict(epsilon=1.0, estimator=dict), "estimator must be"),
    (dict(epsilon=1.0, accounting="loose"), "accounting"),
])
def test_bad_parameters_name_the_parameter(kwargs, match):
    with pytest.raises(ValueError, match=match):
        PrivaTreeBatch(**kwargs)


def test_bad_data_gives_the_references_error():
    fast = PrivaTreeBatch(epsilon=1.0, max_depth=1, bounds=[(0, 1)], classes=[0, 1], n_public=4)
    X = np.array([[0.1], [0.5]])
    for data, match in [(((X, np.array([0, 2]))), "label 2"), ((X, np.array([0])), "y must be 1-D"),
                        ("xy!", "pair")]:
        with pytest.raises(ValueError, match=match):
            fast.batch(data, 3, np.random.default_rng(0))
    with pytest.raises(ValueError, match="n must be"):
        fast.batch((X, np.array([0, 1])), 0, np.random.default_rng(0))
