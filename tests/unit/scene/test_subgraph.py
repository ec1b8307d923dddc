"""Subgraph model: structure rules, canonical order, keys, shape keys, positions and edits."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from covr.scene.edits import (
    diff_signature,
    name_at,
    parse_position,
    parse_signature,
    positions,
    signature,
    substitute,
)
from covr.scene.subgraph import (
    Subgraph,
    SubgraphError,
    SubgraphObject,
    SubgraphRelation,
    SubgraphRelMod,
)
from tests.unit.scene.strategies import subgraphs

pytestmark = pytest.mark.unit

O = SubgraphObject  # noqa: E741
R = SubgraphRelation
M = SubgraphRelMod


def rule_of(call: object) -> str:
    with pytest.raises(SubgraphError) as info:
        call()  # type: ignore[operator]
    return info.value.rule


# -- structure rules ---------------------------------------------------------------------------


def test_empty_subgraph_is_rejected() -> None:
    assert rule_of(lambda: Subgraph.build([])) == "empty"
    assert rule_of(lambda: Subgraph(())) == "empty"
    assert rule_of(lambda: Subgraph.from_key("")) == "empty"


@pytest.mark.parametrize("bad", ["", "   ", None, 3])
def test_names_must_be_non_empty_strings(bad: object) -> None:
    assert rule_of(lambda: Subgraph.build([O(bad)])) == "name"  # type: ignore[arg-type]
    if bad is not None:  # no attribute is fine
        assert rule_of(lambda: Subgraph.build([O("man", bad)])) == "name"  # type: ignore[arg-type]
    assert rule_of(lambda: Subgraph.build([O("a"), O("b")], [R(bad, 0, 1)])) == "name"  # type: ignore[arg-type]


def test_indices_must_exist() -> None:
    assert rule_of(lambda: Subgraph.build([O("a")], [R("on", 0, 1)])) == "index"
    assert (
        rule_of(lambda: Subgraph.build([O("a"), O("b")], [R("on", 0, 1)], [M("with", 1, 1)]))
        == "index"
    )


def test_repeated_noun_is_rejected() -> None:
    rule = rule_of(lambda: Subgraph.build([O("man"), O("man")], [R("near", 0, 1)]))
    assert rule == "repeated-noun"


def test_cycles_and_disconnected_objects_are_rejected() -> None:
    cycle = [R("on", 0, 1), R("on", 1, 2), R("on", 2, 1)]
    assert rule_of(lambda: Subgraph.build([O("a"), O("b"), O("c")], cycle)) == "tree"
    assert rule_of(lambda: Subgraph.build([O("a"), O("b")], [R("on", 1, 0)])) == "root"
    assert rule_of(lambda: Subgraph.build([O("a"), O("b")])) == "tree"
    loop = [R("on", 0, 1), R("near", 1, 1)]
    assert rule_of(lambda: Subgraph.build([O("a"), O("b")], loop)) == "tree"
    two_parents = [R("on", 0, 1), R("on", 0, 2), R("on", 1, 2)]
    assert rule_of(lambda: Subgraph.build([O("a"), O("b"), O("c")], two_parents)) == "tree"


def test_three_relations_from_one_object_are_rejected() -> None:
    objs = [O("a"), O("b"), O("c"), O("d")]
    rels = [R("r", 0, 1), R("s", 0, 2), R("t", 0, 3)]
    assert rule_of(lambda: Subgraph.build(objs, rels)) == "out-degree"


def test_three_relations_on_a_path_are_rejected() -> None:
    objs = [O("a"), O("b"), O("c"), O("d")]
    rels = [R("r", 0, 1), R("s", 1, 2), R("t", 2, 3)]
    assert rule_of(lambda: Subgraph.build(objs, rels)) == "depth"


def test_relmod_objects_are_leaves() -> None:
    objs = [O("a"), O("b"), O("c"), O("d")]
    rels = [R("r", 0, 1), R("s", 2, 3)]
    assert rule_of(lambda: Subgraph.build(objs, rels, [M("with", 0, 2)])) == "relmod-leaf"


def test_three_relations_in_a_tree_of_depth_two_are_allowed() -> None:
    # A -> B -> C and B -> D: every path has <= 2 relations, every object <= 2 relations.
    g = Subgraph.build([O("a"), O("b"), O("c"), O("d")], [R("r", 0, 1), R("s", 1, 2), R("t", 1, 3)])
    assert g.shape == "tree"
    assert g.depth() == 2


def test_constructor_insists_on_canonical_order() -> None:
    g = Subgraph.build([O("man"), O("hat"), O("bat")], [R("wearing", 0, 1), R("holding", 0, 2)])
    assert g.objects[1].name == "bat"  # "-(holding)->bat" sorts before "-(wearing)->hat"
    rule = rule_of(
        lambda: Subgraph((O("man"), O("hat"), O("bat")), (R("wearing", 0, 1), R("holding", 0, 2)))
    )
    assert rule == "canonical-order"
    assert Subgraph(g.objects, g.relations, g.relmods) == g


def test_names_with_quotes_backslashes_and_cypher_are_plain_data() -> None:
    evil = "x'}) MATCH (n) DETACH DELETE n //"
    g = Subgraph.build([O(evil, 'say "hi"'), O("back\\slash")], [R("{$param}", 0, 1)])
    assert Subgraph.from_key(g.key) == g
    assert g.objects[0].name == evil


# -- canonical order and keys ------------------------------------------------------------------


def test_keys_of_each_shape() -> None:
    hop = Subgraph.build([O("man", "tall"), O("hat", "red")], [R("wearing", 0, 1)])
    assert hop.key == "man[tall]-(wearing)->hat[red]"
    assert hop.shape_key == "O[A]-(R)->O[A]"
    chain = Subgraph.from_key("man-(holding)->bat-(on)->table[wooden]")
    assert chain.shape == "chain"
    assert chain.shape_key == "O-(R)->O-(R)->O[A]"
    v = Subgraph.from_key("man{-(wearing)->hat,-(holding)->bat[wooden]}")
    assert v.key == "man{-(holding)->bat[wooden],-(wearing)->hat}"
    assert v.shape == "v"
    assert v.shape_key == "O{-(R)->O,-(R)->O[A]}"
    frame = Subgraph.from_key("man-(stapling|using:stapler|onto:wall)->paper")
    assert frame.key == "man-(stapling|onto:wall|using:stapler)->paper"
    assert frame.shape == "frame"
    assert frame.shape_key == "O-(R|M:O|M:O)->O"
    assert Subgraph.single("dog").key == "dog"
    assert Subgraph.single("dog").shape == "single"


def test_hyphens_need_no_escaping_but_specials_do() -> None:
    g = Subgraph.from_key("t-shirt[red-ish]-(to the left of)->x-")
    assert [o.name for o in g.objects] == ["t-shirt", "x-"]
    assert g.relations[0].name == "to the left of"
    odd = Subgraph.build([O("a,b"), O("[c]")], [R("d|e:f", 0, 1)])
    assert odd.key == "a\\,b-(d\\|e\\:f)->\\[c\\]"
    assert Subgraph.from_key(odd.key) == odd


@pytest.mark.parametrize(
    "key",
    [
        "man[",
        "man[]",
        "man-(on)->",
        "man-(on->hat",
        "man{-(on)->hat",
        "man)",
        "a\\",
        "man-(on)->hat,x",
        "man{}",
        "-(on)->hat",
    ],
)
def test_malformed_keys_raise_key_syntax(key: str) -> None:
    assert rule_of(lambda: Subgraph.from_key(key)) == "key-syntax"


@given(subgraphs())
@settings(max_examples=300)
def test_key_round_trip(g: Subgraph) -> None:
    assert Subgraph.from_key(g.key) == g
    assert Subgraph.from_key(g.key).key == g.key
    assert hash(Subgraph.from_key(g.key)) == hash(g)


@given(subgraphs())
def test_equal_content_in_any_order_gives_equal_subgraphs(g: Subgraph) -> None:
    reversed_rels = tuple(reversed(g.relations))
    remap = {j: len(g.relations) - 1 - j for j in range(len(g.relations))}
    mods = [SubgraphRelMod(m.name, remap[m.relation], m.object) for m in reversed(g.relmods)]
    assert Subgraph.build(g.objects, reversed_rels, mods) == g


@given(subgraphs())
def test_canonical_order_puts_parents_first(g: Subgraph) -> None:
    for rel in g.relations:
        assert rel.subject < rel.object
    for mod in g.relmods:
        assert g.relations[mod.relation].subject < mod.object


@given(subgraphs())
def test_shape_key_ignores_names(g: Subgraph) -> None:
    renamed = substitute(g, {p: f"n{i}" for i, p in enumerate(positions(g))})
    assert renamed.shape_key == g.shape_key


# -- positions, signatures, substitutions -------------------------------------------------------


def test_positions_and_substitution() -> None:
    g = Subgraph.from_key("man[tall]{-(holding)->bat,-(wearing)->hat[red]}")
    assert positions(g) == (
        "object@0",
        "object@1",
        "object@2",
        "attribute@0",
        "attribute@2",
        "relation@0",
        "relation@1",
    )
    assert name_at(g, "attribute@2") == "red"
    with pytest.raises(SubgraphError):
        name_at(g, "attribute@1")
    g2 = substitute(g, {"object@1": "umbrella", "attribute@0": "short"})
    # re-canonicalized: "-(holding)->umbrella" still sorts before "-(wearing)->hat"
    assert g2.key == "man[short]{-(holding)->umbrella,-(wearing)->hat[red]}"
    g3 = substitute(g, {"relation@0": "wearing", "relation@1": "holding"})
    assert g3.key == "man[tall]{-(holding)->hat[red],-(wearing)->bat}"
    with pytest.raises(SubgraphError) as info:
        substitute(g, {"object@1": "hat"})
    assert info.value.rule == "repeated-noun"
    assert diff_signature(g, {"object@2": "cap", "attribute@0": "tall"}) == "object@2"


def test_signatures_are_sorted_by_type_then_index() -> None:
    assert signature(["attribute@0", "object@2"]) == "object@2+attribute@0"
    assert signature(["relmod@0", "relation@1", "object@10", "object@2"]) == (
        "object@2+object@10+relation@1+relmod@0"
    )
    assert parse_signature("attribute@0+object@2") == ("object@2", "attribute@0")
    assert parse_signature("") == ()
    for bad in ["object", "object@-1", "thing@0", "object@01", "object@1+object@1"]:
        with pytest.raises(SubgraphError):
            parse_signature(bad)
    assert parse_position("relmod@3") == ("relmod", 3)


@given(subgraphs(), st.data())
def test_substitute_then_diff_gives_the_signature(g: Subgraph, data: st.DataObject) -> None:
    chosen = data.draw(st.lists(st.sampled_from(positions(g)), unique=True, max_size=2))
    changes: dict[str, str] = {p: f"new{i}\\|" for i, p in enumerate(chosen)}
    g2 = substitute(g, changes)
    assert g2.shape_key == g.shape_key
    assert diff_signature(g, changes) == signature(chosen)
