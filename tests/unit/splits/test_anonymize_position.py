"""One anonymization, decided by the argument's position (issue 37 item 4).

``find hair`` is anonymized although ``hair`` is also an attribute type; the attribute type of
``query_attr``/``all_same``/``same_attr`` and the numbers of counts and comparisons stay; the
table agrees with the question engine's operator signatures; and ``covr stats``, properties,
the program split, the lexical names and the local-structure trees all use the same rule.
"""

from __future__ import annotations

from typing import Any

import pytest

from covr.questions import stats
from covr.questions.operators import REGISTRY
from covr.scene.program import (
    ARGUMENTS,
    NAME_KINDS,
    PLACEHOLDER,
    STRUCTURE_KINDS,
    anonymize_program,
    argument_kinds,
    name_positions,
    program_names,
    structure_key,
)
from covr.splits.baselines import Baselines
from covr.splits.builders import program_split
from covr.splits.local_structures import program_tree
from covr.splits.properties import compute_properties
from covr.splits.vocab import attribute_type_names
from tests.support.splits_corpus import generate_corpus
from tests.unit.splits.programs import build, example

pytestmark = pytest.mark.unit

X = PLACEHOLDER


def args_of(program: list[dict[str, Any]]) -> list[list[Any]]:
    return [step["arguments"] for step in anonymize_program(program)]


# -- the rule -----------------------------------------------------------------------------------


def test_find_of_an_attribute_type_name_is_anonymized() -> None:
    assert "hair" in attribute_type_names()  # the word that leaked (issue 37)
    hair = build(("exists", ("find", "hair")))
    dog = build(("exists", ("find", "dog")))
    assert args_of(hair) == [[X], []]
    assert structure_key(hair) == structure_key(dog)
    assert program_names(hair) == {"hair"}


@pytest.mark.parametrize(
    "expr",
    [
        ("exists", ("filter", ("find", "dog"), "length")),
        ("verify_attr", ("unique", ("find", "dog")), "light"),
        ("exists", ("with_relation", ("find", "man"), ("find", "hair"), "color")),
        ("choose_attr", ("unique", ("find", "dog")), "size", "shape"),
        ("choose_name", ("find", "hair"), "hair", "color"),
    ],
)
def test_every_name_position_is_anonymized_whatever_the_value(expr: Any) -> None:
    program = build(expr)
    anonymized = anonymize_program(program)
    for step in anonymized:
        if step["operation"] not in ("unique", "exists"):
            assert step["arguments"], step
            assert set(step["arguments"]) == {X}, step


@pytest.mark.parametrize("operation", ["query_attr", "all_same", "same_attr"])
def test_attribute_types_in_type_positions_are_structure(operation: str) -> None:
    def prog(kind: str, noun: str) -> list[dict[str, Any]]:
        return build((operation, ("unique", ("find", noun)), kind))

    assert args_of(prog("color", "dog"))[-1] == ["color"]
    assert structure_key(prog("color", "dog")) == structure_key(prog("color", "cat"))
    assert structure_key(prog("color", "dog")) != structure_key(prog("material", "dog"))
    assert program_names(prog("color", "dog")) == {"dog"}


def test_numbers_are_structure_and_normalized() -> None:
    two = build(("keep_if_values_count_eq", ("group_by_images", ("find", "dog")), 2))
    two_text = build(("keep_if_values_count_eq", ("group_by_images", ("find", "cat")), "2"))
    three = build(("keep_if_values_count_eq", ("group_by_images", ("find", "dog")), 3))
    assert args_of(two)[-1] == [2]
    assert structure_key(two) == structure_key(two_text)
    assert structure_key(two) != structure_key(three)
    literal = build(("geq", ("count", ("find", "dog")), 2))
    assert args_of(literal)[-1] == [2]


def test_nested_programs_are_anonymized_by_the_same_rule() -> None:
    program = build(("all", ("find", "hair"), [("verify_attr", "long")]))
    program[-1]["arguments"][0][0]["dependencies"] = [-1]  # the quantified object
    assert anonymize_program(program)[-1]["arguments"] == [
        [{"operation": "verify_attr", "arguments": [X], "dependencies": [-1]}]
    ]
    assert program_names(program) == {"hair", "long"}


