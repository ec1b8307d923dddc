"""Visual Genome reader: normalization, several names, split files, bad input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from covr.scene.model import SceneGraph
from covr_loaders import vg
from covr_loaders.errors import Problem
from covr_loaders.jsonio import ByteCounter
from covr_loaders.samples import SAMPLES

pytestmark = pytest.mark.unit


def collect(items: Any) -> tuple[dict[str, SceneGraph], list[Problem]]:
    graphs: dict[str, SceneGraph] = {}
    problems: list[Problem] = []
    for item in items:
        if isinstance(item, Problem):
            problems.append(item)
        else:
            graphs[item.original_id] = item
    return graphs, problems


def test_sample() -> None:
    graphs, problems = collect(
        vg.read(SAMPLES / "vg" / "scene_graphs.json", split="train", counter=ByteCounter())
    )
    assert problems == []
    assert len(graphs) == 4
    first = graphs["1"]
    man = first.object_by_id()["1058498"]
    assert (man.name, man.names, man.synsets) == ("man", ("person", "guy"), ("man.n.01",))
    assert man.attributes == ("walking",)  # trimmed
    predicates = {r.name for r in first.relations}
    assert predicates == {"on", "wears", "parked on", "next to", "has"}  # normalized
    assert graphs["2370799"].image_id == "vg:2370799"  # same original id as a GQA image


def image(**extra: Any) -> dict[str, Any]:
    record: dict[str, Any] = {
        "image_id": 7,
        "objects": [
            {"object_id": 1, "names": ["Man"], "x": 1, "y": 1, "w": 2, "h": 2},
            {"object_id": 2, "names": ["hat"], "x": 1, "y": 1, "w": 2, "h": 2},
        ],
        "relationships": [
            {"relationship_id": 9, "predicate": " Wearing ", "subject_id": 1, "object_id": 2}
        ],
    }
    record.update(extra)
    return record


@pytest.mark.parametrize(
    ("record", "field"),
    [
        (
            image(relationships=[{"predicate": "on", "subject_id": 1, "object_id": 5}]),
            "relationships[0].object_id",
        ),
        (image(objects=[{"object_id": 1, "names": []}]), "objects[0].names"),
        (
            image(objects=[{"object_id": 1, "names": ["a"]}, {"object_id": 1, "names": ["b"]}]),
            "objects[1].object_id",
        ),
        (
            image(relationships=[{"predicate": 3, "subject_id": 1, "object_id": 2}]),
            "relationships[0].predicate",
        ),
    ],
)
def test_bad_records(tmp_path: Path, record: Any, field: str) -> None:
    path = tmp_path / "scene_graphs.json"
    path.write_text(json.dumps([image(image_id=1), record, image(image_id=3)]))
    graphs, problems = collect(vg.read(path, split="train", counter=ByteCounter()))
    assert sorted(graphs) == ["1", "3"]
    assert [(p.record, p.field) for p in problems] == [("7", field)]


def test_split_files_are_merged(tmp_path: Path) -> None:
    objects = [
        {
            "image_id": 1,
            "objects": [{"object_id": 10, "names": ["dog"], "x": 0, "y": 0, "w": 5, "h": 5}],
        },
        {"image_id": 2, "objects": [{"object_id": 20, "names": ["cat"]}]},
    ]
    attributes = [
        {
            "image_id": 2,
            "attributes": [{"object_id": 20, "names": ["cat"], "attributes": ["Black "]}],
        },
    ]
    relationships = [
        {
            "image_id": 1,
            "relationships": [
                {
                    "relationship_id": 5,
                    "predicate": "ON",
                    "subject": {"object_id": 10, "names": ["dog"]},
                    "object": {"object_id": 11, "name": "couch", "x": 1, "y": 1, "w": 9, "h": 9},
                }
            ],
        },
    ]
    paths = {}
    for name, data in (
        ("objects.json", objects),
        ("attributes.json", attributes),
        ("relationships.json", relationships),
    ):
        paths[name] = tmp_path / name
        paths[name].write_text(json.dumps(data))
    graphs, problems = collect(vg.read_split_files(paths, split="train", counter=ByteCounter()))
    assert problems == []
    assert graphs["2"].objects[0].attributes == ("black",)
    dog = graphs["1"]
    assert {o.name for o in dog.objects} == {"dog", "couch"}  # couch came from the relationship
    assert dog.relations[0].name == "on"
