"""Streaming JSON input: one record at a time, with byte offsets, so memory stays flat.

GQA's scene-graph files are hundreds of MB; reading them with ``json.load`` would hold the whole
file (several times over as Python objects). :mod:`covr_loaders.json_entries` yields one
top-level entry at a time with memory bounded per record. This module adds what the loaders
need around it: up-front checks that a path is a readable, non-empty JSON file of the expected
top-level shape, and a byte counter for progress bars.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO, Literal

from covr.scene.model import SceneGraph
from covr_loaders.errors import REST_OF_FILE, InputFileError, Problem, RecordError
from covr_loaders.json_entries import EntryReader, entries

DEFAULT_MAX_RECORD_BYTES = 16 << 20
"""Largest record text read whole (16 MiB, ``COVR_LOAD_MAX_RECORD_BYTES``; the biggest Visual
Genome image is far below). Decoding costs about 27x the text (a 64 MiB record took the loader
to 1.8 GB, issue 40)."""

Shape = Literal["object", "array"]
_OPENERS: dict[Shape, bytes] = {"object": b"{", "array": b"["}


class ByteCounter:
    """What the readers of one load share: bytes read so far across its files (read by the
    progress bar) and the largest record text read whole (``COVR_LOAD_MAX_RECORD_BYTES``)."""

    def __init__(self, max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES) -> None:
        self.bytes = 0
        self.max_record_bytes = max_record_bytes


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


def iter_entries(
    path: Path,
    shape: Shape,
    counter: ByteCounter,
) -> Iterator[tuple[str, Any, int] | Problem]:
    """Yield ``(key, value, offset)`` per top-level entry, a :class:`Problem` per bad record
    (repeated key, too deep, over ``counter.max_record_bytes``), and a final ``REST_OF_FILE`` problem if
    the file breaks off.

    ``key`` is the object key (``shape="object"``) or the array index as text. ``offset`` is
    the number of bytes read when the entry was complete (reads are 1 MiB, so it locates the
    record within one read). Numbers come back as ``int`` or ``float``.
    """
    check_file(path, shape)
    with path.open("rb") as raw:
        counting = _CountingReader(raw, counter)
        reader = EntryReader(counting, str(path), counter.max_record_bytes)  # type: ignore[arg-type]
        yield from entries(reader, _OPENERS[shape].decode(), lambda: counting.position)


def _entry_key(key: str, value: Any) -> str:
    return key


def read_records(
    path: Path,
    shape: Shape,
    counter: ByteCounter,
    convert: Callable[[str, Any], SceneGraph],
    record_name: Callable[[str, Any], str] = _entry_key,
) -> Iterator[SceneGraph | Problem]:
    """The read loop every dataset reader shares: ``convert(key, value)`` per entry of
    :func:`iter_entries`, a :class:`Problem` per bad record (its :class:`RecordError` named by
    ``record_name(key, value)``: the object key, or what an array's record says it is), and
    the end of the stream at a file that breaks off (its ``REST_OF_FILE`` problem is the last).
    A bad record is skipped, never the ones after it."""
    for entry in iter_entries(path, shape, counter):
        if isinstance(entry, Problem):
            yield entry
            if entry.record == REST_OF_FILE:
                return
            continue
        key, value, offset = entry
        try:
            yield convert(key, value)
        except RecordError as exc:
            yield Problem(str(path), record_name(key, value), exc.field, exc.message, offset)
