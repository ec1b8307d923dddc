"""The default exclusivity model: directional relations, attribute scales, noun hierarchy."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from covr.related.exclusivity import (
    Exclusivity,
    ResourceExclusivity,
    default_exclusivity,
    is_exclusive,
    load_resource,
)
from covr.scene.edits import NODE_TYPES, NodeType

pytestmark = pytest.mark.unit


@pytest.fixture(scope="module")
def ex() -> ResourceExclusivity:
    return default_exclusivity()


def test_implements_the_protocol(ex: ResourceExclusivity) -> None:
    assert isinstance(ex, Exclusivity)


@given(st.sampled_from(NODE_TYPES), st.text(min_size=1))
def test_identical_names_are_never_exclusive(node_type: NodeType, name: str) -> None:
    assert default_exclusivity().m(node_type, name, name) == 0.0


@pytest.mark.parametrize(
    ("x", "y"),
    [
        ("riding on", "near"),
        ("sitting on", "next to"),
        ("standing in front of", "near"),
        ("holding", "near"),
        ("wearing", "has"),
        ("on", "near"),
        ("riding", "near"),
    ],
)
def test_relations_are_directional(ex: ResourceExclusivity, x: str, y: str) -> None:
    # a question about the specific relation may use an image annotated with the general one ...
    assert ex.m("relation", x, y) > 0.5
    # ... but not the other way round
    assert ex.m("relation", y, x) < 0.5


@pytest.mark.parametrize(
    ("x", "y", "exclusive"),
    [
        ("holding", "using", False),
        ("using", "holding", False),
        ("holding", "carrying", False),
        ("behind", "in front of", True),
        ("in front of", "behind", True),
        ("wearing", "holding", True),
        ("eating", "throwing", True),
        ("near", "next to", False),
        ("on", "on top of", False),
        ("under", "below", False),
        ("looking at", "watching", False),
        ("sitting on", "on", True),
        ("on", "sitting on", False),
        ("lying on", "laying on", False),
    ],
)
def test_relation_pairs(ex: ResourceExclusivity, x: str, y: str, exclusive: bool) -> None:
    assert is_exclusive(ex, "relation", x, y) is exclusive


@pytest.mark.parametrize(
    ("x", "y", "exclusive"),
    [
        ("red", "blue", True),
        ("red", "wooden", False),
        ("wooden", "metal", True),
        ("gray", "grey", False),
        ("tall", "short", True),
        ("long", "short", True),
        ("tall", "long", False),
        ("large", "huge", False),
        ("large", "small", True),
        ("striped", "plaid", True),
        ("young", "old", True),
        ("young", "adult", False),
        ("open", "closed", True),
        ("sitting", "resting", False),
        ("sitting", "standing", True),
        ("unknownish", "red", False),
        ("dark", "blue", False),
        ("Red", "BLUE", True),
    ],
)
def test_attribute_pairs(ex: ResourceExclusivity, x: str, y: str, exclusive: bool) -> None:
    assert is_exclusive(ex, "attribute", x, y) is exclusive
    assert is_exclusive(ex, "attribute", y, x) is exclusive  # attributes are symmetric


def test_attribute_scores_follow_the_documented_defaults(ex: ResourceExclusivity) -> None:
    assert ex.m("attribute", "red", "wooden") == 0.0
    assert ex.m("attribute", "zorbly", "red") == 0.0
    assert ex.m("attribute", "red", "blue") > 0.5
    assert ex.attribute_categories("red") == ("color",)
    assert set(ex.attribute_categories("short")) == {"height", "length"}
    assert ex.attribute_categories("zorbly") == ()


@pytest.mark.parametrize(
    ("x", "y", "exclusive"),
    [
        ("man", "person", False),
        ("person", "man", False),
        ("man", "woman", True),
        ("man", "guy", False),
        ("shirt", "t-shirt", False),
        ("t-shirt", "clothing", False),
        ("shirt", "jacket", True),
        ("dog", "cat", True),
        ("dog", "animal", False),
        ("puppy", "animal", False),
        ("tree", "trees", False),
        ("people", "person", False),
        ("man", "men", False),
        ("glasses", "glass", True),
        ("man", "player", False),
        ("tennis player", "woman", False),
        ("boy", "child", False),
        ("boy", "man", True),
        ("zorbly", "flumph", True),
        ("car", "taxi", False),
        ("car", "truck", True),
        ("table", "desk", False),
        ("Man", "PERSON", False),
    ],
)
def test_noun_pairs(ex: ResourceExclusivity, x: str, y: str, exclusive: bool) -> None:
    assert is_exclusive(ex, "object", x, y) is exclusive
    assert is_exclusive(ex, "object", y, x) is exclusive


def test_relmods(ex: ResourceExclusivity) -> None:
    assert not is_exclusive(ex, "relmod", "with", "using")
    assert is_exclusive(ex, "relmod", "onto", "using")


def test_batch_matches_single_calls(ex: ResourceExclusivity) -> None:
    pairs: list[tuple[NodeType, str, str]] = [
        ("object", "man", "woman"),
        ("attribute", "red", "blue"),
        ("relation", "near", "on"),
    ]
    assert ex.m_batch(pairs) == [ex.m(*p) for p in pairs]


def test_unknown_node_type_is_an_error(ex: ResourceExclusivity) -> None:
    with pytest.raises(ValueError, match="node type"):
        ex.m("thing", "a", "b")  # type: ignore[arg-type]


def test_resources_are_packaged_and_well_formed() -> None:
    for name in ("nouns.json", "attributes.json", "relations.json"):
        data = load_resource(name)
        assert data["version"] == 1
        assert data["about"]
    for scale in load_resource("attributes.json")["scales"]:
        assert scale["category"]
        assert len(scale["groups"]) >= 2


def test_custom_resources_can_be_injected() -> None:
    ex = ResourceExclusivity(
        nouns={"synonyms": [["foo", "bar"]]},
        attributes={"scales": [{"category": "c", "groups": [["a"], ["b"]]}]},
        relations={"general": ["near"]},
    )
    assert ex.m("object", "foo", "bar") < 0.5
    assert ex.m("object", "foo", "baz") > 0.5
    assert ex.m("attribute", "a", "b") > 0.5
    assert ex.m("relation", "on", "near") > 0.5
    assert ex.m("relation", "near", "on") < 0.5


def test_name_memo_stops_growing_at_its_cap() -> None:
    """``cache_names`` (``COVR_RELATED_CACHE_NAMES``) bounds the per-name memo tables; names
    beyond it are recomputed, with the same scores."""
    capped = ResourceExclusivity(cache_names=2)
    free = ResourceExclusivity(cache_names=1000)
    nouns = ["dog", "cat", "puppy", "car", "truck", "animal"]
    pairs = [(a, b) for a in nouns for b in nouns if a != b]
    assert [capped.m("object", a, b) for a, b in pairs] == [
        free.m("object", a, b) for a, b in pairs
    ]
    assert len(capped._nouns._forms) == 2
    assert len(capped._nouns._ancestors) <= 2
    assert len(free._nouns._forms) > 2
