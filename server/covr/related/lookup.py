"""Related images in the graph store: the Cypher-backed lookup's public entry point.

What a caller gets is defined by the in-memory matcher (:mod:`covr.related.matcher`,
docs/subgraphs.md §8); this class computes the same thing with parameterized Cypher, fast, and
with seeded sampling. It owns what outlives one request: the store generation, the name tables
(:mod:`covr.related.names`), the scene-graph reader (:class:`SceneReader`, here) and a result
cache; one request's round loop is :class:`covr.related.search.Search`.

Results are cached per (subgraph key, split, arguments, model version) and dropped when the
store's name-statistics generation changes (every completed load bumps it).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from covr.cache import LRU
from covr.graph import catalog, name_stats
from covr.graph.store import GraphStore
from covr.related.api import (
    DEFAULT,
    Default,
    NamePresence,
    PresenceFilter,
    RelatedError,
    RelatedResult,
    StatsMissing,
    UnknownImage,
    UnknownSubgraph,
    as_subgraph,
    check_args,
    enumeration_options,
    no_presence_filter,
)
from covr.related.exclusivity import Exclusivity, default_exclusivity
from covr.related.matcher import contains
from covr.related.names import Concretes, NameTables
from covr.related.search import Request, Search
from covr.scene.enumerate import enumerate_subgraphs
from covr.scene.model import SceneGraph
from covr.scene.records import from_store_record, view_from_store_record
from covr.scene.subgraph import Subgraph
from covr.settings import Settings, get_settings

__all__ = [
    "DEFAULT",
    "Default",
    "RelatedError",
    "RelatedLookup",
    "RelatedResult",
    "SceneReader",
    "StatsMissing",
    "UnknownImage",
    "UnknownSubgraph",
    "enumeration_options",
]


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


class _SharedLock:
    """Lookups run concurrently (their time is mostly spent waiting for the store, which serves
    several queries at once); dropping the caches after a load runs alone, so that no lookup
    mixes image indices of two generations."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._readers = 0
        self._writer = False

    @contextmanager
    def shared(self) -> Iterator[None]:
        with self._cond:
            while self._writer:
                self._cond.wait()
            self._readers += 1
        try:
            yield
        finally:
            with self._cond:
                self._readers -= 1
                if not self._readers:
                    self._cond.notify_all()

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        with self._cond:
            while self._writer or self._readers:
                self._cond.wait()
            self._writer = True
        try:
            yield
        finally:
            with self._cond:
                self._writer = False
                self._cond.notify_all()


