"""Generation about one given subgraph (the service's subgraph source) from scene graphs in
memory: same machinery as per image, checked by the independent oracle; bad input."""

from __future__ import annotations

from typing import Any, cast

import pytest

from covr.questions.errors import GenerationError
from covr.questions.generate import (
    GenerationOptions,
    choose_source_image,
    generate_for_image,
    generate_for_subgraph,
)
from covr.related.matcher import contains
from covr.related.memory import InMemoryRelated
from covr.scene.enumerate import enumerate_subgraphs
from covr.scene.subgraph import Subgraph
from tests.support.question_data import synthetic_scenes
from tests.support.question_oracle import Fail, Oracle

pytestmark = pytest.mark.unit


def test_questions_about_a_subgraph_are_executed_and_about_it() -> None:
    scenes = synthetic_scenes(120, seed=4)
    by_id = {s.image_id: s for s in scenes}
    provider = InMemoryRelated(scenes)
    options = GenerationOptions(split="val", seed=2)
    source = provider.images("val")[0]
    produced = 0
    for g in enumerate_subgraphs(by_id[source])[:6]:
        positives = provider.positives(g, "val", limit=options.positives_limit + 1, seed=2)
        chosen = choose_source_image(positives, g, 2)
        assert chosen in positives
        assert choose_source_image(list(reversed(positives)), g, 2) == chosen  # set, not order
        examples = generate_for_subgraph(provider, options, g, chosen)
        assert examples == generate_for_subgraph(provider, options, g, chosen)
        for ex in examples:
            assert ex["subgraphs"]["g"] == g.key
            assert ex["source_image"] == chosen
            program = cast("list[dict[str, Any]]", ex["program"])  # the oracle takes plain dicts
            answer = Oracle(by_id[i] for i in ex["scenes"]).run(program)
            assert not isinstance(answer, Fail)
            assert answer == ex["answer"]
            for image, sigs in ex["signatures"].items():
                assert contains(by_id[image], g) == (not sigs)
        produced += len(examples)
    assert produced > 0
    # The image path is unchanged by the addition (its own random stream).
    assert generate_for_image(provider, options, source) == generate_for_image(
        provider, options, source
    )


def test_the_source_choice_is_seeded() -> None:
    g = Subgraph.from_key("man")
    pool = [f"gqa:{i}" for i in range(20)]
    picks = {choose_source_image(pool, g, seed) for seed in range(30)}
    assert len(picks) > 3
    assert choose_source_image(pool, g, 7) == choose_source_image(pool, g, 7)


def test_bad_input() -> None:
    scenes = synthetic_scenes(40, seed=4)
    provider = InMemoryRelated(scenes)
    options = GenerationOptions(split="val", seed=1)
    with pytest.raises(GenerationError, match="no image contains"):
        choose_source_image([], Subgraph.from_key("man"), 1)
    absent = Subgraph.from_key("unicorn[purple]")
    with pytest.raises(GenerationError, match="does not contain") as err:
        generate_for_subgraph(provider, options, absent, scenes[0].image_id)
    assert err.value.field == "image"
    with pytest.raises(GenerationError, match="unknown image"):
        generate_for_subgraph(provider, options, absent, "gqa:nowhere")
