"""Held-out attribute pairs (CLEVR-HOPE) on generated scene graphs: leakage checked on the
scene graphs directly, minimal sets answered from the graphs, diversity counted by hand."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from covr.scene.model import Object, SceneGraph
from covr.splits.builders import SplitError
from covr.splits.hop import Pair, candidate_pairs, diversity, hop_split, mentions, parse_pair
from tests.support.splits_corpus import generate_corpus
from tests.unit.splits.programs import example

pytestmark = pytest.mark.unit

Corpus = tuple[list[dict[str, Any]], dict[str, SceneGraph]]


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    return generate_corpus(3000, images=300, seed=11)


def has_pair(graph: SceneGraph, a: str, b: str) -> bool:
    return any({a, b} <= {o.name, *o.attributes} for o in graph.objects)


def busiest_pair(examples: list[dict[str, Any]], scenes: dict[str, SceneGraph]) -> Pair:
    """The (attribute, noun) pair most val questions mention about an image that has it."""
    counts: Counter[tuple[str, str]] = Counter()
    for e in examples:
        if e["split"] != "val":
            continue
        steps = e["program"]
        for s in steps:
            if s["operation"] == "filter" and steps[s["dependencies"][0]]["operation"] == "find":
                a, b = s["arguments"][0], steps[s["dependencies"][0]]["arguments"][0]
                if any(has_pair(scenes[i], a, b) for i in e["scenes"]):
                    counts[(a, b)] += 1
    (a, b), _ = counts.most_common(1)[0]
    return Pair(a, b)


def test_parse_pair() -> None:
    assert parse_pair("wooden,table") == Pair("wooden", "table")
    assert parse_pair("table+wooden") == Pair("wooden", "table")
    assert parse_pair("red,metal") == Pair("red", "metal")
    for bad, message in [
        ("wooden", "two values"),
        ("dog,table", "neither value"),
        ("red,blue", "both values"),
        ("red,red", "same"),
    ]:
        with pytest.raises(SplitError, match=message):
            parse_pair(bad)


def test_mentions_reads_programs_nested_scopes_and_text() -> None:
    pair = Pair("wooden", "table")
    assert mentions(example(("exists", ("filter", ("find", "table"), "wooden"))), pair)
    verify = ("verify_attr", ("unique", ("find", "table")), "wooden")
    assert mentions(example(verify), pair)
    quant = ("all", ("find", "table"), [("verify_attr", "wooden")])
    ex = example(quant)
    ex["program"][-1]["arguments"][0][0]["dependencies"] = [-1]
    assert mentions(ex, pair)
    other = (
        "exists",
        ("with_relation", ("filter", ("find", "chair"), "wooden"), ("find", "table"), "near"),
    )
    assert not mentions(example(other), pair)  # wooden chair near a table: different objects
    assert mentions(example(("exists", ("find", "x")), utterance="Is the wooden table red?"), pair)


def test_hop_split_removes_pair_from_images_and_questions(corpus: Corpus) -> None:
    examples, scenes = corpus
    pair = busiest_pair(examples, scenes)
    result = hop_split(examples, scenes, pair, seed=0, minimal_limit=20)
    split = result.split
    index = {e["qid"]: e for e in examples}
    for q in split.train:
        e = index[q]
        assert not any(has_pair(scenes[i], pair.first, pair.second) for i in e["scenes"])
        assert f"{pair.first} {pair.second}" not in e["utterance"]
    assert split.test, "the corpus must give complex-OOD examples"
    for q in split.test:
        assert any(has_pair(scenes[i], pair.first, pair.second) for i in index[q]["scenes"])
    for q in split.iid_test:
        assert not any(has_pair(scenes[i], pair.first, pair.second) for i in index[q]["scenes"])
    assert split.counts["complex_ood"] == len(split.test)
    assert hop_split(examples, scenes, pair, seed=0, minimal_limit=20).split.train == split.train


def test_minimal_sets(corpus: Corpus) -> None:
    examples, scenes = corpus
    pair = busiest_pair(examples, scenes)
    result = hop_split(examples, scenes, pair, seed=1, minimal_limit=10)
    assert result.minimal_ood
    answers = Counter(e["answer"] for e in result.minimal_ood)
    assert answers[True] >= 1
    assert answers[False] >= answers[True]  # up to three swapped partners per positive image
    val_images = {i for e in examples if e["split"] == "val" for i in e["scenes"]}
    for e in result.minimal_ood + result.minimal_iid:
        (image,) = e["scenes"]
        assert image in val_images
        asked = [s["arguments"][0] for s in e["program"] if s["operation"] in ("find", "filter")]
        assert e["answer"] == any(
            set(asked) <= {o.name, *o.attributes} for o in scenes[image].objects
        )
        assert "HAS-ATTR" in e["properties"]
    for e in result.minimal_ood:
        assert e["utterance"] == f"Is there a {pair.first} {pair.second}?" or e[
            "utterance"
        ].startswith(f"Is there an {pair.first}")
    for e in result.minimal_iid:
        assert not has_pair(scenes[e["scenes"][0]], pair.first, pair.second)


def test_diversity_by_hand() -> None:
    def graph(n: int, *objects: tuple[str, tuple[str, ...]]) -> SceneGraph:
        return SceneGraph.build(
            source="gqa",
            original_id=str(n),
            split="train",
            objects=[Object(str(i), name, attrs) for i, (name, attrs) in enumerate(objects)],
        )

    graphs = [
        graph(1, ("table", ("wooden",)), ("chair", ("metal", "red"))),
        graph(2, ("table", ("metal",)), ("chair", ("wooden",)), ("cup", ("red",))),
    ]
    d = diversity(graphs, Pair("wooden", "table"))
    # material x noun seen on one object: wooden table, metal chair, metal table, wooden chair
    assert d["diversity"] == 4
    assert d["possible"] == 2 * 2  # {wooden, metal} x {table, chair}
    assert diversity(graphs, Pair("red", "metal"))["diversity"] == 1  # only the red metal chair


def test_candidate_pairs_and_missing_scene(corpus: Corpus) -> None:
    examples, scenes = corpus
    rows = candidate_pairs(examples, scenes)
    assert rows
    assert all(r["eval_images"] >= 1 for r in rows)
    assert (
        rows == sorted(rows, key=lambda r: -r["eval_images"])
        or rows[0]["eval_images"] >= rows[-1]["eval_images"]
    )
    partial = dict(list(scenes.items())[:10])
    with pytest.raises(SplitError, match="scene graph of image"):
        hop_split(examples, partial, Pair("wooden", "table"))