class RelatedLookup:
    """Positives and distractors of subgraphs, computed in the graph store (docs/related.md)."""

    def __init__(
        self,
        store: GraphStore,
        *,
        exclusivity: Exclusivity | None = None,
        presence_filter: PresenceFilter = no_presence_filter,
        model_version: str = "resource",
        settings: Settings | None = None,
    ) -> None:
        self.store = store
        self.presence_filter = presence_filter
        self.name_presence: NamePresence | None = None
        """The presence model on one object name (``None``: no model); the question engine asks
        it of every image an answer depends on (:meth:`StoreRelated.unannotated`)."""
        self.model_version = model_version
        self.settings = settings or get_settings()
        self.options = enumeration_options(self.settings)
        self._lock = _SharedLock()
        self._generation: str | None = None
        self.names = NameTables(store, exclusivity or default_exclusivity(), self.settings)
        self.scenes = SceneReader(
            store,
            cache_size=self.settings.related_cache_scenes,
            batch=self.settings.related_scene_batch,
        )
        self._concretes = Concretes(self.settings.related_cache_concretes)
        self._results: LRU[tuple[Any, ...], RelatedResult] = LRU(
            self.settings.related_cache_results
        )

    @property
    def exclusivity(self) -> Exclusivity:
        """The model deciding which substitutions make distractors (settable: the decisions
        cached so far stay until :meth:`clear_cache`)."""
        return self.names.exclusivity

    @exclusivity.setter
    def exclusivity(self, model: Exclusivity) -> None:
        self.names.exclusivity = model

    # -- public API ------------------------------------------------------------------------------

    def positives(
        self,
        g: Subgraph | str,
        *,
        split: str | None = None,
        limit: int | None = None,
        seed: int = 0,
        offset: int = 0,
    ) -> list[str]:
        """Image ids that contain ``g``, in the seeded order (at most ``limit``; None = all)."""
        result = self.related(
            g,
            split=split,
            max_distance=0,
            per_signature=None,
            positives_limit=limit,
            seed=seed,
            offset=offset,
        )
        return list(result.positives)

    def related(
        self,
        g: Subgraph | str,
        *,
        split: str | None = None,
        max_distance: int = 2,
        per_signature: int | Default | None = DEFAULT,
        limit: int | None = None,
        positives_limit: int | Default | None = DEFAULT,
        seed: int = 0,
        offset: int = 0,
        presence: bool = True,
        refresh: bool = True,
        positives_if_distractors: bool = False,
    ) -> RelatedResult:
        """Positives and distractors of ``g`` (see docs/related.md §1 for every argument).

        ``refresh=False`` skips the store-generation query when this lookup has seen one
        already: for a caller that called :meth:`refresh` at the start of its unit of work
        (the question engine, once per source image, instead of once per subgraph).
        ``positives_if_distractors=True`` is for a caller that drops a result without
        distractors: the positives may then be left short when no distractor is found."""
        subgraph = as_subgraph(g)
        per_signature = self._resolve(per_signature, self.settings.related_per_signature)
        positives_limit = self._resolve(positives_limit, self.settings.related_positives)
        check_args(max_distance, per_signature, limit, positives_limit, seed, offset, split)
        if refresh or self._generation is None:
            self._refresh_generation()
        with self._lock.shared():
            key = (
                subgraph.key,
                split,
                max_distance,
                per_signature,
                limit,
                positives_limit,
                seed,
                offset,
                presence,
                positives_if_distractors,
                self.model_version,
            )
            cached = self._results.get(key)
            if cached is not None:
                return cached
            request = Request(
                subgraph,
                split,
                max_distance,
                per_signature,
                limit,
                positives_limit,
                seed,
                offset,
                presence,
                positives_if_distractors,
            )
            search = Search(
                self.store,
                self.names,
                self._concretes,
                self.presence_filter,
                self.settings,
                request,
            )
            return self._results.put(key, search.run())

    def scene_graph(self, image_id: str) -> SceneGraph:
        """The stored scene graph of ``image_id``; :class:`UnknownImage` when absent."""
        return self.scenes.one(image_id)

    def scene_graphs(self, image_ids: Sequence[str]) -> dict[str, SceneGraph]:
        """Stored scene graphs by id (absent ids are left out), as of the store generation this
        lookup saw last (:class:`SceneReader`: batched, cached).

        No generation query here: inside a lookup the generation was just checked, and the
        question engine reads many scenes per request; call :meth:`refresh` first for a view
        no older than the store's current generation.
        """
        with self._lock.shared():
            return self.scenes.many(image_ids)

    def presence_views(self, image_ids: Sequence[str]) -> dict[str, SceneGraph]:
        """What the presence model reads of these images (:meth:`SceneReader.views`), as of the
        store generation this lookup saw last (the presence filter runs inside a lookup, which
        has just checked it)."""
        with self._lock.shared():
            return self.scenes.views(image_ids)

    def refresh(self) -> None:
        """Check the store's generation now (one query) and drop every cache if it changed.

        Lookups do this themselves; callers that read scene graphs before any lookup (a
        request that starts from an image) call it once first.
        """
        self._refresh_generation()

    def image_ids(self, split: str | None = None) -> list[str]:
        """Ids of the stored images of ``split`` (every image when None), in Python's string
        order: the image table the lookups draw from (one cheap query per store generation),
        so ``covr generate`` lists its source images without reading their scene graphs."""
        self._refresh_generation()
        with self._lock.shared():
            table = self.names.table()
            code = table.split_codes.get(split) if split is not None else None
            if split is not None and code is None:
                return []
            return [i for i, s in zip(table.ids, table.splits, strict=True) if code in (None, s)]

    def splits(self) -> list[str]:
        """The split names of the stored images, sorted (from the same image table)."""
        self._refresh_generation()
        with self._lock.shared():
            return sorted(self.names.table().split_codes)

    def subgraphs_of_image(self, image_id: str) -> list[Subgraph]:
        """Every subgraph of the stored image (enumeration options from settings)."""
        return enumerate_subgraphs(self.scene_graph(image_id), self.options)

    def for_image(
        self,
        image_id: str,
        subgraph_key: str | None = None,
        *,
        max_subgraphs: int | None = None,
        split: str | None = None,
        max_distance: int = 2,
        per_signature: int | Default | None = DEFAULT,
        limit: int | None = None,
        positives_limit: int | Default | None = DEFAULT,
        seed: int = 0,
        offset: int = 0,
        presence: bool = True,
    ) -> list[RelatedResult]:
        """Related images of one subgraph of the image (``subgraph_key``) or of all of them.

        The source image is always the first positive of each result (when it is in ``split``).
        """
        positives_limit = self._resolve(positives_limit, self.settings.related_positives)
        if max_subgraphs is not None and max_subgraphs < 1:
            raise RelatedError("max_subgraphs", "must be >= 1")
        scene = self.scene_graph(image_id)
        if subgraph_key is not None:
            g = Subgraph.from_key(subgraph_key)
            if not contains(scene, g):
                raise UnknownSubgraph(
                    "subgraph_key", f"{subgraph_key!r} is not a subgraph of image {image_id!r}"
                )
            targets = [g]
        else:
            targets = enumerate_subgraphs(scene, self.options)
            if max_subgraphs is not None:
                targets = targets[:max_subgraphs]
        out: list[RelatedResult] = []
        for g in targets:
            result = self.related(
                g,
                split=split,
                max_distance=max_distance,
                per_signature=per_signature,
                limit=limit,
                positives_limit=positives_limit,
                seed=seed,
                offset=offset,
                presence=presence,
            )
            if split is None or scene.split == split:
                rest = [p for p in result.positives if p != image_id]
                first = (image_id, *rest)
                if positives_limit is not None:
                    first = first[:positives_limit]
                result = RelatedResult(
                    result.query,
                    result.split,
                    result.seed,
                    first,
                    result.distractors,
                    result.offset,
                    result.next_offset,
                )
            out.append(result)
        return out

    @staticmethod
    def _resolve(value: int | Default | None, default: int) -> int | None:
        return default if isinstance(value, Default) else value

    def warm(self) -> None:
        """Read the image table and the vocabularies now (a service calls this at start)."""
        self._refresh_generation()
        with self._lock.shared():
            self.names.table()
            for node_type in ("object", "attribute", "relation", "relmod"):
                self.names.vocabulary(node_type, None)

    def clear_cache(self) -> None:
        """Forget every cached result, image list and vocabulary."""
        with self._lock.exclusive():
            self._reset(None)
            self.names.reset(decisions=True)

    # -- state -----------------------------------------------------------------------------------

    @property
    def generation(self) -> str | None:
        """The store generation the caches hold (None before the first check)."""
        return self._generation

    def _reset(self, generation: str | None) -> None:
        self._generation = generation
        self.names.reset()
        self._results.clear()
        self.scenes.clear()

    def _refresh_generation(self) -> None:
        current = name_stats.generation(self.store)
        if current is None and self.store.read(catalog.get("load/any_image")):
            raise StatsMissing(
                "store",
                "the store holds images but no name statistics; they are written at the "
                "end of every load (re-run the load, or call covr.graph.name_stats.refresh)",
            )
        if current != self._generation or current is None:
            with self._lock.exclusive():  # waits for running lookups of the old generation
                self._reset(current)
