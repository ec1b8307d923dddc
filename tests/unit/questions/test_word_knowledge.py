"""Word knowledge (issue 37 item 3): the shipped tables and the rules that use them, on the
examples the issue measured on 100 real GQA images.

The tables are derived by ``python -m covr.questions.word_knowledge`` (module docstring); the
real-sample acceptance is ``test_word_knowledge_real.py``.
"""

from __future__ import annotations

import json
import random
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from covr.questions import word_knowledge as wk
from covr.questions.engine import ImageGenerator
from covr.questions.generate import GenerationOptions, generate
from covr.questions.mass_nouns import counted_names, is_collective, is_mass, uncountable
from covr.questions.slots import Related
from covr.questions.templates import default_templates
from covr.questions.word_knowledge import build as wk_build
from covr.questions.world import default_attribute_types
from covr.related.api import RelatedImage
from covr.related.memory import InMemoryRelated
from covr.scene.edits import substitute
from covr.scene.model import Object, Relation, SceneGraph
from covr.scene.subgraph import Subgraph
from covr.scene.text import plural, singular
from covr.settings import Settings

TYPES = default_attribute_types()


def _step(op: str, deps: list[int], *args: Any) -> dict[str, Any]:
    return {"operation": op, "arguments": list(args), "dependencies": deps}


# -- the tables --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("noun", "category"),
    [("jacket", "ripeness"), ("pitcher", "weather"), ("jacket", "weather"), ("chair", "light")],
)
def test_a_category_the_data_never_shows_is_not_taken(noun: str, category: str) -> None:
    """ "What is the ripeness of the jacket?" / "What is the weather of the pitcher?": ``green``
    is also a ripeness and ``clear`` a weather, but no jacket is ripe and no pitcher rainy."""
    assert category not in wk.categories(noun)


@pytest.mark.parametrize(
    ("noun", "category"),
    [("banana", "ripeness"), ("sky", "weather"), ("jacket", "color"), ("tree", "height")],
)
def test_a_category_the_data_shows_is_taken(noun: str, category: str) -> None:
    assert category in wk.categories(noun)


def test_color_is_the_default_category() -> None:
    """Taken by most data nouns, so by every noun, also one the files do not know."""
    assert wk.knowledge().default_categories == frozenset({"color"})
    assert wk.categories("zorblax") == frozenset({"color"})


def test_decoys_are_values_the_noun_takes() -> None:
    """ "Is the dog lying or parked?": pose is the dog's, "parked" is not."""
    assert not wk.decoy_fits("dog", "lying", "parked", TYPES.types)
    assert wk.decoy_fits("car", "standing", "parked", TYPES.types)
    assert not wk.decoy_fits("faucet", "chrome", "paper", TYPES.types)  # material: by value
    assert wk.decoy_fits("man", "tall", "short", TYPES.types)  # a two-pole scale
    assert wk.decoy_fits("banana", "yellow", "blue", TYPES.types)  # the default category
    assert not wk.decoy_fits("jacket", "green", "ripe", TYPES.types)  # no ripe jacket


def test_implied_attributes() -> None:
    assert {"young", "little"} <= wk.implied("boy")
    assert {"young", "little"} <= wk.implied("girls")
    assert {"young", "baby"} <= wk.implied("puppy")
    assert wk.implied("man") == frozenset()  # the samples show young and old men
    assert wk.implied("woman") == frozenset()


@pytest.mark.parametrize("noun", ["mustard", "basil", "toilet paper", "produce"])
def test_the_mass_nouns_the_issue_counted(noun: str) -> None:
    assert is_mass(noun)
    assert uncountable(noun) == "mass-noun"
    assert plural(noun) == noun


@pytest.mark.parametrize("noun", ["audience", "crowd", "herd", "team"])
def test_group_nouns_are_collective(noun: str) -> None:
    assert wk.is_group(noun)
    assert is_collective(noun)


@pytest.mark.parametrize("noun", ["game", "match", "race", "party", "event", "day", "wedding"])
def test_events_are_not_things(noun: str) -> None:
    assert wk.is_event(noun)
    assert uncountable(noun) == "event-noun"


@pytest.mark.parametrize(
    "noun", ["racket", "wave", "table", "line", "man", "pepper", "cd", "rose", "bus"]
)
def test_things_stay_countable(noun: str) -> None:
    assert uncountable(noun) is None


def test_plural_only_nouns_have_no_second_plural() -> None:
    assert plural("vertical blinds") == "vertical blinds"  # was "vertical blindses"
    assert plural("blinds") == "blinds"
    assert plural("blind") == "blinds"
    assert singular("window blinds") == "window blinds"
    assert is_collective("blinds")


