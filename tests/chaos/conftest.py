"""A service over each graph store with a fault the test can inject (tests/chaos/faults.py).

``chaos`` runs once per backend (the ``backend`` fixture of tests/integration/conftest.py, whose
fixtures this folder shares through ``pytest_plugins``-free imports): FalkorDB on an embedded
server of the module's own, Neo4j on the session's shared server behind a cuttable proxy (no
extra Neo4j is started). The lookup caches are off, so every call reads the store and a fault
meets the call it lands in.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import pytest

from covr.graph import GraphStore, open_store
from covr.graph.falkor import FalkorStore
from covr.graph.neo4j_backend import Neo4jStore
from covr.settings import Settings
from covr_loaders.samples import load_bundled_samples
from tests.chaos.faults import CuttableProxy, Fault, sigkill_and_reap
from tests.integration.conftest import backend, make_settings, session_store, settings
from tests.support.service_server import TestServer, running_server

__all__ = ["backend", "session_store", "settings"]  # the integration fixtures, used here

NO_CACHES: dict[str, Any] = {
    "related_cache_results": 0,
    "related_cache_postings": 0,
    "related_cache_scenes": 0,
}
"""Every lookup reads the store (a cached answer would never meet the fault)."""


@dataclass
class Chaos:
    """The test's service, its store, and the fault to inject into that store."""

    server: TestServer
    store: GraphStore
    fault: Fault


def _falkordb_fault(store: GraphStore) -> Fault:
    assert isinstance(store, FalkorStore)
    assert store.server is not None

    def trip() -> None:
        state = store.server.read_state() if store.server is not None else None
        assert state is not None
        sigkill_and_reap(state.pid)

    return Fault("SIGKILL of the embedded FalkorDB", trip, lambda: None)


@pytest.fixture(scope="module")
def chaos(backend: str, request: pytest.FixtureRequest) -> Iterator[Chaos]:
    if backend == "falkordb":
        with running_server(**NO_CACHES) as running:
            yield Chaos(running, running.store, _falkordb_fault(running.store))
        return
    shared: GraphStore = request.getfixturevalue("session_store")
    assert isinstance(shared, Neo4jStore)
    assert shared.server is not None
    address = urlsplit(shared.server.uri)
    assert address.hostname is not None
    assert address.port is not None
    proxy = CuttableProxy((address.hostname, address.port))
    user, password = shared.server.credentials()
    shared_settings: Settings = request.getfixturevalue("settings")
    relayed = make_settings(
        shared_settings.data_dir,
        "neo4j",
        graph_uri=f"bolt://127.0.0.1:{proxy.port}",
        graph_user=user,
        graph_password=password,
    )
    store = open_store(relayed.graph)
    try:
        store.clear()
        store.apply_schema()
        load_bundled_samples(store, relayed.load)
        fault = Fault("Bolt connections of the shared Neo4j cut", proxy.cut, proxy.heal)
        with running_server(store=store, **NO_CACHES) as running:
            yield Chaos(running, store, fault)
    finally:
        store.close()
        proxy.close()
