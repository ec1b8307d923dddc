"""The FalkorDB parameter renderer: exact literals, and refusal of what the server would misread."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from covr.graph.errors import ParameterError
from covr.graph.params import check_name, render_prefix, render_value


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, "null"),
        (True, "true"),
        (False, "false"),
        (0, "0"),
        (-(2**63), "-9223372036854775808"),
        (2**63 - 1, "9223372036854775807"),
        (1e-9, "1e-09"),
        (0.1, "0.1"),
        ("", '""'),
        ('a"b', '"a\\"b"'),
        ("a\\b", '"a\\\\b"'),
        ("x' CREATE (:Pwned) //", '"x\' CREATE (:Pwned) //"'),
        ([1, "a"], '[1,"a"]'),
        ({"k": 1, "odd key": [None]}, "{`k`:1,`odd key`:[null]}"),
    ],
)
def test_renders_literals(value: object, expected: str) -> None:
    assert render_value(value) == expected


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        (2**63, "64 bits"),
        (-(2**63) - 1, "64 bits"),
        (math.nan, "finite"),
        (math.inf, "finite"),
        ("a\x00b", "NUL"),
        ({"a`b": 1}, "'`'"),
        ({"": 1}, "non-empty"),
        ({1: 1}, "non-empty strings"),
        (object(), "cannot be sent"),
        (b"bytes", "cannot be sent"),
    ],
)
def test_refuses_unsafe_values(value: object, fragment: str) -> None:
    with pytest.raises(ParameterError, match=fragment):
        render_value(value, "p")


def test_error_names_the_parameter_path() -> None:
    with pytest.raises(ParameterError, match=r"rows\[1\]\.score"):
        render_prefix({"rows": [{"score": 1.0}, {"score": math.nan}]})


def test_refuses_deep_nesting() -> None:
    value: object = 1
    for _ in range(40):
        value = [value]
    with pytest.raises(ParameterError, match="nested deeper"):
        render_value(value)


@pytest.mark.parametrize("name", ["", "1a", "a b", "a=1", "a;", "$a", "a-b", "é"])
def test_refuses_bad_names(name: str) -> None:
    with pytest.raises(ParameterError):
        check_name(name)


def test_prefix_shape() -> None:
    assert render_prefix(None) == ""
    assert render_prefix({}) == ""
    assert render_prefix({"a": 1, "b": "x"}) == 'CYPHER a=1 b="x" '


@given(st.text().filter(lambda s: "\x00" not in s))
def test_strings_are_always_one_closed_literal(text: str) -> None:
    rendered = render_value(text)
    assert rendered.startswith('"')
    assert rendered.endswith('"')
    body = rendered[1:-1]
    # Undo the two escapes: the result must be the input, and no unescaped quote may remain.
    i, out = 0, []
    while i < len(body):
        if body[i] == "\\":
            assert body[i + 1] in '\\"'
            out.append(body[i + 1])
            i += 2
        else:
            assert body[i] != '"'
            out.append(body[i])
            i += 1
    assert "".join(out) == text


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_floats_render_exactly(value: float) -> None:
    assert float(render_value(value)) == value
