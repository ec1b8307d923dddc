"""The executor: every operator on a small hand-made world, typed failures, malformed programs."""

from __future__ import annotations

from typing import Any

import pytest

from covr.questions.errors import (
    NeitherOption,
    NoCommonValue,
    NothingFound,
    NoUniqueReferent,
    ProgramError,
    SeveralValues,
)
from covr.questions.operators import REGISTRY, execute
from covr.questions.world import World
from covr.scene.model import Object, Relation, RelMod, SceneGraph

pytestmark = pytest.mark.unit

DESIGN_OPERATORS = [
    "find",
    "filter",
    "with_relation",
    "with_relation_object",
    "unique",
    "assert_unique",
    "exists",
    "count",
    "unique_images",
    "group_by_images",
    "keep_if_values_count_eq",
    "keep_if_values_count_geq",
    "keep_if_values_count_leq",
    "keys",
    "query_name",
    "query_attr",
    "verify_attr",
    "choose_attr",
    "choose_name",
    "choose_relation",
    "relation_between_nouns",
    "all",
    "some",
    "none",
    "all_same",
    "logic_and",
    "logic_or",
    "eq",
    "gt",
    "lt",
    "geq",
    "leq",
]


def step(op: str, args: list[Any] | None = None, deps: list[int] | None = None) -> dict[str, Any]:
    return {"operation": op, "arguments": args or [], "dependencies": deps or []}


@pytest.fixture(scope="module")
def world() -> World:
    one = SceneGraph.build(
        source="gqa",
        original_id="1",
        split="val",
        objects=[
            Object("1", "man", ("tall",)),
            Object("2", "hat", ("red",)),
            Object("3", "table", ("wooden", "brown")),
            Object("4", "book", ("white", "black")),
            Object("5", "book", ()),
        ],
        relations=[
            Relation("1.0", "wearing", "1", "2"),
            Relation("4.0", "on", "4", "3"),
            Relation("5.0", "on", "5", "3"),
        ],
    )
    two = SceneGraph.build(
        source="gqa",
        original_id="2",
        split="val",
        objects=[Object("1", "man", ("short",)), Object("2", "cap", ("blue",))],
        relations=[Relation("1.0", "wearing", "1", "2")],
    )
    three = SceneGraph.build(
        source="imsitu",
        original_id="s.jpg",
        split="val",
        objects=[Object("agent", "woman"), Object("item", "paper"), Object("tool", "stapler")],
        relations=[
            Relation(
                "stapling", "stapling", "agent", "item", mods=(RelMod("tool", "using", "tool"),)
            )
        ],
    )
    return World.of([one, two, three])


def test_registry_has_every_design_operator_with_types() -> None:
    assert set(DESIGN_OPERATORS) <= set(REGISTRY)
    for op in REGISTRY.values():
        assert op.output in {"objects", "object", "bool", "number", "name", "images", "groups"}


def test_table_11_program(world: World) -> None:
    program = [
        step("find", ["table"]),
        step("filter", ["wooden"], [0]),
        step("find", ["book"]),
        step("with_relation", ["on"], [2, 1]),
        step("group_by_images", deps=[3]),
        step("keep_if_values_count_eq", [2], [4]),
        step("count", deps=[5]),
    ]
    assert execute(program, world) == 1
    program[5] = step("keep_if_values_count_eq", [1], [4])
    assert execute(program, world) == 0


def test_group_by_quantifiers_count_images_without_matches(world: World) -> None:
    """Issue 16 item 2: "How many images contain at most 1 man?" over three images, one of which
    has no man, is 3 as a reader counts (the imSitu image contains no man, so at most one); "at
    least 1" and "exactly 1" stay 2."""
    grouped = [step("find", ["man"]), step("group_by_images", deps=[0])]

    def how_many(keep: str, k: int) -> int:
        program = [*grouped, step(keep, [k], [1]), step("count", deps=[2])]
        return int(execute(program, world))

    assert how_many("keep_if_values_count_leq", 1) == 3
    assert how_many("keep_if_values_count_leq", 0) == 1
    assert how_many("keep_if_values_count_eq", 0) == 1
    assert how_many("keep_if_values_count_eq", 1) == 2
    assert how_many("keep_if_values_count_geq", 1) == 2
    keys = [*grouped, step("keys", deps=[1]), step("count", deps=[2])]
    assert execute(keys, world) == 2  # grouping alone still names only images with a man


def test_counts_and_comparisons(world: World) -> None:
    men = [step("find", ["man"])]
    assert execute([*men, step("count", deps=[0])], world) == 2
    assert execute([*men, step("unique_images", deps=[0]), step("count", deps=[1])], world) == 2
    assert execute([*men, step("count", deps=[0]), step("geq", [2], [1])], world) is True
    assert execute([*men, step("count", deps=[0]), step("lt", [2], [1])], world) is False
    both = [step("find", ["man"]), step("count", deps=[0]), step("find", ["hat"])]
    both += [step("count", deps=[2]), step("gt", deps=[1, 3])]
    assert execute(both, world) is True


