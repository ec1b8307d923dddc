"""Statement texts depend on the subgraph's shape only (issue 15: Neo4j's plan cache).

Neo4j keeps one plan per statement text; a text that varies with names, attributes or the rule
each position got is planned anew for every subgraph (seconds on a cold server). These tests
build the statements of every builder for many random subgraphs of each shape, with random
names, random attributes and random rules, and check that the texts are exactly one per shape:
the skeleton (objects and how relations and rel-mods connect them), the builder, and for a
direct branch its anchor position, whether it counts edits and whether it has a split.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Callable

from covr.related.cypher_path import (
    MEMBERSHIP,
    AnchoredBranch,
    CombinedBranch,
    Rule,
    RuleOp,
    anchored_query,
    combined_query,
    match_query,
    union_query,
)
from covr.related.cypher_path import Branch as UnionBranch
from covr.scene.edits import positions
from covr.scene.subgraph import Subgraph

SYLLABLES = ("ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "ze", "pu")
TEMPLATES: dict[str, Callable[[list[str], list[str | None]], str]] = {
    "single": lambda n, a: f"{n[0]}{a[0]}",
    "hop": lambda n, a: f"{n[0]}{a[0]}-({n[1]})->{n[2]}{a[1]}",
    "chain": lambda n, a: f"{n[0]}{a[0]}-({n[1]})->{n[2]}{a[1]}-({n[3]})->{n[4]}{a[2]}",
    "v": lambda n, a: f"{n[0]}{a[0]}{{-({n[1]})->{n[2]}{a[1]},-({n[3]})->{n[4]}{a[2]}}}",
    "frame1": lambda n, a: f"{n[0]}{a[0]}-({n[1]}|{n[2]}:{n[3]}{a[1]})->{n[4]}{a[2]}",
    "frame3": lambda n, a: (
        f"{n[0]}{a[0]}-({n[1]}|{n[2]}:{n[3]}|{n[5]}:{n[6]}{a[1]}|{n[7]}:{n[8]})->{n[4]}{a[2]}"
    ),
}
"""Each template takes 9 distinct names and 3 attribute suffixes (``[x]`` or empty)."""
OPS: tuple[RuleOp, ...] = tuple(MEMBERSHIP)


def word(rng: random.Random) -> str:
    return "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4)))


def random_subgraph(rng: random.Random, template: str) -> Subgraph:
    names: list[str] = []
    while len(names) < 9:
        candidate = word(rng)
        if candidate not in names:
            names.append(candidate)
    attributes = [f"[{word(rng)}]" if rng.random() < 0.5 else "" for _ in range(3)]
    return Subgraph.from_key(TEMPLATES[template](names, attributes))  # type: ignore[arg-type]


def random_rule(rng: random.Random) -> Rule:
    op = rng.choice(OPS)
    values = tuple(word(rng) for _ in range(rng.randint(0, 4)))
    if op in ("eq", "ne"):
        return Rule(op, word(rng))
    if op in ("ne_not_in", "eq_or_in"):
        return Rule(op, word(rng), values)
    if op == "any":
        return Rule(op)
    return Rule(op, values=values)


def random_rules(rng: random.Random, g: Subgraph) -> dict[str, Rule]:
    return {p: random_rule(rng) for p in positions(g)}


def texts_by_shape(
    build: Callable[[random.Random, Subgraph], tuple[object, str]], samples: int = 40
) -> dict[tuple[object, ...], set[str]]:
    """Per shape key (the template plus what ``build`` says besides the text): the texts seen."""
    rng = random.Random(15)
    seen: dict[tuple[object, ...], set[str]] = defaultdict(set)
    for template in TEMPLATES:
        for _ in range(samples):
            g = random_subgraph(rng, template)
            extra, text = build(rng, g)
            seen[(template, extra)].add(text)
    return seen


def type_of(value: object) -> str:
    """A parameter's type as Neo4j's plan cache keys it (size hints off): an empty list is a
    ``LIST<ANY>``, a list of strings a ``LIST<STRING>``."""
    if isinstance(value, list):
        inner = {type(item).__name__ for item in value}
        return f"list[{'|'.join(sorted(inner)) or 'empty'}]"
    return type(value).__name__


def signature_of(query: str, params: dict[str, object]) -> tuple[str, tuple[tuple[str, str], ...]]:
    """What Neo4j's plan cache keys a statement by: its text and its parameters' types."""
    return query, tuple(sorted((k, type_of(v)) for k, v in params.items()))


def assert_one_text_per_shape(seen: dict[tuple[object, ...], set[str]]) -> None:
    varying = {key: len(texts) for key, texts in seen.items() if len(texts) != 1}
    assert not varying, f"texts that vary within one shape: {varying}"
    every = {text for texts in seen.values() for text in texts}
    assert len(every) == len(seen), "two shapes share a text"


def test_branch_texts_are_one_per_shape() -> None:
    def build(rng: random.Random, g: Subgraph) -> tuple[object, str]:
        return None, match_query(g, random_rules(rng, g), [word(rng)], rng.randint(0, 9))[0]

    seen = texts_by_shape(build)
    assert len(seen) == len(TEMPLATES)
    assert_one_text_per_shape(seen)


def test_a_round_of_branches_on_neo4j_is_one_text_per_shape() -> None:
    """Neo4j runs each branch of a round alone (``read_many``): positives, every signature and
    the relaxed copy of one subgraph are the same statement with other parameters."""
    rng = random.Random(7)
    for template in TEMPLATES:
        g = random_subgraph(rng, template)
        texts = {
            union_query([UnionBranch(g, random_rules(rng, g), ["x"], tag)])[0] for tag in range(20)
        }
        assert len(texts) == 1, template


def test_combined_texts_are_one_per_shape() -> None:
    def build(rng: random.Random, g: Subgraph) -> tuple[object, str]:
        branch = CombinedBranch(g, random_rules(rng, g), rng.randint(1, 2), [word(rng)])
        return None, combined_query(branch)[0]

    seen = texts_by_shape(build)
    assert len(seen) == len(TEMPLATES)
    assert_one_text_per_shape(seen)


def test_anchored_texts_are_one_per_shape_anchor_and_mode() -> None:
    def build(rng: random.Random, g: Subgraph) -> tuple[object, str]:
        rules = random_rules(rng, g)
        anchor = rng.choice([p for p in positions(g) if p.kind != "attribute"])
        rules[anchor] = Rule("eq", word(rng))
        split = rng.choice([None, "train", "val"])
        most = rng.choice([None, 1, 2])
        branch = AnchoredBranch(g, rules, anchor, split, rng.randint(0, 5), most)
        return (str(anchor), split is not None, most is not None), anchored_query([branch])[0]

    seen = texts_by_shape(build, samples=120)
    assert_one_text_per_shape(seen)
    # the anchors, splits and modes drawn per shape, no more: names and rules add nothing
    assert len({text for texts in seen.values() for text in texts}) == len(seen)


def test_parameter_types_are_one_per_shape() -> None:
    """Neo4j's plan cache key is the text and the parameters' types: those must not vary with
    names and rules either (no list is ever empty, no parameter is sometimes null)."""

    def build(rng: random.Random, g: Subgraph) -> tuple[object, str]:
        rules = random_rules(rng, g)
        anchor = next(p for p in positions(g) if p.kind == "object")
        rules[anchor] = Rule("eq", word(rng))
        keys = [
            signature_of(*match_query(g, rules, [word(rng)], rng.randint(0, 9))),
            signature_of(*combined_query(CombinedBranch(g, rules, 2, [word(rng)]))),
            signature_of(*anchored_query([AnchoredBranch(g, rules, anchor, "val", 1, 2)])),
        ]
        return None, repr(keys)

    seen = texts_by_shape(build)
    assert_one_text_per_shape(seen)
    for keys in seen.values():
        assert "empty" not in next(iter(keys))


def test_values_only_change_parameters() -> None:
    """Two subgraphs of one shape with different names and rules: one text, other values."""
    rng = random.Random(3)
    g, h = random_subgraph(rng, "chain"), random_subgraph(rng, "chain")
    query_g, params_g = match_query(g, random_rules(rng, g), ["a"])
    query_h, params_h = match_query(h, random_rules(rng, h), ["b"])
    assert query_g == query_h
    assert params_g.keys() == params_h.keys()
    assert params_g != params_h
