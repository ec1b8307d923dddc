"""Typed positions: parsed once, written as the wire form ("object@2")."""

from __future__ import annotations

import json
import pickle

import pytest

from covr.scene.edits import Position, parse_signature, position, positions, signature
from covr.scene.subgraph import Subgraph, SubgraphError

pytestmark = pytest.mark.unit


def test_a_position_is_its_wire_text_with_kind_and_number() -> None:
    pos = Position.parse("relation@12")
    assert (pos.kind, pos.number) == ("relation", 12)
    assert pos == "relation@12"
    assert str(pos) == "relation@12"
    assert json.dumps({pos: 1}) == '{"relation@12": 1}'
    assert Position.parse(pos) is pos
    assert position("relation", 12) == pos
    assert pickle.loads(pickle.dumps(pos)).number == 12


def test_bad_text_is_rejected_at_the_boundary() -> None:
    for bad in ("object", "object@", "object@01", "thing@1", "object@-1", ""):
        with pytest.raises(SubgraphError):
            Position.parse(bad)


def test_positions_and_signatures_are_typed_and_canonical() -> None:
    g = Subgraph.from_key("man-(wearing)->hat[red]")
    assert all(isinstance(p, Position) for p in positions(g))
    parts = parse_signature("relation@0+object@10+object@2")
    assert [(p.kind, p.number) for p in parts] == [("object", 2), ("object", 10), ("relation", 0)]
    assert signature(parts) == "object@2+object@10+relation@0"
