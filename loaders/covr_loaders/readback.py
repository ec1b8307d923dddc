"""Read a stored image back as the :class:`SceneGraph` that was loaded (``covr show``, tests)."""

from __future__ import annotations

from covr.graph import catalog
from covr.graph.store import GraphStore
from covr.scene.model import SceneGraph
from covr.scene.records import from_store_record


def get_scene_graph(store: GraphStore, image_id: str) -> SceneGraph | None:
    """The scene graph stored under ``Image.id = image_id`` (``gqa:2370799``), or ``None``."""
    rows = store.read(catalog.get("match/scene_graph"), {"image_id": image_id})
    if not rows:
        return None
    return from_store_record(rows[0])
