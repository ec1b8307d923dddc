"""The related-image match builder: golden texts per shape, parameters only, bad requests refused."""

from __future__ import annotations

import re

import pytest

from covr.related.cypher_path import (
    NEVER,
    AnchoredBranch,
    Branch,
    BuilderError,
    CombinedBranch,
    Rule,
    anchored_query,
    combined_query,
    exact_rules,
    fragment,
    match_query,
    render,
    union_query,
)
from covr.scene.subgraph import Subgraph
from tests.unit.related.golden_related import (
    ANCHORED,
    ANCHORED_COUNTING,
    ANCHORED_KEY,
    COMBINED,
    COMBINED_KEY,
    EXACT,
    SHAPES,
    UNION,
)


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_exact_query_matches_golden_text(shape: str) -> None:
    g = Subgraph.from_key(SHAPES[shape])
    query, params = match_query(g, exact_rules(g), ["gqa:1"])
    assert query == EXACT[shape]
    assert params["b0_ids"] == ["gqa:1"]
    assert params["b0_tag"] == 0


def test_golden_shapes_cover_every_shape() -> None:
    shapes = {Subgraph.from_key(k).shape for k in SHAPES.values()}
    assert shapes == {"single", "hop", "chain", "v", "frame"}
    relmods = sorted(len(Subgraph.from_key(k).relmods) for k in SHAPES.values())
    assert relmods[-1] == 3
    assert 1 in relmods


def test_union_of_edited_and_relaxed_branches_matches_golden_text() -> None:
    g = Subgraph.from_key(SHAPES["hop"])
    edited = exact_rules(g)
    edited["object@0"] = Rule("ne_not_in", "man", ("person", "guy"))
    edited["attribute@1"] = Rule("in", values=("blue", "green"))
    relaxed = {p: Rule("any") for p in edited}
    relaxed["object@0"] = Rule("in", values=("man", "person"))
    relaxed["attribute@1"] = Rule("not_in", values=("blue",))
    relaxed["relation@0"] = Rule("ne", "wearing")
    query, params = union_query([Branch(g, edited, ["gqa:1"], 1), Branch(g, relaxed, ["gqa:2"], 2)])
    assert query == UNION
    assert (params["b0_o0_in"], params["b0_o0_open"]) == ([NEVER], True)
    assert params["b0_o0_out"] == ["man", "person", "guy"]
    assert (params["b0_a1_in"], params["b0_a1_open"]) == (["blue", "green"], False)
    relaxed_attribute = (params["b1_a1_in"], params["b1_a1_open"], params["b1_a1_out"])
    assert relaxed_attribute == ([NEVER], True, ["blue"])
    relaxed_relation = (params["b1_r0_in"], params["b1_r0_open"], params["b1_r0_out"])
    assert relaxed_relation == ([NEVER], True, ["wearing"])
    assert (params["b0_tag"], params["b1_tag"]) == (1, 2)


def test_names_never_enter_the_text() -> None:
    evil = "x' OR 1=1 //\\\"}) DETACH DELETE n"
    g = Subgraph.single(evil, evil)
    query, params = match_query(g, exact_rules(g), [evil])
    assert evil not in query
    assert not re.search(r"'[^']*'|\"[^\"]*\"", query)
    assert params["b0_o0_in"] == [evil]
    assert params["b0_a0_in"] == [evil]
    assert params["b0_ids"] == [evil]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: render("name_eq", v="o0; DROP", p="x"), "not an identifier"),
        (lambda: render("property_read", v="o0", prop="key", read="b0_o0_read"), "not allowed"),
        (lambda: render("name_eq", v="o0"), "needs"),
        (lambda: fragment("../schema"), "bad fragment name"),
        (lambda: fragment("nope"), "no fragment"),
        (lambda: Rule("eq"), "needs value"),
        (lambda: Rule("in", "x", ("y",)), "takes no value"),
        (lambda: union_query([]), "at least one branch"),
        (
            lambda: match_query(Subgraph.single("a"), {"object@1": Rule("eq", "a")}, []),
            "exactly the positions",
        ),
    ],
)
def test_bad_builder_requests_are_refused(call: object, message: str) -> None:
    with pytest.raises(BuilderError, match=message):
        call()  # type: ignore[operator]


def test_anchored_query_matches_golden_text() -> None:
    g = Subgraph.from_key(ANCHORED_KEY)
    rules = exact_rules(g)
    rules["object@0"] = Rule("ne_not_in", "man", ("person",))
    query, params = anchored_query([AnchoredBranch(g, rules, "relmod@0", "train", 3)])
    assert query == ANCHORED
    assert params["d0_m0"] == "onto"
    assert params["d0_split"] == "train"
    assert params["d0_tag"] == 3


