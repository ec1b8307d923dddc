"""Positions, edit signatures and substitutions (DESIGN.md §5).

Edit distance between two subgraphs of the same shape counts node substitutions of the same node
type. A *position* names one substitutable node of a subgraph ``g``:

- ``object@i``    the name of ``g.objects[i]``;
- ``attribute@i`` the attribute of ``g.objects[i]`` (only where it has one: an edit never adds or
  removes a node);
- ``relation@j``  the name of ``g.relations[j]``;
- ``relmod@k``    the name of ``g.relmods[k]``.

An *edit signature* is the set of positions that changed, written sorted by node type
(object, attribute, relation, relmod) then index and joined with ``+``: ``object@2+attribute@0``.
Positions always refer to the *original* ``g``; the substituted subgraph is re-canonicalized and
may number its parts differently.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Literal, cast

from covr.scene.subgraph import Subgraph, SubgraphError

NodeType = Literal["object", "attribute", "relation", "relmod"]
NODE_TYPES: tuple[NodeType, ...] = ("object", "attribute", "relation", "relmod")
_RANK = {t: r for r, t in enumerate(NODE_TYPES)}
_POSITION = re.compile(r"^(object|attribute|relation|relmod)@(0|[1-9][0-9]*)$")


class Position(str):
    """One editable node of a subgraph: its kind and index, parsed once.

    A ``str`` subclass on purpose: its text *is* the wire form (``"object@2"``), so positions
    can be written to JSON, proto signatures and dict keys unchanged, hash and sort exactly as
    the strings they replace (pinned outputs stay the same), while code inside the server reads
    ``kind`` and ``number`` (the index) instead of splitting on ``"@"`` again and again. Build one with
    :func:`position` or :meth:`parse` (the boundary for text from outside).
    """

    kind: NodeType
    number: int

    def __new__(cls, kind: NodeType, index: int) -> Position:
        made = super().__new__(cls, f"{kind}@{index}")
        made.kind = kind
        made.number = index
        return made

    def __getnewargs__(self) -> tuple[NodeType, int]:  # type: ignore[override]
        return self.kind, self.number

    @property
    def rank(self) -> tuple[int, int]:
        """Canonical order: node type (object, attribute, relation, relmod), then index."""
        return _RANK[self.kind], self.number

    @staticmethod
    def parse(text: str) -> Position:
        """``"object@2"`` -> ``Position("object", 2)``; raise :class:`SubgraphError`."""
        if isinstance(text, Position):
            return text
        hit = _PARSED.get(text) if isinstance(text, str) else None
        if hit is not None:
            return hit
        match = _POSITION.match(text) if isinstance(text, str) else None
        if match is None:
            raise SubgraphError("position", f"not a position: {text!r} (e.g. 'object@0')")
        parsed = Position(cast(NodeType, match.group(1)), int(match.group(2)))
        if len(_PARSED) < 4096:
            _PARSED[text] = parsed
        return parsed


_PARSED: dict[str, Position] = {}
"""Parsed positions: a lookup meets the same few dozen strings again and again."""


def position(node_type: NodeType, index: int) -> Position:
    hit = _PARSED.get(f"{node_type}@{index}")
    return hit if hit is not None else Position.parse(f"{node_type}@{index}")


def parse_position(text: str) -> tuple[NodeType, int]:
    """``"object@2"`` -> ``("object", 2)``; raise :class:`SubgraphError` (rule ``position``)."""
    pos = Position.parse(text)
    return pos.kind, pos.number


def position_sort_key(text: str) -> tuple[int, int]:
    return Position.parse(text).rank


def signature(positions: Iterable[str]) -> str:
    """The canonical signature of a set of positions (``""`` for no change)."""
    unique = set(positions)
    return "+".join(sorted(unique, key=position_sort_key))


def parse_signature(text: str) -> tuple[Position, ...]:
    """The positions of a signature, validated and in canonical order."""
    if text == "":
        return ()
    parts = [Position.parse(p) for p in text.split("+")]
    if len(set(parts)) != len(parts):
        raise SubgraphError("position", f"repeated position in signature {text!r}")
    return tuple(sorted(parts, key=lambda p: p.rank))


def signature_sort_key(text: str) -> tuple[int, tuple[tuple[int, int], ...]]:
    """Order signatures by size, then by their positions."""
    positions = parse_signature(text)
    return len(positions), tuple(position_sort_key(p) for p in positions)


def positions(g: Subgraph) -> tuple[Position, ...]:
    """Every editable position of ``g`` in canonical order."""
    out = [position("object", i) for i in range(len(g.objects))]
    out += [position("attribute", i) for i, o in enumerate(g.objects) if o.attribute is not None]
    out += [position("relation", j) for j in range(len(g.relations))]
    out += [position("relmod", k) for k in range(len(g.relmods))]
    return tuple(out)


def name_at(g: Subgraph, pos: str) -> str:
    """The name ``g`` has at ``pos``; raise :class:`SubgraphError` if ``g`` has no such node."""
    parsed = Position.parse(pos)
    kind, index = parsed.kind, parsed.number
    try:
        if kind == "object":
            return g.objects[index].name
        if kind == "attribute":
            attribute = g.objects[index].attribute
            if attribute is None:
                raise SubgraphError("position", f"objects[{index}] has no attribute")
            return attribute
        if kind == "relation":
            return g.relations[index].name
        return g.relmods[index].name
    except IndexError:
        raise SubgraphError("position", f"{pos} is not a position of {g.key}") from None


def substitute(g: Subgraph, changes: Mapping[str, str]) -> Subgraph:
    """``g`` with the names at the given positions replaced, re-canonicalized.

    Raise :class:`SubgraphError` for an unknown position, an empty name, or a result that breaks
    a rule (most often ``repeated-noun``: substituting ``man`` by a noun already in ``g``).
    """
    objects = list(g.objects)
    relations = list(g.relations)
    relmods = list(g.relmods)
    for pos, new in changes.items():
        name_at(g, pos)  # validates the position
        parsed = Position.parse(pos)
        kind, index = parsed.kind, parsed.number
        if kind == "object":
            objects[index] = replace(objects[index], name=new)
        elif kind == "attribute":
            objects[index] = replace(objects[index], attribute=new)
        elif kind == "relation":
            relations[index] = replace(relations[index], name=new)
        else:
            relmods[index] = replace(relmods[index], name=new)
    return Subgraph.build(objects, relations, relmods)


def diff_signature(g: Subgraph, changes: Mapping[str, str]) -> str:
    """The signature of the positions whose new name differs from ``g``'s."""
    return signature(p for p, new in changes.items() if name_at(g, p) != new)
