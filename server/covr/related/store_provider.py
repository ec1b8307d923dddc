"""The Cypher-backed related-images provider: :class:`~covr.related.api.RelatedProvider` over the
store lookup (:class:`~covr.related.lookup.RelatedLookup`, docs/related.md).

Why an adapter and not a second code path: generation only needs scene graphs, positives and
distractors with their signatures and concrete subgraphs; the lookup already returns exactly those
(and agrees with the reference matcher, its congruence tests say so), so the engine runs unchanged
against the store. Scene graphs are read once and cached (the same images are shown again and
again) by the lookup's scene reader (:class:`covr.related.scenes.SceneReader`), which the presence
filter fills too (it reads the same distractor images) and which is dropped whenever a lookup sees a new store generation (a load or
an import replaced images): a cache of our own outlived re-imports. Forked worker processes
(``covr generate --workers K``) inherit the warmed lookup and the loaded models; their store
clients reconnect on first use (no shared connection).
"""

from __future__ import annotations

from collections.abc import Sequence

from covr.related.api import RelatedError, RelatedImage, RelatedResult, contains
from covr.related.barren import BarrenMemo
from covr.related.lookup import RelatedLookup
from covr.related.request import RelatedRequest
from covr.scene.model import SceneGraph
from covr.scene.subgraph import Subgraph


class StoreRelated:
    """:class:`RelatedProvider` backed by the graph store.

    ``images_by_split`` lists the source images per split (the store has no split listing of its
    own yet; ``covr generate`` reads the split's scene graphs back and passes their ids).
    Scene graphs come from the lookup's cache (size ``COVR_RELATED_CACHE_SCENES``).
    """

    def __init__(
        self,
        lookup: RelatedLookup,
        images_by_split: dict[str, Sequence[str]] | None = None,
    ) -> None:
        self.lookup = lookup
        self._images = {s: sorted(ids) for s, ids in (images_by_split or {}).items()}
        self._barren = BarrenMemo()
        self._unannotated: dict[tuple[str, str], bool] = {}

    def scene(self, image_id: str) -> SceneGraph:
        """The stored scene graph (``KeyError`` when absent), as of the generation the lookup saw
        last: no store query on a cache hit. Call :meth:`refresh` at the start of a request to
        see changes another writer made since the last lookup."""
        try:
            found = self.lookup.scene_graphs([image_id])
        except RelatedError as exc:  # not a usable id (empty, not a string)
            raise KeyError(image_id) from exc
        graph = found.get(image_id)
        if graph is None:
            raise KeyError(image_id)
        return graph

    def prepare(self) -> None:
        """Read the image table and the vocabularies now: called before forking workers
        (:func:`~covr.questions.generate.iter_examples`), so they inherit them instead of each
        reading its own. The models are already loaded (the lookup was built with them); each
        worker's store client opens its own connection on first use (redis-py and the Neo4j
        driver notice the fork), so no socket is shared. The exclusivity model's per-term work
        for the store's vocabulary is done here too (WordNet, when a name is outside the model's
        table, is opened once here and its answers kept for the next process)."""
        self.lookup.warm()
        prime = getattr(self.lookup.exclusivity, "prime", None)
        if callable(prime):
            vocabulary = self.lookup.names.vocabulary
            prime(
                [
                    (kind, name)
                    for kind in ("object", "attribute", "relation", "relmod")
                    for name in sorted(vocabulary(kind, None))
                ]
            )

    def remember(self) -> None:
        """Keep what this process learned for the next one: the exclusivity model's pair scores
        (:mod:`covr.models.pair_memo`; ``covr generate`` calls it at the end of a run)."""
        remember = getattr(self.lookup.exclusivity, "remember_pairs", None)
        if callable(remember) and self.lookup.learned is not None:
            remember(self.lookup.learned)

    def unannotated(self, name: str, image_id: str) -> bool:
        """The lookup's presence model on ``name`` in the image (``False`` without a model or
        for an unknown image); remembered per (name, image) for the run."""
        judge = self.lookup.name_presence
        if judge is None:
            return False
        key = (name, image_id)
        found = self._unannotated.get(key)
        if found is None:
            try:
                found = judge(name, self.scene(image_id))
            except KeyError:
                found = False
            self._unannotated[key] = found
        return found

    def refresh(self) -> None:
        """Check the store generation once (one query); drops cached scene graphs if it moved,
        and starts a new unit of work for the lookups answered without the store."""
        self._barren.reset()
        self.lookup.refresh()

    def images(self, split: str) -> list[str]:
        return list(self._images.get(split, []))

    def positives(self, g: Subgraph, split: str, *, limit: int, seed: int) -> list[str]:
        return sorted(self.lookup.positives(g, split=split, limit=limit, seed=seed))

    def distractors(
        self, g: Subgraph, split: str, *, max_distance: int, per_signature: int, seed: int
    ) -> list[RelatedImage]:
        request = RelatedRequest(
            g,
            split=split,
            max_distance=max_distance,
            per_signature=per_signature,
            positives_limit=1,
            seed=seed,
        )
        return _shown(self.lookup.find(request))

    def related(self, request: RelatedRequest) -> tuple[list[str], list[RelatedImage]]:
        """One search for both: the positives are the search's own positive state, sampled
        from the same seeded stream as a positives-only lookup, so the answers equal those of
        :meth:`positives` and :meth:`distractors` (the question tests compare the outputs).
        The store generation was checked by :meth:`refresh` at the start of the image.

        A subgraph that contains one whose lookup verified every candidate and matched at most
        one image is answered from that lookup (:mod:`covr.related.barren`): the same answer,
        without the store."""
        g, split, max_distance = request.subgraph, request.split, request.max_distance
        generation = self.lookup.generation
        known = self._barren.answer(g, split, max_distance, lambda i: self._holds(i, g), generation)
        if known is not None:  # every positive is known, and there is no distractor
            return sorted(known), []
        result = self.lookup.find(request, refresh=False)
        self._barren.note(g, split, max_distance, result.reached, generation)
        return sorted(result.positives), _shown(result)

    def _holds(self, image_id: str, g: Subgraph) -> bool:
        try:
            return contains(self.scene(image_id), g)
        except KeyError:
            return False


def _shown(result: RelatedResult) -> list[RelatedImage]:
    """The distractors as the engine takes them: image, signature, one concrete ``g'``."""
    return [RelatedImage(d.image_id, d.signature, d.subgraph) for d in result.distractors]
