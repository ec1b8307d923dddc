"""The answer rules the third issue 36 audit asked for, on hand-made scene graphs.

Each rule keeps an image out of an example when the picture likely says otherwise than the
annotation: a whole whose part is not annotated on it, a whole named only through its part, a
material counted as a thing, two names a reader takes for one thing, one thing boxed twice.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import cast

import pytest

from covr.questions.answer_rules import (
    PictureChecks,
    depicted,
    named_twice,
    nested_pair,
    whole_without_part,
)
from covr.questions.names import corefer
from covr.questions.part_whole import wholes_of
from covr.questions.slots import Instance
from covr.questions.world import default_attribute_types
from covr.related.memory import InMemoryRelated
from covr.scene.model import Box, Object, Relation, SceneGraph

pytestmark = pytest.mark.unit


def _obj(i: str, name: str, box: tuple[int, int, int, int] | None) -> Object:
    return Object(id=i, name=name, box=Box(*box) if box else None)


def _scene(
    original_id: str, objects: list[Object], relations: tuple[Relation, ...] = ()
) -> SceneGraph:
    return SceneGraph.build(
        source="t", original_id=original_id, split="val", objects=objects, relations=relations
    )


def _generator(scenes: list[SceneGraph]) -> PictureChecks:
    return PictureChecks(InMemoryRelated(scenes), default_attribute_types())


def test_a_whole_counts_as_having_a_part_only_when_a_part_box_overlaps_it() -> None:
    apartment_door = _obj("1", "door", (0, 0, 10, 20))
    car = _obj("2", "car", (300, 400, 250, 90))
    assert "car" in wholes_of("door")
    # the audit's image: an apartment door, and a side-on car without its doors
    assert whole_without_part([apartment_door, car], "door", wholes_of("door"))
    car_door = _obj("3", "door", (350, 420, 40, 40))
    assert not whole_without_part([apartment_door, car, car_door], "door", wholes_of("door"))
    # no whole at all, or a part named without a box: nothing to say
    assert not whole_without_part([apartment_door], "door", wholes_of("door"))
    unplaced = _obj("4", "door", None)
    assert not whole_without_part([car, unplaced], "door", wholes_of("door"))


def test_parts_wordnet_misses_are_added() -> None:
    assert "laptop" in wholes_of("keyboard")
    assert "tree" in wholes_of("leaf")


def test_a_whole_named_through_its_part_is_taken_as_shown() -> None:
    trunks = _scene("1", [_obj("1", "tree trunk", (0, 0, 5, 50))])
    trees = _scene("2", [_obj("1", "tree", (0, 0, 50, 50))])
    stop = _scene("3", [_obj("1", "bus stop", (0, 0, 5, 50))])
    engine = _generator([trunks, trees, stop])
    assert engine._whole_by_part(frozenset({"trees"}), [trunks.image_id])
    assert not engine._whole_by_part(frozenset({"tree"}), [trees.image_id])
    # a compound whose head is not a part of the first word says nothing of it
    assert not engine._whole_by_part(frozenset({"bus"}), [stop.image_id])


def test_a_material_something_is_made_of_is_not_a_thing_of_that_name() -> None:
    door = _obj("1", "door", (75, 53, 33, 97))
    pane = _obj("2", "glass", (82, 63, 18, 53))
    train = _scene("1", [door, pane], (Relation(id="r1", name="of", subject="1", object="2"),))
    table = _obj("1", "table", (0, 0, 100, 50))
    cup = _obj("2", "glass", (10, 10, 5, 10))
    kitchen = _scene("2", [table, cup], (Relation(id="r1", name="on", subject="2", object="1"),))
    engine = _generator([train, kitchen])
    assert engine._material_as_thing(frozenset({"glass"}), [train.image_id])
    assert not engine._material_as_thing(frozenset({"glass"}), [kitchen.image_id])
    # a name that is no material value is never read so
    assert not engine._material_as_thing(frozenset({"door"}), [train.image_id])


def test_a_sign_post_and_a_pole_are_one_thing_to_a_reader() -> None:
    assert corefer("sign post", "pole")
    assert corefer("poles", "post")
    assert not corefer("sign", "pole")


def test_one_beak_boxed_twice_a_pixel_apart_is_one_beak() -> None:
    # the audit's eagle: two 8 x 11 boxes shifted by 1 px (79 % of each inside the other)
    assert nested_pair([Box(100, 100, 8, 11), Box(101, 101, 8, 11)])
    assert not nested_pair([Box(100, 100, 8, 11), Box(104, 100, 8, 11)])


def test_a_bike_drawn_on_a_sign_is_not_a_bike() -> None:
    """The fourth audit: "How many images contain a bike? 3" counted a road sign's symbol."""
    sign = _obj("1", "sign", (100, 50, 60, 60))
    drawn = _obj("2", "bike", (110, 60, 40, 30))
    post = _obj("3", "sign post", (125, 110, 10, 100))
    on_sign = Relation(id="r1", name="on", subject="2", object="1")
    road = SceneGraph.build(
        source="t", original_id="1", split="val", objects=[sign, drawn, post],
        relations=[on_sign, Relation(id="r2", name="on", subject="1", object="3")],
        width=640, height=480,
    )  # fmt: skip
    assert depicted(road, frozenset({"bike"}))
    assert not depicted(road, frozenset({"sign post"}))
    # a real bike in front of a sign is related to something off the sign
    rider = _obj("4", "man", (90, 40, 80, 200))
    ridden = Relation(id="r3", name="riding", subject="4", object="2")
    street = SceneGraph.build(
        source="t", original_id="2", split="val", objects=[sign, drawn, rider],
        relations=[ridden], width=640, height=480,
    )  # fmt: skip
    assert not depicted(street, frozenset({"bike"}))
    # a "picture" as large as the photograph is the photograph (GQA labels whole frames)
    frame = _obj("5", "picture", (0, 0, 640, 480))
    flower = _obj("6", "flower", (10, 10, 20, 20))
    framed = SceneGraph.build(
        source="t", original_id="3", split="val", objects=[frame, flower], width=640, height=480
    )
    assert not depicted(framed, frozenset({"flower"}))
    # letters on a sign are what they are
    letters = _obj("7", "letters", (110, 60, 40, 10))
    lettered = SceneGraph.build(
        source="t", original_id="4", split="val", objects=[sign, letters], width=640, height=480
    )
    assert not depicted(lettered, frozenset({"letter"}))


