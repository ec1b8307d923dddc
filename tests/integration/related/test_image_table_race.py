"""Two lookups that start together while an import lands read one image table, not two.

A 20-minute soak (benchmarks/bench_soak.py, imports mixed with FindRelatedImages) answered
INTERNAL once: one search drew its candidates from a table read after an import and ranked them
in the table another lookup had read before it (``IndexError: index 1198 is out of bounds for
axis 0 with size 1198``). The store here is the real one; only the first image-table read is
held open (after it has read) while another image is written and a second lookup asks.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest

from covr.graph import GraphStore
from covr.graph.store import Params, QueryLike, Row, as_statement
from covr.related.lookup import RelatedLookup
from covr.related.sampling import ImageTable
from covr.settings import Settings
from tests.integration.related.helpers import put, scene

pytestmark = pytest.mark.integration

TABLE = "match/related/images"


class HeldFirstTableRead:
    """The real store, whose first image-table read waits, rows in hand, until released."""

    def __init__(self, store: GraphStore) -> None:
        self.store = store
        self.read_done = threading.Event()
        self.release = threading.Event()
        self._first = True

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)

    def read(self, query: QueryLike, params: Params | None = None, **kw: Any) -> list[Row]:
        rows = self.store.read(query, params, **kw)
        if self._first and as_statement(query).name == TABLE:
            self._first = False
            self.read_done.set()
            self.release.wait(30)
        return rows


def test_concurrent_first_lookups_share_one_image_table(
    store: GraphStore, settings: Settings
) -> None:
    put(store, [scene(n, [("man", []), ("hat", [])], [(0, "wearing", 1)]) for n in range(3)])
    held = HeldFirstTableRead(store)
    lookup = RelatedLookup(held, settings=settings.related)  # type: ignore[arg-type]
    tables: dict[str, ImageTable] = {}

    def first() -> None:
        tables["first"] = lookup.names.table()

    def second() -> None:
        tables["second"] = lookup.names.table()

    a = threading.Thread(target=first)
    a.start()
    assert held.read_done.wait(30)
    put(store, [scene(99, [("man", [])])])  # an import lands between the two reads
    b = threading.Thread(target=second)
    b.start()
    b.join(1.0)  # with one table per generation, the second lookup waits for the first read
    held.release.set()
    a.join(30)
    b.join(30)
    assert tables["first"] is tables["second"]
    assert len(tables["first"].ids) == 3
