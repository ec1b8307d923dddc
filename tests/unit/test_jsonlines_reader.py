"""The one JSON-lines reader (:mod:`covr.jsonlines`, issue 38 item 5): lines, offsets and the
errors every room's readers now share (what each reader refuses is ``test_json_lines.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from covr.errors import CovrError
from covr.jsonlines import JsonLine, JsonLinesError, json_lines, json_value
from covr.scale.errors import ScaleError
from covr.splits.examples import ExampleError

pytestmark = pytest.mark.unit


def test_lines_values_and_byte_offsets(tmp_path: Path) -> None:
    """Blank lines are skipped but counted; offsets and lengths address each line's bytes (the
    browser's index seeks to them); only ``\\n`` ends a line, so a U+2028 inside a string (a
    line break to ``str.splitlines``) stays in its line."""
    path = tmp_path / "a.jsonl"
    data = '{"a": 1}\n\n  \n["é\u2028x"]\n7'.encode()
    path.write_bytes(data)
    lines = list(json_lines(path))
    assert [(x.number, x.value) for x in lines] == [(1, {"a": 1}), (4, ["é\u2028x"]), (5, 7)]
    for line in lines:
        assert isinstance(line, JsonLine)
        assert json_value(data[line.offset : line.offset + line.length], "a", 0) == line.value


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b'{"a": 1}\n{oops\n', "a.jsonl:2: not JSON: Expecting property name"),
        (b'{"a": 1}\n"\xff"\n', "a.jsonl:2: not UTF-8"),
        (b'{"a": 1, "a": 2}\n', "a.jsonl:1: the key 'a' appears twice"),
        (b"[" * 100_000 + b"]" * 100_000, "a.jsonl:1: nested too deeply"),
    ],
)
def test_a_bad_line_is_named_by_file_and_line(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "a.jsonl"
    path.write_bytes(content)
    with pytest.raises(JsonLinesError, match=message) as caught:
        list(json_lines(path))
    assert isinstance(caught.value, CovrError)
    assert caught.value.path == str(path)


def test_an_unreadable_file_is_named_without_a_line(tmp_path: Path) -> None:
    missing = tmp_path / "missing.jsonl"
    with pytest.raises(JsonLinesError, match=r"missing\.jsonl: cannot be read") as caught:
        list(json_lines(missing))
    assert caught.value.line == 0


def test_a_room_raises_its_own_error_type(tmp_path: Path) -> None:
    """``error`` builds the room's error from (path, line, message), so that its callers keep
    catching one type (the splits' ``ExampleError``, the batch runs' ``ScaleError``)."""
    path = tmp_path / "a.jsonl"
    path.write_text("{oops\n")
    with pytest.raises(ExampleError, match=r"a\.jsonl:1: not JSON"):
        list(json_lines(path, ExampleError.of_line))
    with pytest.raises(ScaleError, match=r"a\.jsonl:1: not JSON"):
        list(json_lines(path, ScaleError.of_line))
    with pytest.raises(ScaleError, match=r"missing\.jsonl: cannot be read"):
        list(json_lines(tmp_path / "missing.jsonl", ScaleError.of_line))
