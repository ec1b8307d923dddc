"""Name-frequency statistics kept in the store (DESIGN.md §5, "anchor on the rarest fixed name").

Why they exist: a related-image lookup fixes most names of a subgraph and needs to know which of
them is rarest (to draw candidate images from it) and which names of a node type exist at all (to
compute the exclusive alternatives of a name before querying). Counting that live would scan the
whole graph on every request, so the loaders call :func:`refresh` at the end of each completed
load; it recomputes ``(:NameStat {type, split, name, images, nodes})`` for the four node types and
stamps a new *generation* on ``(:Meta {key: "name_stats"})``. Readers compare generations to know
when their caches are stale.

``refresh`` is idempotent: it deletes the old statistics and writes new ones. A crash between the
two leaves no statistics (and a stale generation); the next refresh repairs it, and the lookup
reports missing statistics clearly instead of guessing.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass
from typing import Literal

from covr.graph import catalog
from covr.graph.store import GraphStore

NodeType = Literal["object", "attribute", "relation", "relmod"]
NODE_TYPES: tuple[NodeType, ...] = ("object", "attribute", "relation", "relmod")
META_KEY = "name_stats"
_STATEMENTS: dict[NodeType, str] = {
    "object": "stats/objects",
    "attribute": "stats/attributes",
    "relation": "stats/relations",
    "relmod": "stats/relmods",
}


@dataclass(frozen=True)
class RefreshSummary:
    """What a refresh wrote."""

    generation: str
    images: int
    names: dict[str, int]
    seconds: float


def refresh(store: GraphStore) -> RefreshSummary:
    """Recompute every name statistic and stamp a new generation (see the module docstring)."""
    started = time.perf_counter()
    store.write(catalog.get("stats/clear"))
    names: dict[str, int] = {}
    for node_type in NODE_TYPES:
        summary = store.write(catalog.get(_STATEMENTS[node_type]), {"type": node_type})
        names[node_type] = summary.nodes_created
    rows = store.read(catalog.get("stats/count_images"))
    images = int(rows[0]["images"]) if rows else 0
    generation = f"{time.time_ns():x}-{uuid.uuid4().hex[:8]}"
    store.write(
        catalog.get("stats/set_generation"),
        {"key": META_KEY, "generation": generation, "images": images},
    )
    return RefreshSummary(generation, images, names, time.perf_counter() - started)


def generation(store: GraphStore) -> str | None:
    """The current statistics generation, or ``None`` when statistics were never computed."""
    rows = store.read(catalog.get("stats/generation"), {"key": META_KEY})
    if not rows or rows[0]["generation"] is None:
        return None
    return str(rows[0]["generation"])


def vocabulary(
    store: GraphStore, node_type: NodeType, split: str | None = None
) -> dict[str, tuple[int, int]]:
    """``{name: (images, nodes)}`` for one node type, over all splits or one ``split``."""
    if node_type not in NODE_TYPES:
        raise ValueError(f"node_type must be one of {', '.join(NODE_TYPES)}, got {node_type!r}")
    rows = store.read(catalog.get("stats/vocabulary"), {"type": node_type, "split": split})
    return {str(r["name"]): (int(r["images"]), int(r["nodes"])) for r in rows}
