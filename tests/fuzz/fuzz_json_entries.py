"""Atheris (coverage-guided) target for the loaders' JSON readers and record converters.

Run on demand (tests/fuzz/README.md)::

    .venv/bin/python tests/fuzz/fuzz_json_entries.py /tmp/corpus tests/fuzz/corpus -max_total_time=600

An input is a whole file: one starting with ``[`` is read as a Visual Genome array, any other
as a GQA or imSitu object (by the input's length, so that both are reached; the corpus holds
real files of each format, which stay what they are). What is checked, for every input:

- the bounded reader (:mod:`covr_loaders.json_entries`) and the converters raise nothing but a
  converter's :class:`RecordError` (which the reader turns into a problem): any other exception
  is a crash the fuzzer reports and keeps;
- differential: when the reader reports no problem, its records are exactly what the standard
  library's ``json`` decoder reads from the same text (same keys in the same order, same values),
  so the reader never drops, merges or alters a record silently.
"""

from __future__ import annotations

import io
import json
import sys
from typing import Any

import atheris  # type: ignore[import-untyped,import-not-found,unused-ignore]

with atheris.instrument_imports():
    from covr_loaders import gqa, imsitu, vg
    from covr_loaders.errors import Problem, RecordError
    from covr_loaders.json_entries import EntryReader, entries

MAX_RECORD_BYTES = 4_096
"""Small, so that the over-size skip path is reached by small inputs."""

SPACE = imsitu.Space(
    verbs={"calming": imsitu.parse_template("AGENT calms VICTIM at PLACE")},
    nouns={"n1": "man", "n2": "dog", "n3": "park"},
)
"""A tiny imSitu vocabulary, so that imSitu records can get past the verb check."""


def _same(got: Any, expected: Any) -> bool:
    """Whether a reader value equals ``json``'s (read with ``object_pairs_hook=list``).

    Walked with an explicit stack, not recursion: the reader accepts any depth the C decoder
    accepts, and a recursive walk here (two Python frames per level) ran out of stack on a
    nesting the reader had rightly accepted, which libFuzzer reported as a crash of the
    target. Scalars compare by type and ``repr`` so that ``1``, ``1.0`` and ``True`` differ
    and ``NaN`` equals itself.
    """
    stack: list[tuple[Any, Any]] = [(got, expected)]
    while stack:
        left, right = stack.pop()
        if isinstance(left, dict):
            if not isinstance(right, list) or len(left) != len(right):
                return False
            for (key, value), pair in zip(left.items(), right, strict=True):
                if not isinstance(pair, tuple) or pair[0] != key:
                    return False
                stack.append((value, pair[1]))
        elif isinstance(left, list):
            if not isinstance(right, list) or len(left) != len(right):
                return False
            if any(isinstance(item, tuple) for item in right):
                return False
            stack.extend(zip(left, right, strict=True))
        elif type(left) is not type(right) or repr(left) != repr(right):
            return False
    return True


def _convert(kind: int, key: str, value: Any) -> None:
    try:
        if kind == 0:
            gqa.convert(key, value, "val")
        elif kind == 1:
            vg.convert(value, "val")
        else:
            imsitu.convert(key, value, "val", SPACE)
    except RecordError:
        pass


def test_one_input(data: bytes) -> None:
    """One fuzz input: read it as a file, convert each record, compare with ``json``."""
    body = data
    if body.lstrip(b" \t\r\n").startswith(b"["):
        kind, shape = 1, "["
    else:
        kind, shape = (0 if len(body) % 2 else 2), "{"
    reader = EntryReader(io.BytesIO(body), "fuzz", MAX_RECORD_BYTES)
    got: list[tuple[str, Any]] = []
    problems = 0
    for item in entries(reader, shape, lambda: 0):
        if isinstance(item, Problem):
            problems += 1
            continue
        key, value, _ = item
        got.append((key, value))
        _convert(kind, key, value)
    if problems:
        return
    text = body.decode("utf-8").lstrip("\ufeff")
    expected = json.JSONDecoder(object_pairs_hook=list).decode(text)
    if shape == "[":
        expected = [(str(i), item) for i, item in enumerate(expected)]
    if len(got) != len(expected) or not all(
        key == want_key and _same(value, want)
        for (key, value), (want_key, want) in zip(got, expected, strict=True)
    ):
        raise AssertionError(f"reader and json disagree on {len(got)} records of {body[:200]!r}")


def main() -> None:
    """libFuzzer's command line: corpus directories, -runs=N, -max_total_time=S..."""
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