def test_relations_and_relmods(world: World) -> None:
    staple = [
        step("find", ["paper"]),
        step("find", ["stapler"]),
        step("find", ["woman"]),
        step("with_relation", ["stapling", "using"], [2, 0, 1]),
        step("exists", deps=[3]),
    ]
    assert execute(staple, world) is True
    staple[3] = step("with_relation", ["stapling", "onto"], [2, 0, 1])
    assert execute(staple, world) is False
    query = [
        step("find", ["man"]),
        step("find", ["cap"]),
        step("with_relation", ["wearing"], [0, 1]),
        step("unique", deps=[2]),
        step("with_relation_object", ["wearing"], [3]),
        step("unique", deps=[4]),
        step("query_name", deps=[5]),
    ]
    assert execute(query, world) == "cap"


def test_unique_failures(world: World) -> None:
    with pytest.raises(NoUniqueReferent):
        execute([step("find", ["man"]), step("unique", deps=[0])], world)
    with pytest.raises(NothingFound):
        execute([step("find", ["dog"]), step("unique", deps=[0])], world)


def test_attribute_queries(world: World) -> None:
    table = [step("find", ["table"]), step("unique", deps=[0])]
    assert execute([*table, step("query_attr", ["material"], [1])], world) == "wooden"
    assert execute([*table, step("verify_attr", ["brown"], [1])], world) is True
    assert execute([*table, step("choose_attr", ["brown", "red"], [1])], world) == "brown"
    with pytest.raises(NeitherOption):
        execute([*table, step("choose_attr", ["red", "blue"], [1])], world)
    with pytest.raises(NeitherOption):  # both hold: the choice is moot
        execute([*table, step("choose_attr", ["brown", "wooden"], [1])], world)
    with pytest.raises(NoCommonValue):
        execute([*table, step("query_attr", ["shape"], [1])], world)
    book = [step("find", ["book"]), step("filter", ["white"], [0]), step("unique", deps=[1])]
    with pytest.raises(SeveralValues):
        execute([*book, step("query_attr", ["color"], [2])], world)


def test_quantifiers_with_nested_programs(world: World) -> None:
    condition = [
        step("find", ["hat"]),
        step("with_relation", ["wearing"], [-1, 0]),
        step("exists", deps=[1]),
    ]
    for op, expected in (("all", False), ("some", True), ("none", False)):
        assert execute([step("find", ["man"]), step(op, [condition], [0])], world) is expected
    tall = [step("verify_attr", ["tall"], [-1])]
    assert execute([step("find", ["man"]), step("none", [tall], [0])], world) is False
    with pytest.raises(NothingFound):
        execute([step("find", ["dog"]), step("all", [tall], [0])], world)
    same = [step("find", ["man"]), step("all_same", ["height"], [0])]
    assert execute(same, world) is False


def test_choices(world: World) -> None:
    man = [step("find", ["man"]), step("filter", ["tall"], [0]), step("unique", deps=[1])]
    worn = [*man, step("with_relation_object", ["wearing"], [2])]
    assert execute([*worn, step("choose_name", ["cap", "hat"], [3])], world) == "hat"
    hats = [*man, step("find", ["hat"])]
    assert execute([*hats, step("choose_relation", ["holding", "wearing"], [2, 3])], world) == (
        "wearing"
    )
    assert execute([*hats, step("relation_between_nouns", deps=[2, 3])], world) == "wearing"
    groups = [step("find", ["man"]), step("group_by_images", deps=[0]), step("keys", deps=[1])]
    assert execute([*groups, step("count", deps=[2])], world) == 2
    logic = [step("find", ["man"]), step("exists", deps=[0]), step("find", ["dog"])]
    logic += [step("exists", deps=[2])]
    assert execute([*logic, step("logic_or", deps=[1, 3])], world) is True
    assert execute([*logic, step("logic_and", deps=[1, 3])], world) is False


@pytest.mark.parametrize(
    ("program", "message"),
    [
        ([], "non-empty"),
        ([step("fly", ["x"])], "unknown operation"),
        ([step("find", ["man"]), step("count", deps=[1])], "not an earlier step"),
        ([step("find", [])], "expects"),
        ([step("find", ["man"]), step("query_name", deps=[0])], "expects"),
        ([{"operation": "find", "arguments": ["man"], "dependencies": [], "x": 1}], "unknown keys"),
        ([step("find", ["man"]), step("count", deps=[-1])], "outside a nested"),
        ([step("find", ["man"]), step("all", [[step("find", ["hat"])]], [0])], "end with a bool"),
    ],
)
def test_malformed_programs_raise_program_error(
    world: World, program: list[dict[str, Any]], message: str
) -> None:
    with pytest.raises(ProgramError, match=message):
        execute(program, world)
