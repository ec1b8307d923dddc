"""The in-memory related-images provider: the same answers as the store, from scene graphs in RAM.

Why: batch generation from dataset files (``covr generate --in-memory``) must not need a graph
store, and it is fast enough for the throughput goal. It implements
:class:`~covr.related.api.RelatedProvider` over :class:`~covr.related.matcher.SceneIndex`.

The in-memory source never scans every image. For positives it intersects the name postings of
``g`` (smallest first) and verifies candidates in a seeded order until ``limit`` are found. For
distractors it walks the *edit patterns* (every set of at most ``max_distance`` positions): the
names at the other positions must all be present, which gives a candidate list; candidates are
verified in a seeded order with the reference matcher itself (restricted to those images and to
the pattern's size), so each
result is exactly a reference distractor, and verification stops when every pattern has
``per_signature`` hits or ``max_checks`` images were verified. The sample is reproducible: it
depends only on the data, ``g`` and the seed (never on set or dict iteration order).
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator, Sequence
from itertools import combinations
from typing import Any

from covr.cache import LRU
from covr.related.api import RelatedError, RelatedImage, RelatedRequest
from covr.related.exclusivity import Exclusivity, default_exclusivity
from covr.related.matcher import SceneIndex, distractors
from covr.related.matcher import positives as matcher_positives
from covr.related.sampling import filtered_order, seeded_order, stable_seed
from covr.scene.edits import NodeType, name_at, positions, signature, signature_sort_key
from covr.scene.model import SceneGraph
from covr.scene.subgraph import Subgraph


class _Restricted(SceneIndex):
    """A view of a :class:`SceneIndex` whose candidates are a given batch of images."""

    def __init__(self, base: SceneIndex, batch: Sequence[str]) -> None:  # no super(): shares data
        self.scenes = base.scenes
        self.postings = base.postings
        self._batch = list(batch)

    def candidates(self, g: Subgraph, max_changes: int) -> list[str]:
        return self._batch


class InMemoryRelated:
    """:class:`RelatedProvider` over scene graphs in memory (see the module docstring)."""

    def __init__(
        self,
        scenes: Iterable[SceneGraph] | SceneIndex,
        exclusivity: Exclusivity | None = None,
        *,
        max_checks: int = 60,
        cache_size: int = 4096,
        max_scan: int = 4096,
        presort: bool = False,
    ) -> None:
        self.index = scenes if isinstance(scenes, SceneIndex) else SceneIndex(scenes)
        self.exclusivity = exclusivity or default_exclusivity()
        self.max_checks = max_checks
        by_split: dict[str, list[str]] = {}
        for image_id, scene in self.index.scenes.items():
            by_split.setdefault(scene.graph.split, []).append(image_id)
        self._split_images = {s: sorted(ids) for s, ids in by_split.items()}
        self._split_sets = {s: frozenset(ids) for s, ids in self._split_images.items()}
        self._sorted_postings: dict[tuple[str, NodeType, str], list[str]] = {}
        self._cache: LRU[tuple[Any, ...], list[Any]] = LRU(cache_size)
        self.max_scan = max_scan
        if presort:
            self.prepare()

    def prepare(self) -> None:
        """Build what lookups otherwise build lazily: called before forking workers, so they
        share it (copy-on-write) instead of each sorting its own postings. Idempotent; results
        do not change. (:func:`~covr.questions.generate.generate` calls it when a provider has
        it.)"""
        for name in sorted(self.index.postings):
            for split in self._split_images:
                self._posting(name, split)

    # -- protocol ------------------------------------------------------------------------------

    def scene(self, image_id: str) -> SceneGraph:
        return self.index.scenes[image_id].graph

    def images(self, split: str) -> list[str]:
        return self._split_images.get(split, [])

    def positives(self, g: Subgraph, split: str, *, limit: int, seed: int) -> list[str]:
        key = ("p", g.key, split, limit, seed, 0, 0)
        cached = self._cache.get(key)
        if cached is None:
            cached = self._cache.put(key, self._positives(g, split, limit=limit, seed=seed))
        return list(cached)

    def distractors(
        self, g: Subgraph, split: str, *, max_distance: int, per_signature: int, seed: int
    ) -> list[RelatedImage]:
        key = ("d", g.key, split, max_distance, seed, per_signature, self.max_checks)
        cached = self._cache.get(key)
        if cached is None:
            found = self._distractors(
                g, split, max_distance=max_distance, per_signature=per_signature, seed=seed
            )
            cached = self._cache.put(key, found)
        return list(cached)

    def related(self, request: RelatedRequest) -> tuple[list[str], list[RelatedImage]]:
        g, split, seed = request.subgraph, _split_of(request), request.seed
        distractors = self.distractors(
            g,
            split,
            max_distance=request.max_distance,
            per_signature=_count_of("per_signature", request.per_signature_cap),
            seed=seed,
        )
        if request.positives_if_distractors and not distractors:
            return [], []  # the caller drops it: no positive search (each has its own stream)
        limit = _count_of("positives_limit", request.positives_cap)
        return self.positives(g, split, limit=limit, seed=seed), distractors

    def refresh(self) -> None:
        """Nothing to check: the scenes are held in memory."""

    def unannotated(self, name: str, image_id: str) -> bool:
        """No presence model on the word lists' path: an unannotated object is absent."""
        return False

    def _positives(self, g: Subgraph, split: str, *, limit: int, seed: int) -> list[str]:
        names = [(p.kind, name_at(g, p)) for p in positions(g)]
        rng = random.Random(stable_seed(seed, "positives", g.key, split))
        candidates = self._candidates(names, split, rng)
        found: list[str] = []
        for image_id in candidates:
            # The index's prepared scene (``contains`` would prepare the scene graph again).
            if matcher_positives(_Restricted(self.index, (image_id,)), g):
                found.append(image_id)
                if len(found) >= limit:
                    break
        return sorted(found)

    def _distractors(
        self, g: Subgraph, split: str, *, max_distance: int, per_signature: int, seed: int
    ) -> list[RelatedImage]:
        rng = random.Random(stable_seed(seed, "distractors", g.key, split))
        all_positions = list(positions(g))
        patterns = [
            frozenset(c)
            for size in range(1, max_distance + 1)
            for c in combinations(all_positions, size)
        ]
        hits: dict[str, list[RelatedImage]] = {}
        checked: set[str] = set()
        budget = self.max_checks
        for pattern in patterns:
            if budget <= 0:
                break
            own = signature(pattern)
            if len(hits.get(own, ())) >= per_signature:
                continue  # already filled by images verified for earlier patterns
            fixed = [(p.kind, name_at(g, p)) for p in all_positions if p not in pattern]
            spent = 0
            order = self._candidates(fixed, split, rng)
            # Verify in small batches and stop as soon as this pattern's signature is full: with
            # plentiful data (1x) most patterns fill from the first few candidates.
            while budget > 0 and spent < per_signature * 3:
                batch: list[str] = []
                for image_id in order:
                    if image_id in checked:
                        continue
                    checked.add(image_id)
                    batch.append(image_id)
                    if len(batch) >= min(per_signature, budget):
                        break
                if not batch:
                    break
                spent += len(batch)
                budget -= len(batch)
                view = _Restricted(self.index, sorted(batch))
                for d in distractors(view, g, self.exclusivity, len(pattern)):
                    bucket = hits.setdefault(d.signature, [])
                    if len(bucket) < per_signature:
                        bucket.append(RelatedImage(d.image_id, d.signature, d.subgraph))
                if len(hits.get(own, ())) >= per_signature:
                    break
        return [r for sig in sorted(hits, key=signature_sort_key) for r in hits[sig]]

    # -- helpers -------------------------------------------------------------------------------

    def _posting(self, name: tuple[NodeType, str], split: str) -> list[str]:
        key = (split, name[0], name[1])
        cached = self._sorted_postings.get(key)
        if cached is None:
            in_split = self._split_sets.get(split, frozenset())
            raw = self.index.postings.get(name, set())
            cached = sorted(i for i in raw if i in in_split)
            self._sorted_postings[key] = cached
        return cached

    def _candidates(
        self, names: Sequence[tuple[NodeType, str]], split: str, rng: random.Random
    ) -> Iterator[str]:
        """Images of ``split`` holding every name, in a seeded order, drawn lazily.

        Draws from the rarest name's sorted posting and keeps the images that also hold the other
        names, so a few candidates cost a few set lookups instead of a full intersection (at 1x
        the postings of common names have tens of thousands of images); at most
        ``max_scan`` images of that posting are looked at.
        """
        if not names:
            yield from seeded_order(self.images(split), rng)
            return
        postings = self.index.postings
        # Ties in posting length are broken by the name, not by set order (hash seeds).
        unique = sorted(set(names), key=lambda n: (len(postings.get(n, ())), n))
        first = self._posting(unique[0], split)
        rest = [postings.get(n, set()) for n in unique[1:]]
        yield from filtered_order(first, rest, rng, self.max_scan)


def _split_of(request: RelatedRequest) -> str:
    """The request's split: the word lists' path searches one split at a time."""
    if request.split is None:
        raise RelatedError("split", "the in-memory lookup needs a split")
    return request.split


def _count_of(name: str, value: int | None) -> int:
    """A resolved cap: the in-memory lookup takes a number, not "no cap"."""
    if value is None:
        raise RelatedError(name, "the in-memory lookup needs a number")
    return value
