"""Marks every test by its folder, so `-m unit` / `-m integration` / `-m e2e` select by kind,
puts the slowest test files first (so that two xdist workers finish together), and starts the
session's shared Neo4j early (tests/support/shared_neo4j.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

_KINDS = ("unit", "integration", "e2e")

SLOW_FILES_FIRST = (
    # no Neo4j: they run while the workers' shared Neo4j starts in the background
    "tests/integration/loaders/test_kill_resume.py",
    "tests/unit/questions/test_generation.py",
    "tests/integration/cli/test_models_reproducible.py",
    # then the rest by their time in CI (2026-11-26 run, seconds per file)
    "tests/e2e/test_quickstart_on_both.py",
    "tests/integration/cli/test_db_commands.py",
    "tests/integration/graph/test_managed_neo4j.py",
    "tests/integration/service/test_rpcs.py",
    "tests/integration/related/test_presence_batch.py",
    "tests/integration/parity/test_export_parity.py",
    "tests/integration/parity/test_neo4j_kill.py",
    "tests/integration/related/test_congruence.py",
)
"""Test files that run first, longest first.

``make test`` runs ``pytest -n 2 --dist loadfile --no-loadscope-reorder``: a whole file goes to
one worker, in collection order, and a worker takes the next file when it is nearly idle. In
plain collection order (or xdist's default, files with the most tests first) a two-minute file
could start last and keep one worker busy while the other idled: longest-first is the classic
fix for that tail. A file missing here only runs later; nothing is skipped."""


def _slow_rank(item: pytest.Item) -> int:
    path = item.nodeid.split("::", 1)[0]
    try:
        return SLOW_FILES_FIRST.index(path)
    except ValueError:
        return len(SLOW_FILES_FIRST)


class _SlowFilesFirst:
    """The reordering, as a plugin: it must run after pytest's own reordering (which groups
    items by parametrized fixtures) and after ``-m`` selection, while the kind markers below must
    be set before that selection; one conftest cannot hold two hooks of one name."""

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        items.sort(key=_slow_rank)  # stable: each file's own order, and the others', is kept


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(_SlowFilesFirst(), "covr-slow-files-first")


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
