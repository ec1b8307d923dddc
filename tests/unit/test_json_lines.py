"""Every reader of JSON lines refuses what ``json.loads`` crashes on or lets through silently
(issue 40 rows 9 and 12), naming the file and the line: a line nested 100,000 deep
(``RecursionError`` came out as a traceback of ``covr stats``, ``evaluate``, ``properties`` and
``view``), an integer of 5,000 digits (a bare ``ValueError``), and a key twice in one object
(the last value was kept silently). One decoder does it: :func:`covr.jsontext.loads`."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from covr.jsontext import JsonTextError, loads
from covr.questions.errors import QuestionError
from covr.questions.export import read_jsonl
from covr.splits.evaluate import read_predictions, read_scores
from covr.splits.examples import ExampleError, iter_examples
from covr.view.dataset import Dataset, DatasetError

pytestmark = pytest.mark.unit

GOOD = {
    "qid": "q1",
    "utterance": "Is there a dog?",
    "scenes": ["gqa:1"],
    "answer": True,
    "pattern_name": "verify",
    "program": [],
    "properties": [],
    "prediction": True,  # the same first line is good for every reader below
    "easiness": 0.5,
}

BAD_LINES = {
    "deep": ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
    "digits": ('{"qid": "q2", "answer": ' + "7" * 5000 + "}", "more than 4,300 digits"),
    "repeated-key": (
        '{"qid": "q2", "qid": "q3", "prediction": 1, "easiness": 1}',
        "the key 'qid' appears twice",
    ),
}


def _read_view(path: Path) -> Any:
    return Dataset(path, index_dir=path.parent / "index")


READERS: dict[str, tuple[Callable[[Path], Any], type[Exception]]] = {
    "questions.read_jsonl (covr stats, balance, export)": (
        lambda p: list(read_jsonl(p)),
        QuestionError,
    ),
    "splits.iter_examples (covr properties, evaluate --gold, split)": (
        lambda p: list(iter_examples(p, require_provenance=False)),
        ExampleError,
    ),
    "splits.read_predictions (covr evaluate)": (read_predictions, ExampleError),
    "splits.read_scores (covr evaluate --easiness)": (read_scores, ExampleError),
    "view.Dataset (covr view)": (_read_view, DatasetError),
}


@pytest.mark.parametrize("bad", sorted(BAD_LINES))
@pytest.mark.parametrize("reader", sorted(READERS))
def test_a_bad_line_is_an_error_naming_file_and_line(tmp_path: Path, reader: str, bad: str) -> None:
    line, words = BAD_LINES[bad]
    path = tmp_path / "examples.jsonl"
    path.write_text(json.dumps(GOOD) + "\n" + line + "\n")
    read, error = READERS[reader]
    with pytest.raises(error) as caught:
        read(path)
    assert f"{path}:2: " in str(caught.value)
    assert words in str(caught.value)


def test_a_one_line_prediction_map_nested_too_deeply(tmp_path: Path) -> None:
    """``covr evaluate`` also takes a JSON map on one line, read whole."""
    path = tmp_path / "predictions.json"
    path.write_text('{"q1": ' + "[" * 100_000 + "]" * 100_000 + "}")
    with pytest.raises(ExampleError, match="nested too deeply"):
        read_predictions(path)


def test_loads() -> None:
    assert loads('{"a": [1, {"b": 2}]}') == {"a": [1, {"b": 2}]}
    assert loads(b'\xef\xbb\xbf{"a": 1}') == {"a": 1}  # bytes: as json.loads reads them
    with pytest.raises(json.JSONDecodeError):
        loads("{oops")
    with pytest.raises(JsonTextError) as caught:
        loads('{"a": {"b": 1, "b": 2}}')
    assert caught.value.field == "b"
