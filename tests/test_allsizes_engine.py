"""The all-sizes engine's choices that do not depend on one law (audit.engine.exact_law.allsizes): the coordinate a box is
cut on, and how an entry says where its upper end comes from. Deterministic (no randomness)."""
from __future__ import annotations

import pytest

from audit.engine.exact_law.allsizes import INF, AllSizesDomain, certify_all_sizes, split_at
from audit.privatree.count_law import PrivaTreeCountLaw

ONE = dict(bounds=[(0.0, 1.0)], classes=[0, 1], binning="uniform", max_bins=2, epsilon_shares=(0.0, 0.5, 0.5),
           epsilon=1.0)


@pytest.mark.parametrize("lo,hi,j", [((0, 0), (INF, INF), 1), ((3, 0), (3, INF), 1), ((1, 2), (4, 9), 1),
                                     ((1, 2), (4, 9), 0), ((0, 7), (INF, 8), 1)])
def test_split_at_partitions_the_box_on_the_named_coordinate(lo, hi, j):
    parts = split_at(lo, hi, j)
    assert len(parts) == 2 and all(p[0][k] == lo[k] and p[1][k] == hi[k] for p in parts for k in range(2) if k != j)
    for p in [(x, y) for x in range(40) for y in range(40) if all(l <= v <= h for v, l, h in zip((x, y), lo, hi))]:
        assert sum(all(l <= v <= h for v, l, h in zip(p, a, b)) for a, b in parts) == 1, (lo, hi, j, p)


def test_the_best_cut_proves_the_same_bound_as_the_widest_where_both_close():
    law = PrivaTreeCountLaw(dict(ONE, max_depth=1))
    wide = certify_all_sizes(law, tol=1e-9)
    best = certify_all_sizes(law, tol=1e-9, split="best")
    assert wide.complete and best.complete
    assert best.upper == pytest.approx(wide.upper, abs=1e-9) and best.lower == pytest.approx(wide.lower, abs=1e-9)
    capped = certify_all_sizes(law, tol=1e-9, split="best", max_records=6)
    assert capped.complete and capped.worst["records"] <= 6
    assert capped.lower == pytest.approx(certify_all_sizes(law, tol=1e-9, max_records=6).lower, abs=1e-9)


def test_a_bad_cut_rule_is_refused_by_name():
    with pytest.raises(ValueError, match="split"):
        certify_all_sizes(PrivaTreeCountLaw(dict(ONE, max_depth=1)), split="middle")


def test_an_entry_names_where_its_upper_end_comes_from():
    base = ("x", "a learner", PrivaTreeCountLaw, dict(ONE, max_depth=1), "add-remove", 1.0)
    assert AllSizesDomain(*base).upper_method == "law"
    with pytest.raises(ValueError, match="upper_method"):
        AllSizesDomain(*base, upper_method="guess")
    with pytest.raises(ValueError, match="upper_note"):
        AllSizesDomain(*base, upper_method="proof")
    assert AllSizesDomain(*base, upper_method="proof", upper_note="quoted").upper_note == "quoted"


def test_the_certificates_table_gives_each_entry_its_upper_ends_source_in_its_column():
    """Every row of the all-sizes table has the header's cells, the column "U from" holding the entry's method."""
    from audit.results.certify_allsizes import lines

    base = ("x", "a learner", PrivaTreeCountLaw, dict(ONE, max_depth=1), "add-remove", 1.0)
    results = []
    for d in (AllSizesDomain(*base), AllSizesDomain(*base, upper_method="proof", upper_note="quoted")):
        res = certify_all_sizes(d.law(d.params), tol=1e-6, max_boxes=50)
        results.append((d, res, [], d.verdict(res)))
    table = [row for row in lines(results, 1) if row.startswith("| ")]
    header = [c.strip() for c in table[0].strip("|").split("|")]
    col = header.index("U from")
    rows = [[c.strip() for c in row.strip("|").split("|")] for row in table[1:] if row.startswith("| x |")]
    assert [len(r) for r in rows] == [len(header)] * 2
    assert [r[col] for r in rows] == ["law", "proof"]


def test_a_quoted_bound_entry_takes_its_lower_end_from_the_listed_law():
    """The binary categorical feature at depth 2: the proof's epsilon above on every box, the listed law's exact
    loss below; capped at the listed domain's six records the search finds the listed domain's worst pair, and the
    whole epsilon is reached (the entry closes)."""
    from audit.results.certify import certify_domain
    from audit.privatree.certificate import all_sizes, domains

    d = next(x for x in all_sizes() if x.name == "strict, one binary categorical feature, depth 2")
    listed = next(x for x in domains() if x.name == d.name)
    assert d.upper_method == "proof" and "Theorem 3" in d.upper_note and listed.max_records == 6
    law = d.law(d.params)
    capped = certify_all_sizes(law, tol=d.tol, max_records=6, max_boxes=d.max_boxes)
    ref = certify_domain(listed)
    assert capped.lower == pytest.approx(ref.worst["lower"], abs=1e-12)
    res = certify_all_sizes(law, tol=d.tol, max_boxes=d.max_boxes)
    assert res.complete and 1.0 - 1e-11 <= res.lower <= 1.0 <= res.upper <= 1.0 + 1e-11


