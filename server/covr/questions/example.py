"""The one ``Example`` structure: a generated question as the JSONL files and the service hold it.

Why a ``TypedDict`` and not a dataclass: examples are read from and written to JSON by the
hundred thousand (``covr generate``, the splits, the browser) and unknown fields of files
written elsewhere must pass through untouched, so they stay plain dicts at run time; the type
lets mypy check every field access of the rooms that read them (questions, splits, service,
view, CLI) against this one declaration (docs/questions.md §4).

The released COVR fields are always there; our provenance fields are written by the engine at
top level (``covr generate``), and examples made elsewhere (the released data, the hop splits)
may carry them, or others, in a nested ``provenance`` object instead.
"""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict, TypeVar

Answer = bool | int | str
"""An executed program's answer: yes/no, a count, or a word."""

Argument = str | int | float | bool | None | list["Step"]
"""A step argument: a value, or a nested condition program (quantifiers, ``filter`` by ...)."""


class Step(TypedDict):
    """One program step: an operator, its arguments, and the earlier steps it reads."""

    operation: str
    arguments: list[Argument]
    dependencies: list[int]


class Provenance(TypedDict, total=False):
    """Nested provenance of examples made outside the engine (released data, hop splits)."""

    template: str
    paper_template: str
    answer_type: str
    source_image: str
    subgraphs: dict[str, str]
    structure: list[int]
    signatures: dict[str, list[str]]
    seed: int
    generator_version: str
    split: str
    hop_set: str


class Example(TypedDict):
    """One question: the released COVR fields plus the engine's provenance at top level."""

    qid: str
    utterance: str
    scenes: list[str]
    answer: Answer
    pattern_name: str
    program: list[Step]
    properties: list[str]
    template: NotRequired[str]
    paper_template: NotRequired[str]
    answer_type: NotRequired[str]
    source_image: NotRequired[str]
    subgraphs: NotRequired[dict[str, str]]
    """Subgraph keys by name (``g``, ``g2``)."""
    structure: NotRequired[list[int]]
    signatures: NotRequired[dict[str, list[str]]]
    """Per image, the edit signatures it was picked through (``[]`` for a positive)."""
    seed: NotRequired[int]
    generator_version: NotRequired[str]
    split: NotRequired[str]
    """The source dataset split (train/val) the images come from."""
    provenance: NotRequired[Provenance]


ExampleRecord = Example | dict[str, Any]
"""An example as the readers of example files take it (splits, statistics, balancing): the
engine's :class:`Example`, or a plain dict from a file written elsewhere (the released data;
unknown fields pass through untouched). Field names are still checked against ``Example``;
values read from a plain dict stay ``Any``."""

RecordT = TypeVar("RecordT", bound=ExampleRecord)
"""For functions that hand back the example they were given, typed as it came in."""
