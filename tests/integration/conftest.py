"""Fixtures that run tests against real graph servers: the embedded FalkorDB and the managed Neo4j.

Every test that asks for ``store``, ``session_store`` or ``settings`` runs once per backend
(``[falkordb]`` and ``[neo4j]`` in its id): one server of each per test session (the embedded
FalkorDB starts in ~0.2 s, the managed Neo4j in ~12 s, so pytest groups the tests by backend and
starts each once; the Neo4j is the session's shared one, tests/support/shared_neo4j.py). ``COVR_TEST_BACKENDS=falkordb`` narrows a local run to one backend; CI runs
both, and a Neo4j that cannot start fails the run instead of skipping it.

Tests that need a server of their own (kill, lock, restart) build it from ``fresh_settings``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from covr.graph import GraphStore, open_store
from covr.settings import Settings
from tests.support.shared_neo4j import SHARED

BACKENDS = ("falkordb", "neo4j")
TEST_BACKENDS = tuple(
    b.strip() for b in os.environ.get("COVR_TEST_BACKENDS", ",".join(BACKENDS)).split(",") if b
)
# A test server needs little: half a GiB of heap and a small page cache keep the machine free.
# It plans a cached statement again only when a load forgets the plans (name_stats), not when
# the statistics moved: every test empties the store and loads its own few images, so with the
# product's 1 s nearly every statement was planned again in every test, at one to six seconds
# per text on the tests' JVM (tests/integration/related and parity on Neo4j: 355 s -> 265 s;
# repeats of a known text slower than 0.3 s: 97 taking 95 s -> 48 taking 39 s, 2026-11-26).
# The plans' quality over a tiny store's statistics is test_neo4j_plans' own check.
NEO4J_TEST_SETTINGS: dict[str, Any] = {
    "neo4j_bolt_port": 0,
    "neo4j_heap": "768m",
    "neo4j_pagecache": "256m",
    "neo4j_replan_interval_s": 3600,
}


def make_settings(data_dir: Path, backend: str = "falkordb", **overrides: object) -> Settings:
    """Settings for a test: an isolated data directory, no .env file, the given backend."""
    values: dict[str, Any] = {"data_dir": data_dir, "graph_uri": "", "graph_backend": backend}
    if backend == "neo4j":
        values.update(NEO4J_TEST_SETTINGS)
    values.update(overrides)
    return Settings(_env_file=None, **values)  # type: ignore[call-arg]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """``@pytest.mark.backends("falkordb")``: a test about one server's own mechanics runs on that
    backend only; its other-backend variants are deselected (not skipped: there is nothing to
    skip, the test does not apply)."""
    keep: list[pytest.Item] = []
    dropped: list[pytest.Item] = []
    for item in items:
        marker = item.get_closest_marker("backends")
        callspec = getattr(item, "callspec", None)
        backend = callspec.params.get("backend") if callspec is not None else None
        if marker is not None and backend is not None and backend not in marker.args:
            dropped.append(item)
        else:
            keep.append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = keep


@pytest.fixture(scope="session", params=TEST_BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    """The graph backend of this run of the test ("falkordb" or "neo4j")."""
    name = str(request.param)
    if name not in BACKENDS:
        raise pytest.UsageError(f"COVR_TEST_BACKENDS: unknown backend {name!r}")
    return name


@pytest.fixture(scope="session")
def settings(backend: str, tmp_path_factory: pytest.TempPathFactory) -> Settings:
    """The settings of the session's shared server of this backend."""
    if backend == "neo4j":
        return SHARED.settings
    return make_settings(tmp_path_factory.mktemp(f"covr-{backend}"), backend)


@pytest.fixture(scope="session")
def session_store(settings: Settings) -> Iterator[GraphStore]:
    if settings.graph_backend == "neo4j":
        yield SHARED.store()  # started at collection, stopped at the end of the session
        return
    with open_store(settings.graph) as store:
        yield store


@pytest.fixture
def store(session_store: GraphStore) -> GraphStore:
    """An empty graph with the schema applied, on the session's server of this backend."""
    session_store.clear()
    session_store.apply_schema()
    return session_store


@pytest.fixture
def fresh_settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    """Settings for an embedded FalkorDB of the test's own (a new data directory)."""
    return make_settings(tmp_path_factory.mktemp("own"))
