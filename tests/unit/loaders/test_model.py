"""The scene model: canonical order, validation, the store-record codec."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from covr.scene.model import (
    Box,
    Object,
    Relation,
    RelMod,
    SceneGraph,
    SceneGraphError,
    natural_key,
    to_gqa_dict,
    validate,
)
from covr.scene.records import from_store_record, object_key, relation_key, to_store_row
from covr_loaders import synthetic

pytestmark = pytest.mark.unit


def store_record(row: dict[str, Any]) -> dict[str, Any]:
    """What cypher/match/scene_graph returns for an image written from ``row``.

    Mirrors cypher/load/create_images: keys derived from ids, null properties not stored.
    """
    image_id = row["id"]
    objects = []
    for o in row["objects"]:
        props = dict(
            zip(
                ("id", "name", "attributes", "x", "y", "w", "h", "synsets", "names"), o, strict=True
            )
        )
        props["key"] = object_key(image_id, o[0])
        objects.append({k: v for k, v in props.items() if v is not None})
    relations = []
    for s, o, rid, name, synsets, mods in row["relations"]:
        props = {"key": relation_key(image_id, rid), "id": rid, "name": name}
        if synsets is not None:
            props["synsets"] = synsets
        relations.append(
            {
                "props": props,
                "subject": row["objects"][s][0],
                "object": row["objects"][o][0],
                "mods": [
                    {"props": {"id": m[1], "name": m[2]}, "object": row["objects"][m[0]][0]}
                    for m in mods
                ],
            }
        )
    return {"image": row["image"], "objects": list(reversed(objects)), "relations": relations}


def small_graph() -> SceneGraph:
    return SceneGraph.build(
        source="imsitu",
        original_id="stapling_1.jpg",
        split="dev",
        objects=[
            Object("tool", "stapler", synsets=("n04303497",)),
            Object("agent", "man", ("young",), Box(1, 2, 3, 4)),
            Object("item", "paper"),
        ],
        relations=[
            Relation(
                "stapling", "stapling", "agent", "item", mods=(RelMod("tool", "using", "tool"),)
            ),
        ],
        extras={"verb": "stapling", "frame": 0},
    )


def test_build_sorts_into_canonical_order() -> None:
    graph = small_graph()
    assert [o.id for o in graph.objects] == ["agent", "item", "tool"]
    assert graph.image_id == "imsitu:stapling_1.jpg"
    validate(graph)


def test_natural_key_orders_numbers_numerically() -> None:
    ids = ["10", "2", "a10", "a2", "b", "²"]
    ordered = sorted(ids, key=natural_key)  # no TypeError although digits and text mix
    assert ordered.index("2") < ordered.index("10")
    assert ordered.index("a2") < ordered.index("a10")


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"objects": (Object("1", ""),)}, "objects['1'].name"),
        ({"objects": (Object("1", "a"), Object("1", "b"))}, "objects['1']"),
        (
            {"relations": (Relation("r", "on", "1", "9"),), "objects": (Object("1", "a"),)},
            "relations['r'].object",
        ),
        ({"extras": {"id": "x"}}, "extras.id"),
        ({"width": float("nan")}, "width"),
        ({"extras": {"score": float("inf")}}, "extras.score"),  # issue 40: stored as 1.8e308
        ({"extras": {"score": float("nan")}}, "extras.score"),
        ({"source": "Bad Source"}, "source"),
    ],
)
def test_validate_names_the_broken_field(change: dict[str, Any], field: str) -> None:
    base: dict[str, Any] = {"source": "gqa", "original_id": "1", "split": "val"}
    graph = SceneGraph(**{**base, **change})
    with pytest.raises(SceneGraphError) as err:
        validate(graph)
    assert err.value.field == field


def test_store_record_round_trip() -> None:
    graph = small_graph()
    assert from_store_record(store_record(to_store_row(graph))) == graph


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), number=st.integers(0, 50))
def test_store_record_round_trip_synthetic(seed: int, number: int) -> None:
    graph = synthetic.Generator(seed).image(number)
    validate(graph)
    assert from_store_record(store_record(to_store_row(graph))) == graph


def test_gqa_shaped_json() -> None:
    record = to_gqa_dict(small_graph())
    assert record["id"] == "imsitu:stapling_1.jpg"
    agent = record["objects"]["agent"]
    assert agent["relations"] == [
        {
            "name": "stapling",
            "object": "item",
            "mods": [{"name": "using", "object": "tool", "id": "tool"}],
        }
    ]
    assert agent["x"] == 1
    assert agent["attributes"] == ["young"]
