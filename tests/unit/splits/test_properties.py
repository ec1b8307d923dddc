"""Property detection (paper Table 5) on hand-written programs, nested programs included."""

from __future__ import annotations

import pytest

from covr.splits.properties import compute_properties
from tests.unit.splits.programs import example

pytestmark = pytest.mark.unit

DOG = ("find", "dog")
BLACK_DOG = ("filter", DOG, "black")
DOG_ON_TABLE = ("with_relation", DOG, ("find", "table"), "on")


def props(expr: object, **kw: object) -> set[str]:
    return set(compute_properties(example(expr, **kw)))  # type: ignore[arg-type]


def test_quantifiers_with_nested_scope() -> None:
    p = props(("all", DOG, [("verify_attr", "black")]), template="VerifyQuantAttr")
    assert {"HAS-QUANT", "HAS-QUANT-ALL", "HAS-ATTR", "TPL-VERIFYQUANTATTR"} <= p
    assert "HAS-QUANT-COMPSCOPE" not in p  # "All dogs are black": simple scope
    assert {"HAS-QUANT-SOME"} <= props(("some", DOG, [("verify_attr", "black")]))
    assert {"HAS-QUANT-NONE"} <= props(("none", DOG, [("verify_attr", "black")]))


def test_complex_scope_attribute_or_relation() -> None:
    assert "HAS-QUANT-COMPSCOPE" in props(("all", BLACK_DOG, [("verify_attr", "large")]))
    assert "HAS-QUANT-COMPSCOPE" in props(("none", DOG_ON_TABLE, [("verify_attr", "standing")]))
    # a relation only in the nested condition ("No dogs are on a table") is not the scope
    nested = ("none", DOG, [("exists", ("with_relation", ("find", "table"), "on"))])
    assert "HAS-QUANT-COMPSCOPE" not in props(nested)


def test_nested_programs_are_inspected() -> None:
    """A count hidden inside a quantifier's condition is still found (the reference missed it)."""
    inner = ("gt", ("count", ("with_relation", ("find", "leg"), "of")), 3)
    p = props(("all", DOG, [inner]))
    assert {"HAS-COUNT", "HAS-NUM", "HAS-NUM-3", "LEXICAL-leg", "LEXICAL-of"} <= p


def test_all_same_is_quantifier_all_and_same_attribute() -> None:
    p = props(("all_same", BLACK_DOG, "color"), template="VerifyQuantAttr")
    assert {"HAS-QUANT", "HAS-QUANT-ALL", "HAS-QUANT-COMPSCOPE", "HAS-SAMEATTR"} <= p
    assert "HAS-SAMEATTR-COLOR" in p
    assert "LEXICAL-color" not in p  # attribute types are structure, not names


def test_same_attribute_of_two_objects() -> None:
    expr = (
        "eq",
        ("query_attr", ("unique", DOG), "material"),
        ("query_attr", ("unique", ("find", "cat")), "material"),
    )
    p = props(expr, template="VerifySameAttr")
    assert {"HAS-SAMEATTR", "HAS-SAMEATTR-MATERIAL", "HAS-ATTR"} <= p
    assert "HAS-COMPAR" not in p


@pytest.mark.parametrize(("op", "name"), [("gt", "MORE"), ("lt", "LESS"), ("eq", "SAME")])
def test_comparatives(op: str, name: str) -> None:
    p = props((op, ("count", DOG), ("count", ("find", "cat"))), template="CompareCount")
    assert {"HAS-COMPAR", f"HAS-COMPAR-{name}", "HAS-COUNT", "TPL-COMPARECOUNT"} <= p
    assert "HAS-NUM" not in p


def test_numbers_and_counting() -> None:
    p = props(("geq", ("count", BLACK_DOG), 3), template="VerifyCount")
    assert {"HAS-COUNT", "HAS-NUM", "HAS-NUM-3", "HAS-ATTR", "ANS-BOOL"} <= p
    assert "HAS-COMPAR" not in p  # a literal count is counting, not a comparative


def test_group_by() -> None:
    expr = ("count", ("keep_if_values_count_eq", ("group_by_images", DOG_ON_TABLE), 2))
    p = props(expr, template="CountGroupBy", answer=3)
    assert {"HAS-GROUPBY", "HAS-NUM-2", "HAS-COUNT", "ANS-NUM", "ANS-3", "TPL-COUNTGROUPBY"} <= p


@pytest.mark.parametrize(("op", "name"), [("logic_and", "AND"), ("logic_or", "OR")])
def test_logic(op: str, name: str) -> None:
    p = props((op, ("exists", DOG), ("exists", ("find", "cat"))), template="VerifyLogic")
    assert {"HAS-LOGIC", f"HAS-LOGIC-{name}"} <= p


def test_answer_types() -> None:
    attr = props(("query_attr", ("unique", DOG), "color"), answer="black", template="QueryAttr")
    assert "ANS-ATTR" in attr
    noun = props(("query_name", ("unique", DOG)), answer="cat", template="QueryObject")
    assert "ANS-NOUN" in noun
    choose = props(
        ("choose_attr", ("unique", DOG), "red", "blue"), answer="red", template="ChooseAttr"
    )
    assert "ANS-ATTR" in choose
    assert "ANS-NOUN" not in choose
    rel = props(("choose_relation", ("unique", DOG), ("unique", ("find", "cat")), "on", "near"),
                answer="on", template="ChooseRel")  # fmt: skip
    assert "ANS-REL" in rel


def test_subgraph_shapes_rm_v_c() -> None:
    plain = props(("count", DOG_ON_TABLE))
    assert not plain & {"RM", "V", "C", "RM/V", "RM/V/C"}
    relmod = (
        "with_relation",
        ("find", "man"),
        ("find", "paper"),
        ("find", "wall"),
        "stapling",
        "onto",
    )
    assert {"RM", "RM/V", "RM/V/C"} <= props(("count", relmod))
    v_shape = (
        "with_relation",
        ("with_relation", DOG, ("find", "table"), "on"),
        ("find", "cat"),
        "near",
    )
    assert {"V", "RM/V", "RM/V/C"} <= props(("count", v_shape))
    chain = (
        "with_relation",
        ("find", "man"),
        ("with_relation", ("find", "bat"), ("find", "table"), "on"),
        "holding",
    )
    p = props(("count", chain))
    assert {"C", "RM/V/C"} <= p
    assert "RM/V" not in p


def test_template_and_lexical() -> None:
    p = props(("verify_attr", ("unique", DOG_ON_TABLE), "black"), template="VerifyAttr")
    assert {"TPL-VERIFYATTR", "LEXICAL-dog", "LEXICAL-table", "LEXICAL-on", "LEXICAL-black"} <= p


def test_template_from_pattern_name_when_provenance_lacks_it() -> None:
    ex = example(("count", DOG), answer=2)
    ex["provenance"] = {"split": "train"}
    ex["pattern_name"] = "count_ref_group_by"
    assert "TPL-COUNTGROUPBY" in compute_properties(ex)
