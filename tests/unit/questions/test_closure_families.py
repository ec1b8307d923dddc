"""The seven CLOSURE question families (seed 003 §2: chain_loc_sim, chain_sim_loc, and_sim,
or_sim, or_loc_sim, compare_sim, compare_sim_loc) all occur among the ``closure`` group's
examples. Each example's family is read off its program here, by code written apart from the
templates: the structure class (a chain, two branches joined by and / or, a comparison) and where
the location relations (``with_relation*``) stand relative to the similarity relation
(``same_attr``)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import pytest

from covr.questions.generate import GenerationOptions, generate
from covr.questions.templates import group_templates
from covr.related.memory import InMemoryRelated
from tests.support.question_data import bundled_samples, synthetic_scenes

pytestmark = pytest.mark.unit

FAMILIES = {
    "chain_loc_sim",
    "chain_sim_loc",
    "and_sim",
    "or_sim",
    "or_loc_sim",
    "compare_sim",
    "compare_sim_loc",
}
LOCATION = {"with_relation", "with_relation_object"}
COMPARE = {"eq", "gt", "lt"}


def _upstream(program: Sequence[dict[str, Any]], index: int) -> set[int]:
    """The steps ``index`` depends on, transitively (itself excluded)."""
    seen: set[int] = set()
    stack = list(program[index]["dependencies"])
    while stack:
        i = stack.pop()
        if i not in seen and 0 <= i < len(program):
            seen.add(i)
            stack.extend(program[i]["dependencies"])
    return seen


def family(program: Sequence[dict[str, Any]]) -> str | None:
    """The CLOSURE family of a program, or None (no similarity reference / CLEVR's own chain)."""
    ops = [s["operation"] for s in program]
    sim = {i for i, op in enumerate(ops) if op == "same_attr"}
    loc = {i for i, op in enumerate(ops) if op in LOCATION}
    if not sim:
        return None
    if "logic_or" in ops:
        return "or_loc_sim" if loc else "or_sim"
    # "and": two conditions joined — both branches true, or one object under a location and a
    # similarity condition at once (a relation step filtering the similarity set)
    if "logic_and" in ops or any(
        ops[i] == "with_relation"
        and (
            sim
            & ({program[i]["dependencies"][0]} | _upstream(program, program[i]["dependencies"][0]))
        )
        for i in loc
    ):
        return "and_sim"
    last = len(ops) - 1
    if ops[last] in COMPARE and len(program[last]["dependencies"]) == 2:
        return "compare_sim_loc" if loc else "compare_sim"
    if any(ops[i] == "with_relation_object" and sim & _upstream(program, i) for i in loc):
        return "chain_sim_loc"  # a location hop from the similarity-referenced object
    if any(loc & _upstream(program, i) for i in sim):
        return "chain_loc_sim"  # similarity to an object found through a location relation
    return None


def _examples() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for split, graphs in bundled_samples().items():
        options = GenerationOptions(split=split, seed=11, templates=("closure",))
        out += generate(InMemoryRelated(graphs), options, [g.image_id for g in graphs])
    synthetic = synthetic_scenes(200, seed=5)
    options = GenerationOptions(split="val", seed=11, templates=("closure",), subgraphs_per_image=6)
    out += generate(InMemoryRelated(synthetic), options, [g.image_id for g in synthetic][:60])
    return out


def test_hand_written_programs_get_their_family() -> None:
    def s(op: str, deps: list[int], *args: Any) -> dict[str, Any]:
        return {"operation": op, "arguments": list(args), "dependencies": deps}

    chain_loc_sim = [
        s("find", [], "car"), s("find", [], "street"), s("with_relation", [0, 1], "on"),
        s("unique", [2]), s("same_attr", [3], "color"), s("exists", [4]),
    ]  # fmt: skip
    chain_sim_loc = [
        s("find", [], "dog"), s("unique", [0]), s("same_attr", [1], "color"), s("unique", [2]),
        s("with_relation_object", [3], "holding"), s("unique", [4]), s("query_name", [5]),
    ]  # fmt: skip
    and_sim = [
        s("find", [], "dog"), s("unique", [0]), s("same_attr", [1], "color"),
        s("find", [], "frisbee"), s("with_relation", [2, 3], "holding"), s("count", [4]),
    ]  # fmt: skip
    assert family(chain_loc_sim) == "chain_loc_sim"
    assert family(chain_sim_loc) == "chain_sim_loc"
    assert family(and_sim) == "and_sim"
    assert family(chain_loc_sim[:2]) is None


def test_all_seven_closure_families_are_generated() -> None:
    examples = _examples()
    found = Counter(family(e["program"]) for e in examples)
    assert set(found) >= FAMILIES, found
    by_form: dict[str, set[str | None]] = {}
    for e in examples:
        by_form.setdefault(e["template"], set()).add(family(e["program"]))
    # closure_nested's one example on these inputs compared sizes across nouns ("the object
    # that has the same size as the stool"), a relative scale issue 37 keeps within one noun;
    # test_closure.py renders the form with a color
    assert set(by_form) | {"closure_nested"} == set(group_templates("closure")), by_form
