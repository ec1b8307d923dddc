"""Neo4j 5 backend over the official driver (production store, external or managed).

Every call is one managed transaction (``execute_query``): a statement applies whole or not at all,
and a read's timeout travels with the transaction so the server stops it (``Query(timeout=...)``).
With the managed server, a lost connection restarts it (as the embedded FalkorDB is restarted)
and the statement is retried once; every write of the service is idempotent, so that is safe.
"""

from __future__ import annotations

import atexit
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

import neo4j
from neo4j import GraphDatabase, Query, RoutingControl
from neo4j.exceptions import (
    AuthError,
    ClientError,
    DriverError,
    Neo4jError,
    ServiceUnavailable,
    SessionExpired,
)

from covr.graph import catalog
from covr.graph.backends import Backend
from covr.graph.config import GraphSettings
from covr.graph.errors import (
    ParameterError,
    QueryError,
    QueryTimeout,
    SchemaError,
    StoreUnavailable,
)
from covr.graph.neo4j_batch import coalesce, then_check, unbatched
from covr.graph.neo4j_server import ManagedNeo4j
from covr.graph.store import (
    SCHEMA_VERSION,
    STAGED_MAX_AGE_S,
    GraphStore,
    Health,
    IndexState,
    Params,
    QueryLike,
    RoundCheck,
    RoundRows,
    Row,
    WriteSummary,
    as_statement,
    checked_images,
)

_T = TypeVar("_T")
_DRIVERS: dict[tuple[int, str, str], neo4j.Driver] = {}
# The driver logs its own retries as warnings; the graph room reports failures as exceptions, so
# without a handler of the application's those lines would land on stderr (Python's last resort).
logging.getLogger("neo4j").addHandler(logging.NullHandler())
_DRIVERS_LOCK = threading.Lock()


# How long execute_query retries a lost connection before the managed server is restarted.
MANAGED_RETRY_S = 3.0


def shared_driver(
    settings: GraphSettings, uri: str, auth: tuple[str, str], *, retry_s: float = 30.0
) -> neo4j.Driver:
    """One driver per process and server (the driver pools connections itself).

    Keyed by process id too: a driver inherited across ``fork`` holds defunct connections, so a
    child process gets its own.
    """
    key = (os.getpid(), uri, auth[0])
    with _DRIVERS_LOCK:
        driver = _DRIVERS.get(key)
        if driver is None:
            driver = GraphDatabase.driver(
                uri,
                auth=auth,
                connection_timeout=settings.connect_timeout_s,
                max_transaction_retry_time=retry_s,
                # One TELEMETRY message per API call otherwise (Bolt 5.4+), which the server
                # handles like any other message: a read is a few messages, so it adds up.
                telemetry_disabled=True,
            )
            _DRIVERS[key] = driver
            if len(_DRIVERS) == 1:
                atexit.register(close_drivers)
        return driver


def drop_driver(uri: str, user: str) -> None:
    """Close this process's driver for one server (before that server is stopped: Neo4j waits
    for open Bolt connections while it shuts down)."""
    with _DRIVERS_LOCK:
        driver = _DRIVERS.pop((os.getpid(), uri, user), None)
    if driver is not None:
        driver.close()


def close_drivers() -> None:
    """Close every driver of this process (at exit)."""
    with _DRIVERS_LOCK:
        for key, driver in list(_DRIVERS.items()):
            if key[0] == os.getpid():
                driver.close()
            del _DRIVERS[key]


def _plain_row(record: neo4j.Record) -> Row:
    return {key: plain(value) for key, value in record.items()}  # type: ignore[no-untyped-call]


def plain(value: Any) -> Any:
    """Driver values → plain Python: nodes and relationships become their property dicts."""
    if isinstance(value, neo4j.graph.Node | neo4j.graph.Relationship):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, neo4j.graph.Path):
        return [plain(n) for n in value.nodes]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


REPLACE_CHUNK = 16
"""Images replaced per transaction on Neo4j (see :meth:`Neo4jStore.replace_images`): each image
is replaced whole or not at all, which is what atomic replacement promises (issue 40)."""
_ROW_LISTS = frozenset({"ids", "images", "objects", "relations"})
"""The parameters of ``load/create_images`` that hold one entry per image."""


