"""Every word of the template vocabulary has exactly one implementation in a registry."""

from __future__ import annotations

import pytest

from covr.questions.picking import FLIP_MODES
from covr.questions.slots import DECOYS, SLOT_FILLERS, SLOT_ORDER, VALUE_KINDS, fill_text
from covr.questions.templates import DECOY_POSITIONS, VALUE_SLOTS
from covr.questions.templates import FLIP_MODES as FLIP_WORDS

pytestmark = pytest.mark.unit


def test_registries_cover_the_vocabulary_exactly() -> None:
    assert set(VALUE_KINDS) == VALUE_SLOTS
    assert set(DECOYS) == DECOY_POSITIONS
    assert set(FLIP_MODES) == FLIP_WORDS | {"main"}
    assert set(SLOT_FILLERS) == set(SLOT_ORDER) == {"number", "choice", "subgraph", "value"}


def test_fill_text_agrees_with_plural_slots() -> None:
    texts = {"N": "3", "X": "dogs"}
    plural = {"N": True, "X": True}
    assert fill_text("{is:X} there {N} {X}?", {}, texts, plural) == "are there 3 dogs?"
    assert fill_text("{images:N} that {contain:X}", {}, texts, {}) == "image that contains"
    values = {"O": {"first": "cup", "second": "mug", "text": "a cup or a mug"}}
    assert fill_text("{O.first}", values, {}, {}) == "cup"
