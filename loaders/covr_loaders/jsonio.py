"""Streaming JSON input: one record at a time, with byte offsets, so memory stays flat.

GQA's scene-graph files are hundreds of MB; reading them with ``json.load`` would hold the whole
file (several times over as Python objects). ``ijson`` (C backend) yields one top-level entry at a
time. This module adds what the loaders need around it: up-front checks that a path is a
readable, non-empty JSON file of the expected top-level shape, a byte counter for progress bars,
and a :class:`Problem` instead of an exception when the file breaks off in the middle
(truncation, invalid UTF-8), so the records before the break are kept.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO, Literal

import ijson  # type: ignore[import-untyped]

from covr_loaders.errors import REST_OF_FILE, InputFileError, Problem

Shape = Literal["object", "array"]
_OPENERS: dict[Shape, bytes] = {"object": b"{", "array": b"["}


class ByteCounter:
    """Bytes read so far across the files of one load (read by the progress bar)."""

    def __init__(self) -> None:
        self.bytes = 0


class _CountingReader(io.RawIOBase):
    """A binary file wrapper that adds every byte read to a :class:`ByteCounter`."""

    def __init__(self, raw: BinaryIO, counter: ByteCounter) -> None:
        self._raw = raw
        self._counter = counter
        self.position = 0

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        data = self._raw.read(size)
        self._counter.bytes += len(data)
        self.position += len(data)
        return data

    def readinto(self, buffer: Any) -> int:
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)


def check_file(path: Path, shape: Shape) -> int:
    """Raise :class:`InputFileError` unless ``path`` can be read as JSON of ``shape``; its size."""
    name = str(path)
    if not path.exists():
        raise InputFileError(name, "no such file")
    if path.is_dir():
        raise InputFileError(name, "is a directory, expected a JSON file")
    try:
        size = path.stat().st_size
        with path.open("rb") as handle:
            head = handle.read(4096)
    except OSError as exc:
        raise InputFileError(name, f"cannot be read: {exc.strerror or exc}") from exc
    stripped = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if not stripped:
        raise InputFileError(name, "is empty")
    if not stripped.startswith(_OPENERS[shape]):
        expected = "a JSON object ({...})" if shape == "object" else "a JSON array ([...])"
        raise InputFileError(name, f"is not {expected}: it starts with {stripped[:20]!r}")
    return size


def _problem_from(exc: Exception, name: str, position: int) -> Problem:
    text = str(exc.args[0] if exc.args else exc)
    if isinstance(exc.args[0] if exc.args else None, bytes):
        text = exc.args[0].decode("utf-8", "replace")
    first = text.strip().splitlines()[0] if text.strip() else type(exc).__name__
    if "premature EOF" in first:
        message = "truncated JSON: the file ends in the middle of a record"
    elif "UTF8" in first or "UTF-8" in first:
        message = f"invalid UTF-8 bytes: {first}"
    else:
        message = f"invalid JSON: {first}"
    return Problem(file=name, record=REST_OF_FILE, field="", message=message, offset=position)


def iter_entries(
    path: Path, shape: Shape, counter: ByteCounter
) -> Iterator[tuple[str, Any, int] | Problem]:
    """Yield ``(key, value, offset)`` per top-level entry, then a :class:`Problem` if it breaks.

    ``key`` is the object key (``shape="object"``) or the array index as text. ``offset`` is
    the number of bytes read when the entry was complete (ijson reads in 64 KiB chunks, so it
    locates the record within one chunk). Numbers come back as ``int`` or ``float``.
    """
    check_file(path, shape)
    name = str(path)
    with path.open("rb") as raw:
        reader = _CountingReader(raw, counter)
        entries: Iterator[Any]
        if shape == "object":
            entries = ijson.kvitems(reader, "", use_float=True)
        else:
            entries = enumerate(ijson.items(reader, "item", use_float=True))
        try:
            for key, value in entries:
                yield str(key), value, reader.position
        except (ijson.JSONError, UnicodeDecodeError) as exc:
            yield _problem_from(exc, name, reader.position)
