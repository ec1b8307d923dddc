"""Two stores at once: the embedded FalkorDB and the managed Neo4j, side by side.

The shared fixtures of ``tests/integration/conftest.py`` run a test once per backend; a parity
test needs both in the same test. This folder opens one server of each for the whole session (in
data directories of their own), so the parity tests and the Neo4j guarantee tests together cost
one Neo4j start. ``COVR_TEST_BACKENDS`` naming only one backend skips the folder: a parity test
without both stores has nothing to compare.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from covr.graph import GraphStore, open_store
from covr.settings import Settings
from tests.integration.conftest import BACKENDS, TEST_BACKENDS, make_settings
from tests.support.shared_neo4j import SHARED


@dataclass(frozen=True)
class Pair:
    """The same service on the two stores; ``settings`` differ only in backend and data dir."""

    falkordb: GraphStore
    neo4j: GraphStore
    falkordb_settings: Settings
    neo4j_settings: Settings

    def stores(self) -> tuple[tuple[str, GraphStore, Settings], ...]:
        return (
            ("falkordb", self.falkordb, self.falkordb_settings),
            ("neo4j", self.neo4j, self.neo4j_settings),
        )

    def reset(self) -> None:
        """Both stores empty, with the schema applied."""
        for _, store, _ in self.stores():
            store.clear()
            store.apply_schema()


@pytest.fixture(scope="session")
def pair(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pair]:
    missing = [b for b in BACKENDS if b not in TEST_BACKENDS]
    if missing:
        pytest.skip(f"parity needs both backends; COVR_TEST_BACKENDS leaves out {missing}")
    falkordb_settings = make_settings(tmp_path_factory.mktemp("parity-falkordb"), "falkordb")
    with open_store(falkordb_settings.graph) as falkordb:
        yield Pair(falkordb, SHARED.store(), falkordb_settings, SHARED.settings)


@pytest.fixture
def neo4j_store(pair: Pair) -> GraphStore:
    """The session's parity Neo4j, empty, with the schema applied."""
    pair.neo4j.clear()
    pair.neo4j.apply_schema()
    return pair.neo4j