def test_every_entry_has_its_source() -> None:
    def load(name: str) -> dict[str, Any]:
        text = resources.files("covr.questions").joinpath("resources", name).read_text()
        data = json.loads(text)
        assert isinstance(data, dict)
        return data

    nouns = load(wk.CATEGORIES_RESOURCE)
    assert {s["dataset"] for s in nouns["sources"]} >= {"gqa-real", "vg-real", "wordnet"}
    for noun, entry in nouns["nouns"].items():
        for category, source in entry.get("categories", {}).items():
            assert source.startswith(("data: ", "class ")), (noun, category, source)
    assert set(nouns["relative_scales"]) == set(wk.RELATIVE_SCALES)
    for noun, entry in load(wk.IMPLIED_RESOURCE)["nouns"].items():
        assert entry["source"].startswith("reviewed; WordNet"), noun
    uncountable_doc = load(wk.UNCOUNTABLE_RESOURCE)
    for section in ("groups", "events", "countable"):
        for noun, source in uncountable_doc[section].items():
            assert source.startswith(("reviewed: ", "wordnet ")), (noun, source)


# -- the rules in generation ------------------------------------------------------------------


def test_implied_uses_of_a_program() -> None:
    """ "How many images contain a young boy?" uses ``young`` on ``boy``; so does "What is the
    age of the boy?" (the noun answers it); "a young man" does not."""
    young_boy = [_step("find", [], "boy"), _step("filter", [0], "young")]
    young_boy += [_step("unique_images", [1]), _step("count", [2])]
    assert [u.attribute for u in wk.implied_uses(young_boy, TYPES.types)] == ["young"]
    age = [_step("find", [], "boy"), _step("unique", [0]), _step("query_attr", [1], "age")]
    assert [u.attr_type for u in wk.implied_uses(age, TYPES.types)] == ["age"]
    nested = [
        _step("find", [], "kid"),
        _step("all", [0], [_step("verify_attr", [-1], "little")]),
    ]
    assert [u.noun for u in wk.implied_uses(nested, TYPES.types)] == ["kid"]
    young_man = [_step("find", [], "man"), _step("filter", [0], "young"), _step("count", [1])]
    assert list(wk.implied_uses(young_man, TYPES.types)) == []


def _scene(
    n: int, objects: list[tuple[str, tuple[str, ...]]], rels: list[tuple[int, str, int]]
) -> SceneGraph:
    objs = [Object(str(i), name, attrs) for i, (name, attrs) in enumerate(objects)]
    relations = [Relation(f"r{k}", r, str(s), str(o)) for k, (s, r, o) in enumerate(rels)]
    return SceneGraph.build(
        source="gqa", original_id=str(n), split="val", objects=objs, relations=relations
    )


def _boys() -> list[SceneGraph]:
    """Young and plain boys, young and old men, each holding something (real GQA's habit: 3
    "young boy" objects to 9 plain ones in the samples)."""
    holding = [(0, "holding", 1)]
    return [
        _scene(1, [("boy", ("young",)), ("kite", ("red",))], holding),
        _scene(2, [("boy", ()), ("kite", ("red",))], holding),
        _scene(3, [("boy", ("little",)), ("ball", ("red",))], holding),
        _scene(4, [("boy", ()), ("ball", ("blue",))], holding),
        _scene(5, [("man", ("young",)), ("kite", ("red",))], holding),
        _scene(6, [("man", ("old",)), ("kite", ("red",))], holding),
        _scene(7, [("man", ()), ("ball", ("red",))], holding),
        _scene(8, [("girl", ("young",)), ("kite", ("blue",))], holding),
        _scene(9, [("girl", ()), ("kite", ("blue",))], holding),
    ]


def test_no_question_uses_an_attribute_its_noun_implies() -> None:
    """ "How many images contain a young boy?" -> 1 where a reader, seeing the plain boy of the
    second image, says 2 (17 of 20 such examples on 100 real GQA images): never asked."""
    scenes = _boys()
    examples = list(
        generate(InMemoryRelated(scenes), GenerationOptions("val", seed=3), _ids(scenes))
    )
    assert examples
    used = [e["utterance"] for e in examples if list(wk.implied_uses(e["program"], TYPES.types))]
    assert used == []
    texts = " ".join(e["utterance"] for e in examples).lower()
    for phrase in ("young boy", "little boy", "young girl"):
        assert phrase not in texts
    assert "young man" in texts or "old man" in texts  # "man" implies no age


def _ids(scenes: list[SceneGraph]) -> list[str]:
    return [s.image_id for s in scenes]


def _generator() -> ImageGenerator:
    return ImageGenerator(
        None,  # type: ignore[arg-type]  # filling needs no related images
        GenerationOptions(split="val"),
        list(default_templates().values()),
        TYPES,
    )


