"""Text rendering (long and short, singular and plural, a/an) and reference programs."""

from __future__ import annotations

import pytest
from hypothesis import given

from covr.scene.program import program
from covr.scene.subgraph import Subgraph
from covr.scene.text import (
    describe,
    describe_short,
    indefinite_article,
    is_plural,
    noun_phrase,
    plural,
    singular,
)
from tests.unit.scene.strategies import subgraphs

pytestmark = pytest.mark.unit


def long(key: str, *, many: bool = False) -> str:
    return describe(Subgraph.from_key(key), plural=many)


@pytest.mark.parametrize(
    ("key", "singular_text", "plural_text"),
    [
        ("man", "a man", "men"),
        ("elephant[young]", "a young elephant", "young elephants"),
        (
            "man-(wearing)->hat[red]",
            "a man that is wearing a red hat",
            "men that are wearing a red hat",
        ),
        (
            "man-(holding)->bat-(on)->table[wooden]",
            "a man that is holding a bat that is on a wooden table",
            "men that are holding a bat that is on a wooden table",
        ),
        (
            "girl{-(holding)->bouquet,-(wearing)->dress}",
            "a girl that is holding a bouquet and is wearing a dress",
            "girls that are holding a bouquet and are wearing a dress",
        ),
        (
            "man-(stapling|onto:wall|using:stapler)->paper",
            "a man that is stapling a paper onto a wall using a stapler",
            "men that are stapling a paper onto a wall using a stapler",
        ),
        (
            "person-(wearing)->jeans",
            "a person that is wearing jeans",
            "people that are wearing jeans",
        ),
        (
            "woman-(wearing)->glasses",
            "a woman that is wearing glasses",
            "women that are wearing glasses",
        ),
        (
            "people-(in front of)->building",
            "people that are in front of a building",
            "people that are in front of a building",
        ),
        (
            "child-(has)->umbrella[orange]",
            "a child that has an orange umbrella",
            "children that have an orange umbrella",
        ),
        (
            "player[tennis]-(holding)->racket",
            "a tennis player that is holding a racket",
            "tennis players that are holding a racket",
        ),
        ("jeans[blue]", "blue jeans", "blue jeans"),
        ("boat-(in)->water", "a boat that is in water", "boats that are in water"),
    ],
)
def test_long_form(key: str, singular_text: str, plural_text: str) -> None:
    assert long(key) == singular_text
    assert long(key, many=True) == plural_text


def test_short_form() -> None:
    g = Subgraph.from_key("man[young]-(wearing)->hat[red]")
    assert describe_short(g) == "young man wearing red hat"
    assert describe_short(g, plural=True) == "young men wearing red hat"
    frame = Subgraph.from_key("man[standing]-(uncorking|with:corkscrew)->bottle[wine]")
    assert describe_short(frame) == "standing man uncorking wine bottle with corkscrew"


@pytest.mark.parametrize(
    ("word", "article"),
    [
        ("hour", "an"),
        ("umbrella", "an"),
        ("orange", "an"),
        ("uniform", "a"),
        ("elephant", "an"),
        ("university", "a"),
        ("honest man", "an"),
        ("european", "a"),
        ("one", "a"),
        ("dog", "a"),
        ("apple", "an"),
        ("user", "a"),
        ("igloo", "an"),
    ],
)
def test_indefinite_article(word: str, article: str) -> None:
    assert indefinite_article(word) == article


@pytest.mark.parametrize(
    ("one", "many"),
    [
        ("man", "men"),
        ("woman", "women"),
        ("person", "people"),
        ("child", "children"),
        ("jeans", "jeans"),
        ("glasses", "glasses"),
        ("pants", "pants"),
        ("shorts", "shorts"),
        ("bus", "buses"),
        ("box", "boxes"),
        ("bench", "benches"),
        ("dish", "dishes"),
        ("berry", "berries"),
        ("toy", "toys"),
        ("leaf", "leaves"),
        ("knife", "knives"),
        ("sheep", "sheep"),
        ("tennis player", "tennis players"),
        ("policeman", "policemen"),
        ("tomato", "tomatoes"),
        ("giraffe", "giraffes"),
        ("horse", "horses"),
        ("foot", "feet"),
    ],
)
def test_plural_and_singular(one: str, many: str) -> None:
    assert plural(one) == many
    assert plural(many) == many
    if one != many:
        assert singular(many) == one
        assert is_plural(many)
        assert not is_plural(one)


def test_noun_phrase() -> None:
    assert noun_phrase("hat", "red") == "a red hat"
    assert noun_phrase("hat", "orange") == "an orange hat"
    assert noun_phrase("glasses") == "glasses"
    assert noun_phrase("hat", "red", plural_form=True) == "red hats"
    assert noun_phrase("hat", article=False) == "hat"


@given(subgraphs())
def test_every_subgraph_renders(g: Subgraph) -> None:
    for text in (describe(g), describe(g, plural=True), describe_short(g)):
        assert isinstance(text, str)
        assert text
    for obj in g.objects:
        assert obj.name in describe_short(g) or plural(obj.name) in describe_short(g, plural=True)


def test_program_of_paper_table_11() -> None:
    g = Subgraph.from_key("book-(on)->table[wood]")
    assert program(g) == [
        {"operation": "find", "arguments": ["table"], "dependencies": []},
        {"operation": "filter", "arguments": ["wood"], "dependencies": [0]},
        {"operation": "find", "arguments": ["book"], "dependencies": []},
        {"operation": "with_relation", "arguments": ["on"], "dependencies": [2, 1]},
    ]


def test_programs_of_other_shapes() -> None:
    assert program(Subgraph.from_key("dog[black]")) == [
        {"operation": "find", "arguments": ["dog"], "dependencies": []},
        {"operation": "filter", "arguments": ["black"], "dependencies": [0]},
    ]
    v = program(Subgraph.from_key("man{-(holding)->bat,-(wearing)->hat}"))
    assert [r["operation"] for r in v] == ["find", "find", "find", "with_relation", "with_relation"]
    assert v[3]["dependencies"] == [2, 0]
    assert v[4]["dependencies"] == [3, 1]
    chain = program(Subgraph.from_key("man-(holding)->bat-(on)->table"))
    assert chain[2] == {"operation": "with_relation", "arguments": ["on"], "dependencies": [1, 0]}
    assert chain[4] == {
        "operation": "with_relation",
        "arguments": ["holding"],
        "dependencies": [3, 2],
    }
    frame = program(Subgraph.from_key("man-(stapling|onto:wall|using:stapler)->paper"))
    assert frame[-1] == {
        "operation": "with_relation",
        "arguments": ["stapling", "onto", "using"],
        "dependencies": [3, 0, 1, 2],
    }


@given(subgraphs())
def test_programs_reference_only_earlier_rows(g: Subgraph) -> None:
    rows = program(g)
    finds = [r for r in rows if r["operation"] == "find"]
    assert len(finds) == len(g.objects)
    assert sum(r["operation"] == "with_relation" for r in rows) == len(g.relations)
    for i, row in enumerate(rows):
        assert all(0 <= d < i for d in row["dependencies"])
