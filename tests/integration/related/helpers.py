"""Putting scene graphs into the real store the way a load does, and comparing with the oracle."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager

import pytest

from covr.graph import GraphStore, name_stats
from covr.related import matcher as reference
from covr.related import search
from covr.related.api import Distractor
from covr.related.exclusivity import Exclusivity
from covr.related.lookup import RelatedLookup, RelatedResult
from covr.scene.model import Box, Object, Relation, RelMod, SceneGraph
from covr.scene.subgraph import Subgraph
from covr_loaders.writer import Batch, write_batch

BIG = Box(0, 0, 100, 100)


def put(store: GraphStore, scenes: Sequence[SceneGraph], *, stats: bool = True) -> None:
    """Write ``scenes`` with the loader's batch writer, then refresh the name statistics."""
    for start in range(0, len(scenes), 200):
        write_batch(store, Batch.of(start // 200, list(scenes[start : start + 200])))
    if stats:
        name_stats.refresh(store)


def scene(
    number: int,
    objects: Iterable[tuple[str, Sequence[str]]],
    relations: Iterable[
        tuple[int, str, int] | tuple[int, str, int, Sequence[tuple[str, int]]]
    ] = (),
    split: str = "val",
) -> SceneGraph:
    """A scene from compact tuples: objects ``(name, attributes)``, relations by object index."""
    objs = [Object(str(i), n, tuple(a), BIG) for i, (n, a) in enumerate(objects)]
    rels = []
    for k, item in enumerate(relations):
        subject, name, target = item[0], item[1], item[2]
        mods = item[3] if len(item) > 3 else ()
        rels.append(
            Relation(
                f"r{k}",
                name,
                str(subject),
                str(target),
                tuple(RelMod(f"m{j}", m, str(o)) for j, (m, o) in enumerate(mods)),
            )
        )
    return SceneGraph.build(
        source="test", original_id=str(number), split=split, objects=objs, relations=rels
    )


def full(
    lookup: RelatedLookup, g: Subgraph, distance: int, split: str | None = None
) -> RelatedResult:
    """Every positive and distractor (sampling off)."""
    return lookup.related(
        g,
        split=split,
        max_distance=distance,
        per_signature=None,
        positives_limit=None,
        seed=0,
    )


def distractor_set(
    results: Iterable[Distractor],
) -> set[tuple[str, str, str, tuple[str, ...]]]:
    return {
        (d.image_id, d.signature, d.subgraph.key, tuple(a.key for a in d.alternatives))
        for d in results
    }


def assert_congruent(
    lookup: RelatedLookup,
    index: reference.SceneIndex,
    g: Subgraph,
    exclusivity: Exclusivity,
    distance: int,
    split: str | None = None,
) -> None:
    result = full(lookup, g, distance, split)
    expected_positives = reference.positives(index, g)
    expected = reference.distractors(index, g, exclusivity, distance)
    assert sorted(result.positives) == expected_positives, g.key
    assert distractor_set(result.distractors) == distractor_set(expected), (g.key, distance)


@contextmanager
def positive_candidates(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """Counts the candidate images the lookups hand to their positives' state (one total)."""
    count = [0]
    real_take = search.Search._take_batches

    def take(self: search.Search, positives: bool = True) -> dict[int, list[str]]:
        batches = real_take(self, positives)
        count[0] += len(batches.get(0, ()))
        return batches

    with monkeypatch.context() as patch:
        patch.setattr(search.Search, "_take_batches", take)
        yield count
