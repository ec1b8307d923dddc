"""Reading, checking and writing question examples (the JSONL contract of the question engine).

Splits may use questions' *data* only (DESIGN.md §1), so this module is the splits room's own
reader of the example format: one JSON object per line with ``qid``, ``utterance``, ``scenes``,
``answer``, ``pattern_name``, ``program``, ``properties`` and our ``provenance`` (``template``,
``split`` = the source dataset split, ``source_image``, ``subgraphs`` ...). Examples stay plain
dicts: splitting 250,000 of them must be cheap, and fields we do not know pass through untouched.

A program is a list of steps ``{"operation", "arguments", "dependencies"}``; quantifiers and other
nested conditions carry a nested program (a list of steps of the same form) inside ``arguments``,
so every walker here recurses into arguments (the reference code missed nested programs).
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from covr.errors import CovrError
from covr.jsonlines import json_lines
from covr.questions.example import ExampleRecord as ExampleRecord
from covr.questions.example import RecordT as RecordT

Step = Mapping[str, Any]

TRAIN_SPLITS = frozenset({"train"})
"""Source-dataset splits whose examples form the training pool (everything else is evaluation)."""

# The DESIGN §7 table: form (pattern_name) -> paper template, used when provenance has no template.
PATTERN_TEMPLATES: dict[str, str] = {
    "compare_count": "CompareCount",
    "compare_count_images": "CompareCount",
    "compare_count_objects": "CompareCount",
    "quantifier": "VerifyQuant",
    "quantifier_relation": "VerifyQuant",
    # "All dogs are standing" is a VerifyQuant question: COVR Table 4 trains TPL-VerifyQuantAttr
    # on it and tests on "Do all dogs have the same color?" (quantifier_same_attr) only.
    "quantifier_attr": "VerifyQuant",
    "quantifier_attribute": "VerifyQuant",
    "quantifier_same_attr": "VerifyQuantAttr",
    "specific_same_attr": "VerifySameAttr",
    "query_object": "QueryObject",
    "choose_object": "ChooseObject",
    "query_attr": "QueryAttr",
    "verify_attr": "VerifyAttr",
    "choose_rel": "ChooseRel",
    "choose_attr": "ChooseAttr",
    "multiple_ref": "VerifyLogic",
    "verify_count_ref": "VerifyCount",
    "verify_count_ref_images": "VerifyCount",
    "verify_count_ref_objects": "VerifyCount",
    "count_ref": "Count",
    "count_ref_images": "Count",
    "count_ref_objects": "Count",
    "verify_count_ref_group_by": "VerifyCountGroupBy",
    "count_ref_group_by": "CountGroupBy",
}


class ExampleError(CovrError):
    """A bad example: names the file, the line (1-based) and the field."""

    def __init__(self, path: str, line: int, field: str, message: str) -> None:
        super().__init__(field, message)
        where = f"{path}:{line}" if line else path
        self.args = (f"{where}: {field}: {message}" if field else f"{where}: {message}",)
        self.path = path
        self.line = line

    @classmethod
    def of_line(cls, path: str, line: int, message: str) -> ExampleError:
        """A line of the file as a whole is bad (not JSON...): the JSON-lines reader's error
        (:func:`covr.jsonlines.json_lines`)."""
        return cls(path, line, "", message)


def check_program(program: Any, field: str = "program", *, nested: bool = False) -> None:
    """Raise ``ValueError("<field path>: ...")`` unless ``program`` is a well-formed step list.

    Inside a nested condition program, dependency ``-1`` is the object being quantified over
    (docs/questions.md §1).
    """
    if not isinstance(program, list):
        raise ValueError(f"{field}: expected a list of steps, got {type(program).__name__}")
    for index, step in enumerate(program):
        where = f"{field}[{index}]"
        if not isinstance(step, dict):
            raise ValueError(f"{where}: expected an object, got {type(step).__name__}")
        operation = step.get("operation")
        if not isinstance(operation, str) or not operation:
            raise ValueError(f"{where}.operation: expected a non-empty string")
        arguments = step.get("arguments", [])
        if not isinstance(arguments, list):
            raise ValueError(f"{where}.arguments: expected a list")
        dependencies = step.get("dependencies", [])
        if not isinstance(dependencies, list):
            raise ValueError(f"{where}.dependencies: expected a list")
        for d_index, dep in enumerate(dependencies):
            lowest = -1 if nested else 0
            if isinstance(dep, bool) or not isinstance(dep, int) or not lowest <= dep < index:
                raise ValueError(
                    f"{where}.dependencies[{d_index}]: expected the index of an earlier step "
                    f"({lowest}..{index - 1}), got {dep!r}"
                )
        for a_index, arg in enumerate(arguments):
            if isinstance(arg, list):
                check_program(arg, f"{where}.arguments[{a_index}]", nested=True)
            elif arg is not None and not isinstance(arg, str | int | float | bool):
                raise ValueError(
                    f"{where}.arguments[{a_index}]: expected a string, number or nested program"
                )


def check_example(raw: Any, *, require_provenance: bool = True) -> ExampleRecord:
    """The example itself when it follows the contract; ``ValueError("<field>: ...")`` otherwise."""
    if not isinstance(raw, dict):
        raise ValueError(f"expected a JSON object, got {type(raw).__name__}")
    qid = raw.get("qid")
    if not isinstance(qid, str) or not qid:
        raise ValueError("qid: expected a non-empty string")
    if not isinstance(raw.get("utterance"), str):
        raise ValueError("utterance: expected a string")
    scenes = raw.get("scenes")
    if not isinstance(scenes, list) or not all(isinstance(s, str) and s for s in scenes):
        raise ValueError("scenes: expected a list of image ids")
    answer = raw.get("answer")
    if answer is None or not isinstance(answer, bool | int | str):
        raise ValueError("answer: expected a boolean, an integer or a string")
    if not isinstance(raw.get("pattern_name"), str):
        raise ValueError("pattern_name: expected a string")
    check_program(raw.get("program"))
    properties = raw.get("properties", [])
    if not isinstance(properties, list) or not all(isinstance(p, str) for p in properties):
        raise ValueError("properties: expected a list of strings")
    provenance = raw.get("provenance")
    if provenance is not None and not isinstance(provenance, dict):
        raise ValueError("provenance: expected an object")
    if require_provenance and not isinstance(field_of(raw, "split"), str):
        raise ValueError(
            "provenance.split: expected the source dataset split (train/val), in provenance "
            "or at top level"
        )
    return raw


def iter_examples(path: Path, *, require_provenance: bool = True) -> Iterator[ExampleRecord]:
    """Stream examples from a JSONL file, checking each; the first bad line raises."""
    for number, _, _, raw in json_lines(path, ExampleError.of_line):
        try:
            yield check_example(raw, require_provenance=require_provenance)
        except ValueError as exc:
            field, _, message = str(exc).partition(": ")
            raise ExampleError(str(path), number, field, message) from None


def read_examples(path: Path, *, require_provenance: bool = True) -> list[ExampleRecord]:
    """All examples of a JSONL file; duplicate qids are an error (splits are lists of qids)."""
    examples: list[ExampleRecord] = []
    seen: dict[str, int] = {}
    for number, example in enumerate(
        iter_examples(path, require_provenance=require_provenance), start=1
    ):
        qid = example["qid"]
        if qid in seen:
            raise ExampleError(
                str(path), 0, "qid", f"{qid!r} appears twice (examples {seen[qid]} and {number})"
            )
        seen[qid] = number
        examples.append(example)
    return examples


def atomic_write_text(path: Path, lines: Iterable[str]) -> None:
    """Write a file all-or-nothing: a temporary sibling renamed over the target at the end."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            for line in lines:
                handle.write(line)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_examples(path: Path, examples: Iterable[ExampleRecord]) -> None:
    """JSONL, one example per line, written atomically."""
    atomic_write_text(path, (json.dumps(e, ensure_ascii=False) + "\n" for e in examples))