def _related(key: str, edits: list[tuple[str, dict[str, str]]]) -> Related:
    g = Subgraph.from_key(key)
    found = [RelatedImage(f"x:{i}", sig, substitute(g, ch)) for i, (sig, ch) in enumerate(edits)]
    return Related("x:source", g, [], found)


def _texts(template: str, rel: Related) -> list[str]:
    gen = _generator()
    t = default_templates()[template]
    out = []
    for seed in range(12):
        for combo in gen._combos(t, random.Random(seed)):
            instance = gen._instantiate(t, rel, random.Random(seed), combo)
            if instance is not None:
                out.append(instance.text)
    return out


def test_relative_scales_are_compared_within_one_noun() -> None:
    """ "Do the car and the truck have the same size?" compares a relative scale across kinds
    of thing; "Do the car that is on a street and the car that is on a road ...?" does not."""
    across = _related("car[large]-(on)->street", [("object@0", {"object@0": "truck"})])
    assert _texts("specific_same_attr", across) == []
    within = _related("car[large]-(on)->street", [("object@1", {"object@1": "road"})])
    assert "Do the car that is on a street and the car that is on a road have the same size?" in (
        _texts("specific_same_attr", within)
    )
    colors = _related("car[red]-(on)->street", [("object@0", {"object@0": "truck"})])
    assert any("the same color" in t for t in _texts("specific_same_attr", colors))


def test_asked_categories_are_the_nouns() -> None:
    """``green`` is a color and a ripeness: asked of a jacket, only its color."""
    rel = _related("jacket[green]-(on)->chair", [("object@1", {"object@1": "bed"})])
    texts = _texts("query_attr", rel)
    assert texts
    assert set(texts) == {"What is the color of the jacket that is on a chair?"}
    banana = _related("banana[green]-(on)->plate", [("object@1", {"object@1": "table"})])
    asked = set(_texts("query_attr", banana))
    assert "What is the ripeness of the banana that is on a plate?" in asked


def test_decoys_come_from_the_nouns_values() -> None:
    """The decoy "parked" (a car's, from a distractor image) is no choice for a dog."""
    dog = _related(
        "dog[lying]-(on)->grass",
        [("object@0+attribute@0", {"object@0": "car", "attribute@0": "parked"})],
    )
    assert _texts("choose_attr", dog) == []
    man = _related(
        "man[tall]-(on)->street",
        [("object@0+attribute@0", {"object@0": "woman", "attribute@0": "short"})],
    )
    assert any(" tall or short?" in t or " short or tall?" in t for t in _texts("choose_attr", man))


def _renamed(scene: SceneGraph, names: dict[str, str]) -> SceneGraph:
    objects = [Object(o.id, names.get(o.name, o.name), o.attributes, o.box) for o in scene.objects]
    return SceneGraph.build(
        source=scene.source,
        original_id=scene.original_id,
        split=scene.split,
        objects=objects,
        relations=scene.relations,
    )


def test_no_counting_question_counts_an_uncountable_noun() -> None:
    """Frequent nouns of the bundled sample renamed to the issue's uncountable nouns: no count
    or comparison of counts is about them (they still appear elsewhere)."""
    from tests.support.question_data import bundled_samples

    names = {"shirt": "mustard", "tree": "audience", "man": "game", "fence": "toilet paper"}
    scenes = [_renamed(s, names) for s in bundled_samples()["val"]]
    examples = list(
        generate(InMemoryRelated(scenes), GenerationOptions("val", seed=1), _ids(scenes))
    )
    assert examples
    counted = [
        (e["utterance"], n)
        for e in examples
        for n in counted_names(e["program"])
        if n in names.values()
    ]
    assert counted == []
    texts = " ".join(e["utterance"] for e in examples)
    for noun in names.values():
        assert noun in texts, noun
    for word in ("audiences", "games", "mustards", "toilet papers"):
        assert word not in texts


# -- reproducibility -----------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_shipped_files_are_what_the_command_regenerates(tmp_path: Path) -> None:
    """``python -m covr.questions.word_knowledge`` rewrites the committed files byte for byte
    (from the real samples, WordNet and the reviewed lists)."""
    if not (wk_build.default_real_dir() / "gqa" / "train_sceneGraphs.first100.json").is_file():
        pytest.skip(f"the real GQA/VG samples are not in {wk_build.default_real_dir()}")
    from covr.models import open_configured_wordnet

    wordnet = open_configured_wordnet(Settings(data_dir=tmp_path).models)
    shipped = Path(__file__).parents[3] / "server/covr/questions/resources"
    for name, text in wk_build.build_all(wordnet, wk_build.default_real_dir()).items():
        assert text == (shipped / name).read_text(encoding="utf-8"), name
