"""Marks every test by its folder, so `-m unit` / `-m integration` / `-m e2e` select by kind, and
starts the session's shared Neo4j early (tests/support/shared_neo4j.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

_KINDS = ("unit", "integration", "e2e")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        parts = Path(str(item.fspath)).parts
        for kind in _KINDS:
            if kind in parts:
                item.add_marker(getattr(pytest.mark, kind))


def pytest_collection_finish(session: pytest.Session) -> None:
    from tests.integration.conftest import TEST_BACKENDS
    from tests.support.shared_neo4j import SHARED, needs_neo4j

    if needs_neo4j([item.nodeid for item in session.items], TEST_BACKENDS):
        SHARED.start()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    from tests.support.shared_neo4j import SHARED

    SHARED.close()
