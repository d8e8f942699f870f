"""Texts a user reads (issue 28 item 5): plain numbers, never numpy reprs, in evidence and error messages."""
import numpy as np
import pytest

from reference.validation import shown


def test_shown_writes_numpy_values_as_python_writes_numbers():
    assert shown(np.int64(0)) == "0" and shown(np.float64(0.5000005000000001)) == "0.5000005000000001"
    assert shown((np.float64(1.0), np.float64(0.0))) == "(1.0, 0.0)"
    assert shown(np.array([0, 0])) == "[0, 0]" and shown({np.int64(1): np.array([0.5])}) == "{1: [0.5]}"
    assert shown("a") == "'a'"


def test_neighbour_descriptions_from_numpy_labels_have_no_numpy_repr():
    from audit.engine.neighbours import add_remove_pairs, substitute_pairs
    from audit.engine.search import candidate_pairs

    X, y = np.zeros((2, 1)), np.array([1, 0])
    texts = [p.description for p in substitute_pairs(X, y, bounds=[(0, 1)], classes=np.array([0, 1]))]
    texts += [p.description for p in add_remove_pairs(X, y, bounds=[(0, 1)], classes=np.array([0, 1]))]
    texts += [p.description for p in candidate_pairs([(0.0, 1.0)], np.array([0, 1]), relation="substitute",
                                                     n_random=2)]
    assert "record 0 label 1 -> 0" in texts
    assert not [t for t in texts if "np." in t or "array(" in t]


def test_an_exact_witness_is_written_as_a_plain_number():
    from audit.diprime.claims import _exact_row
    from reference.mechanisms import IntervalExponential

    m = IntervalExponential(1.0, (0.0, 1.0))
    row = _exact_row("w", "s", m, (np.array([0.2, 0.4]), np.array([0.2])), 1.0, "pass")
    assert "witness output" in row["detail"] and "np." not in row["detail"]


def _message(fit) -> str:
    with pytest.raises(ValueError) as info:
        fit()
    return str(info.value)


@pytest.mark.parametrize("case", range(9))
def test_diprime_and_random_tree_errors_show_plain_numbers(case):
    from reference.diprime import DiPriMeForestClassifier, DiPriMeForestRegressor
    from reference.random_trees import RandomDecisionForestClassifier

    X, y = np.random.default_rng(0).random((20, 2)), np.arange(20) % 3
    b = [(0.0, 1.0)] * 2
    fits = [
        lambda: DiPriMeForestClassifier(epsilon=1, bounds=b, classes=[0, 1]).fit(X, y),
        lambda: DiPriMeForestClassifier(epsilon=1, bounds=b, classes=np.array([0, 1]),
                                        categories={1: np.array([0, 1])}).fit(X, y % 2),
        lambda: DiPriMeForestClassifier(epsilon=1, bounds=b, classes=np.array([0, 0])).fit(X, y % 2),
        lambda: DiPriMeForestClassifier(epsilon=1, bounds=b, classes=[0, 1], rho=np.float64(2)).fit(X, y % 2),
        lambda: DiPriMeForestRegressor(epsilon=1, bounds=b, target_bounds=(np.float64(1), np.float64(0))).fit(X, y),
        lambda: RandomDecisionForestClassifier(epsilon=1, bounds=b, classes=[0, 1]).fit(X, y),
        lambda: RandomDecisionForestClassifier(epsilon=1, bounds=np.array([(0, 1), (1, 0.0)]),
                                               classes=[0, 1]).fit(X, y % 2),
        lambda: RandomDecisionForestClassifier(epsilon=1, bounds=b, classes=np.array([0, 0])).fit(X, y % 2),
        lambda: RandomDecisionForestClassifier(epsilon=1, bounds=b, classes=[0, 1],
                                               n_estimators=np.float64(0.5)).fit(X, y % 2),
    ]
    text = _message(fits[case])
    assert "np." not in text and "array(" not in text, text
