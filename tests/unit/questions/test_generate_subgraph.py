"""Generation about one given subgraph (the service's subgraph source) from scene graphs in
memory: same machinery as per image, checked by the independent oracle; bad input."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import Any, cast

import pytest

from covr.questions.errors import GenerationError
from covr.questions.generate import (
    GenerationOptions,
    choose_source_image,
    generate_for_image,
    generate_for_subgraph,
    iter_examples,
)
from covr.questions.templates import select_templates
from covr.related.matcher import contains
from covr.related.memory import InMemoryRelated
from covr.related.request import RelatedRequest
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


def test_the_image_path_draws_each_subgraphs_examples_from_its_own_stream() -> None:
    """Each subgraph's examples come from a random stream of its own, the one the subgraph path
    uses: the image path gives for a subgraph what the subgraph path gives (minus repeats of an
    example it already emitted for another subgraph). A skipped subgraph (below) then changes
    nothing that the next one draws."""
    scenes = synthetic_scenes(120, seed=4)
    provider = InMemoryRelated(scenes)
    options = GenerationOptions(split="val", seed=2, subgraphs_per_image=6)
    compared = equal = 0
    for source in provider.images("val")[:4]:
        by_g: dict[str, list[str]] = {}
        for ex in generate_for_image(provider, options, source):
            by_g.setdefault(str(ex["subgraphs"]["g"]), []).append(ex["qid"])
        for key, qids in by_g.items():
            alone = [
                e["qid"]
                for e in generate_for_subgraph(provider, options, Subgraph.from_key(key), source)
            ]
            assert set(qids) <= set(alone), key
            compared += 1
            equal += qids == alone
    assert compared
    assert equal


class _NoDistractors(InMemoryRelated):
    """The in-memory provider with every distractor removed."""

    def related(self, request: RelatedRequest) -> Any:
        positives, _ = super().related(request)
        return positives, []


def test_a_subgraph_without_distractor_images_fills_no_template() -> None:
    """Every form shows at least one distractor (``min_distractors``), so a subgraph without
    one gives no example, and its templates are not filled: counted once per template as
    ``no-distractor``, with no other reason."""
    scenes = synthetic_scenes(60, seed=4)
    provider = _NoDistractors(scenes)
    options = GenerationOptions(split="val", seed=2, subgraphs_per_image=5)
    dropped: Counter[str] = Counter()
    ids = provider.images("val")[:3]
    assert list(iter_examples(provider, options, ids, dropped=dropped)) == []
    totals = Counter({k: n for k, n in dropped.items() if "/" not in k})
    assert set(totals) == {"no-distractor"}
    # once per form that the subgraph could fill (a form needing an attribute skips a bare noun)
    assert 0 < totals["no-distractor"] <= len(select_templates(options.templates)) * 5 * len(ids)
    per_form = sum(n for k, n in dropped.items() if k.endswith("/no-distractor"))
    assert per_form == totals["no-distractor"]
    assert list(iter_examples(InMemoryRelated(scenes), options, ids))  # the data has examples


class _PositivesAlways(InMemoryRelated):
    """The in-memory provider as before the positives' wait."""

    def related(self, request: RelatedRequest) -> Any:
        return super().related(replace(request, positives_if_distractors=False))


def test_positives_waiting_for_a_distractor_change_no_example() -> None:
    """With ``positives_if_distractors`` (what the engine asks when every form shows a
    distractor) the in-memory provider skips the positives of a subgraph without distractors;
    an answer with distractors is the plain one, and the examples are the same."""
    scenes = synthetic_scenes(60, seed=4)
    provider = InMemoryRelated(scenes)
    asked = RelatedRequest(split="val", positives_limit=7, max_distance=2, per_signature=3, seed=2)
    kinds: Counter[bool] = Counter()
    for scene in scenes[:6]:
        for g in enumerate_subgraphs(scene)[::3]:
            plain = provider.related(asked.about(g))
            waited = provider.related(replace(asked.about(g), positives_if_distractors=True))
            kinds[bool(plain[1])] += 1
            assert waited == (plain if plain[1] else ([], [])), g.key
    assert all(kinds[k] for k in (True, False)), kinds
    options = GenerationOptions(split="val", seed=2, subgraphs_per_image=8)
    ids = provider.images("val")[:4]
    outputs = []
    for kind in (InMemoryRelated, _PositivesAlways):
        dropped: Counter[str] = Counter()
        outputs.append((list(iter_examples(kind(scenes), options, ids, dropped=dropped)), dropped))
    assert outputs[0][0]
    assert outputs[0] == outputs[1]
    assert outputs[0][1]["no-distractor"]
