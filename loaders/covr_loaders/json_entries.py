"""The top-level entries of a large JSON file, one at a time, with memory bounded per record.

Why not a streaming event parser: ijson builds the dotted path of every event, so a 200 KB
file whose ``attributes`` nest 100,000 deep made it allocate tens of GB (issue 21; measured: a
3 GB address-space limit is exhausted by such a file). Here each top-level value is handed to
the standard library's C decoder as soon as its text is buffered, which

- stops at a depth the interpreter bounds (``RecursionError``), allocating almost nothing;
- never holds more than one record's text plus one read (:attr:`EntryReader.max_record_bytes`
  bounds the record; a bigger one is skipped by a small scanner that keeps no text);
- sees every JSON object's keys in order, so a repeated key is reported instead of silently
  keeping its last value.

A record-level fault becomes a :class:`Problem` naming the record, and reading goes on with the
next one; a fault of the file (bad UTF-8, truncation, broken syntax between records) ends the
file with a ``REST_OF_FILE`` problem, keeping everything before it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any, BinaryIO

from covr.jsontext import DECODER as _DECODER
from covr.jsontext import REPEATED_KEY, TOO_DEEP, DuplicateKey
from covr.jsontext import TOO_MANY_DIGITS as _TOO_MANY_DIGITS
from covr_loaders.errors import REST_OF_FILE, Problem

READ_CHARS = 1 << 20
"""Characters decoded per read: large enough that most records need no second attempt."""

_WS = re.compile(r"[ \t\r\n]*")
_IN_STRING = re.compile(r'["\\]')
_OUTSIDE = re.compile(r'["\[\]{}]')
_SCALAR_END = re.compile(r"[,\]}\s]")
_LONGEST_LITERAL = len("-Infinity")


class _FileFault(Exception):
    """The rest of the file cannot be read; ``message`` says why."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class _RecordFault(Exception):
    """One record cannot be used; the reader skips to the next one."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


class EntryReader:
    """Buffered text of one open file and the position of the next unread character."""

    def __init__(self, raw: BinaryIO, name: str, max_record_bytes: int) -> None:
        self._raw = raw
        self.name = name
        self._pending = b""  # the start of a character cut off by the end of a read
        self._bad = ""  # why the bytes after the decoded text cannot be read
        self.max_record_bytes = max_record_bytes
        self.buf = ""
        self.pos = 0
        self.eof = False
        self.bytes_read = 0

    # -- buffer ------------------------------------------------------------------------------
    def fill(self) -> bool:
        """Append the next read to the unread text; False at the end of the file.

        Bytes that are not UTF-8 end the file, but only after the text before them has been
        read (the records ahead of the bad bytes are kept)."""
        if self.eof:
            if self._bad:
                raise _FileFault(self._bad)
            return False
        data = self._raw.read(READ_CHARS)
        self.bytes_read += len(data)
        if not self.bytes_read - len(data) and data.startswith(b"\xef\xbb\xbf"):
            data = data[3:]  # a byte-order mark
        raw = self._pending + data
        try:
            text = raw.decode("utf-8")
            self._pending = b""
        except UnicodeDecodeError as exc:
            if data and exc.reason == "unexpected end of data" and exc.end == len(raw):
                text, self._pending = raw[: exc.start].decode("utf-8"), raw[exc.start :]
            else:
                text, self._pending = raw[: exc.start].decode("utf-8"), b""
                self._bad = f"invalid UTF-8 bytes: {exc.reason} at byte {exc.start}"
                data = b""  # nothing after the bad bytes is read
        if not data:
            self.eof = True
            if not text and self._bad:
                raise _FileFault(self._bad)
        self.buf = self.buf[self.pos :] + text
        self.pos = 0
        return bool(text) or not self.eof

    def skip_ws(self) -> str:
        """The next non-blank character (not consumed); "" at the end of the file."""
        while True:
            match = _WS.match(self.buf, self.pos)
            assert match is not None
            self.pos = match.end()
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if not self.fill():
                return ""

    def expect(self, allowed: str, where: str) -> str:
        found = self.skip_ws()
        if not found:
            raise self.truncated()
        if found not in allowed:
            wanted = " or ".join(repr(c) for c in allowed)
            raise _FileFault(f"invalid JSON: expected {wanted} {where}, found {found!r}")
        self.pos += 1
        return found

    # -- values ------------------------------------------------------------------------------
    def value(self) -> Any:
        """Decode the next JSON value; a record fault leaves ``pos`` after the value."""
        if not self.skip_ws():
            raise self.truncated()
        start = self.pos
        while True:
            try:
                value, end = _DECODER.raw_decode(self.buf, start)
            except json.JSONDecodeError as exc:
                if self.eof or (
                    exc.pos < len(self.buf) - _LONGEST_LITERAL
                    and not (exc.msg.startswith("Unterminated string"))
                ):
                    raise self._syntax(exc) from exc
                self._more(start)
                start = self.pos
                continue
            except DuplicateKey as exc:
                self.pos = start
                self.skip_value()
                raise _RecordFault(exc.key, REPEATED_KEY) from None
            except RecursionError:
                self.pos = start
                self.skip_value()
                raise _RecordFault("", TOO_DEEP) from None
            except ValueError:  # not a syntax error: an integer past Python's digit limit
                self.pos = start
                self.skip_value()
                raise _RecordFault("", _TOO_MANY_DIGITS) from None
            if end == len(self.buf) and not self.eof:  # a number may go on in the next read
                self._more(start)
                start = self.pos
                continue
            self.pos = end
            if end - start > self.max_record_bytes:
                raise _RecordFault("", self._too_large())
            return value

    def _more(self, start: int) -> None:
        """Read more of a record that starts at ``start``; an oversized one is skipped."""
        self.pos = start
        if len(self.buf) - start > self.max_record_bytes:
            self.skip_value()
            raise _RecordFault("", self._too_large())
        if not self.fill():
            raise self.truncated()

    def _too_large(self) -> str:
        return f"record is larger than {self.max_record_bytes:,} bytes (COVR_LOAD_MAX_RECORD_BYTES)"

    def truncated(self) -> _FileFault:
        """The file ends (or its readable part does) in the middle of a value."""
        return _FileFault(self._bad or "truncated JSON: the file ends in the middle of a record")

    def _syntax(self, exc: json.JSONDecodeError) -> _FileFault:
        if exc.pos >= len(self.buf) - _LONGEST_LITERAL or exc.msg.startswith("Unterminated"):
            return self.truncated()
        return _FileFault(f"invalid JSON: {exc.msg}")

    def skip_value(self) -> None:
        """Move past one JSON value without keeping its text (error paths only: Python speed)."""
        depth = 0
        first = self.skip_ws()
        if first not in '"[{':  # a scalar: up to the next delimiter
            while True:
                match = _SCALAR_END.search(self.buf, self.pos)
                if match:
                    self.pos = match.start()
                    return
                self.pos = len(self.buf)
                if not self.fill():
                    return
        while True:
            match = _OUTSIDE.search(self.buf, self.pos)
            if match is None:
                self.pos = len(self.buf)
                if not self.fill():
                    raise self.truncated()
                continue
            char = match.group()
            self.pos = match.end()
            if char == '"':
                self._skip_string()
            elif char in "[{":
                depth += 1
            else:
                depth -= 1
            if depth == 0:
                return

    def _skip_string(self) -> None:
        """Move past the rest of a string whose opening quote was consumed."""
        while True:
            match = _IN_STRING.search(self.buf, self.pos)
            if match is None:
                self.pos = len(self.buf)
                if not self.fill():
                    raise self.truncated()
                continue
            if match.group() == '"':
                self.pos = match.end()
                return
            if match.end() >= len(self.buf) and not self.fill():  # "\" at the end of a read
                raise self.truncated()
            self.pos = match.end() + 1  # the escaped character


def entries(
    reader: EntryReader, shape_open: str, position: Any
) -> Iterator[tuple[str, Any, int] | Problem]:
    """Every top-level entry (``(key, value, offset)``), a problem per bad record, and a final
    ``REST_OF_FILE`` problem if the file breaks; ``position()`` gives the byte offset."""
    close = "}" if shape_open == "{" else "]"
    index = 0
    key = ""
    try:
        reader.expect(shape_open, "at the start of the file")
        if reader.skip_ws() == close:
            reader.pos += 1
        else:
            while True:
                key = _next_key(reader, shape_open, index)
                try:
                    value = reader.value()
                except _RecordFault as fault:
                    yield Problem(reader.name, key, fault.field, fault.message, position())
                else:
                    yield key, value, position()
                index += 1
                if reader.expect("," + close, "between records") == close:
                    break
        if reader.skip_ws():
            raise _FileFault("invalid JSON: more data after the end of the top-level value")
    except _FileFault as fault:
        yield Problem(reader.name, REST_OF_FILE, "", fault.message, position())


def _next_key(reader: EntryReader, shape_open: str, index: int) -> str:
    if shape_open == "[":
        return str(index)
    if reader.skip_ws() != '"':
        if not reader.skip_ws():
            raise reader.truncated()
        raise _FileFault(f"invalid JSON: expected a record key, found {reader.skip_ws()!r}")
    try:
        key = reader.value()
    except _RecordFault as fault:  # a key string cannot hold a record fault
        raise _FileFault(f"invalid JSON: {fault.message}") from None
    reader.expect(":", "after a record key")
    return str(key)
