"""The managed Neo4j's own life cycle: restart after a crash, one owner, nothing left running."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from covr.graph import open_store
from covr.graph.managed import pid_runs
from covr.graph.neo4j_backend import Neo4jStore
from covr.graph.neo4j_server import LAUNCHER_CLASS, ManagedNeo4j
from tests.integration.conftest import make_settings


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_a_killed_server_is_restarted_with_its_data(tmp_path: Path) -> None:
    settings = make_settings(tmp_path, "neo4j")
    with open_store(settings.graph) as store:
        assert isinstance(store, Neo4jStore)
        assert isinstance(store.server, ManagedNeo4j)
        store.apply_schema()
        store.write("CREATE (:Image {id: $id, source: 'test', split: 'val'})", {"id": "test:1"})
        first = store.server.read_state()
        assert first is not None

        # one owner: a second opener of the directory attaches to the owner's server (issue 21;
        # it used to be refused) instead of starting a second one, and leaves it running
        with open_store(settings.graph) as visitor:
            assert visitor.read("MATCH (i:Image) RETURN i.id AS id") == [{"id": "test:1"}]
        assert store.server.read_state() == first
        assert pid_runs(first.pid, LAUNCHER_CLASS.encode())

        os.kill(first.pid, signal.SIGKILL)  # a crash: no shutdown, no checkpoint
        rows = store.read("MATCH (i:Image) RETURN i.id AS id")  # notices, restarts, retries
        assert rows == [{"id": "test:1"}]  # committed before the crash: durable
        assert store.server.restarts == 1
        second = store.server.read_state()
        assert second is not None
        assert second.pid != first.pid
        assert not pid_runs(first.pid, LAUNCHER_CLASS.encode())
    # closing the store stops the server it owns
    assert not pid_runs(second.pid, LAUNCHER_CLASS.encode())
    assert ManagedNeo4j(settings.graph).status()["running"] is False
