"""The independent check (tests/support/independent_check.py) can fail: it reports a wrong
answer, a distractor that holds the subgraph, a positive that does not, and an example without
a distractor (issue 16 acceptance, second line)."""

from __future__ import annotations

import ast
import copy
from pathlib import Path
from typing import Any

import pytest

from covr_loaders.samples import SAMPLES
from tests.support import independent_check as check

pytestmark = pytest.mark.unit

GRAPHS = check.read_gqa(SAMPLES / "gqa" / "val_sceneGraphs.json")
TYPES = check.attribute_types()
G = "man[young]-(holding)->umbrella[black]"
PROGRAM = [
    {"operation": "find", "arguments": ["umbrella"], "dependencies": []},
    {"operation": "filter", "arguments": ["black"], "dependencies": [0]},
    {"operation": "find", "arguments": ["man"], "dependencies": []},
    {"operation": "filter", "arguments": ["young"], "dependencies": [2]},
    {"operation": "with_relation", "arguments": ["holding"], "dependencies": [3, 1]},
    {"operation": "count", "arguments": [], "dependencies": [4]},
]
GOOD: dict[str, Any] = {
    "qid": "val-test",
    "scenes": ["gqa:2370799", "gqa:2382412"],
    "answer": 1,
    "program": PROGRAM,
    "subgraphs": {"g": G},
    # 2382412 has a young man riding a skateboard: no umbrella (a distractor)
    "signatures": {"gqa:2370799": [], "gqa:2382412": ["object@1+relation@0"]},
}


def _problems(example: dict[str, Any]) -> list[str]:
    return check.check_example(example, GRAPHS, TYPES)


def test_a_right_example_passes() -> None:
    assert _problems(GOOD) == []


def test_a_wrong_answer_is_reported() -> None:
    bad = {**GOOD, "answer": 2}
    assert any("re-executed 1" in p for p in _problems(bad))


def test_a_distractor_holding_the_subgraph_is_reported() -> None:
    bad = copy.deepcopy(GOOD)
    bad["signatures"]["gqa:2370799"] = ["attribute@0"]
    assert any("distractor gqa:2370799 holds" in p for p in _problems(bad))


def test_a_positive_without_the_subgraph_and_no_distractor_are_reported() -> None:
    bad = copy.deepcopy(GOOD)
    bad["signatures"]["gqa:2382412"] = []
    assert any("marked as holding g" in p for p in _problems(bad))
    alone = {**GOOD, "scenes": ["gqa:2370799"], "signatures": {"gqa:2370799": []}}
    assert any("no distractor" in p for p in _problems(alone))


def test_a_failing_program_is_reported() -> None:
    glasses = {"operation": "find", "arguments": ["glasses"], "dependencies": []}
    count = {"operation": "count", "arguments": [], "dependencies": [0]}
    world = check.World.of(GRAPHS, ["gqa:2354786", "gqa:2321581"], TYPES)
    assert check.execute([glasses, count], world) == 2
    unique = {"operation": "unique", "arguments": [], "dependencies": [0]}
    name = {"operation": "query_name", "arguments": [], "dependencies": [1]}
    assert isinstance(check.execute([glasses, unique, name], world), check.Failed)
    bad = {**GOOD, "program": [glasses, unique, name], "answer": "glasses"}
    bad["scenes"] = ["gqa:2354786", "gqa:2321581"]
    bad["signatures"] = {"gqa:2354786": ["object@0"], "gqa:2321581": ["object@0"]}
    assert any("re-executed Failed" in p for p in _problems(bad))


def test_at_most_counts_images_without_a_match() -> None:
    # "How many images contain at most 1 umbrella?" over an image with one and one with none: 2
    program: list[dict[str, Any]] = [
        {"operation": "find", "arguments": ["umbrella"], "dependencies": []},
        {"operation": "group_by_images", "arguments": [], "dependencies": [0]},
        {"operation": "keep_if_values_count_leq", "arguments": [1], "dependencies": [1]},
        {"operation": "keys", "arguments": [], "dependencies": [2]},
        {"operation": "count", "arguments": [], "dependencies": [3]},
    ]
    assert check.execute(program, check.World.of(GRAPHS, GOOD["scenes"], TYPES)) == 2


def test_keys_parse_like_the_grammar() -> None:
    pattern = check.parse_key("man{-(holding)->umbrella[black],-(wearing)->t-shirt}")
    assert [pattern.nodes[n]["name"] for n in pattern] == ["man", "umbrella", "t-shirt"]
    assert pattern.nodes[1]["attr"] == "black"
    assert {pattern.edges[e]["rel"] for e in pattern.edges} == {"holding", "wearing"}
    assert check.contains(GRAPHS["gqa:2370799"], check.parse_key(G))
    assert not check.contains(GRAPHS["gqa:2370799"], check.parse_key("man[skinny]"))


def test_it_imports_nothing_of_the_engine() -> None:
    source = Path(check.__file__).read_text(encoding="utf-8")
    imported = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            imported |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            imported.add(node.module)
    assert not any(name == "covr" or name.startswith(("covr.", "covr_")) for name in imported)
