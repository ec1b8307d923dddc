"""The reference program of a subgraph (paper Table 10/11): rows of find / filter / with_relation.

A program is a list of rows ``{"operation", "arguments", "dependencies"}`` as in the released COVR
files: ``arguments`` holds literal values (names), ``dependencies`` the 0-based indices of earlier
rows whose outputs are the operator's inputs. The subgraph's targets are built before their
subject, so "books that are on a wood table" is::

    0 find          ["table"]          []
    1 filter        ["wood"]           [0]
    2 find          ["book"]           []
    3 with_relation ["on"]             [2, 1]

A relation with rel-mods is one ``with_relation`` row whose arguments are the relation followed by
the rel-mod names and whose dependencies are the subject, the object and then each rel-mod's
object, in the same order: the modifiers must hang off the *same* relation instance, which
separate rows could not express. Question templates wrap this program (count, exists, ...).

The module also holds the project's one anonymization of programs (:func:`anonymize_program`,
:func:`structure_key`, :func:`program_names`): which arguments are lexical names is decided by
the argument's *position* (:data:`ARGUMENTS`), never by its value. It lives in the scene room
because both the question room (``covr stats``) and the splits room (properties, every split)
use it, and the question room may not import the splits room (DESIGN §1).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any, TypedDict

from covr.scene.subgraph import Subgraph
from covr.scene.tree import TreeNode


class ProgramStep(TypedDict):
    operation: str
    arguments: list[str]
    dependencies: list[int]


def _emit(node: TreeNode, rows: list[ProgramStep]) -> int:
    """Append the rows that compute ``node``'s objects; return the row of the result."""
    targets = [
        (edge, _emit(edge.target, rows), [_emit(m.target, rows) for m in edge.mods])
        for edge in node.edges
    ]
    rows.append({"operation": "find", "arguments": [node.name], "dependencies": []})
    current = len(rows) - 1
    if node.attribute is not None:
        rows.append(
            {"operation": "filter", "arguments": [node.attribute], "dependencies": [current]}
        )
        current = len(rows) - 1
    for edge, target, mod_rows in targets:
        rows.append(
            {
                "operation": "with_relation",
                "arguments": [edge.name, *(m.name for m in edge.mods)],
                "dependencies": [current, target, *mod_rows],
            }
        )
        current = len(rows) - 1
    return current


def program(g: Subgraph) -> list[ProgramStep]:
    """The rows selecting the objects of all images that match ``g``'s root (last row)."""
    rows: list[ProgramStep] = []
    _emit(g.tree(), rows)
    return rows


# --- anonymization by position (issue 37 item 4) -------------------------------------------------

PLACEHOLDER = "X"
"""What every lexical name becomes in an anonymized program (COVR arXiv §4: "replace nouns,
relations and attributes with a single placeholder")."""

NAME_KINDS = frozenset({"name", "attribute", "relation", "relmod"})
"""Argument kinds that hold a lexical name: a noun, an attribute value, a relation, a rel-mod."""

STRUCTURE_KINDS = frozenset({"attr_type", "number", "program"})
"""Argument kinds that are structure: an attribute *type* (``color`` in ``query_attr``), a literal
number (``keep_if_values_count_eq 2``), a nested condition program (anonymized inside)."""

ARGUMENTS: dict[str, tuple[str, ...]] = {
    "find": ("name",),
    "filter": ("attribute",),
    "with_relation": ("relation", "relmod*"),
    "with_relation_object": ("relation",),
    "verify_attr": ("attribute",),
    "choose_attr": ("attribute", "attribute"),
    "choose_name": ("name", "name"),
    "choose_relation": ("relation", "relation"),
    "query_attr": ("attr_type",),
    "all_same": ("attr_type",),
    "same_attr": ("attr_type",),
    "keep_if_values_count_eq": ("number",),
    "keep_if_values_count_geq": ("number",),
    "keep_if_values_count_leq": ("number",),
    "eq": ("number",),
    "gt": ("number",),
    "lt": ("number",),
    "geq": ("number",),
    "leq": ("number",),
    "all": ("program",),
    "some": ("program",),
    "none": ("program",),
    **dict.fromkeys(
        (
            "unique",
            "assert_unique",
            "exists",
            "count",
            "unique_images",
            "group_by_images",
            "keys",
            "query_name",
            "relation_between_nouns",
            "logic_and",
            "logic_or",
        ),
        (),
    ),
}
"""Operation → the kind of each literal argument position (the question engine's operator table,
``covr.questions.operators``, which a unit test keeps equal to this one). A trailing ``*`` kind
repeats; an argument may be left out (``eq`` with two dependencies has no number)."""


