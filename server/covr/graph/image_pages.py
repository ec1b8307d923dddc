"""Stored image ids page by page: the catalog query behind the ListImages RPC.

In the graph room because it is a query of the store (DESIGN.md §1: only the graph room runs
catalog statements); the service only turns pages into messages and page tokens.
"""

from __future__ import annotations

from covr.graph import catalog
from covr.graph.store import GraphStore


def image_ids_page(
    store: GraphStore, *, source: str | None, split: str | None, after: str, limit: int
) -> list[str]:
    """Up to ``limit`` image ids greater than ``after`` in id order, optionally of one source
    and/or split (``None`` = any). The cursor is the last id of the previous page, so a page
    never repeats or skips an id when images are added between pages."""
    rows = store.read(
        catalog.get("service/image_ids_page"),
        {"source": source, "split": split, "after": after, "limit": limit},
    )
    return [str(row["id"]) for row in rows]
