"""A real store that records the calls it is given: what the service tests check calls against.

It derives from :class:`~covr.graph.forwarding.ForwardingStore`, so every store method reaches
the real store (issue 38: a recording wrapper that inherited :class:`GraphStore`'s defaults
turned each ``read_many`` into reads, and a count over it would have hidden the very batching it
was counting). ``tests/unit/graph/test_store_wrappers.py`` checks that each call reaches it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from covr.graph.forwarding import ForwardingStore
from covr.graph.store import (
    GraphStore,
    Params,
    QueryLike,
    RoundCheck,
    RoundRows,
    Row,
    as_statement,
)


@dataclass(frozen=True)
class Call:
    """One call that reached the store: its method, the names of its statements (one for a
    ``read``, each of a ``read_many`` or ``read_round`` in order), its timeout and the thread
    that made it."""

    method: str
    statements: tuple[str, ...]
    timeout: float | None
    thread: str


class RecordingStore(ForwardingStore):
    """The real store, with every read (``read``, ``read_many``, ``read_round``) and
    ``forget_plans`` recorded, and an optional delay per read call (a slow store for the
    deadline and cancel tests)."""

    def __init__(self, inner: GraphStore, delay: float = 0.0) -> None:
        super().__init__(inner)
        self.delay = delay
        self.calls: list[Call] = []
        """Every recorded call so far, in order: what a failed check shows."""

    def _record(self, method: str, names: tuple[str, ...], timeout: float | None) -> None:
        self.calls.append(Call(method, names, timeout, threading.current_thread().name))
        if self.delay and method != "forget_plans":
            time.sleep(self.delay)

    @property
    def timeouts(self) -> list[float | None]:
        """The timeout of each statement read so far."""
        return [timeout for timeout, _, _ in self.reads()]

    def reads(self) -> list[tuple[float | None, str, str]]:
        """(timeout, thread, statement name) of each statement read so far."""
        return [
            (call.timeout, call.thread, name)
            for call in list(self.calls)
            if call.method in ("read", "read_many", "read_round")
            for name in call.statements
        ]

    def of(self, method: str) -> list[Call]:
        """The recorded calls of one method."""
        return [call for call in list(self.calls) if call.method == method]

    def forget(self) -> None:
        """Start recording afresh."""
        self.calls.clear()

    def read(
        self, query: QueryLike, params: Params | None = None, *, timeout: float | None = None
    ) -> list[Row]:
        self._record("read", (as_statement(query).name,), timeout)
        return self.inner.read(query, params, timeout=timeout)

    def read_many(
        self, statements: Iterable[tuple[QueryLike, Params]], *, timeout: float | None = None
    ) -> list[Row]:
        batch = list(statements)
        self._record("read_many", tuple(as_statement(q).name for q, _ in batch), timeout)
        return self.inner.read_many(batch, timeout=timeout)

    def read_round(
        self,
        statements: Sequence[tuple[QueryLike, Params]],
        *,
        check: RoundCheck | None = None,
        timeout: float | None = None,
    ) -> RoundRows:
        batch = list(statements)
        self._record("read_round", tuple(as_statement(q).name for q, _ in batch), timeout)
        return self.inner.read_round(batch, check=check, timeout=timeout)

    def forget_plans(self) -> None:
        self._record("forget_plans", (), None)
        self.inner.forget_plans()
