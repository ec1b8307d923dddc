"""Stored scene graphs, read in one place and cached for one store generation.

Why here: the presence filter reads every candidate distractor's scene graph, the question
engine reads the images it shows, and the service reads source images; one read per image was
~80 % of a cold lookup (issue 7's load test). Reading the ones not cached in one statement per
``COVR_RELATED_SCENE_BATCH`` ids, and keeping them (``COVR_RELATED_CACHE_SCENES``) until the
owner sees a new store generation, serves all of them. The owner
(:class:`~covr.related.lookup.RelatedLookup`) checks the generation and calls :meth:`clear`.
"""

from __future__ import annotations

from collections.abc import Sequence

from covr.cache import LRU
from covr.graph import catalog
from covr.graph.store import GraphStore
from covr.related.errors import RelatedError, UnknownImage
from covr.scene.model import SceneGraph
from covr.scene.records import from_store_record


class SceneReader:
    """Scene graphs by image id from the store, cached until :meth:`clear`."""

    def __init__(self, store: GraphStore, *, cache_size: int, batch: int) -> None:
        self.store = store
        self.batch = batch
        self._cache: LRU[str, SceneGraph] = LRU(cache_size)

    def one(self, image_id: str) -> SceneGraph:
        """The stored scene graph of ``image_id`` read now; :class:`UnknownImage` when absent."""
        if not isinstance(image_id, str) or not image_id.strip():
            raise UnknownImage("image_id", f"must be a non-empty string, got {image_id!r}")
        graph = self.find(image_id)
        if graph is None:
            raise UnknownImage("image_id", f"no image {image_id!r} in the store")
        return graph

    def find(self, image_id: str) -> SceneGraph | None:
        """The stored scene graph of ``image_id`` read now (not from the cache: a caller that
        names one image wants what the store holds, even before a lookup saw a new generation),
        or None."""
        rows = self.store.read(catalog.get("match/scene_graph"), {"image_id": image_id})
        return from_store_record(rows[0]) if rows else None

    def many(self, image_ids: Sequence[str]) -> dict[str, SceneGraph]:
        """Scene graphs by id in request order (absent ids are left out)."""
        if isinstance(image_ids, str) or not isinstance(image_ids, Sequence):
            raise RelatedError(
                "image_ids", f"must be a sequence of image ids, got {type(image_ids).__name__}"
            )
        for n, image_id in enumerate(image_ids):
            if not isinstance(image_id, str) or not image_id.strip():
                raise RelatedError(
                    f"image_ids[{n}]", f"must be a non-empty string, got {image_id!r}"
                )
        return self.cached(image_ids)

    def cached(self, image_ids: Sequence[str]) -> dict[str, SceneGraph]:
        """:meth:`many` without argument checks (ids the lookup produced itself)."""
        found: dict[str, SceneGraph] = {}
        missing: list[str] = []
        wanted = list(dict.fromkeys(image_ids))
        for image_id in wanted:
            hit = self._cache.get(image_id)
            if hit is None:
                missing.append(image_id)
            else:
                found[image_id] = hit
        for start in range(0, len(missing), self.batch):
            chunk = missing[start : start + self.batch]
            # the batched form of match/scene_graph: same row shape, one row per image present
            for row in self.store.read(catalog.get("match/scene_graphs"), {"ids": chunk}):
                graph = from_store_record(row)
                self._cache.put(graph.image_id, graph)
                found[graph.image_id] = graph
        return {i: found[i] for i in wanted if i in found}  # request order, not the store's

    def clear(self) -> None:
        self._cache.clear()
