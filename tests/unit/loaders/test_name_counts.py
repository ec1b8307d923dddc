"""What a batch adds to the name statistics, counted from its store rows."""

from __future__ import annotations

import pytest

from covr.scene.model import Box, Object, Relation, RelMod, SceneGraph
from covr_loaders.writer import Batch, merge_counts, name_counts

pytestmark = pytest.mark.unit


def image(number: int, split: str, objects: list[Object], relations: list[Relation]) -> SceneGraph:
    return SceneGraph.build(
        source="test",
        split=split,
        original_id=str(number),
        width=10,
        height=10,
        objects=objects,
        relations=relations,
    )


def obj(oid: str, name: str, *attributes: str) -> Object:
    return Object(id=oid, name=name, attributes=tuple(attributes), box=Box(0, 0, 1, 1))


def test_images_count_once_per_name_and_nodes_count_every_occurrence() -> None:
    first = image(
        1,
        "train",
        [obj("1", "man", "tall", "tall"), obj("2", "man"), obj("3", "wall", "tall")],
        [
            Relation(id="a", name="near", subject="1", object="3"),
            Relation(
                id="b",
                name="near",
                subject="2",
                object="3",
                mods=(RelMod(id="at", name="at", object="1"),),
            ),
        ],
    )
    second = image(2, "val", [obj("1", "man")], [])
    third = image(3, "train", [obj("1", "man", "tall")], [])
    counts = Batch.of(0, [first, second, third]).names
    assert counts == {
        ("object", "train", "man"): [2, 3],
        ("object", "train", "wall"): [1, 1],
        ("object", "val", "man"): [1, 1],
        ("attribute", "train", "tall"): [2, 4],
        ("relation", "train", "near"): [1, 2],
        ("relmod", "train", "at"): [1, 1],
    }
    merged = {k: list(v) for k, v in counts.items()}
    merge_counts(merged, {("object", "val", "man"): [2, 5], ("object", "val", "cup"): [1, 1]})
    assert merged[("object", "val", "man")] == [3, 6]
    assert merged[("object", "val", "cup")] == [1, 1]
    assert name_counts([], [], []) == {}
