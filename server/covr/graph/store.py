"""The one small interface every graph backend implements.

Callers hand over a statement (from the ``cypher/`` catalog, or the ``(query, params)`` pair a
builder produced) and parameters; they get plain Python values back. Nothing outside this room
sees a driver, a session or a driver-specific result type.
"""

from __future__ import annotations

import contextlib
import time
import uuid
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from itertools import islice
from types import TracebackType
from typing import Any, Self, TypeAlias

from covr.graph import catalog
from covr.graph.backends import Backend
from covr.graph.catalog import Statement

Params = Mapping[str, Any]
Row = dict[str, Any]
QueryLike: TypeAlias = Statement | str
ValuePreparer: TypeAlias = Callable[[Any, str], Any]
"""``prepare(value, name)``: a parameter value as the backend sends it
(:meth:`GraphStore.value_preparer`)."""

SCHEMA_VERSION = 1

STAGED_MAX_AGE_S = 3600.0
"""Staged images (:meth:`GraphStore.replace_images`) older than this are what a killed
replacement left; the next replacement drops them. A live one takes seconds, not an hour."""
"""Bumped whenever the graph model of DESIGN.md §2 changes; stored in the (:Meta) node."""


def as_statement(query: QueryLike) -> Statement:
    """Accept a catalog statement or builder text; inline text gets a recognisable name."""
    if isinstance(query, Statement):
        return query
    return Statement(name="<inline>", text=query)


@dataclass
class WriteSummary:
    """What a write changed, added up over batches."""

    nodes_created: int = 0
    nodes_deleted: int = 0
    relationships_created: int = 0
    relationships_deleted: int = 0
    properties_set: int = 0
    rows: int = 0
    batches: int = 0
    seconds: float = 0.0

    def add(self, other: WriteSummary) -> None:
        """Accumulate another summary into this one."""
        for name in (
            "nodes_created",
            "nodes_deleted",
            "relationships_created",
            "relationships_deleted",
            "properties_set",
            "rows",
            "batches",
        ):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.seconds += other.seconds

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready view."""
        return asdict(self)


@dataclass(frozen=True)
class IndexState:
    """One index as the store reports it."""

    label: str
    property_name: str
    state: str  # "ONLINE"/"OPERATIONAL" normalised to "ONLINE", anything else verbatim

    @property
    def usable(self) -> bool:
        return self.state == "ONLINE"


@dataclass
class Health:
    """Whether the store answers, and what it is."""

    ok: bool
    backend: Backend
    location: str
    server_version: str = ""
    latency_ms: float = 0.0
    error: str = ""
    details: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class RoundCheck:
    """A read that follows a round (:meth:`GraphStore.read_round`) over the images its rows name.

    ``statement`` builds the read (called only by a store that runs it: building it may cost
    the caller work a store that leaves the check out never needs); its list parameter ``ids``
    is set to the distinct ``image_id`` of the round's rows that are ``among`` these images.
    """

    statement: Callable[[], tuple[QueryLike, Params]]
    ids: str
    among: Sequence[str]


@dataclass
class RoundRows:
    """What :meth:`GraphStore.read_round` read."""

    rows: list[Row]
    """The round's rows, statement after statement; when the check ran, its rows after them."""
    checked: list[str] | None = None
    """The images the check ran for (sorted), or ``None``: the store left the check out, and the
    caller checks what it needs on its own."""


def checked_images(rows: Iterable[Row], among: Iterable[str]) -> list[str]:
    """The distinct ``image_id`` of ``rows`` that are ``among`` the given images, sorted."""
    wanted = set(among)
    return sorted({i for i in (str(r["image_id"]) for r in rows) if i in wanted})


def chunked(rows: Iterable[Mapping[str, Any]], size: int) -> Iterator[list[Mapping[str, Any]]]:
    """Split rows into lists of at most ``size`` without materialising the whole input."""
    iterator = iter(rows)
    while batch := list(islice(iterator, size)):
        yield batch


