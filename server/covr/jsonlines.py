"""Reading a JSON-lines file: the one reader every room uses (issue 38 item 5).

Examples files, predictions and scores, requests of a batch run, a batch run's part files and
the browser's datasets are JSON lines: one JSON value a line. Each reader had its own loop and
its own wording of the same faults ("not JSON", "invalid JSON", a bare ``json`` traceback, or
none at all in the browser's export). :func:`json_lines` is that loop once: it streams the file
as bytes (so a line is what ends in ``\\n``, as the format says, and ``str.splitlines``'s other
breaks, such as U+2028 inside a JSON string, split nothing), skips blank lines, decodes each
line strictly (:func:`covr.jsontext.loads`: a repeated key, a nesting too deep or a too-long
integer is a fault, not a surprise) and raises one error that names the file and the line:

- ``cannot be read: <why>`` (line 0: the file as a whole),
- ``not UTF-8``,
- ``not JSON: <the decoder's message>``,
- the strict decoder's own message for a repeated key, a nesting too deep or a long integer.

A room that reports its own error type (so that its callers keep catching one type) passes it
as ``error``: any callable taking ``(path, line, message)``. What a line must hold (an object,
an example, a qid) is the caller's to check, with the line number :class:`JsonLine` carries.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

from covr.errors import CovrError
from covr.jsontext import JsonTextError, loads


class JsonLinesError(CovrError):
    """A JSON-lines file cannot be read, or one of its lines is not JSON: ``field`` is
    ``path:line`` (the path alone for the file as a whole, line 0)."""

    def __init__(self, path: str, line: int, message: str) -> None:
        super().__init__(f"{path}:{line}" if line else path, message)
        self.path = path
        self.line = line


ErrorType = Callable[[str, int, str], Exception]
"""Builds the error raised for ``(path, line, message)``; line 0 is the file as a whole."""


class JsonLine(NamedTuple):
    """One non-blank line of a JSON-lines file."""

    number: int
    """1-based line number."""
    offset: int
    """Byte offset of the line's start in the file."""
    length: int
    """The line's length in bytes, its newline included."""
    value: Any


def json_value(raw: bytes | str, path: str, line: int, error: ErrorType = JsonLinesError) -> Any:
    """The JSON value of one line ``raw`` of the file ``path``; any fault raises ``error``
    naming the file and the line (see the module docstring for the messages)."""
    try:
        text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
    except UnicodeDecodeError:
        raise error(path, line, "not UTF-8") from None
    try:
        return loads(text)
    except json.JSONDecodeError as exc:
        raise error(path, line, f"not JSON: {exc.msg}") from None
    except JsonTextError as exc:  # a repeated key, a nesting too deep, a too-long integer
        raise error(path, line, exc.message) from None


def json_lines(path: Path, error: ErrorType = JsonLinesError) -> Iterator[JsonLine]:
    """Every non-blank line of the JSON-lines file ``path`` with its value, streamed; a file
    that cannot be opened or a line that is not JSON raises ``error`` naming file and line."""
    name = str(path)
    try:
        handle = path.open("rb")
    except OSError as exc:
        raise error(name, 0, f"cannot be read: {exc.strerror or exc}") from None
    offset = 0
    with handle:
        for number, raw in enumerate(handle, 1):
            start, offset = offset, offset + len(raw)
            if raw.strip():
                yield JsonLine(number, start, len(raw), json_value(raw, name, number, error))
