"""Read stored images back as the :class:`SceneGraph` that was loaded (``covr show``, tests).

:func:`store_digest` summarizes everything the loaders wrote (node and relationship counts plus
a checksum over every image's full content, in id order) so that "the store equals a clean
load" and "loading twice changes nothing" can be checked as one comparison, and
:func:`expected_digest` gives the same summary for scene graphs that were only read from files.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field

from covr.graph import catalog
from covr.graph.store import GraphStore
from covr.scene.model import SceneGraph
from covr.scene.records import from_store_record

LOADER_LABELS = ("Image", "Object", "Relation", "RelMod")
LOADER_TYPES = ("HAS", "SUBJ", "OBJ", "MOD")
"""What the loaders write; other rooms' nodes (Meta, statistics) are not part of a digest."""


def get_scene_graph(store: GraphStore, image_id: str) -> SceneGraph | None:
    """The scene graph stored under ``Image.id = image_id`` (``gqa:2370799``), or ``None``."""
    rows = store.read(catalog.get("match/scene_graph"), {"image_id": image_id})
    if not rows:
        return None
    return from_store_record(rows[0])


def get_scene_graphs(store: GraphStore, image_ids: list[str]) -> dict[str, SceneGraph]:
    """Several stored scene graphs in one statement, by image id (absent ids are left out)."""
    rows = store.read(catalog.get("load/scene_graphs"), {"ids": image_ids})
    graphs = (from_store_record(row) for row in rows)
    return {g.image_id: g for g in graphs}


@dataclass(frozen=True)
class Digest:
    """Counts per loader label and relationship type, and a checksum of all image contents."""

    nodes: dict[str, int] = field(default_factory=dict)
    relationships: dict[str, int] = field(default_factory=dict)
    content: str = ""


def _checksum(graphs: Iterable[SceneGraph]) -> str:
    digest = hashlib.sha256()
    for graph in graphs:  # canonical form: equal content gives an equal repr
        digest.update(repr(graph).encode())
        digest.update(b"\n")
    return digest.hexdigest()


def expected_digest(graphs: Iterable[SceneGraph]) -> Digest:
    """The digest a store holding exactly ``graphs`` (and nothing else the loaders write) has."""
    ordered = sorted(graphs, key=lambda g: g.image_id)
    objects = sum(len(g.objects) for g in ordered)
    relations = sum(len(g.relations) for g in ordered)
    mods = sum(len(r.mods) for g in ordered for r in g.relations)
    nodes = {"Image": len(ordered), "Object": objects, "Relation": relations, "RelMod": mods}
    rels = {"HAS": objects, "SUBJ": relations, "OBJ": relations + mods, "MOD": mods}
    return Digest(nodes, rels, _checksum(ordered))


def store_digest(store: GraphStore, page: int = 500) -> Digest:
    """The digest of what the store holds (reads every image, ``page`` at a time)."""
    labels = {
        r["label"]: int(r["count"]) for r in store.read(catalog.get("admin/count_nodes_by_label"))
    }
    types = {
        r["type"]: int(r["count"])
        for r in store.read(catalog.get("admin/count_relationships_by_type"))
    }

    def stored_ids() -> list[str]:
        out: list[str] = []
        after = ""
        while True:
            ids = [
                str(r["id"])
                for r in store.read(
                    catalog.get("load/image_ids_after"), {"after": after, "limit": page}
                )
            ]
            if not ids:
                return out
            out += ids
            after = ids[-1]

    def graphs() -> Iterable[SceneGraph]:
        # sorted here: the stores' string orders differ (Neo4j sorts in UTF-16 order), and the
        # checksum must not depend on which store computed it
        ids = sorted(stored_ids())
        for start in range(0, len(ids), page):
            chunk = ids[start : start + page]
            found = get_scene_graphs(store, chunk)
            yield from (found[i] for i in chunk if i in found)

    return Digest(
        {k: labels.get(k, 0) for k in LOADER_LABELS},
        {k: types.get(k, 0) for k in LOADER_TYPES},
        _checksum(graphs()),
    )
