"""One managed Neo4j for the whole test session, started in the background.

A Neo4j start takes 12 s on a quiet machine and up to two minutes under load; started inside the
first test that needs it, that time counted against the test's timeout (and failed it at load
average 8). So ``tests/conftest.py`` starts it as soon as collection shows a test that will
need it, on a thread, while the tests before it run; the integration, parity and end-to-end
fixtures all take this one server (each test empties it first) instead of starting one each.
Tests about a server's own life (kill, lock, restart) still start their own. Under pytest-xdist
(``make test``) every worker process has its own.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
import threading
from concurrent.futures import Future
from pathlib import Path

from covr.graph import GraphStore, open_store
from covr.settings import Settings

# Nodes under these folders use the shared Neo4j whatever their parameters.
NEO4J_FOLDERS = ("tests/e2e/", "tests/integration/parity/")


class SharedNeo4j:
    """The session's Neo4j: started once on demand, handed to every fixture, closed at the end."""

    def __init__(self) -> None:
        self._future: Future[GraphStore] | None = None
        self._settings: Settings | None = None
        self._dir: Path | None = None
        self._lock = threading.Lock()

    def start(self) -> None:
        """Begin starting the server on a thread (once); fixtures wait for it in ``store``."""
        with self._lock:
            if self._future is not None:
                return
            from tests.integration.conftest import make_settings

            self._dir = Path(tempfile.mkdtemp(prefix="covr-session-neo4j-"))
            self._settings = make_settings(self._dir, "neo4j")
            future: Future[GraphStore] = Future()
            self._future = future
            settings = self._settings

        def run() -> None:
            try:
                future.set_result(open_store(settings.graph))
            except BaseException as exc:  # handed to the first fixture that asks
                future.set_exception(exc)

        threading.Thread(target=run, name="session-neo4j", daemon=True).start()

    @property
    def settings(self) -> Settings:
        self.start()
        assert self._settings is not None
        return self._settings

    def store(self) -> GraphStore:
        """The running server's store (waits for the start; its own timeout bounds the wait)."""
        self.start()
        assert self._future is not None
        return self._future.result()

    def close(self) -> None:
        """Stop the server and remove its data directory (at the end of the session)."""
        with self._lock:
            future, self._future = self._future, None
        if future is not None:
            # a failed start was reported to the fixtures that asked for the server
            with contextlib.suppress(Exception):
                future.result().close()
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)


SHARED = SharedNeo4j()


def needs_neo4j(nodeids: list[str], backends: tuple[str, ...]) -> bool:
    """Whether a selected test will use the session's Neo4j."""
    if "neo4j" not in backends:
        return False
    return any("[neo4j" in n or "-neo4j" in n or n.startswith(NEO4J_FOLDERS) for n in nodeids)