class GraphStore(ABC):
    """Read, write, batch-write, schema, health, close: all the rest of the service needs."""

    backend: Backend
    location: str
    """Where the server is (a socket path, ``host:port`` or a Bolt URI), for messages and for
    what a process remembers per server."""

    @abstractmethod
    def read(
        self, query: QueryLike, params: Params | None = None, *, timeout: float | None = None
    ) -> list[Row]:
        """Run a read-only statement and return its rows as dicts of plain values."""

    @abstractmethod
    def write(
        self, query: QueryLike, params: Params | None = None, *, timeout: float | None = None
    ) -> WriteSummary:
        """Run one write statement as one unit (all of it applies, or none)."""

    def read_many(
        self, statements: Iterable[tuple[QueryLike, Params]], *, timeout: float | None = None
    ) -> list[Row]:
        """Run several read statements and return their rows one after another.

        What a ``UNION ALL`` of the same statements returns, without one big statement: Neo4j
        plans a many-branch union anew for every new combination of branches (its plan cache is
        keyed by the whole text) and its planner takes seconds on such a union, while each branch
        alone is planned once and then served from the cache.
        """
        rows: list[Row] = []
        for query, params in statements:
            rows.extend(self.read(query, params, timeout=timeout))
        return rows

    def read_round(
        self,
        statements: Sequence[tuple[QueryLike, Params]],
        *,
        check: RoundCheck | None = None,
        timeout: float | None = None,
    ) -> RoundRows:
        """One round of reads: the rows of ``statements`` one after another, read the way this
        backend does that best (FalkorDB: one ``UNION ALL``; Neo4j: the statements batched,
        with the check, in one statement or one transaction).

        The statements return the same columns (a related-image lookup's branches: ``image_id``
        and ``tag`` among them). ``check`` may be run with the round, where that saves the
        caller a round trip; :attr:`RoundRows.checked` says whether it was. ``timeout`` is each
        statement's, as for :meth:`read_many`. This default reads the statements with
        :meth:`read_many` and leaves the check to the caller.
        """
        return RoundRows(self.read_many(statements, timeout=timeout))

    def value_preparer(self) -> ValuePreparer | None:
        """A function that turns a parameter value into what this backend sends, ahead of time
        and in another process (a loader's reader process); ``None`` when values go as they are.

        ``prepare(value, name)`` returns a value to pass as the parameter ``name`` to this store
        (FalkorDB: the value's parameter text, :func:`covr.graph.params.prerender`). It must be a
        module-level function: it crosses process boundaries.
        """
        return None

    def write_rows(
        self,
        query: QueryLike,
        rows: Iterable[Mapping[str, Any]],
        *,
        batch_size: int,
        params: Params | None = None,
        on_batch: Callable[[WriteSummary], None] | None = None,
    ) -> WriteSummary:
        """Send ``rows`` through an ``UNWIND $rows`` statement, ``batch_size`` rows per call.

        Each batch is one statement, so a failing batch leaves nothing of itself behind; batches
        before it stay written (loads are idempotent and resumable, so a re-run converges).
        """
        statement = as_statement(query)
        if "$rows" not in statement.text:
            raise ValueError(f"{statement.name}: a batch statement must UNWIND $rows")
        total = WriteSummary()
        for batch in chunked(rows, batch_size):
            started = time.perf_counter()
            summary = self.write(statement, {**(params or {}), "rows": batch})
            summary.rows = len(batch)
            summary.batches = 1
            summary.seconds = time.perf_counter() - started
            total.add(summary)
            if on_batch is not None:
                on_batch(summary)
        return total

    def replace_images(
        self, present: Sequence[str], create: Params, *, timeout: float | None = None
    ) -> WriteSummary:
        """Write a batch of ``load/create_images`` whose images ``present`` are already stored,
        as one unit per image: a reader, a failure or a kill at any point sees each image's old
        version or its new one, never neither (issue 40: delete-then-create lost up to a batch
        of stored images when the create failed).

        This default needs nothing but single statements that apply whole, which every backend
        has: the images not yet stored are created as usual; the new versions of ``present`` are
        staged under an image node no reader matches (``load/falkordb/stage_images``); one statement
        then deletes each old version and relabels the staged image (``load/falkordb/switch_images``).
        The staged nodes carry their final keys from the start, beside the stored version's
        equal keys: keys are unique by construction (``covr.scene.limits``), so a backend that
        runs this default holds no store constraint on them. FalkorDB
        has no multi-statement transaction, and its roll-back of a failed statement that deletes
        and then *creates* is wrong (tests/integration/parity/test_portable_notes.py), which is
        why the new version is created before the switch and the switch creates nothing. A
        backend with transactions overrides this with one transaction (Neo4j).
        """
        stage = uuid.uuid4().hex
        now = time.time()
        total = WriteSummary()
        if len(set(present)) < len(create["ids"]):  # some images of the batch are new
            total.add(self.write(catalog.get("load/create_images"), create, timeout=timeout))
        drop = catalog.get("load/drop_staged")
        self.write(drop, {"stage": "", "before": now - STAGED_MAX_AGE_S}, timeout=timeout)
        staged = {**create, "only": list(present), "stage": stage, "staged_at": now}
        try:
            total.add(
                self.write(catalog.get("load/falkordb/stage_images"), staged, timeout=timeout)
            )
            switch = catalog.get("load/falkordb/switch_images")
            total.add(self.write(switch, {"stage": stage}, timeout=timeout))
        except Exception:
            # the stored versions are untouched; what was staged is invisible garbage, dropped
            # here when the store still answers (else by a later replacement, by its age)
            with contextlib.suppress(Exception):
                self.write(drop, {"stage": stage, "before": 0}, timeout=timeout)
            raise
        return total

    @abstractmethod
    def index_states(self) -> list[IndexState]:
        """Every index of the store with its state."""

    @abstractmethod
    def apply_schema(self) -> list[IndexState]:
        """Create indexes and constraints (idempotent) and wait until they are usable."""

    @abstractmethod
    def health(self) -> Health:
        """Ping the store; never raises."""

    @abstractmethod
    def snapshot(self) -> None:
        """Make what is written durable now (embedded: an RDB snapshot; Neo4j: nothing)."""

    @abstractmethod
    def clear(self) -> None:
        """Delete every node of the service's graph (used by ``covr db reset``)."""

    def forget_plans(self) -> None:
        """Drop the server's cached query plans after the store's size changed a lot.

        Neo4j keeps a plan per statement text and, within its replan interval, reused plans
        made for a near-empty store after a load (related lookups ran ~10x slower); FalkorDB's
        plans do not depend on statistics, so by default there is nothing to drop.
        """
        return  # nothing to drop

    @abstractmethod
    def close(self) -> None:
        """Release connections (and stop an embedded server this process owns)."""

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
