"""Where the question engine gets related images from: a small protocol and an in-memory source.

Why a protocol: the Cypher-backed lookup (``covr.related``, another room's work) and this
in-memory source over :class:`~covr.related.reference.SceneIndex` must be interchangeable, so
batch generation can run either against the store or from scene graphs held in memory (fast; the
throughput goal needs it).

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

import hashlib
import random
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any, Protocol, runtime_checkable

from covr.related.exclusivity import Exclusivity, default_exclusivity
from covr.related.reference import SceneIndex, distractors
from covr.related.reference import positives as reference_positives
from covr.scene.edits import (
    NodeType,
    name_at,
    parse_position,
    positions,
    signature,
    signature_sort_key,
)
from covr.scene.model import SceneGraph
from covr.scene.subgraph import Subgraph


@dataclass(frozen=True, slots=True)
class RelatedImage:
    """One related image: ``signature`` is ``""`` for a positive; ``subgraph`` is the concrete
    subgraph found in it (``g`` itself for a positive)."""

    image_id: str
    signature: str
    subgraph: Subgraph


@runtime_checkable
class RelatedProvider(Protocol):
    """Related-image lookup as the question engine needs it (implemented in memory and by the
    Cypher lookup through an adapter)."""

    def scene(self, image_id: str) -> SceneGraph:
        """The scene graph of an image (raise ``KeyError`` if unknown)."""
        ...

    def images(self, split: str) -> list[str]:
        """Sorted ids of the images of a split."""
        ...

    def positives(self, g: Subgraph, split: str, *, limit: int, seed: int) -> list[str]:
        """Up to ``limit`` images of ``split`` that contain ``g``, a seeded sample, sorted."""
        ...

    def distractors(
        self, g: Subgraph, split: str, *, max_distance: int, per_signature: int, seed: int
    ) -> list[RelatedImage]:
        """Distractor images (DESIGN §5), at most ``per_signature`` per edit signature."""
        ...


def stable_seed(*parts: object) -> int:
    """A 64-bit seed from text parts (hash-seed independent, unlike ``hash``)."""
    digest = hashlib.blake2b("\x1f".join(map(str, parts)).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big")


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
        self._cache = _Lru(cache_size)
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

    def _positives(self, g: Subgraph, split: str, *, limit: int, seed: int) -> list[str]:
        names = [(parse_position(p)[0], name_at(g, p)) for p in positions(g)]
        rng = random.Random(stable_seed(seed, "positives", g.key, split))
        candidates = self._candidates(names, split, rng)
        found: list[str] = []
        for image_id in candidates:
            # The index's prepared scene (``contains`` would prepare the scene graph again).
            if reference_positives(_Restricted(self.index, (image_id,)), g):
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
            fixed = [
                (parse_position(p)[0], name_at(g, p)) for p in all_positions if p not in pattern
            ]
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
            yield from _seeded_order(self.images(split), rng)
            return
        postings = self.index.postings
        # Ties in posting length are broken by the name, not by set order (hash seeds).
        unique = sorted(set(names), key=lambda n: (len(postings.get(n, ())), n))
        first = self._posting(unique[0], split)
        rest = [postings.get(n, set()) for n in unique[1:]]
        yield from _filtered_order(first, rest, rng, self.max_scan)


class _Lru:
    """A small LRU cache of lookup results (a result depends only on its key: data, ``g``, seed)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._items: OrderedDict[tuple[Any, ...], Any] = OrderedDict()

    def get(self, key: tuple[Any, ...]) -> Any:
        value = self._items.get(key)
        if value is not None:
            self._items.move_to_end(key)
        return value

    def put(self, key: tuple[Any, ...], value: Any) -> Any:
        if self.size > 0:
            self._items[key] = value
            if len(self._items) > self.size:
                self._items.popitem(last=False)
        return value


def _seeded_order(pool: Sequence[str], rng: random.Random) -> Iterable[str]:
    """The pool in a random order drawn lazily (cheap when only a few items are needed)."""
    n = len(pool)
    if n <= 64:
        order = list(pool)
        rng.shuffle(order)
        yield from order
        return
    seen: set[int] = set()
    while len(seen) < n:
        i = rng.randrange(n)
        if i in seen:
            if len(seen) > n // 2:  # dense: finish with a shuffle of the rest
                rest = [j for j in range(n) if j not in seen]
                rng.shuffle(rest)
                for j in rest:
                    yield pool[j]
                return
            continue
        seen.add(i)
        yield pool[i]


def _filtered_order(
    pool: Sequence[str], rest: Sequence[set[str]], rng: random.Random, max_scan: int
) -> Iterator[str]:
    """The items of ``pool`` that are in every set of ``rest``, in the order of
    :func:`_seeded_order` over ``pool``, looking at most ``max_scan`` items.

    The hot loop of the related-images stage: at 1x most lookups look at every item of a pool of
    a few thousand images for a handful of hits. One loop with ``rng.getrandbits`` inlined instead
    of a generator step and a ``random.randrange`` call per draw; it makes exactly the draws of
    ``_seeded_order`` (CPython's ``_randbelow_with_getrandbits``: ``k = n.bit_length()`` bits,
    redrawn while ``>= n``; the same dense fallback and shuffle), so the order and the generator's
    state after every yielded item are the same (a unit test compares them). Drawing the words
    ahead with numpy's MT19937 (same generator) was tried and was slower at 1x. As in
    ``enumerate(_seeded_order(...))`` with a ``looked >= max_scan`` stop, the item after the
    ``max_scan`` looked-at ones is drawn (consuming random numbers) but not checked.
    """
    n = len(pool)
    looked = 0
    if n <= 64:
        order = list(pool)
        _shuffle(rng, order)
        for image_id in order:
            if looked >= max_scan:
                return
            looked += 1
            for r in rest:
                if image_id not in r:
                    break
            else:
                yield image_id
        return
    getrandbits = rng.getrandbits
    k = n.bit_length()
    half = n // 2
    seen: set[int] = set()
    add = seen.add
    while len(seen) < n:
        i = getrandbits(k)
        while i >= n:
            i = getrandbits(k)
        if i in seen:
            if len(seen) > half:  # dense: the rest of the pool in a shuffled order
                remaining = [j for j in range(n) if j not in seen]
                _shuffle(rng, remaining)
                for j in remaining:
                    if looked >= max_scan:
                        return
                    looked += 1
                    image_id = pool[j]
                    for r in rest:
                        if image_id not in r:
                            break
                    else:
                        yield image_id
                return
            continue
        add(i)
        if looked >= max_scan:
            return
        looked += 1
        image_id = pool[i]
        for r in rest:
            if image_id not in r:
                break
        else:
            yield image_id


def _shuffle(rng: random.Random, items: list[Any]) -> None:
    """``rng.shuffle(items)`` with ``_randbelow`` inlined: the same draws (``i + 1`` has ``k``
    bits; ``getrandbits(k)`` redrawn while ``> i``), the same order and final state."""
    getrandbits = rng.getrandbits
    for i in range(len(items) - 1, 0, -1):
        k = (i + 1).bit_length()
        j = getrandbits(k)
        while j > i:
            j = getrandbits(k)
        items[i], items[j] = items[j], items[i]
