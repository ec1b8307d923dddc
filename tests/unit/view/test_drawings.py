"""SVG drawings checked without a browser: boxes where the annotation says, marks where they belong."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from covr.scene.model import Box, Object, Relation, SceneGraph
from covr.view.example_svg import example_svg, program_svg
from covr.view.roles import image_roles, scene_marks
from covr.view.scene_svg import graph_layout, scene_svg
from tests.support.view_data import sample_examples, sample_scenes

pytestmark = pytest.mark.unit
NS = {"s": "http://www.w3.org/2000/svg"}


def _scene(number: int, shirt_color: str, *, with_hat: bool = False) -> SceneGraph:
    objects = [
        Object("1", "man", ("young",), Box(10, 20, 100, 200)),
        Object("2", "shirt", (shirt_color,), Box(30, 60, 60, 70)),
        Object("3", "tree", ("green",), Box(300, 5, 90, 250)),
    ]
    if with_hat:
        objects.append(Object("4", "hat", ("red",), Box(40, 10, 30, 15)))
    return SceneGraph.build(
        source="gqa",
        original_id=str(number),
        split="val",
        objects=objects,
        relations=[Relation("r1", "wearing", "1", "2"), Relation("r2", "near", "1", "3")],
        width=400,
        height=300,
    )


def _boxes(svg: str) -> dict[str, ET.Element]:
    root = ET.fromstring(svg)
    return {
        rect.attrib["data-object-id"]: rect
        for rect in root.iter("{http://www.w3.org/2000/svg}rect")
        if "box" in rect.attrib.get("class", "").split()
    }


def test_one_box_per_object_at_the_annotated_coordinates() -> None:
    scene = _scene(1, "white", with_hat=True)
    svg = scene_svg(scene)
    boxes = _boxes(svg)
    assert set(boxes) == {"1", "2", "3", "4"}
    for obj in scene.objects:
        assert obj.box is not None
        rect = boxes[obj.id]
        got = [float(rect.attrib[k]) for k in ("x", "y", "width", "height")]
        assert got == [obj.box.x, obj.box.y, obj.box.w, obj.box.h]
    # the boxes live in the image's own pixel space
    viewport = ET.fromstring(svg).find(".//s:svg[@class='boxes']", NS)
    assert viewport is not None
    assert viewport.attrib["viewBox"] == "0 0 400 300"


def test_every_node_of_the_graph_is_drawn_once() -> None:
    scene = _scene(1, "white")
    root = ET.fromstring(scene_svg(scene))
    nodes = [
        g.attrib["data-node"]
        for g in root.iter("{http://www.w3.org/2000/svg}g")
        if "data-node" in g.attrib
    ]
    assert sorted(nodes) == sorted(
        ["o:1", "o:2", "o:3", "a:1:young", "a:2:white", "a:3:green", "r:r1", "r:r2"]
    )


def test_layout_keeps_nodes_inside_the_panel_and_apart() -> None:
    for scene in sample_scenes():
        pos = graph_layout(scene, 440, 260)
        assert all(0 <= x <= 440 and 0 <= y <= 260 for x, y in pos.values())
        assert pos == graph_layout(scene, 440, 260)  # deterministic


def test_subgraph_highlight_marks_its_match_only() -> None:
    scene = _scene(1, "white", with_hat=True)
    marks = scene_marks(scene, "man[young]-(wearing)->shirt[white]")
    svg = scene_svg(scene, marks=marks)
    boxes = _boxes(svg)
    marked = {i for i, r in boxes.items() if "match" in r.attrib["class"].split()}
    assert marked == {"1", "2"}
    root = ET.fromstring(svg)
    hot = {
        g.attrib["data-node"]
        for g in root.iter("{http://www.w3.org/2000/svg}g")
        if "match" in g.attrib.get("class", "").split()
    }
    assert hot == {"o:1", "o:2", "a:1:young", "a:2:white", "r:r1"}
    with pytest.raises(LookupError):
        scene_marks(scene, "man-(holding)->bat")


def _example(scenes: list[SceneGraph], signatures: dict[str, list[str]]) -> dict[str, Any]:
    return {
        "qid": "t-1",
        "utterance": "Is the young man wearing a white shirt?",
        "scenes": [s.image_id for s in scenes],
        "answer": True,
        "program": [
            {"operation": "find", "arguments": ["man"], "dependencies": []},
            {"operation": "filter", "arguments": ["young"], "dependencies": [0]},
            {"operation": "find", "arguments": ["shirt"], "dependencies": []},
            {"operation": "with_relation", "arguments": ["wearing"], "dependencies": [1, 2]},
            {"operation": "exists", "arguments": [], "dependencies": [3]},
        ],
        "properties": [],
        "template": "verify_attr",
        "paper_template": "VerifyAttr",
        "source_image": scenes[0].image_id,
        "subgraphs": {"g": "man[young]-(wearing)->shirt[white]"},
        "signatures": signatures,
    }


def test_distractor_shows_the_substituted_node() -> None:
    source, positive, distractor = _scene(1, "white"), _scene(2, "white"), _scene(3, "blue")
    example = _example(
        [source, positive, distractor],
        {source.image_id: [], positive.image_id: [], distractor.image_id: ["attribute@1"]},
    )
    scenes = {s.image_id: s for s in (source, positive, distractor)}
    roles = {r.image_id: r for r in image_roles(example, scenes)}
    assert roles[source.image_id].role == "source"
    assert roles[positive.image_id].role == "positive"
    d = roles[distractor.image_id]
    assert d.role == "distractor"
    assert d.concrete == "man[young]-(wearing)->shirt[blue]"
    assert [(s.position, s.old, s.new) for s in d.substitutions] == [
        ("attribute@1", "white", "blue")
    ]
    assert d.marks.substituted.attributes == {("2", "blue")}
    assert d.marks.match.objects == {"1", "2"}
    assert "white → blue" in d.label
    svg = example_svg(example, scenes)
    root = ET.fromstring(svg)
    assert root.attrib["data-qid"] == "t-1"
    subs = [
        g.attrib["data-node"]
        for g in root.iter("{http://www.w3.org/2000/svg}g")
        if "substituted" in g.attrib.get("class", "").split()
    ]
    assert subs == ["a:2:blue"]


def test_missing_image_is_drawn_as_a_placeholder() -> None:
    source = _scene(1, "white")
    example = _example([source, _scene(9, "red")], {})
    svg = example_svg(example, {source.image_id: source})
    root = ET.fromstring(svg)
    missing = [
        e
        for e in root.iter("{http://www.w3.org/2000/svg}svg")
        if "missing" in e.attrib.get("class", "")
    ]
    assert len(missing) == 1
    assert missing[0].attrib["data-image-id"] == "gqa:9"
    assert "not in the store" in svg


def test_program_tree_has_one_node_per_step_including_nested_programs() -> None:
    program = [
        {"operation": "find", "arguments": ["blanket"], "dependencies": []},
        {
            "operation": "all",
            "arguments": [
                [
                    {"operation": "find", "arguments": ["bed"], "dependencies": []},
                    {"operation": "with_relation", "arguments": ["on"], "dependencies": [-1, 0]},
                    {"operation": "exists", "arguments": [], "dependencies": [1]},
                ]
            ],
            "dependencies": [0],
        },
    ]
    root = ET.fromstring(program_svg(program))
    steps = [
        g for g in root.iter("{http://www.w3.org/2000/svg}g") if g.attrib.get("class") == "step"
    ]
    labels = sorted("".join(g.itertext()) for g in steps)
    assert labels == sorted(
        ["find blanket", "all …", "find bed", "with_relation on", "exists", "each item"]
    )


def test_generated_examples_are_all_drawn_as_valid_svg() -> None:
    scenes = {s.image_id: s for s in sample_scenes()}
    examples = sample_examples()
    assert examples
    traced = 0
    for example in examples[:120]:
        root = ET.fromstring(example_svg(example, scenes))
        panels = [
            e
            for e in root.iter("{http://www.w3.org/2000/svg}svg")
            if "covr-scene" in e.attrib.get("class", "")
        ]
        assert len(panels) == len(example["scenes"])
        for role in image_roles(example, scenes):
            if role.role == "distractor":
                traced += bool(role.marks.substituted)
    assert traced > 0


def test_photos_never_come_from_outside_the_images_folder(tmp_path: Path) -> None:
    """Issue 40 item 4: ``/photo?id=..%2Foutside:secret`` and ``%2Fany%2Fdir:secret2`` served
    files outside COVR_IMAGES_DIR (only the part after ``:`` was checked)."""
    from covr.view.sources import find_photo

    images = tmp_path / "images"
    (images / "gqa").mkdir(parents=True)
    (images / "gqa" / "1.jpg").write_bytes(b"photo")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.jpg").write_bytes(b"secret")
    (images / "gqa" / "2.jpg").symlink_to(outside / "secret.jpg")
    assert find_photo(images, "gqa:1") == (images / "gqa" / "1.jpg").resolve()
    for hostile in (
        "../outside:secret",
        f"{outside}:secret",
        "gqa:../../outside/secret",
        "..:outside",
        "gqa:2",  # a link out of the folder
        "gqa\x00:1",
    ):
        assert find_photo(images, hostile) is None, hostile
