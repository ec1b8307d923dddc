"""FalkorDB backend over its native protocol (embedded default and external servers)."""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Mapping, Sequence
from functools import cache, lru_cache
from typing import Any, TypeVar
from urllib.parse import urlsplit

import redis
from falkordb import FalkorDB
from falkordb.edge import Edge
from falkordb.exceptions import SchemaVersionMismatchException
from falkordb.node import Node
from falkordb.path import Path as FalkorPath
from falkordb.query_result import QueryResult

from covr.graph import catalog
from covr.graph.backends import Backend
from covr.graph.compact import Unsupported, decode_rows
from covr.graph.config import GraphSettings
from covr.graph.embedded import EmbeddedServer, module_version, no_retry
from covr.graph.errors import QueryError, QueryTimeout, SchemaError, StoreUnavailable
from covr.graph.params import prerender, render_prefix
from covr.graph.store import (
    SCHEMA_VERSION,
    GraphStore,
    Health,
    IndexState,
    Params,
    QueryLike,
    RoundCheck,
    RoundRows,
    Row,
    ValuePreparer,
    WriteSummary,
    as_statement,
)

T = TypeVar("T")
SNAPSHOT_REWRITE_TIMEOUT_S = 1800.0
"""How long a snapshot waits for the append-only file rewrite (minutes at 1x GQA at most)."""

# Identifiers for GRAPH.CONSTRAINT (not Cypher, so it cannot live in cypher/): a fixed allowlist.
UNIQUE_KEYS: tuple[tuple[str, str], ...] = (("Image", "id"), ("Meta", "key"))
"""What FalkorDB holds unique. The derived keys of objects, relations and rel-mods are unique by
construction (an image id, which this constraint holds unique, joined to an id that may not
contain the separator: ``covr.scene.limits``), and an atomic replacement stages the new version
with its keys beside the stored one (``GraphStore.replace_images``): a store constraint on
them would make the switch set every key afresh, which cost a re-load 24 % of its throughput
(docs/notes/2026-12-07-dataset-and-replacement.md)."""
DROPPED_UNIQUE_KEYS: tuple[tuple[str, str], ...] = (
    ("Object", "key"),
    ("Relation", "key"),
    ("RelMod", "key"),
)
"""Constraints that stores made before that change hold; ``apply_schema`` drops them."""


def plain(value: Any) -> Any:
    """Driver values → plain Python: nodes and edges become their property dicts."""
    if isinstance(value, Node | Edge):
        return {k: plain(v) for k, v in value.properties.items()}
    if isinstance(value, FalkorPath):
        return [plain(n) for n in value.nodes()]
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


_PARAMETER = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")
_UNION = re.compile(r"\bUNION\b(?!\s+ALL\b)", re.IGNORECASE)
_UNJOINABLE = ("'", '"', "`", ";")
"""What keeps a text out of a joined round: a literal or a quoted name could hold a ``$`` that
is no parameter, and a plain ``UNION`` cannot be mixed with ``UNION ALL``."""


@lru_cache(maxsize=4096)
def _renamed(text: str, prefix: str) -> str | None:
    """``text`` with each ``$x`` read as ``$<prefix>x``; ``None`` when that is not safe
    (:data:`_UNJOINABLE`). Cached: a round's texts recur (they depend on the subgraph's shape),
    and renaming them anew cost ~0.4 ms per five-branch round, as much as FalkorDB's call."""
    if any(mark in text for mark in _UNJOINABLE) or _UNION.search(text):
        return None
    return _PARAMETER.sub(lambda m: f"${prefix}{m.group(1)}", text)


def union_of(statements: Sequence[tuple[QueryLike, Params]]) -> tuple[catalog.Statement, Params]:
    """Several statements as one ``UNION ALL`` (the rows of each, one after another), the
    parameters of statement ``n`` renamed ``u<n>_<name>`` so that they cannot collide. Raises
    ``ValueError`` when a text cannot be joined safely (:data:`_UNJOINABLE`)."""
    texts: list[str] = []
    params: dict[str, object] = {}
    names: list[str] = []
    for n, (query, own) in enumerate(statements):
        statement = as_statement(query)
        prefix = f"u{n}_"
        renamed = _renamed(statement.text.strip(), prefix)
        if renamed is None:
            raise ValueError(f"{statement.name} cannot be joined into a union")
        texts.append(renamed)
        names.append(statement.name)
        params.update({prefix + name: value for name, value in own.items()})
    name = f"{names[0]} (union of {len(statements)})"
    return catalog.Statement(name=name, text=_union_separator().join(texts)), params


