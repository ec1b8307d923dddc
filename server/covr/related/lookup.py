"""Related images in the graph store: positives and edit-distance-1/2 distractors (DESIGN.md §5).

The definitions are the reference matcher's (:mod:`covr.related.reference`, docs/subgraphs.md §8);
this module computes the same thing with parameterized Cypher, fast, and with seeded sampling.
How (docs/related.md §3 has the long version):

1. **Candidates without store-order bias.** For an edit signature ``S`` every position outside
   ``S`` keeps ``g``'s name, so a distractor image must hold all those names. The candidate pool is
   the intersection of the image lists of those names (fetched with one index-backed query per
   name, rarest first as the name statistics say, and cached), or every image of the split when
   nothing is fixed. The pool is ordered by a keyed 64-bit hash of ``(seed, signature, image id)``:
   a seeded permutation that ignores how the store orders anything.
2. **Verification in batches.** Candidates are checked in that order, a batch at a time, by one
   query per *round*: one ``UNION ALL`` branch per unfinished signature (and one for positives),
   each matching ``g``'s shape inside its batch (``i.id IN $ids``) with fixed names as equality
   parameters and changed positions as "different and not in the non-exclusive list" (or "in the
   exclusive list", whichever is shorter; lists computed in Python from the vocabulary). Batches
   grow 4x per round; a signature stops when it has enough results or its pool is exhausted.
3. **Exclusion.** Images that produced a distractor row are checked once more for an
   overlap-relaxed copy of ``g`` (which includes ``g`` itself) by one query per round.
4. **Exactness.** Every returned row is re-checked with the :class:`Exclusivity` model in Python
   (the list filters are only prefilters), attribute choices are expanded as the reference does, and
   a concrete ``g'`` that is not a valid subgraph (a noun twice) is dropped.

Results are cached per (subgraph key, split, arguments, model version) and dropped when the
store's name-statistics generation changes (every completed load bumps it).
"""

from __future__ import annotations

import hashlib
import itertools
import threading
from collections import OrderedDict, defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from enum import Enum
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from covr.graph import catalog, name_stats
from covr.graph.store import GraphStore, Row
from covr.related.cypher_path import (
    AnchoredBranch,
    Branch,
    CombinedBranch,
    Rule,
    anchored_query,
    combined_query,
    exact_rules,
    union_query,
)
from covr.related.exclusivity import EXCLUSIVE_THRESHOLD, Exclusivity, default_exclusivity
from covr.related.reference import Distractor, PresenceFilter, contains, no_presence_filter
from covr.scene.edits import (
    NodeType,
    name_at,
    parse_position,
    positions,
    signature,
    signature_sort_key,
    substitute,
)
from covr.scene.enumerate import EnumerationOptions, enumerate_subgraphs
from covr.scene.model import SceneGraph
from covr.scene.records import from_store_record
from covr.scene.subgraph import Subgraph, SubgraphError
from covr.settings import Settings, get_settings

__all__ = [
    "DEFAULT",
    "Default",
    "RelatedError",
    "RelatedLookup",
    "RelatedResult",
    "StatsMissing",
    "UnknownImage",
    "UnknownSubgraph",
    "enumeration_options",
]

IdArray = npt.NDArray[np.int64]


class Default(Enum):
    """Marks an argument whose value comes from settings (``COVR_RELATED_*``)."""

    VALUE = "default"


DEFAULT = Default.VALUE
K = TypeVar("K")
V = TypeVar("V")


