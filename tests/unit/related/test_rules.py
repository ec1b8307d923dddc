"""Rule choice and reading decoding of the store lookup, without a store (covr.related.names)."""

from __future__ import annotations

import pytest

from covr.related.cypher_path import Rule
from covr.related.names import (
    choose_anchor,
    combined_rule,
    concrete_changes,
    distractor_rule,
    embeddings,
    is_relaxed_reading,
    readings_of,
    relaxed_rule,
)
from covr.scene.edits import NodeType, Position, positions
from covr.scene.subgraph import Subgraph

pytestmark = pytest.mark.unit

G = Subgraph.from_key("man-(wearing)->hat[red]")
EXCLUSIVE = {("object", "man", "woman"), ("object", "hat", "cap"), ("attribute", "red", "blue")}
EXCLUSIVE |= {("relation", "wearing", "holding")}


def exclusive(kind: NodeType, x: str, y: str) -> bool:
    return (kind, x, y) in EXCLUSIVE


def reading(names: list[str], attribute: list[str], relation: str) -> dict[Position, object]:
    """A reading of every position of ``G`` (man, hat, hat's attribute, wearing)."""
    values = [*names, attribute, relation]
    return dict(zip(positions(G), values, strict=True))


def test_distractor_rule_prefers_the_short_list_within_the_cap() -> None:
    assert distractor_rule("object", "man", (), ("boy",), 10) is None
    assert distractor_rule("object", "man", ("woman",), ("boy",), 10) == Rule(
        "ne_not_in", "man", ("boy",)
    )
    assert distractor_rule("object", "man", ("woman",), (), 10) == Rule("ne", "man")
    many = tuple(f"n{i}" for i in range(20))
    assert distractor_rule("object", "man", ("woman",), many, 10) == Rule("in", values=("woman",))
    assert distractor_rule("object", "man", many, many, 10) == Rule("ne", "man")
    # attributes: the exclusive list first (most attributes are not exclusive with each other)
    assert distractor_rule("attribute", "red", ("blue",), ("big",), 10) == Rule(
        "in", values=("blue",)
    )
    assert distractor_rule("attribute", "red", many, ("big",), 10) == Rule(
        "ne_not_in", "red", ("big",)
    )


def test_relaxed_and_combined_rules() -> None:
    assert relaxed_rule("man", ("woman",), ("boy",), 10) == Rule("in", values=("man", "boy"))
    many = tuple(f"n{i}" for i in range(20))
    assert relaxed_rule("man", ("woman",), many, 10) == Rule("not_in", values=("woman",))
    assert relaxed_rule("man", many, many, 10) == Rule("any")
    assert combined_rule("man", None) == Rule("eq", "man")
    assert combined_rule("man", Rule("ne_not_in", "man", ("boy",))) == Rule(
        "not_in", values=("boy",)
    )
    assert combined_rule("man", Rule("in", values=("woman",))) == Rule(
        "eq_or_in", "man", ("woman",)
    )
    assert combined_rule("man", Rule("ne", "man")) == Rule("any")


def test_anchor_is_the_rarest_fixed_non_attribute_name() -> None:
    counts = {"man": 50, "hat": 5, "wearing": 1}
    fixed = list(positions(G))
    anchor = choose_anchor(G, fixed, lambda kind, name: counts.get(name, 0))
    assert anchor == "relation@0"
    assert isinstance(anchor, Position)
    only_attribute = [Position("attribute", 1)]
    assert choose_anchor(G, only_attribute, lambda kind, name: 0) is None


def test_concrete_changes_expand_attribute_choices() -> None:
    changed = (Position("object", 0), Position("attribute", 1))
    found = {changed[0]: "woman", changed[1]: ["blue", "blue", "green"]}
    assert concrete_changes(G, changed, found, exclusive) == [
        ((Position("attribute", 1), "blue"), (Position("object", 0), "woman"))
    ]
    no_exclusive = {changed[0]: "boy", changed[1]: ["blue"]}
    assert concrete_changes(G, changed, no_exclusive, exclusive) == []
    assert concrete_changes(G, changed, {changed[0]: "woman", changed[1]: None}, exclusive) == []


def test_readings_are_placed_by_the_branch_read_order() -> None:
    order = (Position("object", 1), Position("attribute", 1))
    got = list(readings_of({"readings": [["cap", ["red"]], ["hat", []], ["odd"]]}, order))
    # a reading of another length (a nameless node left no item) cannot be placed: skipped
    assert got == [{order[0]: "cap", order[1]: ["red"]}, {order[0]: "hat", order[1]: []}]
    assert list(readings_of({"readings": [[]]}, ())) == [{}]  # a positive reads nothing


def test_embeddings_count_edits_and_reject_non_exclusive_names() -> None:
    same = reading(["man", "hat"], ["red", "blue"], "wearing")
    assert embeddings(G, same, 2, exclusive) == [(), ((Position("attribute", 1), "blue"),)]
    two = reading(["woman", "cap"], ["red"], "wearing")
    assert embeddings(G, two, 1, exclusive) == []
    assert embeddings(G, two, 2, exclusive) == [
        ((Position("object", 0), "woman"), (Position("object", 1), "cap"))
    ]
    overlap = reading(["boy", "hat"], ["red"], "wearing")
    assert embeddings(G, overlap, 2, exclusive) == []


def test_relaxed_readings_hold_only_equal_or_non_exclusive_names() -> None:
    assert is_relaxed_reading(G, reading(["boy", "hat"], ["red"], "wearing"), exclusive)
    assert not is_relaxed_reading(G, reading(["woman", "hat"], ["red"], "wearing"), exclusive)
    assert not is_relaxed_reading(G, reading(["man", "hat"], ["blue"], "wearing"), exclusive)
    assert not is_relaxed_reading(G, reading(["man", "hat"], [], "wearing"), exclusive)
    assert is_relaxed_reading(G, reading(["man", "hat"], ["red", "blue"], "wearing"), exclusive)
