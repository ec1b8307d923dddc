"""The released COVR dataset's layout (``covr export --format covr``), written and read back.

The released files hold one JSON object per line with seven fields (DESIGN §7; COVR arXiv §3.4
and §4): ``qid``, ``utterance``, ``scenes``, ``answer``, ``pattern_name``, ``program`` and
``properties``. They differ from this project's canonical JSONL (``covr.questions.export``) in:

- no provenance fields (template, subgraphs, signatures, seed ...);
- ``qid`` ``<split>_<id>`` with an underscore (canonical: ``<split>-<16 hex>``);
- ``scenes`` bare image ids (Visual Genome / GQA numbers, imSitu file names) without this
  project's dataset prefix (``gqa:``, ``vg:``, ``imsitu:``);
- ``properties`` in lower snake case (``HAS-QUANT-ALL`` → ``has_quant_all``, ``RM/V/C`` →
  ``rm_v_c``, ``TPL-VERIFYATTR`` → ``tpl_verifyattr``, ``LEXICAL-man`` → ``lexical_man``), plus
  the markers ``program_N`` / ``lexical_N`` of the program and lexical splits (arXiv §4: three
  random splits of each) that hold the example out.

This module only converts and validates records; which properties and markers an example has is
decided by the caller (the CLI glues in the splits room, which the question room may not import:
DESIGN §1). Writing is deterministic (fixed key order, compact separators, UTF-8) and atomic.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from covr.jsonlines import json_lines
from covr.questions.errors import QuestionError
from covr.questions.export import ExampleFileError

RELEASED_FIELDS = ("qid", "utterance", "scenes", "answer", "pattern_name", "program", "properties")
DATASET_PREFIXES = ("gqa:", "vg:", "imsitu:")
MARKER = re.compile(r"^(program|lexical)_(\d+)$")
_QID = re.compile(r"^[A-Za-z0-9]+_[A-Za-z0-9_]+$")


class ReleasedFormatError(QuestionError):
    """A record that is not in the released layout: names the file, line, qid and field."""


def released_qid(qid: str) -> str:
    """``val-4a12647d74364025`` → ``val_4a12647d74364025`` (released qids join with ``_``)."""
    return qid.replace("-", "_")


def bare_scene(image_id: str) -> str:
    """``gqa:2354786`` → ``2354786``; ``imsitu:stapling_1.jpg`` → ``stapling_1.jpg``."""
    for prefix in DATASET_PREFIXES:
        if image_id.startswith(prefix):
            return image_id[len(prefix) :]
    return image_id


def released_property(name: str) -> str:
    """A property in the released spelling: lower case, ``-`` and ``/`` as ``_``; the name
    after ``LEXICAL-`` keeps its spelling apart from spaces (``LEXICAL-tennis racket`` →
    ``lexical_tennis_racket``)."""
    if name.startswith("LEXICAL-"):
        return "lexical_" + name[len("LEXICAL-") :].replace(" ", "_")
    return re.sub(r"[-/ ]+", "_", name).lower()


def to_released(
    example: Mapping[str, Any],
    properties: Sequence[str],
    markers: Iterable[str] = (),
) -> dict[str, Any]:
    """One canonical example as a released record; ``properties`` in this project's names
    (``covr properties``), ``markers`` already released (``program_0`` ...)."""
    released = {released_property(p) for p in properties}
    for marker in markers:
        if not MARKER.match(marker):
            raise ReleasedFormatError(f"qid {example['qid']!r}: bad split marker {marker!r}")
        released.add(marker)
    return {
        "qid": released_qid(str(example["qid"])),
        "utterance": example["utterance"],
        "scenes": [bare_scene(str(s)) for s in example["scenes"]],
        "answer": example["answer"],
        "pattern_name": example["pattern_name"],
        "program": example["program"],
        "properties": sorted(released),
    }


def dumps_released(record: Mapping[str, Any]) -> str:
    """A released record as one JSON line (the seven fields first, in order; then any other)."""
    ordered = {k: record[k] for k in RELEASED_FIELDS if k in record}
    ordered.update({k: v for k, v in sorted(record.items()) if k not in ordered})
    return json.dumps(ordered, ensure_ascii=False, separators=(",", ":"))


def write_released(records: Iterable[Mapping[str, Any]], path: Path) -> int:
    """Write released records atomically (temporary file renamed); return the count."""
    tmp = path.with_name(path.name + ".tmp")
    n = 0
    with tmp.open("w", encoding="utf-8") as handle:
        for record in records:
            handle.write(dumps_released(record) + "\n")
            n += 1
    tmp.replace(path)
    return n


def _check_step(step: Any, where: str) -> str | None:
    if not isinstance(step, dict):
        return f"{where}: a step must be an object"
    if not isinstance(step.get("operation"), str):
        return f"{where}.operation: missing or not a string"
    if not isinstance(step.get("arguments", []), list):
        return f"{where}.arguments: not a list"
    deps = step.get("dependencies", [])
    if not isinstance(deps, list) or not all(
        isinstance(d, int) and not isinstance(d, bool) for d in deps
    ):
        return f"{where}.dependencies: not a list of integers"
    for k, arg in enumerate(step.get("arguments", [])):
        if isinstance(arg, list):  # a nested condition program
            for j, inner in enumerate(arg):
                problem = _check_step(inner, f"{where}.arguments[{k}][{j}]")
                if problem:
                    return problem
    return None


def check_released(record: Any) -> str | None:
    """Why a record is not in the released layout (``"field: reason"``), or ``None``."""
    if not isinstance(record, dict):
        return "a record must be a JSON object"
    for key in RELEASED_FIELDS:
        if key not in record:
            return f"field {key!r} is missing"
    qid, scenes, answer = record["qid"], record["scenes"], record["answer"]
    if not isinstance(qid, str) or not _QID.match(qid):
        return f"qid: expected <split>_<id>, got {qid!r}"
    if not isinstance(record["utterance"], str) or not record["utterance"]:
        return "utterance: expected a non-empty string"
    if not isinstance(scenes, list) or not scenes or not all(isinstance(s, str) for s in scenes):
        return "scenes: expected a non-empty list of image ids"
    for scene in scenes:
        if ":" in scene:
            return f"scenes: {scene!r} is not a bare image id (no dataset prefix)"
    if not isinstance(answer, bool | int | str):
        return f"answer: expected a boolean, an integer or a string, got {answer!r}"
    if not isinstance(record["pattern_name"], str) or not record["pattern_name"]:
        return "pattern_name: expected a non-empty string"
    program = record["program"]
    if not isinstance(program, list) or not program:
        return "program: expected a non-empty list of steps"
    for index, step in enumerate(program):
        problem = _check_step(step, f"program[{index}]")
        if problem:
            return problem
    props = record["properties"]
    if not isinstance(props, list) or not all(isinstance(p, str) for p in props):
        return "properties: expected a list of strings"
    for prop in props:
        if prop != prop.lower() or "-" in prop:
            return f"properties: {prop!r} is not a released (lower snake case) name"
    return None


def read_released(path: Path) -> Iterator[dict[str, Any]]:
    """Records of a released-layout file; a bad one raises :class:`ReleasedFormatError` naming
    the file, line, qid (when there is one) and field (an unreadable file or a line that is not
    JSON: :class:`~covr.questions.export.ExampleFileError`)."""
    for number, _, _, record in json_lines(path, ExampleFileError):
        problem = check_released(record)
        if problem is not None:
            qid = record.get("qid") if isinstance(record, dict) else None
            named = f" qid {qid!r}:" if isinstance(qid, str) else ""
            raise ReleasedFormatError(f"{path}:{number}:{named} {problem}")
        yield record


def split_markers(record: Mapping[str, Any]) -> dict[str, list[int]]:
    """The program / lexical splits that hold a released record out: ``{"program": [0, 2]}``."""
    out: dict[str, list[int]] = {}
    for prop in record.get("properties", ()):
        match = MARKER.match(prop)
        if match:
            out.setdefault(match.group(1), []).append(int(match.group(2)))
    return {k: sorted(v) for k, v in sorted(out.items())}