class RelatedError(ValueError):
    """Bad input to a lookup; ``field`` names the argument."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


class UnknownImage(RelatedError):
    """The image id is not in the store."""


class UnknownSubgraph(RelatedError):
    """The subgraph key is not a subgraph of the image."""


class StatsMissing(RelatedError):
    """The store holds images but no name statistics (written at the end of every load)."""


@dataclass(frozen=True)
class RelatedResult:
    """Positives and distractors of one subgraph; see docs/related.md §1."""

    query: Subgraph
    split: str | None
    seed: int
    positives: tuple[str, ...]
    distractors: tuple[Distractor, ...]
    offset: int = 0
    next_offset: int | None = None

    def by_signature(self) -> dict[str, list[str]]:
        """``signature -> image ids`` in result order."""
        out: dict[str, list[str]] = defaultdict(list)
        for d in self.distractors:
            out[d.signature].append(d.image_id)
        return dict(out)

    def signatures(self) -> list[str]:
        """The signatures present, in canonical order."""
        return sorted({d.signature for d in self.distractors}, key=signature_sort_key)


def _split_list(text: str) -> frozenset[str]:
    return frozenset(p.strip() for p in text.split(",") if p.strip())


def enumeration_options(settings: Settings) -> EnumerationOptions:
    """Subgraph enumeration options from ``COVR_SUBGRAPH_*`` (defaults: the reference values)."""
    pairs: set[tuple[str, str]] = set()
    for item in _split_list(settings.subgraph_ignored_pairs):
        relation, sep, noun = item.partition(":")
        if not sep or not relation.strip() or not noun.strip():
            raise ValueError(
                f"COVR_SUBGRAPH_IGNORED_PAIRS: {item!r} is not 'relation:noun' (e.g. wearing:shirt)"
            )
        pairs.add((relation.strip(), noun.strip()))
    return EnumerationOptions(
        ignored_nouns=_split_list(settings.subgraph_ignored_nouns),
        ignored_relations=_split_list(settings.subgraph_ignored_relations),
        ignored_pairs=frozenset(pairs),
        min_object_area=settings.subgraph_min_object_area,
        max_subgraphs=settings.subgraph_max_per_image,
    )


# -- seeded order ------------------------------------------------------------------------------


def _hash64(text: str) -> int:
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "little")


class _Stream:
    """Image indices of a pool, handed out in the order of their seeded keys."""

    def __init__(self, pool: IdArray, keys: IdArray) -> None:
        self.pool = pool
        self.keys = keys
        self.cursor = 0
        self._sorted: IdArray = np.empty(0, dtype=np.int64)

    @property
    def exhausted(self) -> bool:
        return self.cursor >= len(self.pool)

    def remaining(self) -> int:
        return len(self.pool) - self.cursor

    def seen(self) -> IdArray:
        """The indices handed out so far."""
        return self._sorted[: self.cursor]

    def take(self, n: int) -> IdArray:
        end = min(len(self.pool), self.cursor + n)
        if end > len(self._sorted):
            size = len(self.pool)
            want = min(size, max(end, 2 * len(self._sorted)))
            part = np.argpartition(self.keys, want - 1)[:want] if want < size else np.arange(size)
            order = part[np.argsort(self.keys[part], kind="stable")]
            self._sorted = self.pool[order]
        out = self._sorted[self.cursor : end]
        self.cursor = end
        return out


class _WholeStream:
    """Every image of a split in the same seeded order as :class:`_Stream`, without sorting:
    walking the fixed permutation from the seeded start costs only what is handed out."""

    def __init__(self, table: _Images, start: int, split_code: int | None) -> None:
        self.table = table
        self.start = start
        self.mask = None if split_code is None else table.splits == split_code
        self.size = len(table.ids) if self.mask is None else int(self.mask.sum())
        self.cursor = 0
        self.walked = 0
        self._handed: list[IdArray] = []

    @property
    def exhausted(self) -> bool:
        return self.cursor >= self.size

    def remaining(self) -> int:
        return self.size - self.cursor

    def seen(self) -> IdArray:
        if not self._handed:
            return np.empty(0, dtype=np.int64)
        return np.concatenate(self._handed)

    def take(self, n: int) -> IdArray:
        total = len(self.table.ids)
        parts: list[IdArray] = []
        got = 0
        while got < n and self.walked < total:
            chunk = min(total - self.walked, max(2 * (n - got), 64))
            steps = (self.start + self.walked + np.arange(chunk, dtype=np.int64)) % total
            found: IdArray = self.table.perm[steps]
            if self.mask is not None:
                keep = np.flatnonzero(self.mask[found])
                found = found[keep]
                steps = steps[keep]
            if got + len(found) > n:
                found = found[: n - got]
                steps = steps[: n - got]
                self.walked = int((steps[-1] - self.start) % total) + 1
            else:
                self.walked += chunk
            parts.append(found)
            got += len(found)
        out = np.concatenate(parts) if parts else np.empty(0, dtype=np.int64)
        self._handed.append(out)
        self.cursor += len(out)
        return out


class _Images:
    """Every image id of the store with its split and a per-image base hash (one generation)."""

    def __init__(self, rows: list[dict[str, Any]]) -> None:
        rows = sorted(rows, key=lambda r: str(r["id"]))
        self.ids = [str(r["id"]) for r in rows]
        self.index = {image_id: n for n, image_id in enumerate(self.ids)}
        names = sorted({str(r["split"]) for r in rows})
        self.split_codes = {name: code for code, name in enumerate(names)}
        self.splits = np.array([self.split_codes[str(r["split"])] for r in rows], dtype=np.int64)
        self.base = np.array([_hash64(i) for i in self.ids], dtype=np.uint64)
        # A fixed pseudo-random permutation of all images (by hash of the id); a seeded order is
        # this permutation rotated to a start drawn from (seed, salt). Cheap for any pool size.
        self.perm: IdArray = np.argsort(self.base, kind="stable").astype(np.int64)
        self.rank: IdArray = np.empty(len(self.ids), dtype=np.int64)
        self.rank[self.perm] = np.arange(len(self.ids), dtype=np.int64)

    def in_split(self, pool: IdArray, split: str | None) -> IdArray:
        if split is None:
            return pool
        code = self.split_codes.get(split)
        if code is None:
            return np.empty(0, dtype=np.int64)
        kept: IdArray = pool[self.splits[pool] == code]
        return kept

    def start(self, seed: int, salt: str) -> int:
        return _hash64(f"{seed}\x1f{salt}") % max(1, len(self.ids))

    def stream(
        self, pool: IdArray | None, seed: int, salt: str, split: str | None
    ) -> _Stream | _WholeStream:
        """``pool`` in the seeded order; ``None`` = every image of ``split``."""
        start = self.start(seed, salt)
        if pool is None:
            code = None if split is None else self.split_codes.get(split, -1)
            return _WholeStream(self, start, code)
        keys: IdArray = (self.rank[pool] - start) % max(1, len(self.ids))
        return _Stream(pool, keys)


class _LRU(OrderedDict[K, V]):
    """A bounded cache shared by concurrent lookups (each operation under its own lock)."""

    def __init__(self, size: int) -> None:
        super().__init__()
        self.size = size
        self._guard = threading.Lock()

    def put(self, key: K, value: V) -> None:
        if self.size <= 0:
            return
        with self._guard:
            self[key] = value
            self.move_to_end(key)
            while len(self) > self.size:
                self.popitem(last=False)

    def fetch(self, key: K) -> V | None:
        with self._guard:
            value = self.get(key)
            if value is not None:
                self.move_to_end(key)
            return value

    def clear(self) -> None:
        with self._guard:
            super().clear()


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


_POSTINGS = {
    "object": "match/related/postings_object",
    "relation": "match/related/postings_relation",
    "relmod": "match/related/postings_relmod",
}
_UNKNOWN = object()
"""Marks a concrete subgraph not computed yet (None is a valid, cached answer)."""
_ANCHOR_ENOUGH = 256
"""Stop intersecting further names' image lists once a pool is this small."""