def test_relation_and_every_relmod_are_names() -> None:
    step = {"operation": "with_relation", "arguments": ["holding", "using", "with"]}
    assert name_positions(step) == [True, True, True]
    assert argument_kinds("with_relation", 3) == ["relation", "relmod", "relmod"]


def test_unknown_operations_fall_back_conservatively() -> None:
    """Past the table, every non-numeric string is a name: merging structures never puts one
    structure in both training and test, keeping a word might."""
    step = {"operation": "same_color_as", "arguments": ["color", "dog", "3", 4, True]}
    assert argument_kinds("same_color_as", 5) == [None] * 5
    assert name_positions(step) == [True, True, False, False, False]
    assert anonymize_program([step])[0]["arguments"] == [X, X, 3, 4, True]
    extra = {"operation": "find", "arguments": ["dog", "color", 2]}  # past find's one argument
    assert name_positions(extra) == [True, True, False]


# -- the table is the engine's ---------------------------------------------------------------------


def test_the_table_covers_every_engine_operator_with_its_kinds() -> None:
    assert set(ARGUMENTS) == set(REGISTRY)
    for name, operator in REGISTRY.items():
        for _, engine_kinds in operator.signatures():
            for kind in engine_kinds:
                assert kind.rstrip("*") in NAME_KINDS | STRUCTURE_KINDS, (name, kind)
            expected = [k.rstrip("*") for k in engine_kinds]
            if engine_kinds and engine_kinds[-1].endswith("*"):
                expected.append(engine_kinds[-1].rstrip("*"))  # the repeat, once more
            assert argument_kinds(name, len(expected)) == expected, name


# -- one rule everywhere -------------------------------------------------------------------------


def _tree(program: list[dict[str, Any]], *, anonymize: bool) -> tuple[list[str], list[int]]:
    tree = program_tree(program, anonymize=anonymize)
    return tree.labels, tree.parent


def test_stats_trees_properties_and_program_split_agree() -> None:
    examples, _ = generate_corpus(600, images=120, seed=5)
    examples.append(example(("exists", ("find", "hair")), qid="hair", split="train"))
    examples.append(example(("exists", ("find", "dog")), qid="dog", split="val"))
    assert stats.anonymize is anonymize_program
    structures = {structure_key(e["program"]) for e in examples}
    assert stats.table3(examples)["unique anonymized programs"] == len(structures)
    split = program_split(examples, seed=0)
    assert split.definition["structures"] == len(structures)
    for e in examples:
        program = e["program"]
        # the local-structure tree anonymizes exactly as the program split does
        assert _tree(program, anonymize=True) == _tree(anonymize_program(program), anonymize=False)
        lexical = {p.removeprefix("LEXICAL-") for p in compute_properties(e) if "LEXICAL-" in p}
        assert lexical == program_names(program)
    hair = next(e for e in examples if e["qid"] == "hair")
    assert "LEXICAL-hair" in compute_properties(hair)


def test_program_split_never_separates_find_hair_from_find_dog() -> None:
    examples = [
        example(("exists", ("find", "hair")), qid="hair", split="train", scenes=["a"]),
        example(("exists", ("find", "dog")), qid="dog", split="val", scenes=["b"]),
        example(("count", ("find", "cat")), qid="cat", split="val", scenes=["c"]),
    ]
    for seed in range(6):
        split = program_split(examples, holdout=0.5, seed=seed)
        assert split.definition["structures"] == 2  # exists(find X) and count(find X)
        train_keys = {structure_key(e["program"]) for e in examples if e["qid"] in split.train}
        test_keys = {structure_key(e["program"]) for e in examples if e["qid"] in split.test}
        assert not train_keys & test_keys
        assert ("hair" in split.train) == ("dog" in split.iid_test)


def test_choice_options_of_the_majority_baseline_are_the_names() -> None:
    """MAJTEMPL picks between a choice step's options: its name positions, ``hair`` included."""
    chooser = example(
        ("choose_name", ("find", "hair"), "hair", "color"),
        qid="c",
        answer="dog",  # the template's majority, the answer when no two options are found
        template="ChooseObject",
    )
    baselines = Baselines([chooser])
    assert baselines.majtempl(chooser) in ("hair", "color")
