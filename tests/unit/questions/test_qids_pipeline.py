"""Unique qids and a working pipeline on raw output (issue 16 item 5): generate, then
``covr properties``, then every ``covr split`` builder, with no hand cleaning in between."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from covr.cli.main import app
from covr.questions.engine import qid
from covr.questions.example import Example
from covr.questions.export import write_jsonl
from covr.questions.generate import GenerationOptions, iter_examples
from covr.related.memory import InMemoryRelated
from covr_loaders.gqa import to_record
from tests.support.question_data import synthetic_scenes

runner = CliRunner()


def test_programs_that_read_alike_get_different_qids() -> None:
    base: Any = {
        "split": "val",
        "template": "count_ref_objects",
        "utterance": "How many dogs are there?",
        "scenes": ["gqa:1", "gqa:2"],
        "answer": 2,
        "program": [{"operation": "find", "arguments": ["dog"], "dependencies": []}],
    }
    other: Any = dict(
        base, program=[{"operation": "find", "arguments": ["dogs"], "dependencies": []}]
    )
    assert qid(base) != qid(other)
    reached_otherwise: Any = dict(base, seed=7, source_image="gqa:2")
    assert qid(base) == qid(reached_otherwise)  # provenance is no identity


def test_repeated_examples_are_generated_once() -> None:
    """The same image asked twice (as two runs' outputs concatenated would be) yields each
    example once: equal qids mean equal examples."""
    scenes = synthetic_scenes(6, seed=2)
    provider = InMemoryRelated(scenes)
    options = GenerationOptions(split="val", seed=1)
    once = list(iter_examples(provider, options, [scenes[0].image_id]))
    twice = list(iter_examples(provider, options, [scenes[0].image_id] * 2))
    assert once
    assert [e["qid"] for e in twice] == [e["qid"] for e in once]


def _cli(*args: object) -> Any:
    result = runner.invoke(app, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_generate_properties_and_every_split_on_raw_output(tmp_path: Path) -> None:
    val = synthetic_scenes(28, seed=4)[14:]  # synthetic ids follow the index, not the seed
    scenes = [*synthetic_scenes(14, seed=5, split="train"), *val]
    assert len({s.image_id for s in scenes}) == len(scenes)
    provider = InMemoryRelated(scenes)
    examples: list[Example] = []
    for split in ("train", "val"):
        ids = [s.image_id for s in scenes if s.split == split]
        examples += iter_examples(provider, GenerationOptions(split=split, seed=3), ids)
    assert not [q for q, n in Counter(e["qid"] for e in examples).items() if n > 1]
    raw = tmp_path / "raw.jsonl"
    write_jsonl(examples, raw)
    gqa = tmp_path / "scenes.json"
    gqa.write_text(json.dumps(dict(to_record(g) for g in scenes)))
    summary = _cli("properties", raw)
    assert summary["examples"] == len(examples)
    commands: list[list[Any]] = [
        ["zero-shot", "-p", "HAS-COUNT"],
        ["few-shot", "-p", "HAS-COUNT", "-m", 5],
        ["program", "--seeds", "0"],
        ["lexical", "--pairs", 3, "--min-train", 5, "--min-eval", 2, "--seeds", "0"],
        ["adversarial", "--max-splits", 1, "--tau", 1.0],
        ["budget", "-b", 50],
        ["hop", "--gqa", gqa, "--pick", 1],
    ]
    for command in commands:
        made = _cli("split", command[0], "-e", raw, *command[1:], "-o", tmp_path / command[0])
        assert made["splits"], command[0]
