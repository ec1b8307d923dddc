"""Generation end to end from scene graphs in memory, checked by the independent oracle."""

from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import pytest

from covr.questions.errors import GenerationError, TemplateError
from covr.questions.export import dumps, write_jsonl
from covr.questions.generate import (
    GenerationOptions,
    check_images,
    generate,
    generate_for_image,
)
from covr.questions.operators import execute
from covr.questions.templates import all_templates, default_templates
from covr.questions.world import World
from covr.related.memory import InMemoryRelated
from covr.scene.model import Object, SceneGraph
from covr.scene.subgraph import Subgraph
from tests.support.question_data import bundled_samples, synthetic_scenes
from tests.support.question_oracle import Fail, Oracle


def _generate(
    scenes: list[SceneGraph], split: str, seed: int, sources: int | None = None, **kw: Any
) -> list[dict[str, Any]]:
    provider = InMemoryRelated(scenes)
    options = GenerationOptions(split=split, seed=seed, **kw)
    ids = [s.image_id for s in scenes if s.split == split][:sources]
    return list(generate(provider, options, ids))


def _check_with_oracle(examples: list[dict[str, Any]], scenes: list[SceneGraph]) -> None:
    by_id = {s.image_id: s for s in scenes}
    for ex in examples:
        oracle = Oracle(by_id[i] for i in ex["scenes"])
        answer = oracle.run(ex["program"])
        assert not isinstance(answer, Fail), (ex["utterance"], answer)
        world = World.of(by_id[i] for i in ex["scenes"])
        assert execute(ex["program"], world, check=True) == ex["answer"]  # with type checks
        assert answer == ex["answer"], ex
        assert type(answer) is type(ex["answer"]), ex
        g = Subgraph.from_key(ex["subgraphs"]["g"])
        assert ex["source_image"] in by_id
        for image, sigs in ex["signatures"].items():
            if sigs:  # a distractor: must not contain the source subgraph
                assert not oracle.contains(image, g), (image, ex["utterance"])
            else:  # a positive (or the source image): must contain it
                assert oracle.contains(image, g), (image, ex["utterance"])
        assert 1 <= len(ex["scenes"]) <= 5
        assert len(set(ex["scenes"])) == len(ex["scenes"])
        if ex["answer_type"] == "number":
            assert 0 <= ex["answer"] <= 5


def two_answer_share(examples: list[dict[str, Any]]) -> float:
    answers: dict[str, set[str]] = defaultdict(set)
    for ex in examples:
        answers[ex["utterance"]].add(repr(ex["answer"]))
    return sum(len(a) >= 2 for a in answers.values()) / max(1, len(answers))


VAL_SOURCES = 3
"""Source images of the bundled val split the oracle test generates from (of 8).

All eight gave 21,663 examples, twice the 10,000 the test is about, and generating plus checking
them was a unit test of 199 s on a loaded machine. The first three sources (still with every
other val image as a distractor candidate), with everything else as before, give 13,262 examples
that still cover every template; the count and the template coverage stay asserted."""


@pytest.mark.slow
@pytest.mark.timeout(400)
def test_oracle_agrees_on_6000_examples(capsys: pytest.CaptureFixture[str]) -> None:
    examples: list[dict[str, Any]] = []
    all_scenes: list[SceneGraph] = []
    for split, scenes in bundled_samples().items():
        all_scenes += scenes
        sources = VAL_SOURCES if split == "val" else None
        examples += _generate(scenes, split, seed=11, sources=sources, subgraphs_per_image=None)
    synthetic = synthetic_scenes(200, seed=5)
    all_scenes += synthetic
    # every synthetic scene as a source (was 30): since every example must show its form's
    # distractors (issue 16 item 1) the small bundled samples give far fewer examples
    examples += _generate(synthetic, "val", seed=11, sources=200, subgraphs_per_image=6)
    # the opt-in similarity-reference group (CLOSURE) goes through the same oracle
    closure = ("closure",)
    for split, scenes in bundled_samples().items():
        examples += _generate(scenes, split, seed=11, subgraphs_per_image=None, templates=closure)
    examples += _generate(
        synthetic, "val", seed=11, sources=30, subgraphs_per_image=6, templates=closure
    )
    assert len(examples) >= 6_000  # 13,272 before the distractor rule, ~8,000 after
    _check_with_oracle(examples, all_scenes)
    templates = Counter(ex["template"] for ex in examples)
    assert set(templates) == set(all_templates()), set(all_templates()) - set(templates)
    share = two_answer_share(examples)
    with capsys.disabled():
        print(f"\n{len(examples)} examples agree with the oracle; two-answer share {share:.1%}")
    assert share > 0.1  # small, sparse data; see docs/questions.md for the share at scale


def test_output_is_identical_for_one_and_two_workers(tmp_path: Path) -> None:
    scenes = synthetic_scenes(150, seed=3)
    provider = InMemoryRelated(scenes)
    options = GenerationOptions(split="val", seed=9, subgraphs_per_image=6)
    ids = [s.image_id for s in scenes[:24]]
    one = write_jsonl(generate(provider, options, ids, workers=1), tmp_path / "one.jsonl")
    two = write_jsonl(generate(provider, options, ids, workers=2), tmp_path / "two.jsonl")
    assert one > 0
    assert one == two
    assert (tmp_path / "one.jsonl").read_bytes() == (tmp_path / "two.jsonl").read_bytes()
    again = [dumps(e) for e in generate(InMemoryRelated(scenes), options, ids)]
    assert "\n".join(again) + "\n" == (tmp_path / "one.jsonl").read_text()
    other = [dumps(e) for e in generate(provider, GenerationOptions("val", seed=10), ids[:4])]
    assert other != again[: len(other)]


def test_examples_record_provenance() -> None:
    scenes = bundled_samples()["val"]
    examples = _generate(scenes, "val", seed=4)
    for ex in examples:
        assert ex["seed"] == 4
        assert ex["split"] == "val"
        assert ex["properties"] == []
        assert ex["generator_version"].startswith("covr-questions/")
        assert set(ex["signatures"]) == set(ex["scenes"])
        assert ex["template"] in default_templates()
        assert ex["qid"].startswith("val-")
    assert len({e["qid"] for e in examples}) == len(examples)


# -- bad input ---------------------------------------------------------------------------------


def test_unknown_template_names_are_rejected() -> None:
    with pytest.raises(TemplateError, match="unknown template"):
        GenerationOptions(split="val", templates=("verify_attr", "nope"))


@pytest.mark.parametrize("seed", [-1, 2**63, 1.5, True])
def test_seeds_out_of_range_are_rejected(seed: Any) -> None:
    with pytest.raises(GenerationError, match="seed"):
        GenerationOptions(split="val", seed=seed)


def test_unknown_images_and_images_without_subgraphs_are_rejected() -> None:
    empty = SceneGraph.build(
        source="gqa", original_id="9", split="val", objects=[Object("1", "sky")]
    )
    scenes = [*bundled_samples()["val"], empty]
    provider = InMemoryRelated(scenes)
    options = GenerationOptions(split="val")
    with pytest.raises(GenerationError, match="unknown image"):
        check_images(provider, options, ["gqa:0"])
    with pytest.raises(GenerationError, match="no subgraph"):
        check_images(provider, options, [empty.image_id])
    with pytest.raises(GenerationError, match="split"):
        check_images(provider, GenerationOptions(split="train"), [scenes[0].image_id])
    with pytest.raises(GenerationError, match="unknown image"):
        generate_for_image(provider, options, "gqa:0")
    with pytest.raises(GenerationError, match="workers"):
        list(generate(provider, options, [scenes[0].image_id], workers=0))
