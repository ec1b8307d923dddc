"""What one shard task runs on a Ray worker: its own store connection, its own provider, one
record per source image.

Everything a task receives is plain data (the settings sections it needs as frozen
dataclasses, :class:`covr.scale.config.TaskSettings`; options as a frozen dataclass; image ids
as strings): a worker on another machine has neither the driver's environment nor its
``.env`` file, and a connection cannot be pickled. A worker process keeps the store connection
and the provider it built for the next shard of the same job (Ray reuses worker processes), as
the process pool's workers share one provider; the output is the same either way, because every
image's examples depend only on the seed, the image id and the data (covr.questions.generate).
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from covr.collector import batch_collection
from covr.graph import GraphStore, open_store
from covr.questions.example import Example
from covr.questions.export import dumps
from covr.questions.generate import GenerationOptions, image_examples
from covr.questions.quota import FormQuota, by_text
from covr.related.api import RelatedProvider
from covr.related.exclusivity import default_exclusivity
from covr.related.filters import RelatedLookups, serving_lookup
from covr.related.lookup import RelatedLookup
from covr.related.memory import InMemoryRelated
from covr.related.request import RelatedRequest
from covr.related.store_provider import StoreRelated
from covr.scale.config import TaskSettings
from covr.scale.shards import encode_records

LOOKUPS = ("memory", "store")


@dataclass(frozen=True)
class RelatedOptions:
    """The lookup arguments of a distractor run (``covr distractors``; docs/related.md §1)."""

    split: str | None = None  # related images only from this split (None: any)
    max_distance: int = 2
    per_signature: int = 5
    positives: int = 5
    max_subgraphs: int | None = None  # per image without named subgraphs (None: all)
    seed: int = 0

    def request(self, *, presence: bool = True) -> RelatedRequest:
        """The lookup request of every subgraph of the run (bound to each by the lookup's
        ``for_image``): built once per request item, not per subgraph."""
        return RelatedRequest(
            split=self.split,
            max_distance=self.max_distance,
            per_signature=self.per_signature,
            positives_limit=self.positives,
            seed=self.seed,
            presence=presence,
        )


@dataclass(frozen=True)
class Job:
    """One batch run as a task sees it: the store, the split, the lookup and the options."""

    settings: TaskSettings
    split: str
    lookup: str  # "memory" (matcher over the split's scene graphs) or "store" (Cypher lookup)
    options: GenerationOptions | None = None  # generation only
    related: RelatedOptions | None = None  # distractor runs only
    key: str = ""  # the run key: a worker's cached provider belongs to one job

    def __post_init__(self) -> None:
        if self.lookup not in LOOKUPS:
            raise ValueError(f"lookup must be one of {LOOKUPS}, got {self.lookup!r}")


@dataclass(frozen=True)
class ShardResult:
    """A finished shard: its part's bytes, how many images, and where it ran (the node id is
    filled in by the Ray wrapper, ``covr.scale.cluster``)."""

    shard: int
    data: bytes
    images: int
    node: str
    pid: int


@dataclass
class _Worker:
    key: str
    store: GraphStore
    provider: RelatedProvider | None  # generation only
    lookup: RelatedLookup


_CACHED: _Worker | None = None


def worker_for(job: Job) -> _Worker:
    """The store connection and provider of this worker process for ``job`` (built once)."""
    global _CACHED
    if _CACHED is not None and _CACHED.key == job.key:
        return _CACHED
    if _CACHED is not None:
        _CACHED.store.close()
        _CACHED = None
    # on the driver's machine this attaches to the embedded server the driver started
    _CACHED = _build(job, open_store(job.settings.graph))
    return _CACHED


@contextmanager
def in_process(job: Job, store: GraphStore) -> Iterator[None]:
    """Shards run in the driver's process (no ``--ray``) use its own store connection."""
    global _CACHED
    _CACHED = _build(job, store)
    try:
        yield
    finally:
        _CACHED = None


def _build(job: Job, store: GraphStore) -> _Worker:
    settings = job.settings
    if job.lookup == "memory":  # the classifiers are not needed: only listings and scenes
        lookup = RelatedLookup(store, settings=settings.related)
    else:
        lookup, _reason = serving_lookup(RelatedLookups(store, settings.related, settings.models))
    provider: RelatedProvider | None = None
    if job.options is not None:
        ids = lookup.image_ids(job.split)
        if job.lookup == "memory":
            # the split's scene graphs sorted by id, as covr generate builds its index
            scenes = read_scenes(lookup, ids)
            max_checks = settings.questions.questions_max_checks
            words = default_exclusivity(settings.related.related_cache_names)
            provider = InMemoryRelated(scenes, words, max_checks=max_checks, presort=True)
        else:
            provider = StoreRelated(lookup, {job.split: ids})
    return _Worker(job.key, store, provider, lookup)


def read_scenes(lookup: RelatedLookup, ids: Sequence[str], chunk: int = 500) -> list[Any]:
    """Stored scene graphs of ``ids``, in id order (batched reads)."""
    out = []
    for start in range(0, len(ids), chunk):
        found = lookup.scene_graphs(ids[start : start + chunk])
        out += [found[i] for i in ids[start : start + chunk] if i in found]
    return sorted(out, key=lambda s: s.image_id)


def generate_shard(job: Job, shard: int, image_ids: Sequence[str]) -> ShardResult:
    """One record per image: its examples (canonical JSON lines, each qid once within the
    image) and why candidates were dropped; the merge drops repeats across images."""
    worker = worker_for(job)
    assert job.options is not None
    assert worker.provider is not None
    records: list[dict[str, Any]] = []
    # The shard's own per-form counts (its images are in run order): a form this shard has
    # filled is full in the merge's count too (covr.questions.quota), so its later images skip
    # it. The merge alone decides what is kept; every example made here is recorded. With an
    # image cap the merge may refuse a text this shard would count, so a form full here need
    # not be full there: the shard then makes every form for every image (the same output,
    # more work).
    local = FormQuota(job.options.per_template)
    hints = job.options.max_image_share is None
    local_seen: set[str] = set()
    with batch_collection():
        for image_id in image_ids:
            dropped: Counter[str] = Counter()
            examples: list[Example] = []
            in_image: set[str] = set()
            made = image_examples(
                worker.provider,
                job.options,
                image_id,
                dropped,
                (lambda: frozenset(local.full)) if hints else frozenset,
            )
            for example in made:
                if example["qid"] in in_image:
                    dropped["duplicate-qid"] += 1
                    continue
                in_image.add(example["qid"])
                examples.append(example)
            for text in by_text(examples):
                new = [e for e in text if e["qid"] not in local_seen]
                if local.admit(new):
                    local_seen.update(e["qid"] for e in new)
            lines = [dumps(e) for e in examples]
            qids = [e["qid"] for e in examples]
            records.append({"image": image_id, "qids": qids, "examples": lines, "dropped": dropped})
    return ShardResult(shard, encode_records(records), len(records), "", os.getpid())
