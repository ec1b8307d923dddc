"""Mass nouns are never counted (issue 16 item 3): the shipped list and the picker that uses it."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

import pytest

from covr.questions.generate import GenerationOptions, generate
from covr.questions.mass_nouns import build, dataset_vocabulary, is_mass, mass_nouns, render
from covr.related.memory import InMemoryRelated
from covr.scene.model import SceneGraph
from covr.settings import Settings
from tests.support.question_data import bundled_samples

COUNTING = (
    "compare_count_objects",
    "verify_count_ref_objects",
    "count_ref_objects",
    "verify_count_ref_group_by",
    "count_ref_group_by",
    "quantifier_relation",
    "quantifier_attr",
    "quantifier_same_attr",
)

STUFF = r"(ketchup|air)"
COUNTED = re.compile(
    rf"\b(ketchups|airs)\b|\b\d+ {STUFF}\b|^(all|some|no|how many|do all) {STUFF}\b"
    rf"|\b(more|fewer|number of) {STUFF}\b",
    re.IGNORECASE,
)
"""A mass noun in a counted position: a plural, after a number, quantified, compared."""


@pytest.mark.parametrize("noun", ["ketchup", "air", "water", "grass", "sky", "Ketchup "])
def test_stuff_is_mass(noun: str) -> None:
    assert is_mass(noun)


@pytest.mark.parametrize("noun", ["car", "person", "raincoat", "pizza", "apple", "cloud", "shirt"])
def test_things_are_countable(noun: str) -> None:
    assert not is_mass(noun)


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_shipped_list_is_what_the_command_regenerates(tmp_path: Any) -> None:
    """The committed file is reproducible from WordNet (regenerate: python -m
    covr.questions.mass_nouns), so nobody edits it by hand."""
    from covr.models import open_configured_wordnet

    wordnet = open_configured_wordnet(Settings(data_dir=tmp_path).models)
    words = build(wordnet, dataset_vocabulary())
    assert frozenset(words) == mass_nouns()
    shipped = Path(__file__).parents[3] / "server/covr/questions/resources/mass_nouns.json"
    assert render(words) == shipped.read_text()


def _renamed(scene: SceneGraph, names: dict[str, str]) -> SceneGraph:
    objects = [dataclasses.replace(o, name=names.get(o.name, o.name)) for o in scene.objects]
    return dataclasses.replace(scene, objects=tuple(objects))


def test_no_counting_question_counts_a_mass_noun() -> None:
    """Frequent GQA nouns renamed to mass nouns the old hand list missed: counting and
    quantifier forms must not ask about them (they still appear in the other forms)."""
    names = {"shirt": "ketchup", "tree": "air", "window": "ketchup", "man": "air"}
    scenes = [_renamed(s, names) for s in bundled_samples()["val"]]
    options = GenerationOptions(split="val", seed=1, templates=COUNTING)
    examples = list(generate(InMemoryRelated(scenes), options, [s.image_id for s in scenes]))
    assert examples
    counted = [e["utterance"] for e in examples if COUNTED.search(e["utterance"])]
    assert counted == []
    everything = GenerationOptions(split="val", seed=1)
    others = generate(InMemoryRelated(scenes), everything, [s.image_id for s in scenes])
    assert any(re.search(r"\b(ketchup|air)\b", e["utterance"]) for e in others)
