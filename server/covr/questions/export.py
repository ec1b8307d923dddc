"""Writing and reading example files: JSONL (the released COVR fields plus provenance).

One example per line, keys in a fixed order, compact separators and UTF-8: the same examples give
the same bytes (the determinism tests compare files).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from covr.jsonlines import json_lines
from covr.questions.errors import QuestionError
from covr.questions.example import ExampleRecord

COVR_FIELDS = ("qid", "utterance", "scenes", "answer", "pattern_name", "program", "properties")
PROVENANCE_FIELDS = (
    "template",
    "paper_template",
    "answer_type",
    "source_image",
    "subgraphs",
    "structure",
    "signatures",
    "seed",
    "generator_version",
    "split",
)
FIELDS = COVR_FIELDS + PROVENANCE_FIELDS


class ExampleFileError(QuestionError):
    """An examples file is unreadable or a line is not an example; names file, line and field."""

    def __init__(self, path: str, line: int, message: str) -> None:
        super().__init__(f"{path}:{line}: {message}")
        self.path = path
        self.line = line


def dumps(example: ExampleRecord) -> str:
    """One example as a canonical JSON line (without the newline)."""
    fields: Mapping[str, Any] = example  # the fixed order first, then any other field
    ordered = {k: fields[k] for k in FIELDS if k in fields}
    ordered.update({k: v for k, v in sorted(example.items()) if k not in ordered})
    return json.dumps(ordered, ensure_ascii=False, separators=(",", ":"))


def write_jsonl(examples: Iterable[ExampleRecord], path: Path) -> int:
    """Write examples (atomically: a temporary file renamed at the end); return the count."""
    tmp = path.with_name(path.name + ".tmp")
    n = 0
    try:
        with tmp.open("w", encoding="utf-8") as handle:
            for example in examples:
                handle.write(dumps(example))
                handle.write("\n")
                n += 1
        tmp.replace(path)
    except BaseException:  # an error or an interrupt leaves no half-written file behind
        tmp.unlink(missing_ok=True)
        raise
    return n


def read_jsonl(path: Path) -> Iterator[ExampleRecord]:
    """Examples of a JSONL file; a bad line raises :class:`ExampleFileError` naming it."""
    for number, _, _, example in json_lines(path, ExampleFileError):
        if not isinstance(example, dict):
            raise ExampleFileError(str(path), number, "an example must be a JSON object")
        for key in COVR_FIELDS:
            if key not in example:
                raise ExampleFileError(str(path), number, f"field {key!r} is missing")
        yield example
