"""Fixtures that run tests against a real embedded FalkorDB server.

One server per test session (starting one takes ~0.2 s, but tests add up); each test that asks for
``store`` gets an empty graph with the schema applied. Tests that need a server of their own (kill,
lock, restart) build it from ``fresh_settings``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from covr.graph import GraphStore, open_store
from covr.settings import Settings


def make_settings(data_dir: Path, **overrides: object) -> Settings:
    """Settings for a test: an isolated data directory and no .env file."""
    values: dict[str, Any] = {"data_dir": data_dir, "graph_uri": "", **overrides}
    return Settings(_env_file=None, **values)  # type: ignore[call-arg]


@pytest.fixture(scope="session")
def settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    """The settings of the session's shared embedded server."""
    return make_settings(tmp_path_factory.mktemp("covr"))


@pytest.fixture(scope="session")
def session_store(settings: Settings) -> Iterator[GraphStore]:
    with open_store(settings) as store:
        yield store


@pytest.fixture
def store(session_store: GraphStore) -> GraphStore:
    """An empty graph with the schema applied, on the shared embedded server."""
    session_store.clear()
    session_store.apply_schema()
    return session_store


@pytest.fixture
def fresh_settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    """Settings for a server of the test's own (a new data directory)."""
    return make_settings(tmp_path_factory.mktemp("own"))