@cache
def _union_separator() -> str:
    return f"\n{catalog.render('union')}\n"


def _timeout_ms(seconds: float) -> int:
    return max(1, int(seconds * 1000))


class FalkorStore(GraphStore):
    """Talks RESP to one FalkorDB server; restarts the embedded one when it has died."""

    def __init__(self, settings: GraphSettings, *, server: EmbeddedServer | None = None) -> None:
        self.settings = settings
        self.server = server
        self.backend = Backend.EMBEDDED if server else Backend.FALKORDB
        self.graph_name = settings.graph_name
        # Reads are bounded by the server-side timeout; writes are not (FalkorDB runs a write to
        # completion), so the socket timeout is a generous guard against a hung server only.
        self._socket_timeout = max(300.0, settings.query_timeout_s * 4)
        if server is not None:
            server.open()
            self.location = str(server.socket_path)
        else:
            parts = urlsplit(settings.graph_uri)
            self.location = f"{parts.hostname or 'localhost'}:{parts.port or 6379}"
        try:
            self._connect()
        except (redis.RedisError, OSError) as exc:
            raise StoreUnavailable(f"cannot connect to FalkorDB at {self.location}: {exc}") from exc
        self._ensure_graph()

    # ----------------------------------------------------------------- connection
    def _connect(self) -> None:
        password = (
            self.settings.graph_password.get_secret_value()
            if self.settings.graph_password
            else None
        )
        if self.server is not None:
            self._db = FalkorDB(
                unix_socket_path=str(self.server.socket_path),
                password=self.server.password(),
                socket_timeout=self._socket_timeout,
                socket_connect_timeout=self.settings.connect_timeout_s,
                retry=no_retry(),
            )
        else:
            parts = urlsplit(self.settings.graph_uri)
            self._db = FalkorDB(
                host=parts.hostname or "localhost",
                port=parts.port or 6379,
                username=parts.username or None,
                password=password,
                ssl=parts.scheme == "falkors",
                socket_timeout=self._socket_timeout,
                socket_connect_timeout=self.settings.connect_timeout_s,
                retry=no_retry(),
            )
        self._graph = self._db.select_graph(self.graph_name)

    def _ensure_graph(self) -> None:
        """Read-only queries fail on a graph key that does not exist yet; a write creates it."""
        self.write(catalog.get("admin/ping"))

    def _call(self, what: str, fn: Callable[[], T]) -> T:
        """Run ``fn``; after a lost connection, restart the embedded server and retry once.

        The retry is safe for writes too: every write statement of the service is idempotent
        (MERGE on natural keys), and a statement cut off mid-way was applied whole or not at all.
        """
        for attempt in (1, 2):
            try:
                return fn()
            except SchemaVersionMismatchException:
                if attempt == 2:
                    raise
                continue  # the client refreshed its label/property tables; ask again
            except (
                redis.ConnectionError,
                redis.TimeoutError,
                ConnectionError,
                OSError,
                ValueError,
            ) as exc:
                # ValueError("I/O operation on closed file"): a socket closed by a concurrent
                # restart of the embedded server; anything else of that type is a real bug
                if isinstance(exc, ValueError) and "closed file" not in str(exc):
                    raise
                if self.server is None or attempt == 2:
                    raise StoreUnavailable(
                        f"{what}: graph store at {self.location}: {exc}"
                    ) from exc
                self.server.ensure_running()
                self._db.connection.connection_pool.disconnect()
            except redis.ResponseError as exc:
                message = str(exc)
                if "timed out" in message.lower():
                    raise QueryTimeout(what, message) from exc
                raise QueryError(what, message) from exc
        raise AssertionError("unreachable")

    # ----------------------------------------------------------------- interface
    def read(
        self, query: QueryLike, params: Params | None = None, *, timeout: float | None = None
    ) -> list[Row]:
        statement = as_statement(query)
        text = render_prefix(params) + statement.text
        ms = _timeout_ms(timeout if timeout is not None else self.settings.query_timeout_s)

        def run() -> list[Row]:
            reply = self._graph.execute_command(
                "GRAPH.RO_QUERY", self._graph.name, text, "--compact", "timeout", ms
            )
            try:
                return decode_rows(reply)
            except Unsupported:  # graph entities etc.: the driver's parser knows them
                result = QueryResult(self._graph, reply)
                columns = [str(h[1]) for h in result.header]
                return [
                    dict(zip(columns, map(plain, row), strict=True)) for row in result.result_set
                ]

        return self._call(statement.name, run)

    def read_round(
        self,
        statements: Sequence[tuple[QueryLike, Params]],
        *,
        check: RoundCheck | None = None,
        timeout: float | None = None,
    ) -> RoundRows:
        """The round as one ``UNION ALL`` read (:func:`union_of`): one round trip, and FalkorDB
        plans a union in microseconds (Neo4j takes seconds, hence its own way). The check is
        left to the caller: one call here costs ~0.3 ms, and the nested form Neo4j uses was not
        measured on FalkorDB. A text that cannot be joined is read statement by statement."""
        batch = list(statements)
        if len(batch) == 1:
            return RoundRows(self.read(*batch[0], timeout=timeout))
        try:
            union = union_of(batch)
        except ValueError:
            return RoundRows(self.read_many(batch, timeout=timeout))
        # what the statements would have had together, within what one read may take
        limit = self.settings.query_timeout_s
        whole = limit if timeout is None else min(timeout * len(batch), limit)
        return RoundRows(self.read(*union, timeout=whole))

    def value_preparer(self) -> ValuePreparer:
        """Values rendered as parameter text ahead of time (:func:`prerender`): a loader's reader
        process hands one string per parameter to the process that sends the statement."""
        return prerender

    def write(
        self, query: QueryLike, params: Params | None = None, *, timeout: float | None = None
    ) -> WriteSummary:
        statement = as_statement(query)
        text = render_prefix(params) + statement.text
        ms = _timeout_ms(timeout) if timeout is not None else None
        started = time.perf_counter()

        def run() -> WriteSummary:
            result = self._graph.query(text, timeout=ms)
            return WriteSummary(
                nodes_created=int(result.nodes_created),
                nodes_deleted=int(result.nodes_deleted),
                relationships_created=int(result.relationships_created),
                relationships_deleted=int(result.relationships_deleted),
                properties_set=int(result.properties_set),
                seconds=time.perf_counter() - started,
            )

        return self._call(statement.name, run)

    def command(self, *args: Any) -> Any:
        """A raw server command from the fixed set the graph room uses (INFO, GRAPH.*, SAVE)."""
        return self._call(str(args[0]), lambda: self._db.connection.execute_command(*args))

    def index_states(self) -> list[IndexState]:
        rows = self.read(catalog.get("admin/falkordb/index_states"))
        states: list[IndexState] = []
        for row in rows:
            status = "ONLINE" if row["status"] == "OPERATIONAL" else str(row["status"])
            for prop in row["properties"]:
                states.append(IndexState(str(row["label"]), str(prop), status))
        return sorted(states, key=lambda s: (s.label, s.property_name))

    def apply_schema(self) -> list[IndexState]:
        for part in catalog.get("schema/falkordb/indexes").parts():
            try:
                self.write(part)
            except QueryError as exc:
                if "already indexed" not in exc.server_message:
                    raise
        deadline = time.monotonic() + self.settings.index_wait_s
        while True:
            states = self.index_states()
            if states and all(s.usable for s in states):
                break
            if time.monotonic() > deadline:
                pending = [f"{s.label}.{s.property_name}" for s in states if not s.usable]
                raise SchemaError(
                    f"indexes not usable after {self.settings.index_wait_s}s: {pending}"
                )
            time.sleep(0.05)
        self._drop_old_constraints()
        for label, prop in UNIQUE_KEYS:
            try:
                self.command(
                    "GRAPH.CONSTRAINT", "CREATE", self.graph_name, "UNIQUE", "NODE", label,
                    "PROPERTIES", "1", prop,
                )  # fmt: skip
            except QueryError as exc:
                if "already exists" not in exc.server_message.lower():
                    raise SchemaError(f"unique constraint {label}.{prop}: {exc}") from exc
        self._wait_constraints()
        self.write(catalog.get("schema/set_version"), {"key": "schema", "version": SCHEMA_VERSION})
        return states

    def _drop_old_constraints(self) -> None:
        """Drop the unique constraints of :data:`DROPPED_UNIQUE_KEYS` that a store still holds."""
        held = {
            (row["label"], tuple(row["properties"]))
            for row in self.read(catalog.get("admin/falkordb/constraint_states"))
        }
        for label, prop in DROPPED_UNIQUE_KEYS:
            if (label, (prop,)) in held:
                self.command(
                    "GRAPH.CONSTRAINT", "DROP", self.graph_name, "UNIQUE", "NODE", label,
                    "PROPERTIES", "1", prop,
                )  # fmt: skip

    def _wait_constraints(self) -> None:
        deadline = time.monotonic() + self.settings.index_wait_s
        while True:
            rows = self.read(catalog.get("admin/falkordb/constraint_states"))
            if all(r["status"] == "OPERATIONAL" for r in rows):
                failed = [r for r in rows if r["status"] == "FAILED"]
                if failed:
                    raise SchemaError(f"unique constraints failed (duplicate keys?): {failed}")
                return
            if any(r["status"] == "FAILED" for r in rows):
                raise SchemaError(f"unique constraints failed (duplicate keys?): {rows}")
            if time.monotonic() > deadline:
                raise SchemaError(f"constraints not usable after {self.settings.index_wait_s}s")
            time.sleep(0.05)

    def health(self) -> Health:
        started = time.perf_counter()
        try:
            self.read(catalog.get("admin/ping"))
            latency = (time.perf_counter() - started) * 1000
            info = self.command("INFO", "server")
            modules = self.command("MODULE", "LIST")
            falkor = ""
            for entry in modules:
                fields = dict(zip(entry[::2], entry[1::2], strict=False))
                name = fields.get("name", fields.get(b"name"))
                if name in ("graph", b"graph"):
                    falkor = module_version(int(fields.get("ver") or fields.get(b"ver") or 0))
            details: dict[str, Any] = {
                "redis_version": info.get("redis_version", ""),
                "falkordb_version": falkor,
                "graph": self.graph_name,
            }
            if self.server is not None:
                details.update(self.server.status())
                details["restarts"] = self.server.restarts
                details["hung_starts"] = self.server.hung_starts
            return Health(
                ok=True,
                backend=self.backend,
                location=self.location,
                server_version=f"FalkorDB {falkor}",
                latency_ms=latency,
                details=details,
            )
        except Exception as exc:  # health never raises: it reports
            return Health(ok=False, backend=self.backend, location=self.location, error=str(exc))

    def snapshot(self) -> None:
        if self.server is not None:
            try:
                self.command("SAVE")
            except QueryError as exc:
                # The server answers a failed SAVE with a bare "ERR" (its reason, such as a full
                # disk, goes only to its own log): say where it writes and how much room is left.
                # It wrote to a temporary file, so the previous snapshot is still there.
                raise QueryError("SAVE", _snapshot_failure(self.server, exc)) from exc
            # the next start then loads a snapshot instead of replaying the load's statements
            self.server.rewrite_log(SNAPSHOT_REWRITE_TIMEOUT_S)

    def clear(self) -> None:
        try:
            self.command("GRAPH.DELETE", self.graph_name)
        except QueryError as exc:
            if "empty key" not in exc.server_message.lower() and "invalid graph" not in (
                exc.server_message.lower()
            ):
                raise
        self._graph = self._db.select_graph(self.graph_name)
        self._ensure_graph()

    def close(self) -> None:
        try:
            self._db.connection.close()
        finally:
            if self.server is not None:
                self.server.close()


def _snapshot_failure(server: EmbeddedServer, exc: QueryError) -> str:
    """Why a snapshot failed, as far as this process can tell (issue 21: it said only "SAVE:")."""
    directory = server.data_dir
    try:
        stat = os.statvfs(directory)
        free = f"{stat.f_bavail * stat.f_frsize:,} bytes free there"
    except OSError as err:
        free = f"its free space cannot be read: {err.strerror or err}"
    reason = exc.server_message.strip() or "no reason given"
    return (
        f"the snapshot could not be written to {directory} ({free}; server said: {reason}); "
        "the previous snapshot is kept. Free disk space and snapshot again."
    )
