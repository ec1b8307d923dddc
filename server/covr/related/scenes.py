"""Stored scene graphs by image id, read in batches and cached per store generation.

Why a module of its own: the presence filter reads every candidate distractor's scene graph,
the question engine reads the images it shows, and the service reads source images; all of
them read through one :class:`SceneReader`, owned by the lookup
(:class:`covr.related.lookup.RelatedLookup`), which clears it when it sees a new store
generation. It is independent of how a lookup searches, so it does not live in the lookup.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from covr.cache import LRU
from covr.graph import catalog
from covr.graph.store import GraphStore
from covr.related.errors import RelatedError, UnknownImage
from covr.scene.model import SceneGraph
from covr.scene.records import from_store_record, view_from_store_record

__all__ = ["SceneReader"]


class SceneReader:
    """Scene graphs by image id from the store, cached until :meth:`clear`.

    Why here, in one place: the presence filter reads every candidate distractor's scene graph,
    the question engine reads the images it shows, and the service reads source images; one
    read per image was ~80 % of a cold lookup (issue 7's load test). Reading the ones not
    cached in one statement per ``COVR_RELATED_SCENE_BATCH`` ids, and keeping them
    (``COVR_RELATED_CACHE_SCENES``) until the owner (:class:`RelatedLookup`) sees a new store
    generation and calls :meth:`clear`, serves all of them.
    """

    def __init__(self, store: GraphStore, *, cache_size: int, batch: int) -> None:
        self.store = store
        self.batch = batch
        self._cache: LRU[str, SceneGraph] = LRU(cache_size)
        self._views: LRU[str, SceneGraph] = LRU(cache_size)

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
        # the batched form of match/scene_graph: same row shape, one row per image present
        return self._read_through(
            image_ids, self._cache.get, self._cache, "match/scene_graphs", from_store_record
        )

    def views(self, image_ids: Sequence[str]) -> dict[str, SceneGraph]:
        """What the presence model reads of these images (absent ids left out): a cached whole
        scene graph, else a partial one (:func:`covr.scene.records.view_from_store_record`),
        kept in a cache of its own so that it is never served as a scene graph.

        Why: at 1x GQA the presence filter judges candidates spread over the whole store, so
        nearly every one is a first read, and reading only the fields its features use halves
        the statement's cost (docs/scale.md, "Cost growth")."""

        def known(image_id: str) -> SceneGraph | None:
            return self._cache.get(image_id) or self._views.get(image_id)

        return self._read_through(
            image_ids, known, self._views, "match/scene_views", view_from_store_record
        )

    def _read_through(
        self,
        image_ids: Sequence[str],
        known: Callable[[str], SceneGraph | None],
        keep: LRU[str, SceneGraph],
        statement: str,
        convert: Callable[[Mapping[str, Any]], SceneGraph],
    ) -> dict[str, SceneGraph]:
        """``image_ids`` (duplicates once, absent ones left out, in request order, not the
        store's): the ones ``known`` has, the rest read with ``statement`` (``$ids``, one
        statement per ``COVR_RELATED_SCENE_BATCH`` ids) and kept in ``keep``."""
        found: dict[str, SceneGraph] = {}
        missing: list[str] = []
        wanted = list(dict.fromkeys(image_ids))
        for image_id in wanted:
            hit = known(image_id)
            if hit is None:
                missing.append(image_id)
            else:
                found[image_id] = hit
        for start in range(0, len(missing), self.batch):
            chunk = missing[start : start + self.batch]
            for row in self.store.read(catalog.get(statement), {"ids": chunk}):
                graph = convert(row)
                keep.put(graph.image_id, graph)
                found[graph.image_id] = graph
        return {i: found[i] for i in wanted if i in found}

    def clear(self) -> None:
        self._cache.clear()
        self._views.clear()