def test_where_a_drawn_thing_stands_does_not_take_it_off_its_sign() -> None:
    """The fifth audit: GQA relates most pairs "to the left of" / "to the right of", which
    had let every drawn thing through."""
    sign = _obj("1", "sign", (100, 50, 60, 60))
    drawn = _obj("2", "pizza", (110, 60, 40, 30))
    tree = _obj("3", "tree", (300, 0, 100, 300))
    left = Relation(id="r1", name="to the left of", subject="2", object="3")
    shop = SceneGraph.build(
        source="t", original_id="5", split="val", objects=[sign, drawn, tree],
        relations=[left], width=640, height=480,
    )  # fmt: skip
    assert depicted(shop, frozenset({"pizza"}))


def test_a_part_belongs_to_a_whole_when_half_its_box_is_inside() -> None:
    """The fifth audit: one fallen branch touching a large tree's box (27 %) was taken for the
    tree's branches."""
    tree = _obj("1", "tree", (0, 0, 400, 300))
    fallen = _obj("2", "branch", (380, 280, 100, 40))
    assert whole_without_part([tree, fallen], "branch", wholes_of("branch"))
    held = _obj("3", "branch", (300, 100, 80, 40))
    assert not whole_without_part([tree, held], "branch", wholes_of("branch"))


def test_one_thing_named_two_ways_is_one_thing() -> None:
    """The fifth audit: a ``box`` and a ``sign`` with nearly one box (89 % / 72 %)."""
    sign = _obj("1", "sign", (100, 100, 100, 80))
    box = _obj("2", "box", (110, 100, 90, 70))
    assert named_twice([sign, box], frozenset({"box"}))
    man = _obj("3", "man", (0, 0, 100, 300))
    shirt = _obj("4", "shirt", (10, 50, 80, 100))
    assert not named_twice([man, shirt], frozenset({"shirt", "man"}))


def test_a_coating_is_never_asked_about() -> None:
    """The fourth and fifth audits: "How many images contain yellow paint?"."""
    van = _scene("9", [_obj("1", "paint", (0, 0, 5, 5))])
    checks = _generator([van])
    program = [{"operation": "find", "arguments": ["paint"], "dependencies": []}]
    instance = cast(Instance, SimpleNamespace(program=program))
    assert checks.rejects(instance, [van.image_id]) == "coating"
    program = [{"operation": "find", "arguments": ["van"], "dependencies": []}]
    assert checks.rejects(cast(Instance, SimpleNamespace(program=program)), [van.image_id]) is None
