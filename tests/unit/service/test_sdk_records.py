"""``Example.to_dict`` and ``write_jsonl`` without a server: the record's shape and canonical
order (what ``covr generate`` writes), and the refusals (issue 20, item 6)."""

from __future__ import annotations

import io
import json
from dataclasses import replace

import pytest

from covr_client import Example, ProgramStep, write_jsonl

EXAMPLE = Example(
    qid="val-1",
    utterance="Is the number of images with a fence the same as with jeans?",
    scenes=("gqa:2", "gqa:1"),
    answer=False,
    pattern_name="compare_count",
    program=(
        ProgramStep("find", ("fence",), ()),
        ProgramStep("some", ((ProgramStep("exists", (), (0,)),), 2), (0,)),
    ),
    properties=(),
    source_image="gqa:1",
    subgraphs={"g2": "fence", "g": "jeans"},  # as a protobuf map may hand them over
    signatures={"gqa:1": (), "gqa:2": ("object@0",)},
    seed=5,
    generator_version="covr-questions/1",
    template="compare_count_images",
    paper_template="CompareCount",
    answer_type="bool",
    split="val",
    structure=(1, 0),
)


def test_to_dict_is_the_cli_record() -> None:
    record = EXAMPLE.to_dict()
    assert list(record) == [
        "qid", "utterance", "scenes", "answer", "pattern_name", "program", "properties",
        "template", "paper_template", "answer_type", "source_image", "subgraphs", "structure",
        "signatures", "seed", "generator_version", "split",
    ]  # fmt: skip
    assert list(record["subgraphs"]) == ["g", "g2"]  # role order, whatever the map's
    assert list(record["signatures"]) == ["gqa:2", "gqa:1"]  # one entry per scene, in order
    assert record["program"][1] == {
        "operation": "some",
        "arguments": [[{"operation": "exists", "arguments": [], "dependencies": [0]}], 2],
        "dependencies": [0],
    }
    json.dumps(record)  # plain JSON values only


def test_write_jsonl_to_a_file_object_is_compact_utf8_lines() -> None:
    out = io.StringIO()
    accented = replace(EXAMPLE, utterance="Is the café open?")
    assert write_jsonl([EXAMPLE, accented], out) == 2
    lines = out.getvalue().split("\n")
    assert lines[-1] == ""  # every line ends with a newline
    assert lines[0] == json.dumps(EXAMPLE.to_dict(), ensure_ascii=False, separators=(",", ":"))
    assert "café" in lines[1]  # not \u00e9


def test_a_partial_example_is_refused_with_its_empty_fields() -> None:
    with pytest.raises(ValueError, match=r"val-1 is partial: empty answer, source_image"):
        replace(EXAMPLE, answer=None, source_image="").to_dict()
    with pytest.raises(ValueError, match=r"\(no qid\) is partial: empty qid"):
        replace(EXAMPLE, qid="").to_dict()
