"""Related images in the graph store: the Cypher-backed lookup's public entry point.

What a caller gets is defined by the in-memory matcher (:mod:`covr.related.matcher`,
docs/subgraphs.md §8); this class computes the same thing with parameterized Cypher, fast, and
with seeded sampling. It owns what outlives one request: the store generation, the name tables
(:mod:`covr.related.names`), the scene-graph reader (:class:`covr.related.scenes.SceneReader`)
and a result cache; one request's round loop is :class:`covr.related.search.Search`.

Results are cached per request (:class:`covr.related.request.RelatedRequest`, resolved) and
model version, and dropped when the store's name-statistics generation changes (every completed
load bumps it).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
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
    enumeration_options,
    no_presence_filter,
)
from covr.related.config import RelatedSettings
from covr.related.exclusivity import Exclusivity, default_exclusivity
from covr.related.matcher import contains
from covr.related.names import Concretes, NameTables
from covr.related.request import RelatedRequest
from covr.related.scenes import SceneReader
from covr.related.search import Search
from covr.scene.enumerate import enumerate_subgraphs
from covr.scene.model import SceneGraph
from covr.scene.subgraph import Subgraph

__all__ = [
    "DEFAULT",
    "Default",
    "RelatedError",
    "RelatedLookup",
    "RelatedRequest",
    "RelatedResult",
    "StatsMissing",
    "UnknownImage",
    "UnknownSubgraph",
    "enumeration_options",
]


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
        settings: RelatedSettings,
    ) -> None:
        self.store = store
        self.presence_filter = presence_filter
        self.name_presence: NamePresence | None = None
        """The presence model on one object name (``None``: no model); the question engine asks
        it of every image an answer depends on (:meth:`StoreRelated.unannotated`)."""
        self.model_version = model_version
        self.settings = settings
        self.learned: Path | None = None
        """Where the exclusivity model keeps what this process learned for the next (set by
        :class:`covr.related.filters.RelatedLookups` with the model; ``None``: nothing kept)."""
        self.options = enumeration_options(self.settings)
        self._lock = _SharedLock()
        self._generation: str | None = None
        exclusivity = exclusivity or default_exclusivity(settings.related_cache_names)
        self.names = NameTables(store, exclusivity, self.settings)
        self.scenes = SceneReader(
            store,
            cache_size=self.settings.related_cache_scenes,
            batch=self.settings.related_scene_batch,
        )
        self._concretes = Concretes(self.settings.related_cache_concretes)
        self._results: LRU[tuple[RelatedRequest, str], RelatedResult] = LRU(
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
        request = RelatedRequest(
            g,
            split=split,
            max_distance=0,
            per_signature=None,
            positives_limit=limit,
            seed=seed,
            offset=offset,
        )
        return list(self.find(request).positives)

    def related(self, g: Subgraph | str, *, refresh: bool = True, **options: Any) -> RelatedResult:
        """Positives and distractors of ``g``: :meth:`find` of ``RelatedRequest(g, **options)``
        (the options are its fields, docs/related.md §1; an unknown one is a ``TypeError``)."""
        return self.find(RelatedRequest(g, **options), refresh=refresh)

    def find(self, request: RelatedRequest, *, refresh: bool = True) -> RelatedResult:
        """The result of ``request`` (cached per resolved request and model version).

        ``refresh=False`` skips the store-generation query when this lookup has seen one
        already: for a caller that called :meth:`refresh` at the start of its unit of work
        (the question engine, once per source image, instead of once per subgraph)."""
        if request.g is None:  # before the store is read
            raise RelatedError("g", "the request names no subgraph")
        request = request.resolved(self.settings)
        if refresh or self._generation is None:
            self._refresh_generation()
        with self._lock.shared():
            key = (request, self.model_version)
            cached = self._results.get(key)
            if cached is not None:
                return cached
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
        request: RelatedRequest | None = None,
        **options: Any,
    ) -> list[RelatedResult]:
        """Related images of one subgraph of the image (``subgraph_key``) or of all of them,
        for ``request`` (its subgraph ignored) or ``RelatedRequest(**options)``.

        The source image is always the first positive of each result (when it is in ``split``).
        """
        if request is None:
            request = RelatedRequest(**options)
        elif options:
            raise TypeError(f"give request= or options, not both: {sorted(options)}")
        request = request.resolved(self.settings)
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
        limit = request.positives_cap
        out: list[RelatedResult] = []
        for g in targets:
            result = self.find(request.about(g))
            if request.split is None or scene.split == request.split:
                rest = [p for p in result.positives if p != image_id]
                first = (image_id, *rest)
                if limit is not None:
                    first = first[:limit]
                result = replace(result, positives=first, reached=None)
            out.append(result)
        return out

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
