"""The base of every store wrapper: each method of :class:`GraphStore` passed to an inner store.

Why a base of its own: a wrapper written on :class:`GraphStore` directly inherits its generic
defaults for the methods it does not write, and those silently replace the inner store's own
way of doing them. That is how the service lost Neo4j's lookup batching (issue 38): its
deadline wrapper had no ``read_many``, so a round's statements became one read each, instead
of one transaction, and no ``forget_plans``, so the plan reset after a large import did
nothing. A wrapper on :class:`ForwardingStore` overrides only what it changes; a method added
to :class:`GraphStore` is forwarded here once, and ``tests/unit/graph/test_store_wrappers.py``
fails until it is (it lists :class:`GraphStore`'s public methods by introspection, and checks
that every store wrapper in the repository derives from this class).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from covr.graph.store import (
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
)


class ForwardingStore(GraphStore):
    """A view of ``inner`` that passes every call on unchanged (subclasses change some)."""

    def __init__(self, inner: GraphStore) -> None:
        self.inner = inner
        self.backend = inner.backend
        self.location = inner.location

    def read(
        self, query: QueryLike, params: Params | None = None, *, timeout: float | None = None
    ) -> list[Row]:
        return self.inner.read(query, params, timeout=timeout)

    def read_many(
        self, statements: Iterable[tuple[QueryLike, Params]], *, timeout: float | None = None
    ) -> list[Row]:
        return self.inner.read_many(statements, timeout=timeout)

    def read_round(
        self,
        statements: Sequence[tuple[QueryLike, Params]],
        *,
        check: RoundCheck | None = None,
        timeout: float | None = None,
    ) -> RoundRows:
        return self.inner.read_round(statements, check=check, timeout=timeout)

    def value_preparer(self) -> ValuePreparer | None:
        return self.inner.value_preparer()

    def write(
        self, query: QueryLike, params: Params | None = None, *, timeout: float | None = None
    ) -> WriteSummary:
        return self.inner.write(query, params, timeout=timeout)

    def write_rows(
        self,
        query: QueryLike,
        rows: Iterable[Mapping[str, Any]],
        *,
        batch_size: int,
        params: Params | None = None,
        on_batch: Callable[[WriteSummary], None] | None = None,
    ) -> WriteSummary:
        return self.inner.write_rows(
            query, rows, batch_size=batch_size, params=params, on_batch=on_batch
        )

    def replace_images(
        self, present: Sequence[str], create: Params, *, timeout: float | None = None
    ) -> WriteSummary:
        return self.inner.replace_images(present, create, timeout=timeout)

    def index_states(self) -> list[IndexState]:
        return self.inner.index_states()

    def apply_schema(self) -> list[IndexState]:
        return self.inner.apply_schema()

    def health(self) -> Health:
        return self.inner.health()

    def snapshot(self) -> None:
        self.inner.snapshot()

    def clear(self) -> None:
        self.inner.clear()

    def forget_plans(self) -> None:
        self.inner.forget_plans()

    def close(self) -> None:
        self.inner.close()
