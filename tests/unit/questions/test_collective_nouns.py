"""Collective plurals are not counted (issue 16 hand audit: "How many green leaves are there?"
answered 1 for the one object named "leaves")."""

from __future__ import annotations

from typing import Any

import pytest

from covr.questions.generate import GenerationOptions, generate
from covr.questions.mass_nouns import counted_names, is_collective
from covr.related.memory import InMemoryRelated
from tests.support.question_data import bundled_samples

pytestmark = pytest.mark.unit


def test_collective_plurals_and_pairs() -> None:
    for name in ("leaves", "people", "trees", "clouds", "men", "skis", "tennis shoes"):
        assert is_collective(name), name
    for name in ("jeans", "glasses", "shorts", "man", "bus", "grass", "sheep", "lens", "dress"):
        assert not is_collective(name), name


def _step(op: str, args: list[Any], deps: list[int]) -> dict[str, Any]:
    return {"operation": op, "arguments": args, "dependencies": deps}


def test_counted_names_are_the_roots_of_counted_object_sets() -> None:
    leaves = [_step("find", ["tree"], []), _step("find", ["leaves"], [])]
    leaves.append(_step("with_relation", ["on"], [1, 0]))
    assert list(counted_names([*leaves, _step("count", [], [2])])) == ["leaves"]
    images = [*leaves, _step("unique_images", [], [2]), _step("count", [], [3])]
    assert list(counted_names(images)) == []  # images are counted, not leaves
    grouped = [*leaves, _step("group_by_images", [], [2])]
    assert list(counted_names(grouped)) == ["leaves"]
    nested = [
        _step("find", ["giraffe"], []),
        _step("all", [[*leaves[:2], _step("count", [], [1])]], [0]),
    ]
    assert list(counted_names(nested)) == ["leaves"]


def test_no_generated_example_counts_a_collective_plural() -> None:
    scenes = bundled_samples()["val"]  # has "leaves" and "people"
    examples = list(
        generate(
            InMemoryRelated(scenes),
            GenerationOptions(split="val", seed=1),
            [s.image_id for s in scenes],
        )
    )
    assert any("leaves" in e["utterance"] for e in examples)
    counted = [
        e["utterance"]
        for e in examples
        if any(is_collective(n) for n in counted_names(e["program"]))
    ]
    assert counted == []
