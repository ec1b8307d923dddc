"""Check 2 of every `.cypher` file: Neo4j's own Cypher 5 front-end accepts it.

The folder is enumerated, so a new file cannot escape the check. (Check 1, execution on the
embedded FalkorDB, is in tests/integration/graph/test_catalog_on_falkordb.py.)
"""

from __future__ import annotations

import pytest

from covr.graph import catalog
from tests.support.cypher_lint import lint

# One Node.js run checks every statement (the module's fixture): 5-10 s on the 2-core machine.
pytestmark = pytest.mark.slow

PARTS = [
    (f"{s.name}#{i}", part) for s in catalog.all_statements() for i, part in enumerate(s.parts())
]


@pytest.fixture(scope="module")
def verdicts() -> dict[str, dict[str, object]]:
    return {v["name"]: v for v in lint(PARTS)}


@pytest.mark.parametrize(("name", "text"), PARTS, ids=[p[0] for p in PARTS])
def test_valid_cypher_5(name: str, text: str, verdicts: dict[str, dict[str, object]]) -> None:
    assert verdicts[name]["errors"] == [], f"{name}:\n{text}"


def test_the_front_end_rejects_what_neo4j_5_rejects() -> None:
    """The check can fail: FalkorDB-only syntax is caught."""
    bad = [
        ("exists", "MATCH (n:Image) WHERE exists(n.id) RETURN n"),
        ("old_index", "CREATE INDEX ON :Image(id)"),
        ("syntax", "MATCH (n RETURN n"),
        ("size_pattern", "MATCH (a:Image) RETURN size((a)-->())"),
    ]
    for verdict in lint(bad):
        assert verdict["errors"], verdict["name"]
