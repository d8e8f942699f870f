"""The budget tables of the getting-started page are :func:`audit.frontends.samples.table_text`'s (the samples each row
family really draws per input), so a change of a target's sizes cannot leave the documentation behind."""
from __future__ import annotations

import re
from pathlib import Path

from audit.frontends.samples import table_text

PAGE = Path(__file__).resolve().parents[1] / "docs" / "getting-started.md"


def test_the_budget_tables_are_the_generated_ones():
    blocks = dict(re.findall(r"<!-- samples:([\w-]+) -->\n(.*?)\n<!-- samples:end -->", PAGE.read_text(), flags=re.S))
    assert set(blocks) == {"check", "privatree"}
    for name, table in blocks.items():
        assert table == "\n".join(table_text(None if name == "check" else name)), \
            f"docs/getting-started.md: rewrite the {name} table with audit.frontends.samples.table_text"
