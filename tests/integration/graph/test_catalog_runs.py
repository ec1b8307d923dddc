"""Check 1 of every `.cypher` file: it executes on each backend it is written for, with its example
params (the embedded FalkorDB and the managed Neo4j).

The folder is enumerated, so a new file cannot escape the check. Files marked
``// backend: neo4j`` or ``// backend: falkordb`` are the per-backend DDL and admin statements;
everything else runs on both and is checked on both. Neo4j's front-end (tests/unit/cypher) checks
the text of every file without a server besides.
"""

from __future__ import annotations

import pytest

from covr.graph import GraphStore, catalog

STATEMENTS = catalog.all_statements()


@pytest.mark.parametrize("statement", STATEMENTS, ids=lambda s: s.name)
def test_executes_on_its_backends(store: GraphStore, statement: catalog.Statement) -> None:
    if not statement.runs_on(store.backend.dialect):
        pytest.skip(f"{statement.name} is written for the other backend")
    if statement.name.startswith("schema/"):
        store.clear()  # DDL must run on a store that does not have it yet
    if statement.setup:
        setup = catalog.get(statement.setup)
        store.write(setup, setup.example_params)
    for part in statement.parts():
        store.write(part, statement.example_params)


def test_every_statement_is_checked_somewhere() -> None:
    specific = {s.name for s in STATEMENTS if not (s.runs_on("falkordb") and s.runs_on("neo4j"))}
    assert all(name.split("/")[1] in ("neo4j", "falkordb") for name in specific), specific
