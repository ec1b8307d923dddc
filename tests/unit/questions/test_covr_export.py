"""``covr export --format covr``: the released COVR layout, checked against a small file written
by hand from the layout's description (``data/covr_released_layout.jsonl``: the seven fields, bare
image ids, lower snake case properties, ``program_N`` / ``lexical_N`` markers), round trips, and
bad input naming the option, record and field."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from covr.cli.main import app
from covr.questions.covr_format import (
    RELEASED_FIELDS,
    ReleasedFormatError,
    bare_scene,
    check_released,
    dumps_released,
    read_released,
    released_property,
    split_markers,
    write_released,
)
from covr.questions.export import write_jsonl
from covr.questions.generate import GenerationOptions, generate
from covr.related.memory import InMemoryRelated
from covr.splits.examples import is_train
from covr.splits.properties import compute_properties
from tests.support.question_data import bundled_samples

pytestmark = pytest.mark.unit

RELEASED = Path(__file__).parent / "data" / "covr_released_layout.jsonl"
runner = CliRunner()


def run(*args: object) -> Any:
    return runner.invoke(app, [str(a) for a in args])


def test_the_hand_written_released_file_reads_and_writes_back_byte_for_byte(
    tmp_path: Path,
) -> None:
    records = list(read_released(RELEASED))
    assert len(records) == 4
    assert all(list(r) == list(RELEASED_FIELDS) for r in records)
    again = tmp_path / "again.jsonl"
    assert write_released(records, again) == 4
    assert again.read_bytes() == RELEASED.read_bytes()
    assert [split_markers(r) for r in records] == [
        {"program": [0]},
        {"lexical": [1]},
        {"program": [0, 2]},
        {},
    ]
    assert records[1]["scenes"] == ["stapling_1.jpg", "stapling_2.jpg", "riding_101.jpg"]


def test_names_in_the_released_spelling() -> None:
    assert released_property("HAS-QUANT-ALL") == "has_quant_all"
    assert released_property("RM/V/C") == "rm_v_c"
    assert released_property("TPL-VERIFYQUANTATTR") == "tpl_verifyquantattr"
    assert released_property("LEXICAL-tennis racket") == "lexical_tennis_racket"
    assert released_property("HAS-NUM-3") == "has_num_3"
    assert bare_scene("gqa:2354786") == "2354786"
    assert bare_scene("vg:1") == "1"
    assert bare_scene("imsitu:stapling_1.jpg") == "stapling_1.jpg"


@pytest.fixture(scope="module")
def canonical(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict[str, Any]]]:
    """Engine output on the bundled VG (train) and GQA (val) samples, canonical JSONL."""
    samples = bundled_samples()
    examples: list[dict[str, Any]] = []
    for split in ("train", "val"):
        graphs = samples[split]
        options = GenerationOptions(split=split, seed=1)
        examples += generate(InMemoryRelated(graphs), options, [g.image_id for g in graphs])
    path = tmp_path_factory.mktemp("export") / "examples.jsonl"
    write_jsonl(examples, path)
    return path, examples


def test_export_covr_writes_the_released_layout(
    canonical: tuple[Path, list[dict[str, Any]]], tmp_path: Path
) -> None:
    src, examples = canonical
    splits = tmp_path / "splits"
    for command in (
        ["program", "--seeds", "0,1"],
        ["lexical", "--pairs", 3, "--min-train", 2, "--min-eval", 2, "--seeds", "0"],
    ):
        made = run("split", command[0], "-e", src, *command[1:], "-o", splits)
        assert made.exit_code == 0, made.output
    folders = [splits / "program-seed0", splits / "program-seed1", splits / "lexical-seed0"]
    out = tmp_path / "covr.jsonl"
    options = [part for folder in folders for part in ("--splits", folder)]
    result = run("export", src, out, "--format", "covr", *options)
    assert result.exit_code == 0, result.output
    records = list(read_released(out))  # every record passes the layout check
    assert len(records) == len(examples)
    lists = {
        f.name: {k: set((f / f"{k}.txt").read_text().split()) for k in ("train", "test")}
        for f in folders
    }
    for example, record in zip(examples, records, strict=True):
        assert list(record) == list(RELEASED_FIELDS)
        assert record["qid"] == example["qid"].replace("-", "_")
        assert re.fullmatch(r"(train|val)_[0-9a-f]{16}", record["qid"])
        assert record["scenes"] == [s.split(":", 1)[1] for s in example["scenes"]]
        for key in ("utterance", "answer", "pattern_name", "program"):
            assert record[key] == example[key]
        names = {released_property(p) for p in compute_properties(example)}
        markers = {p for p in record["properties"] if re.fullmatch(r"(program|lexical)_\d+", p)}
        assert set(record["properties"]) - markers == names
        expected = set()
        for number, name in enumerate(["program-seed0", "program-seed1"]):
            held = example["qid"] in lists[name]["test"] or (
                is_train(example) and example["qid"] not in lists[name]["train"]
            )
            if held:
                expected.add(f"program_{number}")
        lex = lists["lexical-seed0"]
        if example["qid"] in lex["test"] or (
            is_train(example) and example["qid"] not in lex["train"]
        ):
            expected.add("lexical_0")
        assert markers == expected, example["qid"]
    assert any("program_0" in r["properties"] for r in records)
    # round trip: the written file reads back and writes the same bytes
    again = tmp_path / "again.jsonl"
    write_released(read_released(out), again)
    assert again.read_bytes() == out.read_bytes()
    # the canonical format stays the default
    plain = tmp_path / "plain.jsonl"
    assert run("export", src, plain).exit_code == 0
    assert plain.read_bytes() == src.read_bytes()


def test_export_bad_input(canonical: tuple[Path, list[dict[str, Any]]], tmp_path: Path) -> None:
    src, _ = canonical
    bad = run("export", src, tmp_path / "x", "--format", "xml")
    assert bad.exit_code == 2
    assert "--format" in bad.stderr
    assert "covr" in bad.stderr
    bad = run("export", src, tmp_path / "x", "--splits", tmp_path)
    assert bad.exit_code == 2
    assert "--splits goes with --format covr" in bad.stderr
    broken = tmp_path / "broken.jsonl"
    lines = src.read_text().splitlines()
    record = json.loads(lines[1])
    del record["scenes"]
    broken.write_text("\n".join([lines[0], json.dumps(record), *lines[2:]]) + "\n")
    bad = run("export", broken, tmp_path / "y", "--format", "covr")
    assert bad.exit_code == 2
    assert f"{broken}:2" in bad.stderr
    assert "'scenes'" in bad.stderr
    zero = tmp_path / "zero"
    assert run("split", "zero-shot", "-e", src, "-p", "HAS-COUNT", "-o", zero).exit_code == 0
    folder = next(zero.iterdir())
    bad = run("export", src, tmp_path / "z", "--format", "covr", "--splits", folder)
    assert bad.exit_code == 2
    assert "--splits" in bad.stderr
    assert "program and lexical" in bad.stderr
    other = tmp_path / "other.jsonl"
    other.write_text("".join(line + "\n" for line in lines[:-1]))
    assert run("split", "program", "-e", other, "--seeds", "0", "-o", tmp_path / "p").exit_code == 0
    bad = run(
        "export",
        src,
        tmp_path / "w",
        "--format",
        "covr",
        "--splits",
        tmp_path / "p" / "program-seed0",
    )
    assert bad.exit_code == 2
    assert "another examples file" in bad.stderr
    assert not (tmp_path / "w").exists()


def test_released_records_missing_or_bad_fields_are_named(tmp_path: Path) -> None:
    lines = RELEASED.read_text().splitlines()
    for field, value, message in [
        ("scenes", None, "field 'scenes' is missing"),
        ("properties", None, "field 'properties' is missing"),
        ("scenes", ["gqa:1"], "not a bare image id"),
        ("qid", "val-3", "qid: expected <split>_<id>"),
        ("properties", ["HAS-COUNT"], "not a released (lower snake case) name"),
        ("program", [{"operation": "find", "dependencies": ["x"]}], "program[0].dependencies"),
    ]:
        record = json.loads(lines[2])
        if value is None:
            del record[field]
        else:
            record[field] = value
        path = tmp_path / f"{field}.jsonl"
        path.write_text("\n".join([lines[0], lines[1], dumps_released(record)]) + "\n")
        with pytest.raises(ReleasedFormatError) as caught:
            list(read_released(path))
        text = str(caught.value)
        assert f"{path}:3:" in text
        assert message in text
        if field != "qid":
            assert "'val_8'" in text  # the record is named by its qid
    assert check_released([]) == "a record must be a JSON object"
