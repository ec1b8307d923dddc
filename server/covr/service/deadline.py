"""The caller's deadline, handed down to the graph store as a query timeout (DESIGN.md §9).

The server wraps its store once in a :class:`DeadlineStore` whose clock is the deadline of the RPC
the current thread is serving (:class:`RequestDeadlines`: a servicer enters ``scope(context)``
for the duration of a call; gRPC runs a call, streaming ones included, on one pool thread). The
rooms (related images, questions) get that wrapped store once at start-up and keep their caches;
every read then
runs with ``timeout = min(what the caller of read asked, the configured query timeout, the time
the RPC has left)``, so a query never outlives the RPC that wanted it: the store stops it server-side and
the RPC answers ``DEADLINE_EXCEEDED`` instead of leaving work running for nobody. Rooms that take a
:class:`~covr.graph.GraphStore` get this for free without knowing about gRPC.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import grpc

from covr.graph.errors import QueryTimeout
from covr.graph.store import (
    GraphStore,
    Health,
    IndexState,
    Params,
    QueryLike,
    Row,
    WriteSummary,
    as_statement,
)

MIN_TIMEOUT_S = 0.001


class RequestDeadlines:
    """The deadline of the RPC served by the current thread (``None`` outside an RPC)."""

    def __init__(self) -> None:
        self._local = threading.local()

    @contextmanager
    def scope(
        self,
        context: grpc.ServicerContext,
        *,
        stop_reads: bool = True,
        before_read: Callable[[], None] | None = None,
    ) -> Iterator[None]:
        """Run the block as part of the RPC ``context``; ``stop_reads=False`` keeps reads going
        after the client left (an import: its statistics refresh reads between writes).
        ``before_read`` runs before each store read of the block: the moment the thread is
        about to wait for the store and other threads can run (see ``example_stream``)."""
        local = self._local
        previous = (
            getattr(local, "context", None),
            getattr(local, "stop", True),
            getattr(local, "before_read", None),
        )
        local.context, local.stop, local.before_read = context, stop_reads, before_read
        try:
            yield
        finally:
            local.context, local.stop, local.before_read = previous

    def before_read(self) -> None:
        """Run the current scope's ``before_read`` hook, if any."""
        hook = getattr(self._local, "before_read", None)
        if hook is not None:
            hook()

    def cancelled(self) -> bool:
        """Whether the RPC of the current thread has ended for its client (cancel, deadline)
        and its reads may be stopped."""
        context = getattr(self._local, "context", None)
        if context is None or not getattr(self._local, "stop", True):
            return False
        return not context.is_active()

    def time_left(self) -> float | None:
        context = getattr(self._local, "context", None)
        if context is None:
            return None
        left = context.time_remaining()
        return None if left is None else float(left)


class DeadlineStore(GraphStore):
    """A view of ``inner`` whose reads and writes are bounded by ``time_left()`` seconds."""

    def __init__(
        self,
        inner: GraphStore,
        time_left: Callable[[], float | None],
        *,
        cap: float,
        cancelled: Callable[[], bool] | None = None,
        before_read: Callable[[], None] | None = None,
    ) -> None:
        self.inner = inner
        self.backend = inner.backend
        self.location = inner.location
        self._time_left = time_left
        self._cap = cap
        self._cancelled = cancelled
        self._before_read = before_read

    def _timeout(self, query: QueryLike, asked: float | None) -> float:
        timeout = self._cap if asked is None else min(asked, self._cap)
        left = self._time_left()
        if left is None:
            return timeout
        if left <= MIN_TIMEOUT_S:
            raise QueryTimeout(as_statement(query).name, "the RPC deadline has passed")
        return min(timeout, left)

    def read(
        self, query: QueryLike, params: Params | None = None, *, timeout: float | None = None
    ) -> list[Row]:
        # A call whose client has gone stops at its next read: the engine and the lookup compute
        # whole results before the stream sends them, and would otherwise hold a worker (and a
        # place under COVR_SERVICE_MAX_CONCURRENT_RPCS) for seconds for nobody. Writes are not
        # stopped (an import batch deletes, then creates), nor reads of an import (its name
        # statistics refresh reads between writes: see RequestDeadlines.scope).
        if self._cancelled is not None and self._cancelled():
            raise QueryTimeout(as_statement(query).name, "the client cancelled the call")
        if self._before_read is not None:
            self._before_read()
        return self.inner.read(query, params, timeout=self._timeout(query, timeout))

    def write(
        self, query: QueryLike, params: Params | None = None, *, timeout: float | None = None
    ) -> WriteSummary:
        return self.inner.write(query, params, timeout=self._timeout(query, timeout))

    def write_rows(
        self,
        query: QueryLike,
        rows: Iterable[Mapping[str, Any]],
        *,
        batch_size: int,
        params: Params | None = None,
        on_batch: Callable[[WriteSummary], None] | None = None,
    ) -> WriteSummary:
        return super().write_rows(
            query, rows, batch_size=batch_size, params=params, on_batch=on_batch
        )

    def replace_images(
        self, present: Sequence[str], create: Params, *, timeout: float | None = None
    ) -> WriteSummary:
        # the inner store's own way (one transaction on Neo4j), not the default built on write
        bounded = self._timeout("load/create_images", timeout)
        return self.inner.replace_images(present, create, timeout=bounded)

    def index_states(self) -> list[IndexState]:
        return self.inner.index_states()

    def apply_schema(self) -> list[IndexState]:
        return self.inner.apply_schema()

    def health(self) -> Health:
        return self.inner.health()

    def snapshot(self) -> None:
        self.inner.snapshot()

    def clear(self) -> None:
        raise PermissionError("the service never clears the store")

    def close(self) -> None:
        """The shared store outlives a request: closing the view does nothing."""
