"""Check 1 of every `.cypher` file: it executes on the embedded FalkorDB with its example params.

The folder is enumerated, so a new file cannot escape the check. Files marked
``// backend: neo4j`` cannot run on FalkorDB by design; they are checked by Neo4j's front-end
(tests/unit/cypher) and executed by the e2e suite against a real Neo4j.
"""

from __future__ import annotations

import pytest

from covr.graph import GraphStore, catalog

FALKOR = [s for s in catalog.all_statements() if s.runs_on("falkordb")]


@pytest.mark.parametrize("statement", FALKOR, ids=lambda s: s.name)
def test_executes_on_falkordb(store: GraphStore, statement: catalog.Statement) -> None:
    if statement.name.startswith("schema/"):
        store.clear()  # DDL must run on a store that does not have it yet
    if statement.setup:
        setup = catalog.get(statement.setup)
        store.write(setup, setup.example_params)
    for part in statement.parts():
        store.write(part, statement.example_params)


def test_every_statement_is_checked_somewhere() -> None:
    neo4j_only = {s.name for s in catalog.all_statements() if not s.runs_on("falkordb")}
    assert all(name.split("/")[1] == "neo4j" for name in neo4j_only), neo4j_only
