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
from covr.graph.backends import Backend, backend_of
from covr.settings import Settings
from tests.support.shared_neo4j import SHARED


@pytest.fixture(scope="session")
def external_settings() -> Settings:
    settings = Settings()
    if backend_of(settings.graph) in (Backend.EMBEDDED, Backend.MANAGED_NEO4J):
        return SHARED.settings  # the session's managed Neo4j (tests/support/shared_neo4j.py)
    return settings


@pytest.fixture(scope="session")
def session_store(external_settings: Settings) -> Iterator[GraphStore]:
    if external_settings is SHARED.settings:
        yield SHARED.store()
        return
    with open_store(external_settings.graph) as store:
        yield store


@pytest.fixture
def store(session_store: GraphStore) -> GraphStore:
    session_store.clear()
    session_store.apply_schema()
    return session_store
