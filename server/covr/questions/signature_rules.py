"""Template rules over distractor signatures (``only:``, ``has:``, ``in_edge``).

Why a module: slot filling (which decoy may be shown) and image picking (which distractors a
template avoids or prefers) ask the same question of a signature; parsing is memoized because
the same few signatures are asked about thousands of times per image.
"""

from __future__ import annotations

from functools import lru_cache

from covr.questions.render import edge_positions
from covr.scene.edits import Position, parse_signature, position, signature_sort_key
from covr.scene.subgraph import Subgraph


def resolve_position(g: Subgraph, where: str, edge: int | None) -> Position | None:
    """A rule token as a position of ``g``: ``edge_object`` / ``edge_relation`` name the chosen
    root edge's parts (None without an edge); anything else is a position already."""
    if where in ("edge_object", "edge_relation"):
        if edge is None:
            return None
        if where == "edge_object":
            return position("object", g.relations[edge].object)
        return position("relation", edge)
    return Position.parse(where)


@lru_cache(maxsize=65536)
def signature_parts(sig: str) -> tuple[Position, ...]:
    return parse_signature(sig)


@lru_cache(maxsize=65536)
def signature_order(sig: str) -> tuple[int, tuple[tuple[int, int], ...]]:
    return signature_sort_key(sig)


def rule_holds(rule: str, sig: str, g: Subgraph, edge: int | None) -> bool:
    """Whether a distractor signature satisfies a template rule (``only:``, ``has:``, ``in_edge``)."""
    parts = signature_parts(sig)
    if rule == "in_edge":
        return edge is not None and set(parts) <= edge_positions(g, edge)
    kind, _, token = rule.partition(":")
    pos = resolve_position(g, token, edge)
    if pos is None:
        return False
    if kind == "only":
        return parts == (pos,)
    return pos in parts