class Neo4jStore(GraphStore):
    """One driver per process; every call is a managed transaction with a server-side timeout."""

    def __init__(self, settings: GraphSettings, *, server: ManagedNeo4j | None = None) -> None:
        self.settings = settings
        self.server = server
        self._database = settings.graph_database
        if server is not None:
            server.open()
            self.backend = Backend.MANAGED_NEO4J
            self._auth = server.credentials()
        else:
            self.backend = Backend.NEO4J
            password = settings.graph_password.get_secret_value() if settings.graph_password else ""
            self._auth = (settings.graph_user, password)
        self._connect()

    def _connect(self) -> None:
        previous: str | None = getattr(self, "location", None)
        self.location = self.server.uri if self.server is not None else self.settings.graph_uri
        if previous is not None and previous != self.location:
            drop_driver(previous, self._auth[0])  # a restart on a new port: the old pool is dead
        retry = MANAGED_RETRY_S if self.server is not None else 30.0
        self._driver = shared_driver(self.settings, self.location, self._auth, retry_s=retry)

    def _run(
        self,
        query: QueryLike,
        params: Params | None,
        timeout: float | None,
        routing: RoutingControl,
    ) -> tuple[list[Row], WriteSummary]:
        statement = as_statement(query)
        return self._with_restart(lambda: self._execute(statement, params, timeout, routing))

    def _with_restart(self, call: Callable[[], _T]) -> _T:
        """``call``, and with the managed server once more after restarting it if it was lost."""
        for attempt in (1, 2):
            try:
                return call()
            except StoreUnavailable:
                if self.server is None or attempt == 2:
                    raise
                self.server.ensure_running()
                self._connect()
        raise AssertionError("unreachable")

    @contextmanager
    def _mapped_errors(self, name: str, timeout: float | None) -> Iterator[None]:
        """The driver's exceptions as the graph room's, so callers see one error vocabulary."""
        started = time.perf_counter()
        try:
            yield
        except (ServiceUnavailable, SessionExpired, AuthError) as exc:
            raise StoreUnavailable(f"{name}: Neo4j at {self.location}: {exc}") from exc
        except ClientError as exc:
            code = exc.code or ""
            # A write stopped by its timeout while it waits for or takes a lock reports
            # LockClientStopped ("terminated ... ran longer than the configured transaction
            # timeout") instead of TransactionTimedOut (measured on 5.26, for some writes).
            stopped = (
                "LockClientStopped" in code
                and timeout is not None
                and time.perf_counter() - started >= timeout
            )
            if "TransactionTimedOut" in code or "Timeout" in code or stopped:
                raise QueryTimeout(
                    name, f"timed out after {timeout} s: {exc.message or exc}"
                ) from exc
            if "ConstraintValidationFailed" in code:
                raise QueryError(name, f"unique constraint violated: {exc.message}") from exc
            raise QueryError(name, f"{code}: {exc.message}") from exc
        except OverflowError as exc:  # the driver packs integers as 64-bit
            raise ParameterError(
                f"{name}: an integer parameter does not fit in 64 bits ({exc})"
            ) from exc
        except TypeError as exc:  # a value the driver cannot pack
            raise ParameterError(f"{name}: a parameter cannot be sent: {exc}") from exc
        except (Neo4jError, DriverError) as exc:
            raise QueryError(name, str(exc)) from exc

    def _execute(
        self,
        statement: catalog.Statement,
        params: Params | None,
        timeout: float | None,
        routing: RoutingControl,
    ) -> tuple[list[Row], WriteSummary]:
        started = time.perf_counter()
        with self._mapped_errors(statement.name, timeout):
            records, summary, _ = self._driver.execute_query(
                Query(statement.text, timeout=timeout),
                dict(params or {}),
                database_=self._database,
                routing_=routing,
            )
        counters = summary.counters
        written = WriteSummary(
            nodes_created=counters.nodes_created,
            nodes_deleted=counters.nodes_deleted,
            relationships_created=counters.relationships_created,
            relationships_deleted=counters.relationships_deleted,
            properties_set=counters.properties_set,
            seconds=time.perf_counter() - started,
        )
        return [_plain_row(record) for record in records], written

    def read_many(
        self, statements: Iterable[tuple[QueryLike, Params]], *, timeout: float | None = None
    ) -> list[Row]:
        """All statements as one read: consecutive statements of one text become one statement
        (:mod:`covr.graph.neo4j_batch`: a lookup round's branches mostly share their text), and
        what remains runs in one transaction (one BEGIN/COMMIT, the rows from one snapshot); a
        round that became one statement is one auto-commit read, one round trip."""
        pending = [(as_statement(query), dict(params)) for query, params in statements]
        if not pending:
            return []
        # Each statement keeps the budget it would have alone: the loop of reads this replaces
        # could take that long too, and a cold JVM plans each new statement text slowly.
        each = timeout if timeout is not None else self.settings.query_timeout_s
        limit = each * len(pending)
        batch = coalesce(pending)
        if len(batch) == 1:
            statement, params = batch[0]
            rows = self._with_restart(lambda: self._read_retrying(statement, params, limit))
            return [unbatched(row) for row in rows]
        name = f"{pending[0][0].name} (+{len(pending) - 1})"

        def work(tx: neo4j.ManagedTransaction) -> list[Row]:
            rows: list[Row] = []
            for statement, params in batch:
                rows.extend(unbatched(_plain_row(r)) for r in tx.run(statement.text, params))
            return rows

        def attempt() -> list[Row]:
            with (
                self._mapped_errors(name, limit),
                self._driver.session(database=self._database) as session,
            ):
                return session.execute_read(neo4j.unit_of_work(timeout=limit)(work))

        return self._with_restart(attempt)

    def read_round(
        self,
        statements: Sequence[tuple[QueryLike, Params]],
        *,
        check: RoundCheck | None = None,
        timeout: float | None = None,
    ) -> RoundRows:
        """The round's statements batched (:meth:`read_many`: one statement per text, one
        transaction) and, with a ``check``, the check with them: one statement when the round
        is one text (:func:`covr.graph.neo4j_batch.then_check`: on Neo4j every statement is a
        round trip with ~1 ms of fixed server work, and the check waited for the round's
        rows), else the check after the statements in their one transaction."""
        if check is None or not statements:
            return RoundRows(self.read_many(statements, timeout=timeout))
        batch = [(as_statement(query), dict(params)) for query, params in statements]
        query, params = check.statement()
        built = (as_statement(query), dict(params))
        try:
            joined = then_check(batch, built, ids=check.ids, among=check.among)
        except ValueError:  # several texts, or a check then_check cannot take its ids into
            return self._round_transaction(batch, built, check, timeout)
        # one statement: what the statements would have had together, within one read's limit
        limit = self.settings.query_timeout_s
        whole = limit if timeout is None else min(timeout * len(batch), limit)
        rows = self.read(*joined, timeout=whole)
        return RoundRows(rows, checked_images(rows, check.among))

    def _round_transaction(
        self,
        batch: list[tuple[catalog.Statement, dict[str, Any]]],
        built: tuple[catalog.Statement, dict[str, Any]],
        check: RoundCheck,
        timeout: float | None,
    ) -> RoundRows:
        """The round's statements (coalesced) and then the check over the images their rows
        name, in one read transaction."""
        each = timeout if timeout is not None else self.settings.query_timeout_s
        limit = each * (len(batch) + 1)
        merged = coalesce(batch)
        name = f"{batch[0][0].name} (+{len(batch) - 1}, checked)"

        def work(tx: neo4j.ManagedTransaction) -> RoundRows:
            rows: list[Row] = []
            for statement, params in merged:
                rows.extend(unbatched(_plain_row(r)) for r in tx.run(statement.text, params))
            ids = checked_images(rows, check.among)
            if ids:
                statement, params = built
                result = tx.run(statement.text, {**params, check.ids: ids})
                rows.extend(_plain_row(r) for r in result)
            return RoundRows(rows, ids)

        def attempt() -> RoundRows:
            with (
                self._mapped_errors(name, limit),
                self._driver.session(database=self._database) as session,
            ):
                return session.execute_read(neo4j.unit_of_work(timeout=limit)(work))

        return self._with_restart(attempt)

    def read(
        self, query: QueryLike, params: Params | None = None, *, timeout: float | None = None
    ) -> list[Row]:
        """One statement as an auto-commit read transaction (``session.run``).

        Why not a managed transaction (``execute_query``) as writes use: that sends BEGIN, RUN,
        PULL and then COMMIT, two round trips and two more messages for the server, where an
        auto-commit transaction is RUN and PULL in one round trip; a lookup or a question makes
        many small reads, and per read that was about half of Neo4j's time outside the query
        itself (benchmarks/bench_reads.py, docs/graph-store.md). A read is safe to repeat, so
        a retryable failure (a stale pooled connection, a transient server error) is retried
        here, as the managed transaction would, within the driver's retry time."""
        limit = timeout if timeout is not None else self.settings.query_timeout_s
        statement = as_statement(query)
        return self._with_restart(lambda: self._read_retrying(statement, dict(params or {}), limit))

    def _read_retrying(
        self, statement: catalog.Statement, params: dict[str, Any], timeout: float
    ) -> list[Row]:
        retry_s = MANAGED_RETRY_S if self.server is not None else 30.0
        deadline = time.monotonic() + retry_s
        delay = 0.05
        while True:
            try:
                with self._mapped_errors(statement.name, timeout):
                    return self._read_once(statement, params, timeout)
            except (StoreUnavailable, QueryError) as exc:
                cause = exc.__cause__
                retryable = isinstance(cause, Neo4jError | DriverError) and cause.is_retryable()
                if not retryable or isinstance(exc, QueryTimeout) or time.monotonic() > deadline:
                    raise
            time.sleep(delay)
            delay = min(delay * 2, 1.0)

    def _read_once(
        self, statement: catalog.Statement, params: dict[str, Any], timeout: float
    ) -> list[Row]:
        with self._driver.session(
            database=self._database, default_access_mode=neo4j.READ_ACCESS
        ) as session:
            result = session.run(Query(statement.text, timeout=timeout), params)
            return [_plain_row(record) for record in result]

    def write(
        self, query: QueryLike, params: Params | None = None, *, timeout: float | None = None
    ) -> WriteSummary:
        return self._run(query, params, timeout, RoutingControl.WRITE)[1]

    def replace_images(
        self, present: Sequence[str], create: Params, *, timeout: float | None = None
    ) -> WriteSummary:
        """The stored versions of ``present`` deleted and the new ones created in one transaction
        per :data:`REPLACE_CHUNK` images: Neo4j commits each or none of it (a failed create, a
        killed server or client, a full disk all roll the delete back), so it needs none of the
        staging the default does. Chunks, not the batch: in one transaction, each index seek and
        constraint check of the create reads through every deletion made before it: a re-load of
        3,000 images in 500-image batches ran at 0.44x the speed of a delete and a create in
        transactions of their own (0.19x in one 3,000-image transaction), at 0.76x with 50
        images per transaction and 0.87x with 16 (benchmarks/bench_replace.py --backend neo4j
        --batch-images 500)."""
        drop = catalog.get("load/drop_staged")  # what a staged replacement through a wrapper left
        delete = catalog.get("load/delete_images")
        create_images = catalog.get("load/create_images")
        started = time.perf_counter()
        stored = set(present)
        ids: list[str] = list(create["ids"])
        total = WriteSummary()
        for start in range(0, len(ids), REPLACE_CHUNK):
            part = {
                key: value[start : start + REPLACE_CHUNK] if key in _ROW_LISTS else value
                for key, value in create.items()
            }
            steps: list[tuple[Any, Params]] = []
            if start == 0:
                steps.append((drop, {"stage": "", "before": time.time() - STAGED_MAX_AGE_S}))
            replaced = [i for i in part["ids"] if i in stored]
            if replaced:
                steps.append((delete, {"ids": replaced}))
            steps.append((create_images, part))
            total.add(self._replace_chunk(steps, timeout))
        total.seconds = time.perf_counter() - started
        return total

    def _replace_chunk(
        self, steps: list[tuple[Any, Params]], timeout: float | None
    ) -> WriteSummary:
        """One transaction running ``steps`` (statement, parameters) in order."""

        def work(tx: neo4j.ManagedTransaction) -> WriteSummary:
            total = WriteSummary()
            for statement, params in steps:
                counters = tx.run(statement.text, dict(params)).consume().counters
                total.add(
                    WriteSummary(
                        nodes_created=counters.nodes_created,
                        nodes_deleted=counters.nodes_deleted,
                        relationships_created=counters.relationships_created,
                        relationships_deleted=counters.relationships_deleted,
                        properties_set=counters.properties_set,
                    )
                )
            return total

        def attempt() -> WriteSummary:
            with (
                self._mapped_errors("load/delete_images + load/create_images", timeout),
                self._driver.session(database=self._database) as session,
            ):
                return session.execute_write(neo4j.unit_of_work(timeout=timeout)(work))

        return self._with_restart(attempt)

    def forget_plans(self) -> None:
        self.write(catalog.get("admin/neo4j/clear_query_caches"))

    def explain(self, query: QueryLike, params: Params | None = None) -> dict[str, Any]:
        """Neo4j's plan of ``query`` with ``params``, planned but not run (``EXPLAIN``).

        The plan is the driver's nested dict: each operator has ``operatorType`` (for example
        ``NodeIndexSeek@neo4j``), ``identifiers``, ``arguments`` and ``children``. Write
        statements are planned too (nothing is written), so the transaction is a write one.
        """
        statement = as_statement(query)
        try:
            _, summary, _ = self._driver.execute_query(
                Query(f"EXPLAIN {statement.text}"),
                dict(params or {}),
                database_=self._database,
                routing_=RoutingControl.WRITE,
            )
        except (ServiceUnavailable, SessionExpired, AuthError) as exc:
            raise StoreUnavailable(f"{statement.name}: Neo4j at {self.location}: {exc}") from exc
        except (Neo4jError, DriverError) as exc:
            raise QueryError(statement.name, str(exc)) from exc
        if summary.plan is None:
            raise QueryError(statement.name, "EXPLAIN returned no plan")
        return dict(summary.plan)

    def index_states(self) -> list[IndexState]:
        rows = self.read(catalog.get("admin/neo4j/index_states"))
        states = []
        for row in rows:
            if row["label"] is None:  # the built-in token lookup indexes
                continue
            for prop in row["properties"] or []:
                states.append(IndexState(str(row["label"]), str(prop), str(row["status"])))
        return sorted(states, key=lambda s: (s.label, s.property_name))

    def apply_schema(self) -> list[IndexState]:
        for name in ("schema/neo4j/constraints", "schema/neo4j/indexes"):
            for part in catalog.get(name).parts():
                self.write(part)
        seconds = int(self.settings.index_wait_s)
        try:
            self.write(catalog.get("admin/neo4j/await_indexes"), {"seconds": seconds})
        except QueryError as exc:
            raise SchemaError(f"indexes not online after {seconds}s: {exc}") from exc
        self.write(catalog.get("schema/set_version"), {"key": "schema", "version": SCHEMA_VERSION})
        return self.index_states()

    def health(self) -> Health:
        started = time.perf_counter()
        try:
            self.read(catalog.get("admin/ping"))
            latency = (time.perf_counter() - started) * 1000
            info = self._driver.get_server_info()
            return Health(
                ok=True,
                backend=self.backend,
                location=self.location,
                server_version=info.agent,
                latency_ms=latency,
                details={
                    "database": self._database,
                    "protocol": str(info.protocol_version),
                    "neo4j_version": info.agent.partition("/")[2],
                    **(self.server.status() if self.server is not None else {}),
                    **({"restarts": self.server.restarts} if self.server is not None else {}),
                },
            )
        except Exception as exc:  # health never raises: it reports
            return Health(ok=False, backend=self.backend, location=self.location, error=str(exc))

    def snapshot(self) -> None:
        """Neo4j commits are durable; nothing to do."""

    def clear(self) -> None:
        statement = catalog.get("admin/delete_batch")
        while True:
            rows = self._run(statement, {"limit": 10_000}, None, RoutingControl.WRITE)[0]
            if not rows or not rows[0]["deleted"]:
                return

    def close(self) -> None:
        """The driver is shared by the process and closed at exit (``close_drivers``); an owned
        managed server is stopped."""
        if self.server is None:
            return
        if self.server.owned:
            drop_driver(self.location, self._auth[0])
        self.server.close()
