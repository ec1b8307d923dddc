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


def position(node_type: NodeType, index: int) -> str:
    return f"{node_type}@{index}"


_PARSED: dict[str, tuple[NodeType, int]] = {}
"""Parsed positions: a lookup parses the same few dozen strings ~600 times (measured)."""


def parse_position(text: str) -> tuple[NodeType, int]:
    """``"object@2"`` -> ``("object", 2)``; raise :class:`SubgraphError` (rule ``position``)."""
    if isinstance(text, str):
        hit = _PARSED.get(text)
        if hit is not None:
            return hit
    match = _POSITION.match(text) if isinstance(text, str) else None
    if match is None:
        raise SubgraphError("position", f"not a position: {text!r} (e.g. 'object@0')")
    parsed = cast(NodeType, match.group(1)), int(match.group(2))
    if len(_PARSED) < 4096:
        _PARSED[text] = parsed
    return parsed


def position_sort_key(text: str) -> tuple[int, int]:
    kind, index = parse_position(text)
    return _RANK[kind], index


def signature(positions: Iterable[str]) -> str:
    """The canonical signature of a set of positions (``""`` for no change)."""
    unique = set(positions)
    return "+".join(sorted(unique, key=position_sort_key))


def parse_signature(text: str) -> tuple[str, ...]:
    """The positions of a signature, validated and in canonical order."""
    if text == "":
        return ()
    parts = text.split("+")
    canonical = signature(parts)
    if len(set(parts)) != len(parts):
        raise SubgraphError("position", f"repeated position in signature {text!r}")
    return tuple(canonical.split("+"))


def signature_sort_key(text: str) -> tuple[int, tuple[tuple[int, int], ...]]:
    """Order signatures by size, then by their positions."""
    positions = parse_signature(text)
    return len(positions), tuple(position_sort_key(p) for p in positions)


def positions(g: Subgraph) -> tuple[str, ...]:
    """Every editable position of ``g`` in canonical order."""
    out = [position("object", i) for i in range(len(g.objects))]
    out += [position("attribute", i) for i, o in enumerate(g.objects) if o.attribute is not None]
    out += [position("relation", j) for j in range(len(g.relations))]
    out += [position("relmod", k) for k in range(len(g.relmods))]
    return tuple(out)


def name_at(g: Subgraph, pos: str) -> str:
    """The name ``g`` has at ``pos``; raise :class:`SubgraphError` if ``g`` has no such node."""
    kind, index = parse_position(pos)
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
        kind, index = parse_position(pos)
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
