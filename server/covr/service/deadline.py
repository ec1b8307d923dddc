"""The caller's deadline, handed down to the graph store as a query timeout (DESIGN.md §9).

The server wraps its store once in a :class:`DeadlineStore` whose clock is the deadline of the RPC
the current thread is serving (:class:`RequestDeadlines`: a servicer enters ``scope(context)``
for the duration of a call; gRPC runs a call, streaming ones included, on one pool thread). The
rooms (related images, questions) get that wrapped store once at start-up and keep their caches;
every read then
runs with ``timeout = min(what the caller of read asked, the configured query timeout, the time
the RPC has left)`` (a ``read_many`` batch shares the time left among its statements), so a query
never outlives the RPC that wanted it: the store stops it server-side and
the RPC answers ``DEADLINE_EXCEEDED`` instead of leaving work running for nobody. Rooms that take a
:class:`~covr.graph.GraphStore` get this for free without knowing about gRPC. Every other method
of the store reaches the inner store unchanged (:class:`~covr.graph.forwarding.ForwardingStore`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import grpc

from covr.graph.errors import QueryTimeout
from covr.graph.forwarding import ForwardingStore
from covr.graph.store import (
    GraphStore,
    Params,
    QueryLike,
    RoundCheck,
    RoundRows,
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


class DeadlineStore(ForwardingStore):
    """A view of ``inner`` whose reads and writes are bounded by ``time_left()`` seconds.

    Every method of the store reaches ``inner`` (:class:`ForwardingStore`: a method this class
    did not write is passed on, never replaced by :class:`GraphStore`'s generic default), so
    behind the service each backend keeps its own way: a lookup round (``read_round``) is one
    ``UNION ALL`` on FalkorDB and one statement or transaction on Neo4j, and Neo4j's
    ``forget_plans`` drops stale plans after an import (issue 38: Neo4j's batching and plan
    reset were lost behind the service before). The methods that take a ``timeout`` get the bounded one; the
    others have none to bound and are passed on as they are.
    """

    def __init__(
        self,
        inner: GraphStore,
        time_left: Callable[[], float | None],
        *,
        cap: float,
        cancelled: Callable[[], bool] | None = None,
        before_read: Callable[[], None] | None = None,
    ) -> None:
        super().__init__(inner)
        self._time_left = time_left
        self._cap = cap
        self._cancelled = cancelled
        self._before_read = before_read

    def _timeout(self, name: str, asked: float | None, statements: int = 1) -> float:
        """The timeout of each of ``statements`` statements: what was ``asked`` (or the cap),
        and together no more than the RPC has left."""
        timeout = self._cap if asked is None else min(asked, self._cap)
        left = self._time_left()
        if left is None:
            return timeout
        if left <= MIN_TIMEOUT_S:
            raise QueryTimeout(name, "the RPC deadline has passed")
        return min(timeout, left / max(statements, 1))

    def _start_read(self, name: str) -> None:
        # A call whose client has gone stops at its next read: the engine and the lookup compute
        # whole results before the stream sends them, and would otherwise hold a worker (and a
        # place under COVR_SERVICE_MAX_CONCURRENT_RPCS) for seconds for nobody. Writes are not
        # stopped (an import batch deletes, then creates), nor reads of an import (its name
        # statistics refresh reads between writes: see RequestDeadlines.scope).
        if self._cancelled is not None and self._cancelled():
            raise QueryTimeout(name, "the client cancelled the call")
        if self._before_read is not None:
            self._before_read()

    def read(
        self, query: QueryLike, params: Params | None = None, *, timeout: float | None = None
    ) -> list[Row]:
        name = as_statement(query).name
        self._start_read(name)
        return self.inner.read(query, params, timeout=self._timeout(name, timeout))

    def read_many(
        self, statements: Iterable[tuple[QueryLike, Params]], *, timeout: float | None = None
    ) -> list[Row]:
        """The inner store's ``read_many`` (one transaction on Neo4j), stopped and bounded as a
        read is. Its ``timeout`` is each statement's (the backends give the batch that much per
        statement), so the time left is shared out: the batch never outlives the RPC."""
        batch = list(statements)
        name = as_statement(batch[0][0]).name if batch else "read_many"
        self._start_read(name)
        bounded = self._timeout(name, timeout, statements=len(batch))
        return self.inner.read_many(batch, timeout=bounded)

    def read_round(
        self,
        statements: Sequence[tuple[QueryLike, Params]],
        *,
        check: RoundCheck | None = None,
        timeout: float | None = None,
    ) -> RoundRows:
        """The inner store's ``read_round`` (one ``UNION ALL`` on FalkorDB, one statement or
        transaction on Neo4j), stopped and bounded as ``read_many`` is: its ``timeout`` is each
        statement's, so the time left is shared out among them."""
        batch = list(statements)
        name = as_statement(batch[0][0]).name if batch else "read_round"
        self._start_read(name)
        bounded = self._timeout(name, timeout, statements=len(batch))
        return self.inner.read_round(batch, check=check, timeout=bounded)

    def write(
        self, query: QueryLike, params: Params | None = None, *, timeout: float | None = None
    ) -> WriteSummary:
        name = as_statement(query).name
        return self.inner.write(query, params, timeout=self._timeout(name, timeout))

    def write_rows(
        self,
        query: QueryLike,
        rows: Iterable[Mapping[str, Any]],
        *,
        batch_size: int,
        params: Params | None = None,
        on_batch: Callable[[WriteSummary], None] | None = None,
    ) -> WriteSummary:
        """Built on this view's :meth:`write`, not passed on: ``write_rows`` takes no timeout,
        so only batch by batch can each be bounded by the time the RPC has left then."""
        return GraphStore.write_rows(
            self, query, rows, batch_size=batch_size, params=params, on_batch=on_batch
        )

    def replace_images(
        self, present: Sequence[str], create: Params, *, timeout: float | None = None
    ) -> WriteSummary:
        # the inner store's own way (one transaction on Neo4j), not the default built on write
        bounded = self._timeout("load/create_images", timeout)
        return self.inner.replace_images(present, create, timeout=bounded)

    def forget_plans(self) -> None:
        """Passed on without the RPC's deadline: it follows an import that has written (the
        plans are stale whether or not its client still waits), and the store bounds it by its
        own query timeout."""
        self.inner.forget_plans()

    def clear(self) -> None:
        raise PermissionError("the service never clears the store")

    def close(self) -> None:
        """The shared store outlives a request: closing the view does nothing."""
