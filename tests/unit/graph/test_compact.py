"""The compact-reply reader: every decoded type, errors inside a reply, and the fallback signal."""

from __future__ import annotations

import math

import pytest

from covr.graph.compact import Unsupported, decode_rows, decode_value


def test_scalars_lists_and_maps() -> None:
    assert decode_value([1, None]) is None
    assert decode_value([2, "man"]) == "man"
    assert decode_value([2, b"caf\xc3\xa9"]) == "café"
    assert decode_value([3, -3]) == -3
    assert decode_value([4, "true"]) is True
    assert decode_value([4, "false"]) is False
    assert decode_value([5, "2.5"]) == 2.5
    assert math.isinf(decode_value([5, "inf"]))
    assert decode_value([6, [[2, "x"], [1, None], [6, [[3, 1]]]]]) == ["x", None, [1]]
    assert decode_value([10, ["a", [3, 1], "b", [10, ["c", [2, "d"]]]]]) == {
        "a": 1,
        "b": {"c": "d"},
    }


@pytest.mark.parametrize("kind", [0, 7, 8, 9, 11, 12, 13, 99])
def test_other_types_are_left_to_the_driver(kind: int) -> None:
    with pytest.raises(Unsupported) as info:
        decode_value([kind, [1, [0], []]])
    assert info.value.kind == kind
    with pytest.raises(Unsupported):
        decode_rows([[[1, "x"]], [[[kind, "?"]]], ["stats"]])


def test_rows_by_column_name() -> None:
    reply = [
        [[1, "id"], [1, "names"]],
        [[[2, "a"], [6, [[2, "man"]]]], [[2, "b"], [6, []]]],
        ["Cached execution: 1"],
    ]
    assert decode_rows(reply) == [{"id": "a", "names": ["man"]}, {"id": "b", "names": []}]


def test_a_reply_without_rows() -> None:
    assert decode_rows([["Nodes created: 1"]]) == []
    assert decode_rows([[[1, "x"]], [], ["stats"]]) == []


def test_an_error_element_is_raised() -> None:
    with pytest.raises(RuntimeError, match="boom"):
        decode_rows([[[1, "x"]], [], RuntimeError("boom")])


def test_rows_that_do_not_fit_the_header() -> None:
    with pytest.raises(ValueError, match="2 cells for 1 columns"):
        decode_rows([[[1, "x"]], [[[3, 1], [3, 2]]], ["stats"]])
