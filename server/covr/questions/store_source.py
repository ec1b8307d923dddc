"""The question engine's :class:`~covr.questions.related_source.RelatedProvider` over the Cypher
lookup (``covr.related.lookup.RelatedLookup``, docs/related.md).

Why an adapter and not a second code path: generation only needs scene graphs, positives and
distractors with their signatures and concrete subgraphs; the lookup already returns exactly those
(and agrees with the reference matcher, its congruence tests say so), so the engine runs unchanged
against the store. Scene graphs are read once and cached (the same images are shown again and
again). Worker processes must each build their own lookup after the fork (no shared connection).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence

from covr.questions.related_source import RelatedImage
from covr.related.lookup import RelatedLookup, UnknownImage
from covr.scene.model import SceneGraph
from covr.scene.subgraph import Subgraph


class StoreRelated:
    """:class:`RelatedProvider` backed by the graph store.

    ``images_by_split`` lists the source images per split (the store has no split listing of its
    own yet; ``covr generate`` reads the split's scene graphs back and passes their ids).
    """

    def __init__(
        self,
        lookup: RelatedLookup,
        images_by_split: dict[str, Sequence[str]] | None = None,
        *,
        cache_size: int = 4096,
    ) -> None:
        self.lookup = lookup
        self._images = {s: sorted(ids) for s, ids in (images_by_split or {}).items()}
        self._scenes: OrderedDict[str, SceneGraph] = OrderedDict()
        self._cache_size = cache_size

    def scene(self, image_id: str) -> SceneGraph:
        cached = self._scenes.get(image_id)
        if cached is not None:
            self._scenes.move_to_end(image_id)
            return cached
        try:
            graph = self.lookup.scene_graph(image_id)
        except UnknownImage:
            raise KeyError(image_id) from None
        self._scenes[image_id] = graph
        if len(self._scenes) > self._cache_size:
            self._scenes.popitem(last=False)
        return graph

    def images(self, split: str) -> list[str]:
        return list(self._images.get(split, []))

    def positives(self, g: Subgraph, split: str, *, limit: int, seed: int) -> list[str]:
        return sorted(self.lookup.positives(g, split=split, limit=limit, seed=seed))

    def distractors(
        self, g: Subgraph, split: str, *, max_distance: int, per_signature: int, seed: int
    ) -> list[RelatedImage]:
        result = self.lookup.related(
            g,
            split=split,
            max_distance=max_distance,
            per_signature=per_signature,
            positives_limit=1,
            seed=seed,
        )
        return [RelatedImage(d.image_id, d.signature, d.subgraph) for d in result.distractors]
