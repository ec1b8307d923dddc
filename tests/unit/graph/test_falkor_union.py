"""FalkorDB reads a lookup round as one ``UNION ALL`` (``covr.graph.falkor.union_of``)."""

from __future__ import annotations

import pytest

from covr.graph.catalog import Statement
from covr.graph.falkor import union_of

pytestmark = pytest.mark.unit

TEXT = "UNWIND $b0_ids AS i\nWITH i WHERE i <> $b0_skip\nRETURN i AS image_id, $b0_tag AS tag"


def test_each_statement_keeps_its_own_values_under_renamed_parameters() -> None:
    statement, params = union_of(
        [
            (TEXT, {"b0_ids": ["a"], "b0_skip": "x", "b0_tag": 0}),
            (Statement(name="<inline>", text=TEXT), {"b0_ids": ["b"], "b0_skip": "y", "b0_tag": 1}),
        ]
    )
    assert params == {
        "u0_b0_ids": ["a"], "u0_b0_skip": "x", "u0_b0_tag": 0,
        "u1_b0_ids": ["b"], "u1_b0_skip": "y", "u1_b0_tag": 1,
    }  # fmt: skip
    first, second = statement.text.split("\nUNION ALL\n")
    assert first == TEXT.replace("$b0_", "$u0_b0_")
    assert second == TEXT.replace("$b0_", "$u1_b0_")
    assert statement.name == "<inline> (union of 2)"


@pytest.mark.parametrize(
    "text",
    [
        "RETURN '$x' AS image_id, $x AS tag",  # a literal: its $ is no parameter
        "RETURN $x AS `image$id`, 1 AS tag",
        "RETURN $x AS image_id UNION RETURN $x AS image_id",  # UNION cannot mix with UNION ALL
    ],
)
def test_texts_that_cannot_be_renamed_safely_are_refused(text: str) -> None:
    with pytest.raises(ValueError, match="cannot be joined"):
        union_of([(text, {"x": 1}), (TEXT, {})])


def test_a_union_all_inside_a_statement_may_be_joined() -> None:
    inner = "RETURN $x AS image_id\nUNION ALL\nRETURN $y AS image_id"
    statement, params = union_of([(inner, {"x": 1, "y": 2}), (inner, {"x": 3, "y": 4})])
    assert statement.text.count("UNION ALL") == 3
    assert params == {"u0_x": 1, "u0_y": 2, "u1_x": 3, "u1_y": 4}
