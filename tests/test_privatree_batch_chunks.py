"""The batched PrivaTree in row chunks (issue 45 item 5): an input whose records do not fit one chunk
(``_CHUNK_ELEMENTS``) is fitted in row chunks, with the same trees as one chunk would give; it no longer
falls back to one reference fit per run. (Inputs under the limit keep their releases exactly:
``tests/test_privatree_pinned.py`` pins them against the code before row chunks.)"""
from __future__ import annotations

import numpy as np
import pytest

import reference.privatree.batch as batch_module
from reference.privatree.batch import PrivaTreeBatch

FIELDS = ("kind", "feature", "cut", "left", "label", "measured", "n_bins")
CATS = {2: (0.0, 1.0, 2.0)}


def _data(n=60, seed=3, K=2):
    rng = np.random.default_rng(seed)
    X = rng.random((n, 3))
    X[:, 2] = rng.integers(0, 3, n)
    y = np.minimum(((X[:, 0] + 0.3 * rng.standard_normal(n) + 0.2 * X[:, 2]) * K / 1.6).astype(int), K - 1).clip(0)
    return X, y


CONFIGS = {
    "uniform": dict(binning="uniform"),
    "jointexp": dict(),
    "paper stopping": dict(accounting="paper"),
    "three classes": dict(classes=[0, 1, 2], binning="uniform", epsilon=4.0),
}


def _mech(**kw):
    params = dict(epsilon=2.0, max_depth=3, bounds=[(0.0, 1.0), (0.0, 1.0), None], categories=CATS, classes=[0, 1],
                  n_public=60)
    params.update(kw)
    return PrivaTreeBatch(edges=4, **params)


def _same_trees(a, b):
    for f in FIELDS:
        np.testing.assert_array_equal(getattr(a, f), getattr(b, f), err_msg=f)
    assert sorted(a.edges) == sorted(b.edges)
    for j in a.edges:
        np.testing.assert_array_equal(a.edges[j], b.edges[j])


@pytest.mark.parametrize("runs", [12, 40])  # bins found run by run (few runs), or for all runs at once
@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_row_chunks_give_the_trees_of_one_chunk(name, runs, monkeypatch):
    """``fit_trees`` of ``runs`` runs, seeded alike, in one chunk and in row chunks of a few records: the
    same trees, edges and measured nodes (the histograms are sums over the chunks)."""
    kw = CONFIGS[name]
    data = _data(K=len(kw.get("classes", (0, 1))))
    mech = _mech(**kw)
    whole = mech.fit_trees(data, runs, np.random.default_rng(5))
    monkeypatch.setattr(batch_module, "_CHUNK_ELEMENTS", 1_000 * runs // 12)
    p = mech.prepare(data)
    spans = batch_module._Records(p, mech._edges(p, runs, np.random.default_rng(0)), runs).spans
    assert len(spans) > 3 and spans[0] == (0, spans[0][1]) and spans[-1][1] == 60  # really in chunks
    chunked = mech.fit_trees(data, runs, np.random.default_rng(5))
    _same_trees(whole, chunked)
    assert len({repr(r) for r in mech.releases(chunked, prepared=p)}) > 1  # the runs differ: the noise is on


def test_an_input_over_the_limit_is_fitted_in_chunks_not_by_the_reference(monkeypatch):
    """Records of one run over the limit (the heap under it): ``batch`` fits one run at a time in row chunks,
    each the release ``fit_trees(data, 1, rng)`` gives in one chunk, never the reference fallback."""
    data = _data()
    mech = _mech(binning="uniform")
    rng = np.random.default_rng(11)
    expected = [mech.releases(mech.fit_trees(data, 1, rng), prepared=mech.prepare(data))[0] for _ in range(4)]
    monkeypatch.setattr(batch_module, "_CHUNK_ELEMENTS", 600)
    p = mech.prepare(data)
    assert mech._heap_elements(p) <= 600 < mech._per_run_elements(p)

    def refuse(*args, **kwargs):
        raise AssertionError("the reference fallback ran")

    monkeypatch.setattr(PrivaTreeBatch, "_reference_release", refuse)
    assert mech.batch(data, 4, np.random.default_rng(11)) == expected


def test_a_hundred_thousand_records_of_twenty_features_take_the_batched_path(monkeypatch):
    """The size the batched path used to refuse (2.4 million elements a run against 2^21): now in row chunks."""
    rng = np.random.default_rng(0)
    X = rng.random((100_000, 20))
    y = (X[:, 0] + X[:, 1] > 1).astype(int)
    mech = PrivaTreeBatch(edges=None, epsilon=1.0, max_depth=2, bounds=[(0.0, 1.0)] * 20, classes=[0, 1],
                          n_public=100_000, binning="uniform")
    p = mech.prepare((X, y))
    assert mech._per_run_elements(p) > batch_module._CHUNK_ELEMENTS

    def refuse(*args, **kwargs):
        raise AssertionError("the reference fallback ran")

    monkeypatch.setattr(PrivaTreeBatch, "_reference_release", refuse)
    (tree,) = mech.batch((X, y), 1, np.random.default_rng(1))
    assert tree[0] == "node" and tree[1] in (0, 1)  # the signal's features (a fixed seed: deterministic)
