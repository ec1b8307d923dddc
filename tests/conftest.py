"""Marks every test by its folder, so `-m unit` / `-m integration` / `-m e2e` / `-m chaos` select
by kind (a test of ``tests/unit`` marked ``slow`` is not ``unit``: the unit tier is the quick one),
keeps sockets out of unit tests, puts the slowest test files first (so that two xdist workers
finish together), and starts the session's shared Neo4j early (tests/support/shared_neo4j.py)."""

from __future__ import annotations

import os
import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

_KINDS = ("unit", "integration", "e2e", "chaos")
"""Folder names that are markers: ``tests/chaos`` tests are ``chaos`` (and ``integration``, which
their modules declare: they run real servers)."""

JVM_TEST_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=256m"
"""JVM options of every Neo4j the tests start (the shared one, each test's own, ``covr db start``
in a subprocess): ``java`` reads ``JDK_JAVA_OPTIONS`` from the environment they inherit.

Only the client compiler (C1): a test server lives for seconds to minutes on a 2-core machine
shared with the other worker, too short for the optimizing compiler (C2) to pay back its compile
threads. Measured at load average 6-8: a start took 18.6 s of CPU instead of 34-35 s (23-36 s to
ready instead of 57-81 s); test_export_parity.py with test_congruence.py (one shared Neo4j
start plus their generation and lookups) took 198 s instead of 308 s; the three tests that kill
and restart servers of their own (test_managed_neo4j_lifecycle, the killed-server restart,
test_neo4j_kill.py) took 266 s and 250 s instead of 443 s.

A code cache of its own size, because Java gives a client-compiler-only JVM 48 MB of it: the
session's shared Neo4j, planning and generating code for thousands of statement texts, filled it
in ~20 minutes (``jcmd PID Compiler.codecache``: max_used 47,360 of 49,152 KB, then flushing), and
from then on evicted and recompiled its own methods, so late tests ran ~10x slower than alone
(two related lookups over 120 s in the full suite, 8-14 s alone; fresh-clone run, 2026-11-26)."""


def _add_jvm_test_options() -> None:
    """Add JVM_TEST_OPTIONS unless the caller chose a compiler level itself (``=4`` is Java's
    default: that is how the numbers above were compared)."""
    current = os.environ.get("JDK_JAVA_OPTIONS", "")
    if "TieredStopAtLevel" not in current:
        os.environ["JDK_JAVA_OPTIONS"] = f"{current} {JVM_TEST_OPTIONS}".strip()


_add_jvm_test_options()

SLOW_FILES_FIRST = (
    # no Neo4j: they run while the workers' shared Neo4j starts in the background
    "tests/integration/loaders/test_kill_resume.py",
    "tests/integration/scale/test_ray_generate.py",  # 3-5 min: local Ray, a 2-node cluster
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


@pytest.hookimpl(trylast=True)  # after pytest's own: the tmp_path factory exists
def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(_SlowFilesFirst(), "covr-slow-files-first")
    _track_servers(config)


def _track_servers(config: pytest.Config) -> None:
    """Every server this session starts goes in its registry (tests/support/server_registry.py),
    a SIGTERM or SIGINT stops them, and what a killed earlier run left is stopped now."""
    from tests.support import server_registry

    server_registry.begin_session()
    server_registry.install_launch_recorder()
    server_registry.install_signal_handlers(lambda message: _say(message, config))
    if server_registry.is_session_owner():
        factory = getattr(config, "_tmp_path_factory", None)  # pytest's tmp_path_factory
        if factory is not None:
            server_registry.note_basetemp(factory.getbasetemp())
        left = server_registry.sweep_dead_sessions()
        if left:
            _say("stopped servers that a killed test run left: " + ", ".join(left))


def _say(message: str, config: pytest.Config | None = None) -> None:
    """A line on the terminal's stderr, even from inside a test whose output pytest captures."""
    capture = config.pluginmanager.getplugin("capturemanager") if config is not None else None
    if capture is not None:
        capture.suspend_global_capture(in_=False)
    sys.stderr.write(message + "\n")
    sys.stderr.flush()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        parts = Path(str(item.fspath)).parts
        for kind in _KINDS:
            if kind not in parts:
                continue
            if kind == "unit" and item.get_closest_marker("slow") is not None:
                continue  # over 5 s: a test of the slow tier (docs/testing.md), not a unit test
            item.add_marker(getattr(pytest.mark, kind))
        if item.get_closest_marker("unit") and item.get_closest_marker("slow"):
            raise pytest.UsageError(
                f"{item.nodeid} is marked both unit and slow: a unit test takes under 5 s "
                "(tests/unit marks its tests unit itself; drop the module's pytest.mark.unit)"
            )


class UnitTestOpenedASocket(AssertionError):
    """A ``unit`` test connected or listened on a socket, or built a gRPC server: it needs a
    server, so it belongs in ``tests/integration``."""


@pytest.fixture(autouse=True)
def _unit_tests_open_no_sockets(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    """In a ``unit`` test, a socket may be created and bound (a free port is found that way) but
    not connected or listened on, and no gRPC server is built: such a test needs a server. (A
    child process's sockets are its own; the tier's subprocesses are plain interpreters.)"""
    if request.node.get_closest_marker("unit") is None:
        yield
        return

    def refuse(what: str) -> Any:
        def refused(*args: Any, **kwargs: Any) -> Any:
            raise UnitTestOpenedASocket(
                f"{request.node.nodeid}: {what} in a unit test; a test that needs a server "
                "belongs in tests/integration (docs/testing.md)"
            )

        return refused

    for name in ("connect", "connect_ex", "listen"):
        monkeypatch.setattr(socket.socket, name, refuse(f"socket.{name}"))
    try:
        import grpc
    except ImportError:  # pragma: no cover - grpcio is a dependency
        pass
    else:
        monkeypatch.setattr(grpc, "server", refuse("grpc.server"))
    yield


def pytest_collection_finish(session: pytest.Session) -> None:
    from tests.integration.conftest import TEST_BACKENDS
    from tests.support.shared_neo4j import SHARED, needs_neo4j

    # unit tests never use it (their ids may still say "neo4j": test_settings.py's parameters)
    selected = [item.nodeid for item in session.items if not item.get_closest_marker("unit")]
    if needs_neo4j(selected, TEST_BACKENDS):
        SHARED.start()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Stop the shared Neo4j, then any server a test left running: those of the session's
    registry (tests/support/server_registry.py), wherever they live, and those under the base
    temporary directory (tests/support/server_sweep.py)."""
    from tests.support.server_registry import end_session
    from tests.support.server_sweep import stop_leftover_servers
    from tests.support.shared_neo4j import SHARED

    SHARED.close()
    factory = getattr(session.config, "_tmp_path_factory", None)  # pytest's tmp_path_factory
    stopped = stop_leftover_servers(factory.getbasetemp()) if factory is not None else []
    stopped += end_session()
    if stopped:  # a test or fixture did not clean up: say so, it is a bug to fix there
        message = "stopped servers that tests left running: " + ", ".join(stopped)
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.line("")
            reporter.write_line(message, yellow=True)
        else:
            sys.stderr.write(message + "\n")