def as_number(value: Any) -> int | float | None:
    """A literal number argument (``2``, ``2.0`` or ``"2"``), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return value
    if isinstance(value, str) and value.isdecimal():
        return int(value)
    return None


def argument_kinds(operation: str, count: int) -> list[str | None]:
    """The declared kind of each of ``count`` arguments of ``operation``; None for an unknown
    operation and for a position past a signature without a repeating kind."""
    kinds = ARGUMENTS.get(operation)
    if kinds is None:
        return [None] * count
    out: list[str | None] = []
    for index in range(count):
        if index < len(kinds):
            out.append(kinds[index].rstrip("*"))
        elif kinds and kinds[-1].endswith("*"):
            out.append(kinds[-1].rstrip("*"))
        else:
            out.append(None)
    return out


@lru_cache(maxsize=1024)
def _declared_names(operation: str, count: int) -> tuple[bool | None, ...]:
    """Per argument: True for a name position, False for structure, None where undeclared."""
    return tuple(
        None if kind is None else kind in NAME_KINDS for kind in argument_kinds(operation, count)
    )


def name_positions(step: Mapping[str, Any]) -> list[bool]:
    """Whether each argument of ``step`` is a lexical name, decided by its position.

    A position of a known operation decides alone: ``find``'s argument is a name even when it
    is also an attribute type (``find hair``), ``query_attr``'s is an attribute type. A nested
    program is never a name. For an argument the table does not cover (an unknown operation or
    an extra position) the fallback is conservative: every string that is not a number is a
    name, since replacing too much merges structures but never puts one structure in both
    training and test.
    """
    arguments = step.get("arguments", ())
    declared = _declared_names(str(step["operation"]), len(arguments))
    return [_is_name(arg, kind) for arg, kind in zip(arguments, declared, strict=True)]


def _is_name(arg: Any, declared: bool | None) -> bool:
    if isinstance(arg, list):
        return False  # a nested program: anonymized inside
    if declared is None:  # the conservative fallback
        return isinstance(arg, str) and as_number(arg) is None
    return declared


def step_names(step: Mapping[str, Any]) -> list[str]:
    """The lexical names among ``step``'s own arguments (non-empty strings in name positions)."""
    return [
        arg
        for arg, is_name in zip(step.get("arguments", ()), name_positions(step), strict=True)
        if is_name and isinstance(arg, str) and arg
    ]


def program_names(program: Sequence[Mapping[str, Any]]) -> set[str]:
    """Every lexical name of a program, nested condition programs included."""
    out: set[str] = set()
    for step in program:
        out.update(step_names(step))
        for arg in step.get("arguments", ()):
            if isinstance(arg, list):
                out |= program_names(arg)
    return out


def anonymize_argument(value: Any, is_name: bool) -> Any:
    """One literal argument anonymized: a name becomes :data:`PLACEHOLDER`, a number its value
    (``"2"`` and ``2`` are one structure), anything else stays."""
    if is_name:
        return PLACEHOLDER
    number = as_number(value)
    return value if number is None else number


def anonymize_program(program: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The program with every lexical name replaced by :data:`PLACEHOLDER`, decided by position
    (:func:`name_positions`); operators, dependencies, numbers and attribute types stay. The one
    anonymization of the project: ``covr stats``, ``covr properties`` and every split use it."""
    out: list[dict[str, Any]] = []
    for step in program:
        args: list[Any] = []
        arguments = step.get("arguments", ())
        if arguments:
            for arg, is_name in zip(arguments, name_positions(step), strict=True):
                if isinstance(arg, list):
                    args.append(anonymize_program(arg))
                else:
                    args.append(anonymize_argument(arg, is_name))
        out.append(
            {
                "operation": step["operation"],
                "arguments": args,
                "dependencies": list(step.get("dependencies", ())),
            }
        )
    return out


def structure_key(program: Sequence[Mapping[str, Any]]) -> str:
    """A canonical text of the anonymized program: equal keys = same program structure."""
    return json.dumps(anonymize_program(program), separators=(",", ":"), sort_keys=True)
