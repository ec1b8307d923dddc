"""The table "Hostile inputs of issue 40, and the tests that keep them out" of docs/security.md
names tests that exist (issue 40 item 7).

``pytest --collect-only`` would tell for sure but takes far longer than a unit test may; the test
ids of the table are ``path::function`` and a test function is a ``def`` at the top of its file,
so reading each file's syntax tree answers the same question. Every row of the issue's table
(1-13) must be in it too.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "security.md"
HEADING = "## Hostile inputs of issue 40, and the tests that keep them out"
NODE_ID = re.compile(r"`(tests/[\w/]+\.py)::(\w+)(?:\[[^\]`]*\])?`")


def _section() -> str:
    text = DOC.read_text(encoding="utf-8")
    assert HEADING in text, f"{DOC}: no section {HEADING!r}"
    rest = text.split(HEADING, 1)[1]
    return re.split(r"^## ", rest, maxsplit=1, flags=re.MULTILINE)[0]


def node_ids(section: str) -> list[tuple[str, str]]:
    """Every ``path::function`` named in the section's table rows."""
    rows = [line for line in section.splitlines() if line.startswith("| ")]
    return [(m[1], m[2]) for line in rows for m in NODE_ID.finditer(line)]


def defined_tests(path: Path) -> set[str]:
    """The test functions a file defines at its top level (``def`` or ``async def``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return {
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test")
    }


def test_every_test_the_table_names_exists() -> None:
    named = node_ids(_section())
    assert len(named) >= 13
    missing: list[str] = []
    cache: dict[str, set[str]] = {}
    for path, function in named:
        file = ROOT / path
        if not file.is_file():
            missing.append(f"{path}::{function} (no such file)")
            continue
        if function not in cache.setdefault(path, defined_tests(file)):
            missing.append(f"{path}::{function}")
    assert not missing, f"{DOC} names tests that do not exist: {missing}"


def test_every_row_of_the_issue_has_a_test() -> None:
    rows: dict[int, int] = {}
    for line in _section().splitlines():
        found = re.match(r"^\| (\d+) \|", line)
        if found:
            rows[int(found[1])] = rows.get(int(found[1]), 0) + len(NODE_ID.findall(line))
    assert sorted(rows) == list(range(1, 14))
    assert all(rows[n] > 0 for n in rows), rows


def test_the_check_sees_a_missing_test() -> None:
    """The parser is not vacuous: a made-up name is not found, a real one is."""
    section = (
        "| 1 | x | `tests/unit/test_security_doc.py::test_every_test_the_table_names_exists`, "
        "`tests/unit/test_security_doc.py::test_not_there[falkordb]` | both |"
    )
    named = node_ids(section)
    assert named == [
        ("tests/unit/test_security_doc.py", "test_every_test_the_table_names_exists"),
        ("tests/unit/test_security_doc.py", "test_not_there"),
    ]
    defined = defined_tests(Path(__file__))
    assert named[0][1] in defined
    assert named[1][1] not in defined
