"""The table of seed rules (docs/skills.md, once the README's) names real tests: a
renamed or deleted test cannot leave a rule looking pinned."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_test_the_seed_table_names_exists() -> None:
    page = (ROOT / "docs" / "skills.md").read_text(encoding="utf-8")
    heading = "\n## The seeds' rules, and the test that pins each\n"
    assert heading in page, "docs/skills.md lost its table of seed rules"
    table = page.split(heading, 1)[1].split("\n#", 1)[0]
    named = re.findall(r"`(test_\w+)::(test_\w+)`", table)
    assert len(named) >= 25
    for module, test in named:
        tree = ast.parse((ROOT / "tests" / f"{module}.py").read_text(encoding="utf-8"))
        defined = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
        assert test in defined, f"docs/skills.md names {module}::{test}, which does not exist"
    rows = [line for line in table.splitlines() if line.startswith("| ") and not line.startswith("| seed")]
    assert all("test_" in row for row in rows), "a rule without a test"
