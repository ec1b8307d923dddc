"""The end-to-end suite: a real Neo4j, the managed one by default, or yours in COVR_GRAPH_URI.

Without ``COVR_GRAPH_URI`` the tests run on a managed Neo4j Community that the session starts in
a temporary data directory (so CI always runs them). With it, they run on that store instead:
``COVR_GRAPH_URI=bolt://localhost:7687 COVR_GRAPH_PASSWORD=... make e2e``; they empty the
configured database then, so never point them at data you want to keep.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from covr.graph import GraphStore, open_store
from covr.settings import Backend, Settings
from tests.integration.conftest import make_settings


@pytest.fixture(scope="session")
def external_settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    settings = Settings()
    if settings.backend is Backend.EMBEDDED or settings.backend is Backend.MANAGED_NEO4J:
        return make_settings(tmp_path_factory.mktemp("e2e-neo4j"), "neo4j")
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
