"""Enumeration of subgraphs: counts per shape on hand-made scenes, ignore lists, determinism."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from covr.scene.enumerate import EnumerationOptions, enumerate_subgraphs
from covr.scene.model import Box, Object, Relation, RelMod, SceneGraph
from covr.scene.subgraph import Subgraph
from covr_loaders.synthetic import generate

pytestmark = pytest.mark.unit

BIG = Box(0, 0, 100, 100)


def obj(oid: str, name: str, *attrs: str, box: Box | None = BIG) -> Object:
    return Object(id=oid, name=name, attributes=attrs, box=box)


def scene(objects: list[Object], relations: list[Relation] = ()) -> SceneGraph:  # type: ignore[assignment]
    return SceneGraph.build(
        source="gqa", original_id="1", split="train", objects=objects, relations=relations
    )


def keys(graph: SceneGraph, **options: object) -> list[str]:
    return [g.key for g in enumerate_subgraphs(graph, EnumerationOptions(**options))]  # type: ignore[arg-type]


def test_single_objects_with_every_attribute_choice() -> None:
    assert keys(scene([obj("1", "man", "tall", "young")])) == ["man", "man[tall]", "man[young]"]


def test_hop() -> None:
    graph = scene([obj("1", "man", "tall"), obj("2", "hat")], [Relation("r", "wearing", "1", "2")])
    assert keys(graph) == [
        "hat",
        "man",
        "man[tall]",
        "man-(wearing)->hat",
        "man[tall]-(wearing)->hat",
    ]


def test_chain_counts() -> None:
    graph = scene(
        [obj("1", "man"), obj("2", "bat"), obj("3", "table", "wooden")],
        [Relation("r1", "holding", "1", "2"), Relation("r2", "on", "2", "3")],
    )
    got = enumerate_subgraphs(graph)
    by_shape: dict[str, int] = {}
    for g in got:
        by_shape[g.shape] = by_shape.get(g.shape, 0) + 1
    # singles: man, bat, table, table[wooden]; hops: man->bat, bat->table (x2 attr);
    # chain: man->bat->table (x2 attr)
    assert by_shape == {"single": 4, "hop": 3, "chain": 2}
    assert "man-(holding)->bat-(on)->table[wooden]" in [g.key for g in got]


def test_v_shape_counts_and_no_noun_twice() -> None:
    graph = scene(
        [obj("1", "man"), obj("2", "hat", "red"), obj("3", "bat"), obj("4", "hat")],
        [
            Relation("r1", "wearing", "1", "2"),
            Relation("r2", "holding", "1", "3"),
            Relation("r3", "near", "1", "4"),
        ],
    )
    got = [g.key for g in enumerate_subgraphs(graph)]
    v = [k for k in got if k.startswith("man{")]
    # pairs of relations whose targets have different nouns: (wearing hat|hat[red], holding bat)
    # and (near hat, holding bat); never "wearing hat" with "near hat"
    assert v == [
        "man{-(holding)->bat,-(near)->hat}",
        "man{-(holding)->bat,-(wearing)->hat[red]}",
        "man{-(holding)->bat,-(wearing)->hat}",
    ]
    assert len(got) == len(set(got))  # two hats yield "hat" once


def test_imsitu_frame_with_every_subset_of_relmods() -> None:
    graph = scene(
        [
            obj("a", "man", box=None),
            obj("b", "paper", box=None),
            obj("c", "wall", box=None),
            obj("d", "stapler", box=None),
        ],
        [
            Relation(
                "v",
                "stapling",
                "a",
                "b",
                mods=(RelMod("surface", "onto", "c"), RelMod("tool", "using", "d")),
            )
        ],
    )
    got = [g.key for g in enumerate_subgraphs(graph, EnumerationOptions(ignored_nouns=frozenset()))]
    frames = [k for k in got if "stapling" in k]
    assert frames == [
        "man-(stapling)->paper",
        "man-(stapling|onto:wall)->paper",
        "man-(stapling|using:stapler)->paper",
        "man-(stapling|onto:wall|using:stapler)->paper",
    ]
    no_mods = keys(graph, include_relmods=False, ignored_nouns=frozenset())
    assert [k for k in no_mods if "stapling" in k] == ["man-(stapling)->paper"]


def test_ignore_lists_area_and_pairs() -> None:
    graph = scene(
        [
            obj("1", "man"),
            obj("2", "shirt"),
            obj("3", "shirt", "striped"),
            obj("4", "sky", "blue"),
            obj("5", "dot", box=Box(0, 0, 20, 20)),  # area 400: dropped (reference: <= 400)
            obj("6", "car"),
        ],
        [
            Relation("r1", "wearing", "1", "2"),
            Relation("r2", "wearing", "1", "3"),
            Relation("r3", "under", "1", "4"),
            Relation("r4", "near", "1", "5"),
            Relation("r5", "to the left of", "1", "6"),
        ],
    )
    got = keys(graph)
    assert "man-(wearing)->shirt" not in got
    assert "man-(wearing)->shirt[striped]" in got
    assert not any("sky" in k or "dot" in k or "left" in k for k in got)
    assert "shirt" in got  # the noun itself is fine, only the pair is ignored
    relaxed = keys(graph, ignored_pairs=frozenset(), min_object_area=0)
    assert "man-(wearing)->shirt" in relaxed
    assert "dot" in relaxed


def test_objects_without_box_are_kept() -> None:
    assert keys(scene([obj("1", "man", box=None)])) == ["man"]


def test_cap_keeps_the_smallest_subgraphs() -> None:
    graph = scene([obj("1", "man", "tall"), obj("2", "hat")], [Relation("r", "wearing", "1", "2")])
    assert keys(graph, max_subgraphs=3) == ["hat", "man", "man[tall]"]
    assert keys(graph, max_subgraphs=0) == []


def test_max_relations_allows_a_v_under_a_chain() -> None:
    graph = scene(
        [obj("1", "a"), obj("2", "b"), obj("3", "c"), obj("4", "d")],
        [
            Relation("r1", "r", "1", "2"),
            Relation("r2", "s", "2", "3"),
            Relation("r3", "t", "2", "4"),
        ],
    )
    assert "a-(r)->b{-(s)->c,-(t)->d}" not in keys(graph)
    assert "a-(r)->b{-(s)->c,-(t)->d}" in keys(graph, max_relations=3)


def test_options_are_validated() -> None:
    with pytest.raises(ValueError, match="max_relations"):
        EnumerationOptions(max_relations=9)
    with pytest.raises(ValueError, match="max_subgraphs"):
        EnumerationOptions(max_subgraphs=-1)


def test_enumeration_is_deterministic_and_valid_on_synthetic_images() -> None:
    scenes = list(generate(15, seed=3))
    first = [enumerate_subgraphs(s) for s in scenes]
    again = [enumerate_subgraphs(s) for s in reversed(scenes)][::-1]
    assert first == again
    for subgraphs in first:
        assert len({g.key for g in subgraphs}) == len(subgraphs)
        for g in subgraphs:
            # built without validation (of_canonical_tree): the validated forms agree
            assert Subgraph.from_key(g.key) == g
            assert Subgraph(g.objects, g.relations, g.relmods) == g
            assert Subgraph.from_tree(g.tree()) == g
            assert len(g.relations) <= 2


@given(st.permutations(range(5)))
@settings(max_examples=20)
def test_order_of_scene_parts_does_not_matter(perm: list[int]) -> None:
    objects = [
        obj("1", "man", "tall"),
        obj("2", "hat", "red"),
        obj("3", "bat"),
        obj("4", "table"),
        obj("5", "dog", "brown"),
    ]
    relations = [
        Relation("r1", "wearing", "1", "2"),
        Relation("r2", "holding", "1", "3"),
        Relation("r3", "on", "3", "4"),
        Relation("r4", "near", "5", "4"),
    ]
    base = enumerate_subgraphs(scene(objects, relations))
    shuffled = [objects[i] for i in perm]
    renamed = [Object(str(10 - int(o.id)), o.name, o.attributes, o.box) for o in shuffled]
    ids = {o.id: str(10 - int(o.id)) for o in objects}
    rels = [Relation(r.id, r.name, ids[r.subject], ids[r.object]) for r in relations]
    assert enumerate_subgraphs(scene(renamed, rels)) == base
