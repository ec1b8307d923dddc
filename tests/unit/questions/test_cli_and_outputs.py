"""covr generate / balance / export / stats on files (in-process CLI), balancing rules, Parquet."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from covr.cli.main import app
from covr.questions.balance import balance, dedupe
from covr.questions.export import ExampleFileError, read_jsonl, write_jsonl
from covr.questions.parquet import write_parquet
from covr.questions.stats import anonymize, table3
from covr_loaders import synthetic

pytestmark = pytest.mark.unit
runner = CliRunner()


@pytest.fixture(scope="module")
def scene_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("q") / "val_sceneGraphs.json"
    synthetic.write("gqa", out, images=120, seed=4, split="val")
    return out


@pytest.fixture(scope="module")
def generated(scene_file: Path) -> Path:
    out = scene_file.parent / "gen.jsonl"
    done = runner.invoke(
        app,
        [
            "generate",
            "--split",
            "val",
            "--gqa",
            str(scene_file),
            "--lookup",
            "memory",
            "--images",
            "12",
            "--seed",
            "3",
            "--out",
            str(out),
            "--quiet",
        ],
        env={"COVR_QUESTIONS_SUBGRAPHS_PER_IMAGE": "8"},
    )
    assert done.exit_code == 0, done.output
    return out


def test_generate_writes_covr_fields(generated: Path) -> None:
    examples = list(read_jsonl(generated))
    # 100 since an attribute test never reads an object with no value of its category
    assert len(examples) > 60
    first = json.loads(generated.read_text().splitlines()[0])
    assert list(first)[:7] == [
        "qid", "utterance", "scenes", "answer", "pattern_name", "program", "properties"
    ]  # fmt: skip
    assert {e["seed"] for e in examples} == {3}


def test_balance_equalizes_templates_and_prefers_two_answer_questions(generated: Path) -> None:
    examples = list(read_jsonl(generated))
    out = balance(examples, seed=1)
    counts = Counter(e["template"] for e in out)
    assert max(counts.values()) - min(counts.values()) <= max(1, 0.01 * max(counts.values()))
    assert balance(examples, seed=1) == out  # deterministic
    capped = balance(examples, per_template=20, seed=1)
    available = Counter(e["template"] for e in dedupe(examples))
    for name, n in Counter(e["template"] for e in capped).items():
        assert n == min(20, available[name])
    # two-answer texts come first within each template
    answers: dict[str, set[str]] = {}
    for e in examples:
        answers.setdefault(e["utterance"], set()).add(json.dumps(e["answer"]))
    for name in counts:
        group = [e for e in capped if e["template"] == name]
        flags = [len(answers[e["utterance"]]) >= 2 for e in group]
        assert flags == sorted(flags, reverse=True) or any(flags[: flags.count(True)]) is not False


def test_balance_picks_least_seen_answers() -> None:
    examples = [
        {"qid": str(i), "template": "t", "utterance": f"q{i}", "scenes": [str(i)],
         "answer": i % 10 == 0, "structure": [1, 0]}
        for i in range(100)
    ]  # fmt: skip
    out = balance(examples, per_template=20)
    assert Counter(e["answer"] for e in out) == {True: 10, False: 10}


def test_dedupe_uses_text_answer_and_image_set() -> None:
    a = {"utterance": "q", "answer": True, "scenes": ["1", "2"]}
    assert len(dedupe([a, {**a, "scenes": ["2", "1"]}, {**a, "answer": False}])) == 2


def test_balance_and_export_commands(generated: Path, tmp_path: Path) -> None:
    balanced = tmp_path / "bal.jsonl"
    done = runner.invoke(app, ["balance", str(generated), str(balanced), "--per-template", "5"])
    assert done.exit_code == 0, done.output
    rows = list(read_jsonl(balanced))
    assert 0 < len(rows) <= 5 * 19
    copy = tmp_path / "copy.jsonl"
    assert (
        runner.invoke(app, ["export", str(balanced), "--format", "jsonl", str(copy)]).exit_code == 0
    )
    assert copy.read_bytes() == balanced.read_bytes()
    hub = tmp_path / "hub"
    done = runner.invoke(app, ["export", str(balanced), "--format", "parquet", str(hub)])
    assert done.exit_code == 0, done.output
    import pyarrow.parquet as pq

    table = pq.read_table(hub / "data" / "val-00000-of-00001.parquet")
    assert table.num_rows == len(rows)
    assert table.column("qid").to_pylist() == [r["qid"] for r in rows]
    card = (hub / "README.md").read_text()
    assert "dataset_info:" in card
    assert f"num_examples: {len(rows)}" in card


def test_stats_command_prints_table_3_and_writes_plots(generated: Path, tmp_path: Path) -> None:
    done = runner.invoke(app, ["stats", str(generated), "--json", "--plots", str(tmp_path)])
    assert done.exit_code == 0, done.output
    table = json.loads(done.stdout[: done.stdout.rindex("}") + 1])
    rows = list(read_jsonl(generated))
    assert table["total questions"] == len(rows)
    assert table["True/False questions"] + table['"X or Y" questions'] + table[
        '"how many" questions'
    ] + table["open questions"] == len(rows)
    assert sorted(p.name for p in tmp_path.glob("*.png")) == sorted(
        ["answers_top30.png", "images_per_question.png", "ops_find.png", "ops_filter.png",
         "ops_with_relation.png", "examples_per_template.png"]
    )  # fmt: skip
    dropped = table.pop("dropped candidates")  # covr generate's record next to the file
    forms = table.pop("per form (made / wanted: main drop reason)")
    assert table3(rows) == table
    record = json.loads(generated.with_name("gen.jsonl.dropped.json").read_text())
    assert dropped == record["dropped"]
    made = Counter(r["template"] for r in rows)
    assert set(forms) == set(record["forms"])
    assert all(forms[name].startswith(f"{made[name]} / -") for name in forms), forms


def test_stats_reports_dropped_candidates_and_why(generated: Path) -> None:
    """Issue 16 item 1: candidates without their form's distractors are dropped, and covr stats
    says how many and why (next to execution failures and co-referring names)."""
    done = runner.invoke(app, ["stats", str(generated), "--json"])
    assert done.exit_code == 0, done.output
    table = json.loads(done.stdout[: done.stdout.rindex("}") + 1])
    dropped = table["dropped candidates"]
    assert dropped["images-main"] > 0
    assert all(isinstance(n, int) and n > 0 for n in dropped.values())


def test_anonymize_keeps_structure_and_numbers() -> None:
    program: list[dict[str, Any]] = [
        {"operation": "find", "arguments": ["dog"], "dependencies": []},
        {"operation": "all", "arguments": [[
            {"operation": "verify_attr", "arguments": ["black"], "dependencies": [-1]}
        ]], "dependencies": [0]},
        {"operation": "keep_if_values_count_eq", "arguments": [2], "dependencies": [0]},
    ]  # fmt: skip
    assert anonymize(program) == [
        {"operation": "find", "arguments": ["X"], "dependencies": []},
        {"operation": "all", "arguments": [[
            {"operation": "verify_attr", "arguments": ["X"], "dependencies": [-1]}
        ]], "dependencies": [0]},
        {"operation": "keep_if_values_count_eq", "arguments": [2], "dependencies": [0]},
    ]  # fmt: skip


# -- bad input -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--templates", "verify_attr,nope"], "unknown template"),
        (["--seed", "-1"], "seed"),
        (["--images", "2", "--image", "gqa:2000001"], "exclude each other"),
        (["--image", "gqa:1"], "unknown image"),
        (["--gqa", "/nonexistent/val_sceneGraphs.json"], "val_sceneGraphs.json"),
        # files without --lookup memory: the default reads the store (issue 16 item 4)
        (["--lookup", "store"], "add --lookup memory"),
        (["--lookup", "cypher"], "--lookup must be memory or store"),
    ],
)
def test_generate_rejects_bad_input(
    scene_file: Path, tmp_path: Path, args: list[str], message: str
) -> None:
    base = {
        "--split": "val",
        "--gqa": str(scene_file),
        "--lookup": "memory",
        "--out": str(tmp_path / "o.jsonl"),
    }
    for key in args[::2]:
        base.pop(key, None)
    flat = [x for kv in base.items() for x in kv] + args
    done = runner.invoke(app, ["generate", *flat])
    assert done.exit_code == 2, done.output
    assert message in done.output
    assert not (tmp_path / "o.jsonl").exists()


def test_generate_rejects_an_image_without_subgraphs(tmp_path: Path) -> None:
    path = tmp_path / "val_sceneGraphs.json"
    record = {"width": 10, "height": 10, "objects": {"1": {"name": "sky", "x": 0, "y": 0,
              "w": 100, "h": 100, "attributes": [], "relations": []}}}  # fmt: skip
    path.write_text(json.dumps({"77": record}))
    done = runner.invoke(
        app,
        ["generate", "--split", "val", "--gqa", str(path), "--lookup", "memory", "--image",
         "gqa:77", "--out", str(tmp_path / "o.jsonl")],
    )  # fmt: skip
    assert done.exit_code == 2
    assert "no subgraph" in done.output


def test_bad_example_files_name_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"qid": "1"}\n')
    with pytest.raises(ExampleFileError, match=r"bad.jsonl:1: field 'utterance' is missing"):
        list(read_jsonl(bad))
    bad.write_text("{not json\n")
    done = runner.invoke(app, ["balance", str(bad), str(tmp_path / "o.jsonl")])
    assert done.exit_code == 2
    assert "bad.jsonl:1" in done.output
    done = runner.invoke(app, ["export", str(bad), "--format", "csv", str(tmp_path / "x")])
    assert done.exit_code == 2
    done = runner.invoke(app, ["stats", str(tmp_path / "missing.jsonl")])
    assert done.exit_code == 2
    assert "cannot be read" in done.output


def test_write_jsonl_and_parquet_round_trip(tmp_path: Path) -> None:
    ex: dict[str, Any] = {
        "qid": "val-1", "utterance": "Is it red?", "scenes": ["a"], "answer": True,
        "pattern_name": "verify_attr", "program": [], "properties": [], "split": "val",
    }  # fmt: skip
    assert write_jsonl([ex], tmp_path / "x.jsonl") == 1
    assert list(read_jsonl(tmp_path / "x.jsonl")) == [ex]
    paths = write_parquet([ex], tmp_path / "hub")
    assert [p.name for p in paths] == ["val-00000-of-00001.parquet"]