@dataclass
class _SigState:
    """One signature (or the positives, signature ``""``) during a lookup."""

    g: Subgraph
    signature: str
    changed: tuple[str, ...]
    rules: dict[str, Rule]
    stream: _Stream | _WholeStream
    target: int | None
    batch: int
    found: list[Distractor]
    positives: list[str]
    anchor: str | None = None
    salt: str = ""
    exact: bool = False
    done: bool = False


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
        self.exclusivity = exclusivity or default_exclusivity()
        self.presence_filter = presence_filter
        self.model_version = model_version
        self.settings = settings or get_settings()
        self.options = enumeration_options(self.settings)
        self._lock = _SharedLock()
        self._generation: str | None = None
        self._images: _Images | None = None
        self._vocab: dict[tuple[str, str | None], dict[str, tuple[int, int]]] = {}
        self._lists: dict[tuple[str, str], tuple[tuple[str, ...], tuple[str, ...]]] = {}
        self._m: dict[tuple[str, str, str], bool] = {}
        self._postings: _LRU[tuple[str, str], IdArray] = _LRU(self.settings.related_cache_postings)
        self._results: _LRU[tuple[Any, ...], RelatedResult] = _LRU(
            self.settings.related_cache_results
        )
        self._concrete: dict[tuple[str, tuple[tuple[str, str], ...]], Subgraph | None] = {}
        self._scenes: _LRU[str, SceneGraph] = _LRU(self.settings.related_cache_scenes)

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
    ) -> RelatedResult:
        """Positives and distractors of ``g`` (see docs/related.md §1 for every argument)."""
        subgraph = _as_subgraph(g)
        per_signature = self._resolve(per_signature, self.settings.related_per_signature)
        positives_limit = self._resolve(positives_limit, self.settings.related_positives)
        _check_args(max_distance, per_signature, limit, positives_limit, seed, offset, split)
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
                self.model_version,
            )
            cached = self._results.fetch(key)
            if cached is not None:
                return cached
            result = self._lookup(
                subgraph,
                split,
                max_distance,
                per_signature,
                limit,
                positives_limit,
                seed,
                offset,
                presence,
            )
            self._results.put(key, result)
            return result

    def scene_graph(self, image_id: str) -> SceneGraph:
        """The stored scene graph of ``image_id``; :class:`UnknownImage` when absent."""
        if not isinstance(image_id, str) or not image_id.strip():
            raise UnknownImage("image_id", f"must be a non-empty string, got {image_id!r}")
        rows = self.store.read(catalog.get("match/scene_graph"), {"image_id": image_id})
        if not rows:
            raise UnknownImage("image_id", f"no image {image_id!r} in the store")
        return from_store_record(rows[0])

    def scene_graphs(self, image_ids: Sequence[str]) -> dict[str, SceneGraph]:
        """Stored scene graphs by id (absent ids are left out), as of the store generation this
        lookup saw last.

        The presence filter reads every candidate distractor's scene graph: one read per image was
        ~80 % of a cold lookup (issue 7's load test), so the ones not cached are read in one
        statement per ``COVR_RELATED_SCENE_BATCH`` ids, and kept (``COVR_RELATED_CACHE_SCENES``)
        until a lookup sees a new generation. No generation query here: inside a lookup the
        generation was just checked, and the question engine reads many scenes per request;
        call :meth:`refresh` first for a view no older than the store's current generation.
        """
        if isinstance(image_ids, str) or not isinstance(image_ids, Sequence):
            raise RelatedError(
                "image_ids", f"must be a sequence of image ids, got {type(image_ids).__name__}"
            )
        for n, image_id in enumerate(image_ids):
            if not isinstance(image_id, str) or not image_id.strip():
                raise RelatedError(
                    f"image_ids[{n}]", f"must be a non-empty string, got {image_id!r}"
                )
        with self._lock.shared():
            return self._scene_graphs(image_ids)

    def refresh(self) -> None:
        """Check the store's generation now (one query) and drop every cache if it changed.

        Lookups do this themselves; callers that read scene graphs before any lookup (a
        request that starts from an image) call it once first.
        """
        self._refresh_generation()

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
            self._table()
            for node_type in ("object", "attribute", "relation", "relmod"):
                self._vocabulary(node_type, None)

    def clear_cache(self) -> None:
        """Forget every cached result, image list and vocabulary."""
        with self._lock.exclusive():
            self._reset(None)
            self._m.clear()

    # -- state -----------------------------------------------------------------------------------

    def _reset(self, generation: str | None) -> None:
        self._generation = generation
        self._images = None
        self._vocab.clear()
        self._lists.clear()
        self._postings.clear()
        self._results.clear()
        self._scenes.clear()

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

    def _scene_graphs(self, image_ids: Sequence[str]) -> dict[str, SceneGraph]:
        """:meth:`scene_graphs` without checks; the caller holds the shared lock, so a reset
        (new generation) cannot interleave with filling the cache."""
        found: dict[str, SceneGraph] = {}
        missing: list[str] = []
        wanted = list(dict.fromkeys(image_ids))
        for image_id in wanted:
            hit = self._scenes.fetch(image_id)
            if hit is None:
                missing.append(image_id)
            else:
                found[image_id] = hit
        step = self.settings.related_scene_batch
        for start in range(0, len(missing), step):
            chunk = missing[start : start + step]
            # the batched form of match/scene_graph: same row shape, one row per image present
            for row in self.store.read(catalog.get("match/scene_graphs"), {"ids": chunk}):
                graph = from_store_record(row)
                self._scenes.put(graph.image_id, graph)
                found[graph.image_id] = graph
        return {i: found[i] for i in wanted if i in found}  # request order, not the store's

    def _table(self) -> _Images:
        if self._images is None:
            self._images = _Images(self.store.read(catalog.get("match/related/images")))
        return self._images

    def _vocabulary(self, node_type: str, split: str | None) -> dict[str, tuple[int, int]]:
        key = (node_type, split)
        if key not in self._vocab:
            self._vocab[key] = name_stats.vocabulary(self.store, node_type, split)  # type: ignore[arg-type]
        return self._vocab[key]

    def _exclusive(self, node_type: NodeType, x: str, y: str) -> bool:
        key = (node_type, x, y)
        hit = self._m.get(key)
        if hit is None:
            hit = x != y and self.exclusivity.m(node_type, x, y) > EXCLUSIVE_THRESHOLD
            if len(self._m) > 1_000_000:
                self._m.clear()
            self._m[key] = hit
        return hit

    def _score_all(self, node_type: NodeType, x: str, names: Sequence[str]) -> None:
        """Decide ``(x, n)`` for every name not decided yet with one ``m_batch`` call.

        A name's alternatives cover the whole vocabulary (1,700 object names at 0.1x GQA): one
        model call per pair was ~70 % of a new process's first lookups (profile, 8,500
        images); a batch gives the same scores (checked bit for bit on that vocabulary) ~10x
        faster. Decisions are what :meth:`_exclusive` would store.
        """
        todo = [n for n in names if n != x and (node_type, x, n) not in self._m]
        if not todo:
            return
        scores = self.exclusivity.m_batch([(node_type, x, n) for n in todo])
        if len(self._m) + len(todo) > 1_000_000:
            self._m.clear()
        for n, score in zip(todo, scores, strict=True):
            self._m[(node_type, x, n)] = score > EXCLUSIVE_THRESHOLD

    def _alternatives(self, node_type: NodeType, x: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(exclusive, non-exclusive) names of the vocabulary other than ``x``."""
        key = (node_type, x)
        if key not in self._lists:
            names = sorted(n for n in self._vocabulary(node_type, None) if n != x)
            self._score_all(node_type, x, names)
            exclusive = tuple(n for n in names if self._exclusive(node_type, x, n))
            chosen = set(exclusive)
            others = tuple(n for n in names if n not in chosen)
            self._lists[key] = (exclusive, others)
        return self._lists[key]

    def _posting(self, node_type: str, name: str) -> IdArray:
        key = (node_type, name)
        hit = self._postings.fetch(key)
        if hit is None:
            table = self._table()
            rows = self.store.read(catalog.get(_POSTINGS[node_type]), {"name": name})
            found = [table.index[r["id"]] for r in rows if r["id"] in table.index]
            hit = np.unique(np.array(found, dtype=np.int64))
            self._postings.put(key, hit)
        return hit

    def _pool(self, g: Subgraph, fixed: Sequence[str], split: str | None) -> IdArray | None:
        """Images holding every fixed non-attribute name (rarest first), in ``split``."""
        table = self._table()
        typed = []
        for pos in fixed:
            kind = parse_position(pos)[0]
            if kind == "attribute":
                continue  # attributes are a list property: no index to draw candidates from
            name = name_at(g, pos)
            images = self._vocabulary(kind, split).get(name, (0, 0))[0]
            typed.append((images, kind, name))
        if not typed:
            return None
        typed.sort()
        if typed[0][0] == 0:
            return np.empty(0, dtype=np.int64)
        pool: IdArray | None = None
        cap = self.settings.related_postings_max_images
        for images, kind, name in typed:
            if pool is not None and len(pool) <= _ANCHOR_ENOUGH:
                break
            if cap and images > cap:
                break  # fetching a very common name's image list costs more than it saves
            ids = self._posting(kind, name)
            pool = ids if pool is None else np.intersect1d(pool, ids, assume_unique=True)
        if pool is None:
            return None
        return table.in_split(pool, split)

    # -- rules -----------------------------------------------------------------------------------

    def _distractor_rule(self, g: Subgraph, pos: str) -> Rule | None:
        """Rule of a changed position, or None when no name of the store could be exclusive."""
        kind = parse_position(pos)[0]
        x = name_at(g, pos)
        exclusive, others = self._alternatives(kind, x)
        if not exclusive:
            return None
        cap = self.settings.related_list_max
        if kind == "attribute":
            if len(exclusive) <= cap:
                return Rule("in", values=exclusive)
            if len(others) <= cap:
                return Rule("ne_not_in", x, others)
            return Rule("ne", x)
        if len(others) <= cap:
            return Rule("ne_not_in", x, others) if others else Rule("ne", x)
        if len(exclusive) <= cap:
            return Rule("in", values=exclusive)
        return Rule("ne", x)

    def _relaxed_rule(self, g: Subgraph, pos: str) -> Rule:
        kind = parse_position(pos)[0]
        x = name_at(g, pos)
        exclusive, others = self._alternatives(kind, x)
        cap = self.settings.related_list_max
        if len(others) + 1 <= cap:
            return Rule("in", values=(x, *others))
        if len(exclusive) <= cap:
            return Rule("not_in", values=exclusive)
        return Rule("any")

    def _anchor(self, g: Subgraph, fixed: Sequence[str]) -> str | None:
        """The fixed non-attribute position whose name has the fewest nodes (None: none fixed)."""
        best: tuple[int, str] | None = None
        for pos in fixed:
            kind = parse_position(pos)[0]
            if kind == "attribute":
                continue
            nodes = self._vocabulary(kind, None).get(name_at(g, pos), (0, 0))[1]
            if best is None or (nodes, pos) < best:
                best = (nodes, pos)
        return None if best is None else best[1]

    def _wants_direct(self, state: _SigState, *, late: bool = False) -> bool:
        """After a sampled first round: switch a signature with a large remaining pool to an
        exact, index-started match of its images (most signatures have few or no hits, and a
        direct match proves that far cheaper than verifying the whole pool image by image).

        The positives follow the same node cap in round 1 (a direct match from a common name
        such as "shirt" reads every such node: 0.2-0.3 s at 1x GQA, while a second, 4x larger
        sampled round usually finds them); ``late`` (round 3) lifts the cap for positives still
        short, because they are never cut short by the scan budget."""
        remaining = state.stream.remaining()
        if state.anchor is None or state.exact:
            return False
        if remaining <= self.settings.related_direct_min_pool:
            return False
        if state.target is None or (late and not state.signature):
            return True  # a full result, or positives still short: the exact pool beats the scan
        cap = self.settings.related_direct_max_nodes
        kind = parse_position(state.anchor)[0]
        name = name_at(state.g, state.anchor)
        nodes = self._vocabulary(kind, None).get(name, (0, 0))[1]
        return not cap or nodes <= cap

    def _go_direct(
        self, g: Subgraph, states: list[_SigState], split: str | None, seed: int
    ) -> None:
        """Exact candidate pools of ``states`` from index-started matches, one query.

        Signatures that share an anchor share one *counting* branch: its walk from the anchor
        is done once (it dominated the cost: the same 1,500-node index scan and first hop per
        signature, measured with GRAPH.PROFILE at 1x), every other position holds ``g``'s name
        or a possible edit, and each returned embedding is sorted into its signature here with
        the exact rules of :meth:`_embeddings`. A signature alone on its anchor keeps the plain
        branch with its own rules, which returns only image ids.
        """
        if not states:
            return
        table = self._table()
        groups: dict[str, list[int]] = defaultdict(list)
        for n, state in enumerate(states):
            if state.anchor is not None:
                groups[state.anchor].append(n)
        branches: list[AnchoredBranch] = []
        shared: dict[int, dict[str, int]] = {}  # branch tag -> signature -> state index
        # UNION ALL needs one set of columns: plain branches only when no anchor is shared
        counting = any(len(members) > 1 for members in groups.values())
        for anchor, members in groups.items():
            tag = len(branches)
            if len(members) == 1:
                state = states[members[0]]
                most = len(state.changed) if counting else None
                branches.append(AnchoredBranch(g, state.rules, anchor, split, tag, most))
                shared[tag] = {state.signature: members[0]}
                continue
            changeable = {p for n in members for p in states[n].changed}
            rules = {
                p: self._combined_rule(g, p) if p in changeable else Rule("eq", name_at(g, p))
                for p in positions(g)
            }
            most = max(len(states[n].changed) for n in members)
            branches.append(AnchoredBranch(g, rules, anchor, split, tag, max_changes=most))
            shared[tag] = {states[n].signature: n for n in members}
        query, params = anchored_query(branches)
        pools: dict[int, set[int]] = defaultdict(set)
        every = len(positions(g))
        for row in self.store.read(query, params):
            index = table.index.get(str(row["image_id"]))
            if index is None:
                continue
            by_signature = shared[int(row["tag"])]
            if not counting:
                pools[next(iter(by_signature.values()))].add(index)
                continue
            for changes in self._embeddings(g, row, every):
                member = by_signature.get(signature(p for p, _ in changes))
                if member is not None:
                    pools[member].add(index)
        for n, state in enumerate(states):
            seen = state.stream.seen()
            exact = np.setdiff1d(np.array(sorted(pools.get(n, ())), dtype=np.int64), seen)
            state.stream = table.stream(exact, seed, state.salt, split)
            state.exact = True
            if len(exact) == 0:
                state.done = True

    # -- the lookup ------------------------------------------------------------------------------

    def _lookup(
        self,
        g: Subgraph,
        split: str | None,
        max_distance: int,
        per_signature: int | None,
        limit: int | None,
        positives_limit: int | None,
        seed: int,
        offset: int,
        presence: bool,
    ) -> RelatedResult:
        table = self._table()
        all_positions = positions(g)
        exact = exact_rules(g)
        batch_min = self.settings.related_batch_min
        states: list[_SigState] = []

        def target(cap: int | None) -> int | None:
            return None if cap is None else offset + cap + 1

        def first_batch(want: int | None) -> int:
            if want is None:
                return self.settings.related_batch_max
            return max(batch_min, 2 * want)

        pos_target = target(positives_limit)
        states.append(
            _SigState(
                g,
                "",
                (),
                dict(exact),
                table.stream(self._pool(g, all_positions, split), seed, "", split),
                pos_target,
                first_batch(pos_target),
                [],
                [],
                anchor=self._anchor(g, all_positions),
            )
        )
        sig_target = target(per_signature)
        for size in range(1, min(max_distance, len(all_positions)) + 1):
            for changed in itertools.combinations(all_positions, size):
                sig = signature(changed)
                rules = dict(exact)
                skip = False
                for pos in changed:
                    rule = self._distractor_rule(g, pos)
                    if rule is None:
                        skip = True
                        break
                    rules[pos] = rule
                if skip:
                    continue
                fixed = [p for p in all_positions if p not in changed]
                pool = self._pool(g, fixed, split)
                if pool is not None and len(pool) == 0:
                    continue
                states.append(
                    _SigState(
                        g,
                        sig,
                        tuple(changed),
                        rules,
                        table.stream(pool, seed, sig, split),
                        sig_target,
                        first_batch(sig_target),
                        [],
                        [],
                        anchor=self._anchor(g, fixed),
                        salt=sig,
                    )
                )
        states = [states[0], *sorted(states[1:], key=lambda s: signature_sort_key(s.signature))]
        relaxed_rules = {p: self._relaxed_rule(g, p) for p in all_positions}
        relaxed_known: dict[str, bool] = {}
        combined_rules = {p: self._combined_rule(g, p) for p in all_positions}
        # Few signatures (small subgraphs): one exact branch each returns fewer rows. Many
        # (chains, V-shapes, frames): one combined branch costs far less to parse and plan.
        combined = len(states) > self.settings.related_combined_min_signatures
        verified: dict[str, tuple[bool, dict[str, set[Subgraph]]]] = {}

        rounds = 0
        spent = 0
        budget = self.settings.related_scan_budget
        while True:
            active = [s for s in states if not s.done]
            if not active:
                break
            if rounds == 1:
                self._go_direct(g, [s for s in active if self._wants_direct(s)], split, seed)
            elif rounds == 3 and not states[0].done and self._wants_direct(states[0], late=True):
                self._go_direct(g, [states[0]], split, seed)
            rounds += 1
            batches: dict[int, list[str]] = {}
            # positives (signature "") are never cut short: every question needs them
            budgeted = [s for s in states if not s.done and s.target is not None and s.signature]
            share = None
            if budget and budgeted:
                if spent >= budget:
                    for state in budgeted:
                        state.done = True  # bounded effort: see docs/related.md §3
                share = max(1, (budget - spent) // len(budgeted))
            for n, state in enumerate(states):
                if state.done:
                    continue
                limited = share is not None and state.target is not None and state.signature
                size = min(state.batch, share) if limited and share is not None else state.batch
                taken = state.stream.take(size)
                if limited:
                    spent += len(taken)
                ids = [table.ids[i] for i in taken]
                state.batch = min(state.batch * 4, self.settings.related_batch_max)
                if not ids:
                    state.done = True
                    continue
                batches[n] = ids
            if not batches:
                break
            hits: dict[int, dict[str, set[Subgraph]]] = {}
            if combined:
                fresh = sorted({i for ids in batches.values() for i in ids} - verified.keys())
                self._verify(g, combined_rules, max_distance, fresh, verified)
                positive_ids = {i for ids in batches.values() for i in ids if verified[i][0]}
                for n, ids in batches.items():
                    sig = states[n].signature
                    hits[n] = {i: verified[i][1][sig] for i in ids if sig in verified[i][1]}
            else:
                hits, positive_ids = self._verify_per_signature(g, states, batches)
            unknown = sorted({i for per in hits.values() for i in per} - relaxed_known.keys())
            if unknown:
                excluded = self._relaxed_images(g, relaxed_rules, unknown)
                for image_id in unknown:
                    relaxed_known[image_id] = image_id in excluded
            candidates: dict[int, list[Distractor]] = {}
            for n, ids in batches.items():
                if n == 0:
                    continue
                per = hits.get(n, {})
                new = candidates[n] = []
                for image_id in ids:
                    found = per.get(image_id)
                    if not found or relaxed_known.get(image_id, True):
                        continue
                    ordered = tuple(sorted(found, key=lambda s: s.key))
                    new.append(Distractor(image_id, states[n].signature, ordered[0], ordered))
            every = [d for new in candidates.values() for d in new]
            if presence and every:
                # one call for the round's candidates of every signature (the filter decides
                # each candidate on its own), so the model filter reads their scene graphs in
                # one batched statement instead of one per signature
                kept = {id(d) for d in self.presence_filter(g, every)}
                candidates = {n: [d for d in new if id(d) in kept] for n, new in candidates.items()}
            for n, ids in batches.items():
                state = states[n]
                if n == 0:
                    state.positives.extend(i for i in ids if i in positive_ids)
                    if state.target is not None and len(state.positives) >= state.target:
                        state.done = True
                else:
                    state.found.extend(candidates[n])
                    if state.target is not None and len(state.found) >= state.target:
                        state.done = True
                if state.stream.exhausted:
                    state.done = True

        more = False
        pos_state = states[0]
        positives = pos_state.positives[offset:]
        if positives_limit is not None:
            more = more or len(positives) > positives_limit
            positives = positives[:positives_limit]
        per_sig: list[list[Distractor]] = []
        for state in states[1:]:
            page = state.found[offset:]
            if per_signature is not None:
                more = more or len(page) > per_signature
                page = page[:per_signature]
            if page:
                per_sig.append(page)
        distractors: list[Distractor] = []
        for group in itertools.zip_longest(*per_sig):
            distractors.extend(d for d in group if d is not None)
        if limit is not None:
            distractors = distractors[:limit]
        caps = [c for c in (per_signature, positives_limit) if c is not None]
        next_offset = offset + min(caps) if more and caps else None
        return RelatedResult(
            g, split, seed, tuple(positives), tuple(distractors), offset, next_offset
        )

    def _concretes(
        self, g: Subgraph, changed: tuple[str, ...], row: Mapping[str, Any]
    ) -> Iterable[Subgraph]:
        """Every valid concrete ``g'`` of one distractor row (attribute choices expanded)."""
        options: list[list[tuple[str, str]]] = []
        for pos in changed:
            kind, index = parse_position(pos)
            x = name_at(g, pos)
            if kind == "attribute":
                values = list(dict.fromkeys(row["attributes"][index] or ()))
            elif kind == "object":
                values = [row["names"][index]]
            elif kind == "relation":
                values = [row["relation_names"][index]]
            else:
                values = [row["relmod_names"][index]]
            good = [(pos, str(y)) for y in values if self._exclusive(kind, x, str(y))]
            if not good:
                return []
            options.append(good)
        out = []
        for combo in itertools.product(*options):
            changes = tuple(sorted(combo))
            concrete = self._concrete_of(g, changes)
            if concrete is not None:
                out.append(concrete)
        return out

    def _read_branches(self, branches: list[Branch]) -> list[Row]:
        """The rows of every branch: one ``UNION ALL`` on FalkorDB (one round trip, planned in
        microseconds), one cached statement per branch on Neo4j (``GraphStore.read_many``)."""
        if self.store.backend.dialect == "neo4j":
            return self.store.read_many(union_query([branch]) for branch in branches)
        return self.store.read(*union_query(branches))

    def _verify_per_signature(
        self, g: Subgraph, states: list[_SigState], batches: dict[int, list[str]]
    ) -> tuple[dict[int, dict[str, set[Subgraph]]], set[str]]:
        """One exact branch per signature over its own batch (``UNION ALL``): the concrete
        ``g'`` per branch and image, and the positives."""
        branches = [Branch(g, states[n].rules, ids, n) for n, ids in batches.items()]
        hits: dict[int, dict[str, set[Subgraph]]] = defaultdict(lambda: defaultdict(set))
        positives: set[str] = set()
        for row in self._read_branches(branches):
            n = int(row["tag"])
            image_id = str(row["image_id"])
            if n == 0:
                positives.add(image_id)
                continue
            for concrete in self._concretes(g, states[n].changed, row):
                hits[n][image_id].add(concrete)
        return hits, positives

    def _combined_rule(self, g: Subgraph, pos: str) -> Rule:
        """Rule of a position in a combined branch: ``g``'s name or a possible edit."""
        x = name_at(g, pos)
        edited = self._distractor_rule(g, pos)
        if edited is None:
            return Rule("eq", x)
        if edited.op == "ne_not_in":
            return Rule("not_in", values=edited.values)
        if edited.op == "in":
            return Rule("eq_or_in", x, edited.values)
        return Rule("any")

    def _verify(
        self,
        g: Subgraph,
        rules: dict[str, Rule],
        max_distance: int,
        image_ids: list[str],
        verified: dict[str, tuple[bool, dict[str, set[Subgraph]]]],
    ) -> None:
        """Match ``g`` with up to ``max_distance`` edits in these images, one combined query per
        batch; record per image whether it is a positive and its concrete ``g'`` per signature."""
        step = self.settings.related_batch_max
        nothing: tuple[bool, dict[str, set[Subgraph]]] = (False, {})
        verified.update(dict.fromkeys(image_ids, nothing))  # most images return no row
        found: dict[str, tuple[bool, dict[str, set[Subgraph]]]] = {}
        for start in range(0, len(image_ids), step):
            chunk = image_ids[start : start + step]
            query, params = combined_query(CombinedBranch(g, rules, max_distance, chunk))
            for row in self.store.read(query, params):
                image_id = str(row["image_id"])
                positive, per = found.get(image_id) or (False, defaultdict(set))
                for changes in self._embeddings(g, row, max_distance):
                    if not changes:
                        positive = True
                        continue
                    concrete = self._concrete_of(g, changes)
                    if concrete is not None:
                        per[signature(p for p, _ in changes)].add(concrete)
                found[image_id] = (positive, per)
        verified.update({i: (pos, dict(per)) for i, (pos, per) in found.items()})

    def _embeddings(
        self, g: Subgraph, row: Mapping[str, Any], max_distance: int
    ) -> Iterable[tuple[tuple[str, str], ...]]:
        """The edits of every valid reading of a row (attribute choices expanded)."""
        fixed: list[tuple[str, str]] = []
        options: list[list[tuple[str, str] | None]] = []
        for pos in positions(g):
            kind, index = parse_position(pos)
            x = name_at(g, pos)
            if kind == "attribute":
                values = list(dict.fromkeys(row["attributes"][index] or ()))
                choice: list[tuple[str, str] | None] = [None] if x in values else []
                choice += [(pos, str(a)) for a in values if self._exclusive(kind, x, str(a))]
                if not choice:
                    return []
                options.append(choice)
                continue
            if kind == "object":
                y = str(row["names"][index])
            elif kind == "relation":
                y = str(row["relation_names"][index])
            else:
                y = str(row["relmod_names"][index])
            if y == x:
                continue
            if not self._exclusive(kind, x, y):
                return []
            fixed.append((pos, y))
        if len(fixed) > max_distance:
            return []
        out = []
        for combo in itertools.product(*options):
            changes = fixed + [c for c in combo if c is not None]
            if len(changes) <= max_distance:
                out.append(tuple(sorted(changes)))
        return out

    def _concrete_of(self, g: Subgraph, changes: tuple[tuple[str, str], ...]) -> Subgraph | None:
        key = (g.key, changes)
        hit = self._concrete.get(key, _UNKNOWN)
        if hit is not _UNKNOWN:
            return hit  # type: ignore[return-value]
        try:
            concrete: Subgraph | None = substitute(g, dict(changes))
        except SubgraphError:  # the edit repeats a noun of g: not a valid subgraph
            concrete = None
        if len(self._concrete) > 200_000:
            self._concrete.clear()
        self._concrete[key] = concrete
        return concrete

    def _relaxed_images(
        self, g: Subgraph, rules: dict[str, Rule], image_ids: list[str]
    ) -> set[str]:
        """The images among ``image_ids`` that hold ``g`` or an overlap-relaxed copy of it."""
        excluded: set[str] = set()
        step = self.settings.related_batch_max
        for start in range(0, len(image_ids), step):
            query, params = union_query([Branch(g, rules, image_ids[start : start + step], 0)])
            for row in self.store.read(query, params):
                image_id = str(row["image_id"])
                if image_id not in excluded and self._is_relaxed_row(g, row):
                    excluded.add(image_id)
        return excluded

    def _is_relaxed_row(self, g: Subgraph, row: Mapping[str, Any]) -> bool:
        for pos in positions(g):
            kind, index = parse_position(pos)
            x = name_at(g, pos)
            if kind == "attribute":
                values = row["attributes"][index] or ()
                if not any(not self._exclusive(kind, x, str(a)) for a in values):
                    return False
                continue
            if kind == "object":
                y = row["names"][index]
            elif kind == "relation":
                y = row["relation_names"][index]
            else:
                y = row["relmod_names"][index]
            if self._exclusive(kind, x, str(y)):
                return False
        return True


def _as_subgraph(g: Subgraph | str) -> Subgraph:
    if isinstance(g, Subgraph):
        return g
    if isinstance(g, str):
        return Subgraph.from_key(g)
    raise RelatedError("g", f"expected a Subgraph or a subgraph key, got {type(g).__name__}")


def _check_args(
    max_distance: int,
    per_signature: int | None,
    limit: int | None,
    positives_limit: int | None,
    seed: int,
    offset: int,
    split: str | None,
) -> None:
    def is_int(value: object) -> bool:
        return isinstance(value, int) and not isinstance(value, bool)

    if not is_int(max_distance) or not 0 <= max_distance <= 2:
        raise RelatedError("max_distance", f"must be 0, 1 or 2, got {max_distance!r}")
    for name, value in (
        ("per_signature", per_signature),
        ("limit", limit),
        ("positives_limit", positives_limit),
    ):
        if value is not None and (not is_int(value) or value < 1):
            raise RelatedError(name, f"must be >= 1 or None, got {value!r}")
    if not is_int(offset) or offset < 0:
        raise RelatedError("offset", f"must be >= 0, got {offset!r}")
    if not is_int(seed):
        raise RelatedError("seed", f"must be an integer, got {seed!r}")
    if split is not None and (not isinstance(split, str) or not split):
        raise RelatedError("split", f"must be a non-empty string or None, got {split!r}")
