"""COVR Table 4 (arXiv version, seed 001 §4; EMNLP version seed 000 §3) encoded as data: for every
zero-shot split, the questions the table lists under "Training" must stay in training and the one
under "Generalization" must be held out and tested. The programs are written by hand in the
engine's program format, and each carries its *form* name as ``template``, so the form → paper
template mapping (``PATTERN_TEMPLATES``) and the property code are both checked against the table.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from covr.splits.builders import zero_shot
from covr.splits.examples import PATTERN_TEMPLATES
from covr.splits.properties import with_properties
from tests.unit.splits.programs import build

pytestmark = pytest.mark.unit

TEMPLATES = Path(__file__).parents[3] / "server/covr/questions/resources/templates.json"


class Question(NamedTuple):
    text: str
    form: str  # the engine's form name (templates.json), mapped to a paper template by the code
    program: Any  # nested-tuple program (tests/unit/splits/programs.py)
    answer: Any = True


def rel(subject: Any, obj: Any, *rest: Any) -> tuple[Any, ...]:
    """A relation step: its objects (a third for a rel-mod), then its names."""
    return ("with_relation", subject, obj, *rest)


def find(name: str) -> tuple[str, str]:
    return ("find", name)


def unique(x: Any) -> tuple[str, Any]:
    return ("unique", x)


class Row(NamedTuple):
    expression: str
    training: list[Question]
    generalization: Question


TABLE_4 = [
    Row(
        "HAS-QUANT-COMPSCOPE&HAS-QUANT-ALL",
        [
            Question(
                "No man that is next to a horse is standing",
                "quantifier_attr",
                ("none", rel(find("man"), find("horse"), "next to"), [("verify_attr", "standing")]),
            ),
            Question(
                "All birds are black",
                "quantifier_attr",
                ("all", find("bird"), [("verify_attr", "black")]),
            ),
        ],
        Question(
            "All computer mice that are on a mouse pad are black",
            "quantifier_attr",
            (
                "all",
                rel(find("computer mouse"), find("mouse pad"), "on"),
                [("verify_attr", "black")],
            ),
        ),
    ),
    Row(
        "HAS-COUNT&HAS-ATTR",
        [
            Question(
                "There are 3 dogs", "verify_count_ref_objects", ("eq", ("count", find("dog")), 3)
            ),
            Question(
                "What is the black dog holding?",
                "query_object",
                (
                    "query_name",
                    unique(
                        (
                            "with_relation_object",
                            unique(("filter", find("dog"), "black")),
                            "holding",
                        )
                    ),
                ),
                "frisbee",
            ),
        ],
        Question(
            "There are 3 black dogs",
            "verify_count_ref_objects",
            ("eq", ("count", ("filter", find("dog"), "black")), 3),
        ),
    ),
    Row(
        "HAS-COUNT&RM/V/C",
        [
            Question(
                "The horse is pulling people with a rope or a leash?",
                "choose_object",
                (
                    "choose_name",
                    rel(find("horse"), find("people"), find("rope"), "pulling", "with"),
                    "rope",
                    "leash",
                ),
                "rope",
            ),
            Question(
                "There are two people next to a tree",
                "verify_count_ref_objects",
                ("eq", ("count", rel(find("people"), find("tree"), "next to")), 2),
            ),
        ],
        Question(
            "There are two children cleaning the path with a broom",
            "verify_count_ref_objects",
            (
                "eq",
                ("count", rel(find("child"), find("path"), find("broom"), "cleaning", "with")),
                2,
            ),
        ),
    ),
    Row(  # the lexical split holds out a pair of names; here the pair (man, standing)
        "LEXICAL-man&LEXICAL-standing",
        [
            Question(
                "All men wear jeans",
                "quantifier_relation",
                ("all", find("man"), [("exists", rel(("find", "-1"), find("jeans"), "wearing"))]),
            ),
            Question(
                "No women are standing",
                "quantifier_attr",
                ("none", find("woman"), [("verify_attr", "standing")]),
            ),
        ],
        Question(
            "No men wearing jeans are standing",
            "quantifier_attr",
            ("none", rel(find("man"), find("jeans"), "wearing"), [("verify_attr", "standing")]),
        ),
    ),
    Row(
        "HAS-SAMEATTR-COLOR",
        [
            Question(
                "What is the color of X?",
                "query_attr",
                ("query_attr", unique(find("cup")), "color"),
                "red",
            ),
            Question(
                "Do all X have the same material?",
                "quantifier_same_attr",
                ("all_same", find("cup"), "material"),
            ),
        ],
        Question(
            "Do all X have the same color?",
            "quantifier_same_attr",
            ("all_same", find("cup"), "color"),
        ),
    ),
    Row(
        "TPL-CHOOSEOBJECT",
        [
            Question(
                "What is the man carrying?",
                "query_object",
                ("query_name", unique(("with_relation_object", unique(find("man")), "carrying"))),
                "bag",
            ),
            Question(
                "Is the man X or Y?",
                "choose_attr",
                ("choose_attr", unique(find("man")), "sitting", "standing"),
                "sitting",
            ),
        ],
        Question(
            "The man is carrying a X or Y?",
            "choose_object",
            (
                "choose_name",
                ("with_relation_object", unique(find("man")), "carrying"),
                "bag",
                "box",
            ),
            "bag",
        ),
    ),
    Row(
        "TPL-VERIFYQUANTATTR",
        [
            Question(
                "Does the sitting dog and the standing cat have the same color?",
                "specific_same_attr",
                (
                    "eq",
                    ("query_attr", unique(("filter", find("dog"), "sitting")), "color"),
                    ("query_attr", unique(("filter", find("cat"), "standing")), "color"),
                ),
            ),
            Question(
                "All dogs are standing",
                "quantifier_attr",
                ("all", find("dog"), [("verify_attr", "standing")]),
            ),
        ],
        Question(
            "Do all dogs have the same color?",
            "quantifier_same_attr",
            ("all_same", find("dog"), "color"),
        ),
    ),
    Row(
        "TPL-VERIFYATTR",
        [
            Question(
                "Is the table that is under donuts dark or tan?",
                "choose_attr",
                ("choose_attr", unique(rel(find("table"), find("donut"), "under")), "dark", "tan"),
                "tan",
            ),
        ],
        Question(
            "Is the towel that is on a floor pink?",
            "verify_attr",
            ("verify_attr", unique(rel(find("towel"), find("floor"), "on")), "pink"),
        ),
    ),
    Row(
        "TPL-VERIFYCOUNT|TPL-VERIFYCOUNTGROUPBY",
        [
            Question(
                "How many images contain at least 2 men that are in water?",
                "count_ref_group_by",
                (
                    "count",
                    (
                        "keep_if_values_count_geq",
                        ("group_by_images", rel(find("man"), find("water"), "in")),
                        2,
                    ),
                ),
                3,
            ),
        ],
        Question(
            "There are at least 2 images that contain exactly 2 blankets that are on bed",
            "verify_count_ref_group_by",
            (
                "geq",
                (
                    "count",
                    (
                        "keep_if_values_count_eq",
                        ("group_by_images", rel(find("blanket"), find("bed"), "on")),
                        2,
                    ),
                ),
                2,
            ),
        ),
    ),
]


def _example(q: Question, qid: str, split: str) -> dict[str, Any]:
    return with_properties(
        {
            "qid": qid,
            "utterance": q.text,
            "scenes": [f"img-{qid}"],
            "answer": q.answer,
            "pattern_name": q.form,
            "program": build(q.program),
            "properties": [],
            "template": q.form,
            "split": split,
        }
    )


def _corpus() -> tuple[list[dict[str, Any]], dict[str, str]]:
    """Every question of the table once in the training pool and once in the evaluation pool."""
    examples: list[dict[str, Any]] = []
    text_of: dict[str, str] = {}
    questions = [q for row in TABLE_4 for q in (*row.training, row.generalization)]
    for number, q in enumerate(questions):
        for split in ("train", "val"):
            qid = f"{split}-{number}"
            examples.append(_example(q, qid, split))
            text_of[qid] = q.text
    return examples, text_of


@pytest.mark.parametrize("row", TABLE_4, ids=[r.expression for r in TABLE_4])
def test_table4_split_trains_and_tests_on_the_papers_questions(row: Row) -> None:
    examples, text_of = _corpus()
    split = zero_shot(examples, row.expression)
    train_texts = {text_of[q] for q in split.train}
    test_texts = {text_of[q] for q in split.test}
    iid_texts = {text_of[q] for q in split.iid_test}
    for q in row.training:
        assert q.text in train_texts, (row.expression, "not in training", q.text)
        assert q.text in iid_texts, (row.expression, "not in the i.i.d. test", q.text)
    assert row.generalization.text in test_texts, (row.expression, row.generalization.text)
    assert row.generalization.text not in train_texts


def test_every_form_maps_to_its_paper_template() -> None:
    """The splits room's form → template table (used when an example has no paper_template)
    agrees with the engine's resource, and covers the paper's 15 templates (Table 1)."""
    resource = json.loads(TEMPLATES.read_text())["templates"]
    for template in resource:
        assert PATTERN_TEMPLATES[template["name"]] == template["paper_template"], template["name"]
    table_1 = {
        "VerifyAttr", "ChooseAttr", "QueryAttr", "CompareCount", "Count", "VerifyCount",
        "CountGroupBy", "VerifyCountGroupBy", "VerifyLogic", "VerifyQuant", "VerifyQuantAttr",
        "ChooseObject", "QueryObject", "VerifySameAttr", "ChooseRel",
    }  # fmt: skip
    assert set(PATTERN_TEMPLATES.values()) == table_1
    # Table 1: "VerifyQuant-Attr: Do all dogs that are on a bed have the same color?"
    quant_attr = {name for name, t in PATTERN_TEMPLATES.items() if t == "VerifyQuantAttr"}
    assert quant_attr == {"quantifier_same_attr"}
