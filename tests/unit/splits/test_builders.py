"""Splits on a generated corpus: no leakage (checked without the split code), reproducibility,
manifest counts, disjoint images, and bad input."""

from __future__ import annotations

import json
from collections import Counter
from itertools import combinations
from pathlib import Path
from typing import Any

import pytest

from covr.splits.builders import (
    Split,
    SplitError,
    few_shot,
    lexical_split,
    parse_expression,
    program_split,
    read_manifest,
    write_split,
    zero_shot,
)
from covr.splits.local_structures import local_structures, program_tree
from covr.splits.properties import with_properties
from covr.splits.structure_splits import adversarial_splits, budget_split
from tests.support.splits_corpus import generate_corpus

pytestmark = pytest.mark.unit

NAME_OPS = {
    "find",
    "filter",
    "with_relation",
    "with_relation_object",
    "verify_attr",
    "choose_attr",
    "choose_name",
    "choose_relation",
}
"""Operations whose every argument is a lexical name (the rule, written out independently)."""


@pytest.fixture(scope="module")
def corpus() -> list[dict[str, Any]]:
    examples, _ = generate_corpus(3000, images=500, seed=7)
    return [with_properties(e) for e in examples]


def by_id(examples: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {e["qid"]: e for e in examples}


def check_common(split: Split, examples: list[dict[str, Any]]) -> None:
    """Image-disjointness and counts, computed here from the examples themselves."""
    index = by_id(examples)
    train_images = {i for q in split.train for i in index[q]["scenes"]}
    test_images = {i for q in split.test + split.iid_test for i in index[q]["scenes"]}
    assert not train_images & test_images
    assert all(index[q]["split"] == "train" for q in split.train)
    assert all(index[q]["split"] == "val" for q in split.test + split.iid_test)
    pool = sum(1 for e in examples if e["split"] == "train")
    assert split.counts["train"] == len(split.train)
    assert split.counts["test"] == len(split.test)
    assert split.counts["filtered"] == pool - len(split.train)
    assert not set(split.test) & set(split.iid_test)


def test_zero_shot_intersection(corpus: list[dict[str, Any]]) -> None:
    split = zero_shot(corpus, "HAS-QUANT-COMPSCOPE&HAS-QUANT-ALL")
    check_common(split, corpus)
    index = by_id(corpus)
    both = {"HAS-QUANT-COMPSCOPE", "HAS-QUANT-ALL"}
    assert not any(both <= set(index[q]["properties"]) for q in split.train)
    assert all(both <= set(index[q]["properties"]) for q in split.test)
    # training still sees each property alone (the point of a zero-shot composition split)
    assert any("HAS-QUANT-ALL" in index[q]["properties"] for q in split.train)
    assert any("HAS-QUANT-COMPSCOPE" in index[q]["properties"] for q in split.train)
    expected = sum(1 for e in corpus if e["split"] == "train" and both <= set(e["properties"]))
    assert split.counts["filtered"] == expected


def test_zero_shot_union_and_aliases(corpus: list[dict[str, Any]]) -> None:
    split = zero_shot(corpus, "TPL-VERIFYCOUNT ∪ TPL-VERIFYCOUNTGROUPBY")
    index = by_id(corpus)
    held = {"TPL-VERIFYCOUNT", "TPL-VERIFYCOUNTGROUPBY"}
    assert not any(held & set(index[q]["properties"]) for q in split.train)
    assert {index[q]["paper_template"] for q in split.test} == {"VerifyCount", "VerifyCountGroupBy"}
    assert parse_expression("has-quant-comp & HAS-QUANT-ALL") == [
        ["HAS-QUANT-COMPSCOPE", "HAS-QUANT-ALL"]
    ]


def test_few_shot_keeps_m_and_is_reproducible(corpus: list[dict[str, Any]]) -> None:
    split = few_shot(corpus, "HAS-COMPAR", 20, seed=3)
    check_common(split, corpus)
    index = by_id(corpus)
    assert sum("HAS-COMPAR" in index[q]["properties"] for q in split.train) == 20
    assert all("HAS-COMPAR" in index[q]["properties"] for q in split.test)
    assert few_shot(corpus, "HAS-COMPAR", 20, seed=3).train == split.train
    assert few_shot(corpus, "HAS-COMPAR", 20, seed=4).train != split.train


def anonymized(program: list[dict[str, Any]]) -> str:
    """An independent anonymizer by position: every argument of an operation that takes names
    becomes '#' (``find hair`` too); the attribute types of ``query_attr``/``all_same`` and the
    numbers of counts and comparisons stay."""

    def walk(steps: list[dict[str, Any]]) -> list[Any]:
        out = []
        for s in steps:
            args = [
                walk(a) if isinstance(a, list) else "#" if s["operation"] in NAME_OPS else a
                for a in s["arguments"]
            ]
            out.append([s["operation"], args, s["dependencies"]])
        return out

    return json.dumps(walk(program))


def test_program_split_no_structure_leak(corpus: list[dict[str, Any]]) -> None:
    index = by_id(corpus)
    for seed in (0, 1, 2):
        split = program_split(corpus, holdout=0.2, seed=seed)
        check_common(split, corpus)
        train_structures = {anonymized(index[q]["program"]) for q in split.train}
        assert split.test
        assert not any(anonymized(index[q]["program"]) in train_structures for q in split.test)
        assert split.definition["held_out"] == round(0.2 * split.definition["structures"])
    a = program_split(corpus, seed=1)
    assert a.test == program_split(corpus, seed=1).test
    assert a.test != program_split(corpus, seed=2).test


def names(program: list[dict[str, Any]]) -> set[str]:
    out: set[str] = set()
    for s in program:
        for a in s["arguments"]:
            if isinstance(a, list):
                out |= names(a)
            elif s["operation"] in NAME_OPS:
                out.add(a)
    return out


def test_lexical_split_no_pair_leak_and_thresholds(corpus: list[dict[str, Any]]) -> None:
    split = lexical_split(corpus, pairs=20, min_train=50, min_eval=15, seed=0)
    check_common(split, corpus)
    index = by_id(corpus)
    held = {tuple(p) for p in split.extra["held_out_pairs"]}
    assert len(held) == 20
    for q in split.train:
        assert not any(pair in held for pair in combinations(sorted(names(index[q]["program"])), 2))
    for q in split.test:
        assert any(pair in held for pair in combinations(sorted(names(index[q]["program"])), 2))
    train_counts = Counter(n for q in split.train for n in names(index[q]["program"]))
    eval_counts = Counter(n for e in corpus if e["split"] == "val" for n in names(e["program"]))
    for a, b in held:
        assert train_counts[a] >= 50
        assert train_counts[b] >= 50
        assert eval_counts[a] >= 15
        assert eval_counts[b] >= 15
    assert lexical_split(corpus, pairs=20, seed=0).extra == split.extra
    assert lexical_split(corpus, pairs=20, seed=1).extra != split.extra


def test_adversarial_splits_hold_out_similar_structures(corpus: list[dict[str, Any]]) -> None:
    splits = adversarial_splits(corpus, n=2, max_test_share=0.3, tau=None, max_splits=5, seed=0)
    assert splits
    index = by_id(corpus)
    for split in splits:
        check_common(split, corpus)
        held = {tuple(s) for s in split.extra["held_out_structures"]}
        for q in split.train:
            observed = local_structures(program_tree(index[q]["program"], anonymize=True), 2)
            assert not observed & held
        for q in split.test:
            observed = local_structures(program_tree(index[q]["program"], anonymize=True), 2)
            assert observed & held
        assert split.counts["held_out_programs"] <= 0.3 * split.counts["programs"]
    again = adversarial_splits(corpus, n=2, tau=None, max_splits=5, seed=0)
    assert [s.test for s in again] == [s.test for s in splits]


def test_adversarial_tau_discards_easy_splits(corpus: list[dict[str, Any]]) -> None:
    strict = adversarial_splits(corpus, tau=0.0, max_splits=100, seed=0)
    assert all(s.extra["easiness"] <= 0.0 for s in strict)
    loose = adversarial_splits(corpus, tau=None, max_splits=100, seed=0)
    assert len(loose) >= len(strict)


def test_budget_selection_covers_more_structures_than_random(corpus: list[dict[str, Any]]) -> None:
    index = by_id(corpus)

    def coverage(split: Split) -> int:
        seen: set[tuple[str, ...]] = set()
        for q in split.train:
            seen |= local_structures(program_tree(index[q]["program"], anonymize=True), 2)
        return len(seen)

    chosen = budget_split(corpus, 60, seed=0)
    check_common(chosen, corpus)
    assert len(chosen.train) == len(set(chosen.train)) == 60
    randoms = [coverage(budget_split(corpus, 60, seed=s, strategy="random")) for s in range(3)]
    assert coverage(chosen) > max(randoms)
    assert budget_split(corpus, 60, seed=0).train == chosen.train


def test_write_and_read_manifest(corpus: list[dict[str, Any]], tmp_path: Path) -> None:
    split = zero_shot(corpus, "HAS-LOGIC")
    target = write_split(split, tmp_path, inputs={"examples": "x.jsonl"})
    manifest, lists = read_manifest(target)
    assert manifest["counts"]["test"] == len(lists["test"]) == len(split.test)
    assert manifest["counts"]["train"] == len(lists["train"])
    assert manifest["definition"]["properties"] == "HAS-LOGIC"
    assert manifest["inputs"] == {"examples": "x.jsonl"}
    with pytest.raises(SplitError, match="exists"):
        write_split(split, tmp_path)
    write_split(split, tmp_path, overwrite=True)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_bad_input(corpus: list[dict[str, Any]]) -> None:
    with pytest.raises(SplitError, match="no example has HAS-NOTHING"):
        zero_shot(corpus, "HAS-NOTHING")
    with pytest.raises(SplitError, match="empty term"):
        zero_shot(corpus, "HAS-QUANT&")
    with pytest.raises(SplitError, match="keep=100000"):
        few_shot(corpus, "HAS-COMPAR", 100000)
    with pytest.raises(SplitError, match="keep must be"):
        few_shot(corpus, "HAS-COMPAR", -1)
    with pytest.raises(SplitError, match="holdout"):
        program_split(corpus, holdout=1.5)
    with pytest.raises(SplitError, match="no name pair"):
        lexical_split(corpus, min_train=10**6)
    leaked = [dict(e) for e in corpus[:50]]
    train = next(e for e in leaked if e["split"] == "train")
    val = next(e for e in leaked if e["split"] == "val")
    val["scenes"] = [*val["scenes"], train["scenes"][0]]
    with pytest.raises(SplitError, match="disjoint images"):
        zero_shot(leaked, "HAS-QUANT")
    only_train = [e for e in corpus if e["split"] == "train"]
    with pytest.raises(SplitError, match="no evaluation examples"):
        zero_shot(only_train, "HAS-QUANT")
