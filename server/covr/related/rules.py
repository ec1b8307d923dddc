"""Rule choice and row decoding: the pure half of a store lookup (no store, unit-tested alone).

Why pure: which Cypher prefilter a position gets, and how a returned row becomes concrete
``g'`` subgraphs, decide the lookup's correctness; as functions of plain values (the vocabulary
lists and an ``exclusive(kind, x, y)`` decision) they are tested without a graph server. The
rules only prefilter (docs/related.md §3): every row is decoded again here with the exclusivity
decision itself.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from covr.related.cypher_path import Rule
from covr.scene.edits import NodeType, Position, name_at, positions
from covr.scene.subgraph import Subgraph

Exclusive = Callable[[NodeType, str, str], bool]
"""``exclusive(kind, x, y)``: whether ``y`` may replace ``x`` in a distractor."""
Changes = tuple[tuple[Position, str], ...]
"""The substitutions of one concrete ``g'``, sorted by position."""

_COLUMN: dict[NodeType, str] = {
    "object": "names",
    "relation": "relation_names",
    "relmod": "relmod_names",
}
"""The row column holding the image names of each non-attribute kind (one entry per index)."""


# -- rules -------------------------------------------------------------------------------------


def distractor_rule(
    kind: NodeType, x: str, exclusive: Sequence[str], others: Sequence[str], cap: int
) -> Rule | None:
    """Rule of a changed position (None: no name of the store could be exclusive with ``x``).

    ``exclusive``/``others`` are the vocabulary's names other than ``x`` that are / are not
    exclusive with it; the shorter list that fits ``cap`` becomes a list parameter.
    """
    if not exclusive:
        return None
    if kind == "attribute":
        if len(exclusive) <= cap:
            return Rule("in", values=tuple(exclusive))
        if len(others) <= cap:
            return Rule("ne_not_in", x, tuple(others))
        return Rule("ne", x)
    if len(others) <= cap:
        return Rule("ne_not_in", x, tuple(others)) if others else Rule("ne", x)
    if len(exclusive) <= cap:
        return Rule("in", values=tuple(exclusive))
    return Rule("ne", x)


def relaxed_rule(x: str, exclusive: Sequence[str], others: Sequence[str], cap: int) -> Rule:
    """Rule of a position in the overlap-relaxed copy of ``g``: ``x`` or a non-exclusive name."""
    if len(others) + 1 <= cap:
        return Rule("in", values=(x, *others))
    if len(exclusive) <= cap:
        return Rule("not_in", values=tuple(exclusive))
    return Rule("any")


def combined_rule(x: str, edited: Rule | None) -> Rule:
    """Rule of a position in a combined branch: ``g``'s name or a possible edit."""
    if edited is None:
        return Rule("eq", x)
    if edited.op == "ne_not_in":
        return Rule("not_in", values=edited.values)
    if edited.op == "in":
        return Rule("eq_or_in", x, edited.values)
    return Rule("any")


def choose_anchor(
    g: Subgraph, fixed: Sequence[Position], nodes: Callable[[NodeType, str], int]
) -> Position | None:
    """The fixed non-attribute position whose name has the fewest nodes (None: none fixed)."""
    best: tuple[int, Position] | None = None
    for pos in fixed:
        if pos.kind == "attribute":
            continue
        count = nodes(pos.kind, name_at(g, pos))
        if best is None or (count, pos) < best:
            best = (count, pos)
    return None if best is None else best[1]


# -- row decoding ------------------------------------------------------------------------------


def _attributes(row: Mapping[str, Any], pos: Position) -> list[str]:
    return [str(a) for a in dict.fromkeys(row["attributes"][pos.number] or ())]


def _name(row: Mapping[str, Any], pos: Position) -> str:
    return str(row[_COLUMN[pos.kind]][pos.number])


def concrete_changes(
    g: Subgraph, changed: Sequence[Position], row: Mapping[str, Any], exclusive: Exclusive
) -> list[Changes]:
    """The substitutions of every concrete ``g'`` a distractor row reads (attribute choices
    expanded); empty when a changed position holds no exclusive name."""
    options: list[list[tuple[Position, str]]] = []
    for pos in changed:
        x = name_at(g, pos)
        values = _attributes(row, pos) if pos.kind == "attribute" else [_name(row, pos)]
        good = [(pos, y) for y in values if exclusive(pos.kind, x, y)]
        if not good:
            return []
        options.append(good)
    return [tuple(sorted(combo)) for combo in itertools.product(*options)]


def embeddings(
    g: Subgraph, row: Mapping[str, Any], max_distance: int, exclusive: Exclusive
) -> list[Changes]:
    """The edits of every valid reading of a combined row (attribute choices expanded): equal
    names cost nothing, exclusive ones one edit, anything else rejects the reading."""
    fixed: list[tuple[Position, str]] = []
    options: list[list[tuple[Position, str] | None]] = []
    for pos in positions(g):
        x = name_at(g, pos)
        if pos.kind == "attribute":
            values = _attributes(row, pos)
            choice: list[tuple[Position, str] | None] = [None] if x in values else []
            choice += [(pos, a) for a in values if exclusive(pos.kind, x, a)]
            if not choice:
                return []
            options.append(choice)
            continue
        y = _name(row, pos)
        if y == x:
            continue
        if not exclusive(pos.kind, x, y):
            return []
        fixed.append((pos, y))
    if len(fixed) > max_distance:
        return []
    out = []
    for combo in itertools.product(*options):
        changes = fixed + [c for c in combo if c is not None]
        if len(changes) <= max_distance:
            out.append(tuple(sorted(changes)))
    return out


def is_relaxed_row(g: Subgraph, row: Mapping[str, Any], exclusive: Exclusive) -> bool:
    """Whether a row reads an overlap-relaxed copy of ``g``: every name equal to ``g``'s or not
    exclusive with it (for an attribute: some attribute of the object qualifies)."""
    for pos in positions(g):
        x = name_at(g, pos)
        if pos.kind == "attribute":
            if all(exclusive(pos.kind, x, a) for a in _attributes(row, pos)):
                return False
            continue
        if exclusive(pos.kind, x, _name(row, pos)):
            return False
    return True
