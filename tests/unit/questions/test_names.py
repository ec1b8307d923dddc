"""Name equivalence (issue 16 item 3): no example shows an image where a co-referring name
("person" beside "man") makes the answer depend on which name the reader counts."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from covr.questions.generate import GenerationOptions, generate
from covr.questions.names import ambiguous_images, corefer, holds_coreferent, queried_names
from covr.related.memory import InMemoryRelated
from covr.scene.model import Object, SceneGraph
from tests.support.question_data import bundled_samples

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("a", "b"),
    [("man", "person"), ("people", "person"), ("men", "man"), ("guy", "man"), ("boy", "child")],
)
def test_corefering_names(a: str, b: str) -> None:
    assert corefer(a, b)
    assert corefer(b, a)


@pytest.mark.parametrize(("a", "b"), [("man", "woman"), ("man", "man"), ("dog", "cat")])
def test_names_that_do_not_corefer(a: str, b: str) -> None:
    assert not corefer(a, b)


def test_images_holding_a_corefering_name() -> None:
    names = {"a": ["person", "hat"], "b": ["man"], "c": ["woman", "dog"], "d": []}
    assert ambiguous_images(["man"], names) == ["a"]
    assert ambiguous_images(["man", "dog"], names) == ["a"]
    assert ambiguous_images(["person"], names) == ["b", "c"]
    assert holds_coreferent(frozenset({"men"}), frozenset({"man"}))
    assert not holds_coreferent(frozenset({"man"}), frozenset({"man", "woman"}))
    assert not holds_coreferent(frozenset(), frozenset({"person"}))


def test_queried_names_reach_nested_programs() -> None:
    inner: list[dict[str, Any]] = [{"operation": "find", "arguments": ["hat"], "dependencies": []}]
    program: list[dict[str, Any]] = [
        {"operation": "find", "arguments": ["man"], "dependencies": []},
        {"operation": "all", "arguments": [inner], "dependencies": [0]},
        {"operation": "choose_name", "arguments": ["cap", "bag"], "dependencies": [0]},
    ]
    assert queried_names(program) == {"man", "hat", "cap", "bag"}


def _with_person(scene: SceneGraph) -> SceneGraph:
    """The scene plus an unrelated "person" wherever a "man" is: the man may be that person."""
    if not any(o.name == "man" for o in scene.objects):
        return scene
    extra = Object("99999", "person", ("standing",))
    return dataclasses.replace(scene, objects=(*scene.objects, extra))


def test_no_example_shows_a_corefering_name() -> None:
    samples = bundled_samples()["dev"]  # imSitu: many frames with a man, many distractors
    with_man = [s for s in samples if any(o.name == "man" for o in s.objects)]
    assert len(with_man) >= 2
    marked = {s.image_id for s in with_man[::2]}  # half of them get a "person" too
    scenes = [_with_person(s) if s.image_id in marked else s for s in samples]
    names = {s.image_id: [o.name for o in s.objects] for s in scenes}
    options = GenerationOptions(split="dev", seed=1)
    examples = list(generate(InMemoryRelated(scenes), options, [s.image_id for s in scenes]))
    assert examples
    bad = [
        (e["utterance"], e["scenes"])
        for e in examples
        if ambiguous_images(queried_names(e["program"]), {i: names[i] for i in e["scenes"]})
    ]
    assert bad == []
    assert any("man" in queried_names(e["program"]) for e in examples)
