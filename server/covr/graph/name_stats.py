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

Incremental path (the loaders; a full recount took ~10 s after a 1x GQA load): a load that only
*adds* images knows every name it wrote, so the new statistics are the old ones plus its counts.
That is exact only if the old ones described the store, so :func:`begin_load` checks that they
are current (a generation, no pending mark, the image count they were computed for equals the
store's) and puts a pending mark with a token on the Meta node before the first write.
:func:`add_counts` then applies the counts only if the mark is still that token and the store
holds exactly the old images plus the new ones; otherwise (a crashed load left its mark, another
writer refreshed meanwhile, images were replaced) it falls back to :func:`refresh`.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass
from typing import Any, Literal

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


NameKey = tuple[str, Any, Any]
"""``(node type, split, name)``: one NameStat row."""
NameCounts = dict[NameKey, list[int]]
"""``{(type, split, name): [images, nodes]}``: what a set of images contributes."""


def merge_counts(into: NameCounts, more: NameCounts) -> None:
    """Adds ``more`` to ``into``: images and nodes of each name add up (the counts of different
    batches, or of stored and new images, are of different images)."""
    for key, (images, nodes) in more.items():
        total = into.get(key)
        if total is None:
            into[key] = [images, nodes]
        else:
            total[0] += images
            total[1] += nodes


@dataclass(frozen=True)
class RefreshSummary:
    """What a refresh wrote; ``incremental`` when a load's counts were added (no recount)."""

    generation: str
    images: int
    names: dict[str, int]
    seconds: float
    incremental: bool = False


@dataclass(frozen=True)
class LoadBase:
    """The statistics' state before a load (:func:`begin_load`): their image count and mark."""

    images: int
    token: str
    empty: bool = False
    """The store held no images and had no statistics: the load's counts are all of them."""


PLANS_STALE_FACTOR = 2
"""A generation whose image count is this many times larger or smaller than the last one's
makes the store drop its cached plans (:meth:`GraphStore.forget_plans`); one imported scene
graph does not. Neo4j replans a cached text itself once the counts it was planned with diverged
and its ``dbms.cypher.min_replan_interval`` passed (1 s on the managed server), but it replans
over its index samples, which lag a load: a text planned again over an index sampled while the
store was small came back as a whole-index scan, and a combined related-lookup statement ran
past the 30 s query timeout on 300 images (the CI run of stop 25)."""

PLANS_SMALL_IMAGES = 100
"""Stores this small are planned alike: a change between two counts below it drops no plan (any
plan over so few images answers in milliseconds). The Neo4j tests clear and reload stores of
3-60 images hundreds of times a session; dropping every plan at each reload made them plan
every text again (test_congruence.py on Neo4j: 116 -> 148 s)."""

_LAST_STAMPED: dict[str, int] = {}
"""The image count of the last generation this process stamped, by store location: the last
count when the store was cleared in between (a cleared store has no statistics node), so a
clear and a reload of a much larger or smaller store in one process drops the old plans too."""


def plans_stale(before: int | None, images: int) -> bool:
    """Whether plans made for a store of ``before`` images may be bad for one of ``images``."""
    if before is None or max(before, images) < PLANS_SMALL_IMAGES:
        return False
    return not before / PLANS_STALE_FACTOR < images < before * PLANS_STALE_FACTOR


def _stamp(store: GraphStore, images: int) -> str:
    rows = store.read(catalog.get("stats/state"), {"key": META_KEY})
    before = rows[0]["images"] if rows else None
    if before is None:  # cleared, or only a load's pending mark since
        before = _LAST_STAMPED.get(store.location)
    if plans_stale(before, images):
        store.forget_plans()
    generation = f"{time.time_ns():x}-{uuid.uuid4().hex[:8]}"
    store.write(
        catalog.get("stats/set_generation"),
        {"key": META_KEY, "generation": generation, "images": images},
    )
    _LAST_STAMPED[store.location] = images
    return generation


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
    generation = _stamp(store, images)
    return RefreshSummary(generation, images, names, time.perf_counter() - started)


def begin_load(store: GraphStore) -> LoadBase | None:
    """Call before a load's first write; ``None`` when its counts cannot simply be added.

    Always marks existing statistics as pending, so a load that dies midway leaves them marked
    and the next load recounts (see the module docstring).
    """
    rows = store.read(catalog.get("stats/state"), {"key": META_KEY})
    token = f"load-{time.time_ns():x}-{uuid.uuid4().hex[:8]}"
    store.write(catalog.get("stats/mark_pending"), {"key": META_KEY, "token": token})
    if not rows:  # a store that does not report its state: recount at the end
        return None
    row = rows[0]
    stored = int(row["stored"])
    if row["generation"] is None and row["pending"] is None and stored == 0:
        return LoadBase(0, token, empty=True)  # a first load into an empty store
    current = (
        row["generation"] is not None
        and row["pending"] is None
        and row["images"] is not None
        and int(row["images"]) == stored
    )
    return LoadBase(stored, token) if current else None


def add_counts(
    store: GraphStore, base: LoadBase | None, counts: NameCounts, images_added: int
) -> RefreshSummary:
    """Add a load's counts to the statistics when that is exact, else :func:`refresh`.

    ``counts`` must cover exactly the ``images_added`` new images, none of which replaced a
    stored one (the caller passes ``base=None`` otherwise).
    """
    if base is None:
        return refresh(store)
    started = time.perf_counter()
    states = store.read(catalog.get("stats/state"), {"key": META_KEY})
    if (
        not states
        or states[0]["pending"] != base.token
        or int(states[0]["stored"]) != base.images + images_added
    ):
        return refresh(store)
    merged: NameCounts = {}
    for row in [] if base.empty else store.read(catalog.get("stats/all")):
        merged[(row["type"], row["split"], row["name"])] = [int(row["images"]), int(row["nodes"])]
    merge_counts(merged, counts)
    store.write(catalog.get("stats/clear"))
    names: dict[str, int] = dict.fromkeys(NODE_TYPES, 0)
    out: list[list[Any]] = []
    for (node_type, split, name), (images, nodes) in merged.items():
        out.append([node_type, split, name, images, nodes])
        names[node_type] = names.get(node_type, 0) + 1
    if out:
        store.write(catalog.get("stats/create_rows"), {"rows": out})
    total = base.images + images_added
    generation = _stamp(store, total)
    return RefreshSummary(generation, total, names, time.perf_counter() - started, True)


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