def test_a_quoted_bound_law_refuses_bad_arguments_by_name():
    from audit.engine.exact_law.quoted import QuotedBoundLaw
    from audit.privatree.exact_law import release_law

    for kw, name in ((dict(bound=0.0, max_point_records=3), "bound"), (dict(bound=1.0, max_point_records=0),
                                                                         "max_point_records")):
        with pytest.raises(ValueError, match=name):
            QuotedBoundLaw(release_law, dict(ONE, max_depth=1), [[0.25, 0.75]], [0, 1], **kw)


def test_a_witness_raises_the_lower_end_only_within_the_size_cap():
    """A quoted-bound law's witness (a pair far out in the orthant, here 63 records at depth 1 where the loss tends to
    the whole epsilon) is evaluated before the search: the lower end is its exact loss, above every pair of at most
    2 records; capped at 10 records the witness is out of reach and the lower end is the listed pairs' again; the
    upper end, the proof's, does not move."""
    from audit.engine.exact_law.allsizes import point_loss
    from audit.engine.exact_law.quoted import QuotedBoundLaw
    from audit.privatree.exact_law import release_law

    kw = dict(bound=1.0, max_point_records=2)
    plain = QuotedBoundLaw(release_law, dict(ONE, max_depth=1), [[0.25, 0.75]], [0, 1], **kw)
    law = QuotedBoundLaw(release_law, dict(ONE, max_depth=1), [[0.25, 0.75]], [0, 1], witnesses=[((0, 0, 62, 0), 0)],
                         **kw)
    base = certify_all_sizes(plain, tol=1e-9, max_boxes=200)
    res = certify_all_sizes(law, tol=1e-9, max_boxes=200)
    wit = point_loss(law, (0, 0, 62, 0), 0)[0]
    assert 0.99 < wit <= 1.0 and wit > base.lower + 0.1
    assert res.lower == wit and res.worst["records"] == 63 and res.worst["c1"] == [1, 0, 62, 0]
    assert res.upper == base.upper
    capped = certify_all_sizes(law, tol=1e-9, max_boxes=200, max_records=10)
    assert capped.lower == certify_all_sizes(plain, tol=1e-9, max_boxes=200, max_records=10).lower


def test_a_quoted_bound_laws_witnesses_and_limit_are_checked_by_name():
    from audit.engine.exact_law.quoted import QuotedBoundLaw
    from audit.privatree.exact_law import release_law

    args = (release_law, dict(ONE, max_depth=1), [[0.25, 0.75]], [0, 1])
    for kw in (dict(witnesses=[((0, 0, 1), 0)]), dict(witnesses=[((0, 0, 1, 0), 4)]),
               dict(witnesses=[((0, -1, 1, 0), 0)])):
        with pytest.raises(ValueError, match="witnesses"):
            QuotedBoundLaw(*args, bound=1.0, max_point_records=2, **kw)
    for limit in ((2.0, "above the bound"), (1.0, "")):
        with pytest.raises(ValueError, match="limit"):
            QuotedBoundLaw(*args, bound=1.0, max_point_records=2, limit=limit)
    law = QuotedBoundLaw(*args, bound=1.0, max_point_records=2, limit=(1.0, "why"))
    assert law.limits == {"add-remove": (1.0, "why")}


def test_the_jointexp_entrys_family_gives_the_losses_its_note_quotes():
    """JointExp's edges at depth 2: the family the note names (a class-1 record at 0.25 added to one class-0 record
    there and n of class 0 at 0.75) is among the entry's witnesses, its losses are the ones quoted, rise with n and
    settle (the same to 1e-9 from n = 64 on), above every pair of at most 10 records (0.5592) and below the proof's 1."""
    from audit.engine.exact_law.allsizes import point_loss
    from audit.privatree.certificate import all_sizes

    d = next(x for x in all_sizes() if x.name == "strict, JointExp edges, depth 2")
    law = d.law(d.params)
    losses = {}
    for n in (14, 20, 32, 64, 128):
        assert ((1, 0, n, 0), (1,)) in law.witnesses
        losses[n] = point_loss(law, (1, 0, n, 0), 1)[0]
    for n, records in ((14, 16), (20, 22), (32, 34)):
        assert f"{losses[n]:.6f} at {records}" in d.upper_note
    assert 0.5592 < losses[14] < losses[20] < losses[32] < 1.0
    assert abs(losses[128] - losses[64]) < 1e-9 and f"settles at {losses[64]:.6f}" in d.upper_note
