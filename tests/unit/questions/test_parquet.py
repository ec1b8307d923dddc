"""Parquet export keeps every field with its type and writes a card dataset hubs read cleanly
(issue 20: `structure` was dropped, answers became strings, the card's splits lacked
num_bytes, and it had no licence or citation)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from covr.questions.parquet import read_parquet, write_parquet
from tests.support.view_data import sample_examples

pytestmark = pytest.mark.unit


def test_every_example_comes_back_equal(tmp_path: Path) -> None:
    examples = [dict(e) for e in sample_examples()]
    assert {type(e["answer"]) for e in examples} == {bool, int, str}
    assert all("structure" in e for e in examples)
    odd: dict[str, Any] = {**examples[0], "qid": "odd-1", "provenance": {"note": "kept"}}
    odd["split"] = examples[0]["split"]
    paths = write_parquet([*examples, odd], tmp_path / "hub")
    back = [e for p in paths for e in read_parquet(p)]
    assert back == [*examples, odd]  # every field, every type (bool/int/str answers), extras


def test_typed_answer_columns(tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    examples = [dict(e) for e in sample_examples()]
    [path] = write_parquet(examples, tmp_path / "hub")
    table = pq.read_table(path)
    assert str(table.schema.field("answer_bool").type) == "bool"
    assert str(table.schema.field("answer_number").type) == "double"
    rows = table.to_pylist()
    for example, row in zip(examples, rows, strict=True):
        filled = [k for k in ("answer_bool", "answer_number", "answer_text") if row[k] is not None]
        assert len(filled) == 1, row
        assert json.loads(row["structure"]) == example["structure"]


def test_the_card_declares_sizes_licence_and_citation(tmp_path: Path) -> None:
    examples = [dict(e) for e in sample_examples()]
    write_parquet(examples[:10], tmp_path / "hub", split="train")
    write_parquet(examples[10:], tmp_path / "hub", split="val")
    text = (tmp_path / "hub" / "README.md").read_text()
    header = yaml.safe_load(text.split("---")[1])
    splits = {s["name"]: s for s in header["dataset_info"]["splits"]}
    assert set(splits) == {"train", "val"}
    assert splits["train"]["num_examples"] == 10
    assert splits["val"]["num_examples"] == len(examples) - 10
    assert all(s["num_bytes"] > 0 for s in splits.values())
    assert header["dataset_info"]["dataset_size"] == sum(s["num_bytes"] for s in splits.values())
    assert header["license"] == "other"
    names = [f["name"] for f in header["dataset_info"]["features"]]
    assert {"structure", "answer_bool", "answer_number", "answer_text", "extra"} <= set(names)
    assert "@inproceedings{bogin-etal-2021-covr" in text
    assert "DESIGN" not in text
