"""IBM diffprivlib audited as an outside subject; runs only where the extra is installed
(`pip install -e '.[diffprivlib]'`, which needs scikit-learn < 1.6 for diffprivlib 0.6.6)."""
import json
from pathlib import Path

import pytest

pytest.importorskip("diffprivlib")

from audit.__main__ import main  # noqa: E402

EXAMPLE = Path(__file__).parents[1] / "examples" / "diffprivlib.toml"


def test_diffprivlib_claims(tmp_path):
    """Quick budget, alpha 0.05 per claim: the mechanisms pass; the decision tree passes
    under add/remove and is flagged under substitution (its monotone permute-and-flip)."""
    code = main(["check", "--claims", str(EXAMPLE), "--budget", "quick", "--out", str(tmp_path), "--quiet"])
    verdicts = {c["id"]: c["verdict"]
                for c in json.loads((tmp_path / "diffprivlib" / "report.json").read_text())["claims"]}
    assert code == 1
    assert verdicts.pop("decision-tree/substitute") == "violation"
    assert set(verdicts.values()) == {"pass"}