def test_counting_anchored_query_matches_golden_text() -> None:
    """One direct branch for several signatures that keep the anchor: edits are counted."""
    g = Subgraph.from_key(ANCHORED_KEY)
    rules = exact_rules(g)
    rules["object@0"] = Rule("not_in", values=("person",))
    rules["attribute@1"] = Rule("eq_or_in", "white", ("black", "red"))
    query, params = anchored_query(
        [AnchoredBranch(g, rules, "relmod@0", "train", 3, max_changes=2)]
    )
    assert query == ANCHORED_COUNTING
    assert (params["d0_max"], params["d0_eq_o0"], params["d0_eq_a1"]) == (2, "man", "white")
    assert params["d0_a1_in"] == ["white", "black", "red"]
    assert "d0_eq_m0" not in params  # the anchor never differs: it is not counted


def test_counting_keeps_a_relation_and_a_relmod_apart() -> None:
    """relation@0 and relmod@0 both edited: two parameters, each with its own name (they once
    shared ``eq_r0``, so the relation was compared with the rel-mod's name and counted as an
    edit)."""
    g = Subgraph.from_key("man-(holding|onto:dog)->table")
    rules = exact_rules(g)
    rules["relation@0"] = Rule("eq_or_in", "holding", ("carrying",))
    rules["relmod@0"] = Rule("eq_or_in", "onto", ("into",))
    _, params = anchored_query([AnchoredBranch(g, rules, "object@0", None, 0, max_changes=2)])
    assert params["d0_eq_r0"] == "holding"
    assert params["d0_eq_m0"] == "onto"


def test_anchor_must_be_a_fixed_name() -> None:
    g = Subgraph.from_key("man[tall]")
    with pytest.raises(BuilderError, match="anchor"):
        anchored_query([AnchoredBranch(g, exact_rules(g), "attribute@0", None, 0)])
    rules = exact_rules(g)
    rules["object@0"] = Rule("ne", "man")
    with pytest.raises(BuilderError, match="anchor"):
        anchored_query([AnchoredBranch(g, rules, "object@0", None, 0)])


def test_combined_query_matches_golden_text() -> None:
    g = Subgraph.from_key(COMBINED_KEY)
    rules = exact_rules(g)
    rules["object@0"] = Rule("not_in", values=("person",))
    rules["attribute@1"] = Rule("eq_or_in", "red", ("blue",))
    rules["relation@0"] = Rule("any")
    query, params = combined_query(CombinedBranch(g, rules, 2, ["gqa:1"]))
    assert query == COMBINED
    assert params["c_max"] == 2
    assert params["c_ids"] == ["gqa:1"]
    assert (params["c_eq_o0"], params["c_eq_a1"], params["c_eq_r0"]) == ("man", "red", "wearing")


def _reads(params: dict[str, object]) -> dict[str, object]:
    return {k: v for k, v in params.items() if k.endswith("_read")}


def test_a_branch_returns_only_the_names_its_caller_reads() -> None:
    """Per-signature rows are read at the signature's positions, a positive's at none: the rest
    come back as nulls (one text per shape; only ``$…_read`` values differ)."""
    g = Subgraph.from_key("man[tall]-(wearing)->hat")
    rules = exact_rules(g)
    _, params = union_query(
        [Branch(g, rules, ["gqa:1"], 1, reads=("relation@0",)), Branch(g, rules, ["gqa:2"], 0, ())]
    )
    assert _reads(params) == {
        "b0_o0_read": False,
        "b0_a0_read": False,
        "b0_o1_read": False,
        "b0_a1_read": False,
        "b0_r0_read": True,
        **{f"b1_{stem}_read": False for stem in ("o0", "a0", "o1", "a1", "r0")},
    }


def test_every_position_of_g_is_read_by_default_but_no_missing_attribute() -> None:
    """Relaxed, combined and counting rows are read at every position of ``g``; an object
    without an attribute in ``g`` has no attribute position, so its list is never sent."""
    g = Subgraph.from_key("man[tall]-(wearing)->hat")
    every = {"o0_read": True, "a0_read": True, "o1_read": True, "a1_read": False, "r0_read": True}
    _, exact = match_query(g, exact_rules(g), ["gqa:1"])
    _, combined = combined_query(CombinedBranch(g, exact_rules(g), 2, ["gqa:1"]))
    counting = AnchoredBranch(g, exact_rules(g), "object@0", None, 0, max_changes=1)
    _, anchored = anchored_query([counting])
    assert _reads(exact) == {f"b0_{k}": v for k, v in every.items()}
    assert _reads(combined) == {f"c_{k}": v for k, v in every.items()}
    assert _reads(anchored) == {f"d0_{k}": v for k, v in every.items()}
    _, plain = anchored_query([AnchoredBranch(g, exact_rules(g), "object@0", None, 0)])
    assert _reads(plain) == {}  # it returns image ids only
