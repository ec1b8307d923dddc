"""A real Neo4j (or external FalkorDB) named by COVR_GRAPH_URI; every test here is skipped without one.

Run: ``COVR_GRAPH_URI=bolt://localhost:7687 COVR_GRAPH_PASSWORD=... make e2e``. The tests empty the
configured database: never point them at data you want to keep.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from covr.graph import GraphStore, open_store
from covr.settings import Backend, Settings


@pytest.fixture(scope="session")
def external_settings() -> Settings:
    settings = Settings()
    if settings.backend is Backend.EMBEDDED:
        pytest.skip("COVR_GRAPH_URI is not set: no external graph store to test against")
    return settings


@pytest.fixture(scope="session")
def session_store(external_settings: Settings) -> Iterator[GraphStore]:
    with open_store(external_settings) as store:
        yield store


@pytest.fixture
def store(session_store: GraphStore) -> GraphStore:
    session_store.clear()
    session_store.apply_schema()
    return session_store