PAPER_TEMPLATES = frozenset(PATTERN_TEMPLATES.values())


def field_of(example: Mapping[str, Any], name: str) -> Any:
    """A provenance field, read from ``provenance`` or, as the engine also writes it, top level."""
    provenance = example.get("provenance")
    if isinstance(provenance, dict) and name in provenance:
        return provenance[name]
    return example.get(name)


def source_split(example: ExampleRecord) -> str:
    """The source dataset split (train/val/...) the example's images come from."""
    value = field_of(example, "split")
    return value if isinstance(value, str) else ""


def is_train(example: ExampleRecord) -> bool:
    return source_split(example) in TRAIN_SPLITS


def template_of(example: ExampleRecord) -> str:
    """The paper template (VerifyAttr, CountGroupBy ...) from the example's data.

    Accepts ``paper_template`` or a paper-style ``template`` (in ``provenance`` or at top level);
    a form name (``quantifier_attr``) in ``template`` or ``pattern_name`` is mapped by DESIGN §7.
    """
    paper = field_of(example, "paper_template")
    if isinstance(paper, str) and paper:
        return paper
    template = field_of(example, "template")
    if isinstance(template, str) and template:
        if template in PAPER_TEMPLATES or template not in PATTERN_TEMPLATES:
            return template
        return PATTERN_TEMPLATES[template]
    pattern = str(example.get("pattern_name", ""))
    return PATTERN_TEMPLATES.get(pattern, pattern)


def iter_steps(program: Sequence[Step]) -> Iterator[Step]:
    """Every step of a program, nested condition programs included (depth first)."""
    for step in program:
        yield step
        for arg in step.get("arguments", ()):
            if isinstance(arg, list):
                yield from iter_steps(arg)


def iter_programs(program: Sequence[Step]) -> Iterator[Sequence[Step]]:
    """The program and every nested program inside it (each with its own step indices)."""
    yield program
    for step in program:
        for arg in step.get("arguments", ()):
            if isinstance(arg, list):
                yield from iter_programs(arg)


def normalize_answer(value: Any) -> str:
    """One spelling per answer: booleans as true/false (yes/no accepted), numbers as digits."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else str(value)
    text = str(value).strip().lower()
    if text in {"yes", "true"}:
        return "true"
    if text in {"no", "false"}:
        return "false"
    return text


def accuracy(correct: Sequence[bool]) -> float | None:
    """The share of ``True`` (None for no example)."""
    return sum(correct) / len(correct) if correct else None
