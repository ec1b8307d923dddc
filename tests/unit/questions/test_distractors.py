"""Distractors by construction (issue 16 item 1): every example shows its form's declared
minimum of distractor images and a number of images within the form's ``shown`` range."""

from __future__ import annotations

import pytest

from covr.questions.generate import GenerationOptions, generate
from covr.questions.templates import all_templates
from covr.related.memory import InMemoryRelated
from tests.support.question_data import bundled_samples

pytestmark = pytest.mark.unit


def test_every_form_declares_its_images() -> None:
    for template in all_templates().values():
        rule = template.images
        assert rule.min_distractors >= 1, template.name
        assert rule.shown == (2, 5), template.name


@pytest.mark.parametrize("split", ["val", "dev", "train"])
def test_every_example_has_its_distractors(split: str) -> None:
    scenes = bundled_samples()[split]
    options = GenerationOptions(split=split, seed=1)
    examples = list(generate(InMemoryRelated(scenes), options, [s.image_id for s in scenes]))
    assert examples
    templates = all_templates()
    short = []
    for e in examples:
        rule = templates[e["template"]].images
        distractors = sum(1 for sigs in e["signatures"].values() if sigs)
        if distractors < rule.min_distractors or not (
            rule.shown[0] <= len(e["scenes"]) <= rule.shown[1]
        ):
            short.append((e["template"], e["utterance"], e["scenes"]))
    assert short == []
