"""Starts, watches and stops the managed Neo4j Community server (``COVR_GRAPH_BACKEND=neo4j``).

The server is Neo4j Community (the version pinned in ``server/neo4j-launcher/pom.xml``) run by a
one-class launcher that the project's setup builds with Maven. It listens for Bolt on 127.0.0.1
only, HTTP is off, authentication is on with a password generated at first start and kept in a
0600 file; its database, transaction logs and logs live under ``COVR_DATA_DIR/neo4j``. Ownership
(owned or detached by ``covr db start``), restarts and stops are those of every managed server
(``managed.py``).

Neo4j commits are durable (its transaction log is forced at commit), so unlike the embedded
FalkorDB there is no snapshot to take before a stop; SIGTERM runs Neo4j's own shutdown, which
checkpoints the store.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
from pathlib import Path
from typing import IO, Any

from covr.graph.config import GraphSettings
from covr.graph.errors import StoreUnavailable
from covr.graph.managed import ManagedServer

SERVER_DIR = "neo4j"
CONFIG_NAME = "neo4j.conf"
LAUNCHER_LOG = "launcher.log"
LAUNCHER_CLASS = "covr.neo4j.Launcher"
JAR_NAME = "covr-neo4j-launcher.jar"
CLASSPATH_NAME = "classpath.txt"
USER = "neo4j"
READY_LINE = "covr-neo4j ready"  # printed by the launcher once the password is applied

INSTALL_HINT = (
    "the managed Neo4j needs Java 17+ and the launcher built by Maven: install them "
    "(Debian/Ubuntu: apt-get install openjdk-17-jdk-headless maven) and run `make setup`, or set "
    "COVR_GRAPH_URI=bolt://... for a Neo4j of your own"
)

# Reflection the page cache and the network layer use on Java 17 (Neo4j's own start script opens
# the same packages; without them it falls back to slower paths and warns).
_JVM_OPENS = (
    "java.base/java.nio",
    "java.base/sun.nio.ch",
    "java.base/java.io",
    "java.base/java.lang",
    "java.base/java.util.concurrent",
)


def default_launcher_dir() -> Path:
    """``server/neo4j-launcher`` of this checkout (the package is installed in editable mode)."""
    return Path(__file__).resolve().parents[2] / "neo4j-launcher"


def find_java(settings: GraphSettings) -> str:
    """The java executable: the setting, then ``$JAVA_HOME/bin/java``, then PATH."""
    if settings.neo4j_java:
        candidate = shutil.which(settings.neo4j_java)
    elif os.environ.get("JAVA_HOME"):
        path = Path(os.environ["JAVA_HOME"]) / "bin" / "java"
        candidate = str(path) if path.exists() else None
    else:
        candidate = shutil.which("java")
    if candidate is None:
        raise StoreUnavailable(f"no java executable found; {INSTALL_HINT}")
    return candidate


def launcher_classpath(settings: GraphSettings) -> str:
    """The launcher jar and the Neo4j jars Maven resolved (``target/classpath.txt``)."""
    folder = settings.neo4j_launcher_dir or default_launcher_dir()
    jar = folder / "target" / JAR_NAME
    listing = folder / "target" / CLASSPATH_NAME
    if not jar.exists() or not listing.exists():
        raise StoreUnavailable(
            f"the Neo4j launcher is not built ({jar} is missing); {INSTALL_HINT}"
        )
    jars = listing.read_text(encoding="utf-8").strip()
    missing = [p for p in jars.split(os.pathsep) if p and not Path(p).exists()]
    if missing:
        raise StoreUnavailable(
            f"the Neo4j launcher's dependencies are gone from the Maven cache ({missing[0]} "
            f"and {len(missing) - 1} more); run `make setup` again"
        )
    return f"{jar}{os.pathsep}{jars}"


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class ManagedNeo4j(ManagedServer):
    """The Neo4j Community server of one data directory (its files in ``<data_dir>/neo4j``)."""

    process_marker = LAUNCHER_CLASS.encode()
    label = "managed Neo4j"
    startup_setting = "COVR_NEO4J_STARTUP_TIMEOUT_S"

    @property
    def startup_timeout(self) -> float:
        return self.settings.neo4j_startup_timeout_s

    def __init__(self, settings: GraphSettings) -> None:
        data_dir = settings.data_dir.expanduser().resolve()
        super().__init__(settings, data_dir / SERVER_DIR)
        self.config_path = self.server_dir / CONFIG_NAME
        self.log_path = self.server_dir / LAUNCHER_LOG
        self.debug_log = self.server_dir / "logs" / "debug.log"
        self._port = settings.neo4j_bolt_port

    # ----------------------------------------------------------------- connection facts
    @property
    def uri(self) -> str:
        """The Bolt URI of the running server (recorded at its start)."""
        state = self.read_state()
        return state.socket if state else self.address()

    def address(self) -> str:
        return f"bolt://127.0.0.1:{self._port}"

    def credentials(self) -> tuple[str, str]:
        return USER, self.password()

    # ----------------------------------------------------------------- ManagedServer
    def _before_spawn(self) -> None:
        if self.settings.neo4j_bolt_port == 0:
            self._port = free_port()
        self.password()
        lines = {
            "server.bolt.enabled": "true",
            "server.bolt.listen_address": f"127.0.0.1:{self._port}",
            "server.bolt.advertised_address": f"127.0.0.1:{self._port}",
            "server.http.enabled": "false",
            "server.https.enabled": "false",
            "dbms.security.auth_enabled": "true",
            "dbms.usage_report.enabled": "false",
            "server.directories.data": str(self.server_dir / "data"),
            "server.directories.logs": str(self.server_dir / "logs"),
            "server.memory.pagecache.size": self.settings.neo4j_pagecache,
            # Reads carry their own timeout (Query(timeout=...)); this bounds everything else.
            "db.transaction.timeout": "0",
            "db.tx_log.rotation.retention_policy": "1 files",
            # The related lookup sends one statement text per (shape, rules) branch: a few
            # thousand distinct texts over a split, each planned in 10-100 ms; the default
            # cache of 1,000 plans evicted them between rounds (measured).
            "server.memory.query_cache.per_db_cache_num_entries": "10000",
            # The plan cache is keyed by the text and the parameters' types, and by default
            # each string's length and each list's size, bucketed by powers of ten: a related
            # lookup's one text per shape (covr.related.cypher_path) was planned again for
            # names of 9 and of 11 letters, lists of 3 and of 30 names (issue 15).
            "internal.cypher.use_parameter_size": "false",
            # A plan made over a near-empty store is replanned 1 s (not 10 s) after the
            # counts diverged (by default): a load followed at once by lookups no longer runs
            # on it.
            "dbms.cypher.min_replan_interval": f"{self.settings.neo4j_replan_interval_s}s",
            # Bolt waits twice 5 s for clients to leave on shutdown: 10 s of every stop (and of
            # every test session), although our drivers are closed first.
            "internal.server.bolt.connection_shutdown_wait_time": "1s",
            "internal.dbms.bolt.netty_server_shutdown_quiet_period": "0",
        }
        self.config_path.write_text(
            "# written by covr at every start of the managed Neo4j; edit COVR_NEO4J_* instead\n"
            + "".join(f"{k}={v}\n" for k, v in lines.items()),
            encoding="utf-8",
        )

    def _command(self) -> list[str]:
        classpath = launcher_classpath(self.settings)
        heap = self.settings.neo4j_heap
        opens = [f"--add-opens={package}=ALL-UNNAMED" for package in _JVM_OPENS]
        return [
            find_java(self.settings),
            f"-Xms{heap}",
            f"-Xmx{heap}",
            "-XX:+UseG1GC",
            "-XX:+ExitOnOutOfMemoryError",
            "-Dfile.encoding=UTF-8",
            *opens,
            "-cp",
            classpath,
            LAUNCHER_CLASS,
            str(self.server_dir),
            str(self.config_path),
            str(self.password_path),
        ]

    def _stdout(self) -> IO[bytes] | int:
        return open(self.log_path, "ab")

    def answers(self, timeout: float = 1.0) -> bool:
        """Whether Bolt accepts our credentials and runs a query right now."""
        state = self.read_state()
        uri = state.socket if state else self.address()
        from neo4j import GraphDatabase
        from neo4j.exceptions import DriverError, Neo4jError

        try:
            with (
                GraphDatabase.driver(
                    uri, auth=self.credentials(), connection_timeout=timeout
                ) as driver,
                driver.session(database=self.settings.graph_database) as session,
            ):
                # session.run, not execute_query: the latter retries a refused connection for
                # up to 30 s, and this question wants an answer now
                session.run("RETURN 1").consume()
            return True
        except (DriverError, Neo4jError, OSError, ValueError):
            return False

    def _ready(self) -> bool:
        """The launcher has set the password (its "ready" line), and Bolt accepts it.

        Asking Bolt before that line would fail authentication while the password is still being
        set, and Neo4j locks a user out for seconds after three failures in a row.
        """
        try:
            started = READY_LINE in self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return False
        return started and self.answers(timeout=2.0)

    def log_tail(self, lines: int = 15) -> str:
        parts = []
        for path in (self.log_path, self.debug_log):
            with contextlib.suppress(OSError):
                tail = path.read_text(errors="replace").splitlines()[-lines:]
                parts.append(f"--- {path}\n" + "\n".join(tail))
        return "\n".join(parts) or "(no log)"

    def _request_shutdown(self, pid: int) -> None:
        """SIGTERM runs the launcher's shutdown hook: Neo4j checkpoints and stops."""
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)

    def status(self) -> dict[str, Any]:
        return {
            **super().status(),
            "bolt": self.uri,
            "user": USER,
            "password_file": str(self.password_path),
            "store": str(self.server_dir / "data"),
            "log": str(self.debug_log),
        }
